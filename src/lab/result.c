/* The grader's result objects (lab.h). */
#include "lab/lab.h"

#include <stdlib.h>
#include <string.h>

#include "util/i18n.h"

/* The Korean seed's own names for the steps ("참고"), in English. */
static const char *const titles[LAB_STEPS] = {
    N_("Recreate the incident node's main containerd config"),
    N_("Recreate the drop-in the toolkit writes"),
    N_("Decide whether the two files collide over the same table"),
    N_("A check script that looks at what is loaded"),
    N_("RuntimeClass and a GPU pod, and Pending"),
    N_("What the device plugin does, through node status"),
    N_("Read the time-slicing config; compute slots and memory"),
    N_("Stall the rollout and report the split state"),
};

const char *lab_step_title(int step)
{
    return step >= 1 && step <= LAB_STEPS ? titles[step - 1] : "";
}

/* `s` as a JSON string, each byte that is not part of valid UTF-8 shown as
 * '?': a learner's file may be in another encoding, or cut mid-character,
 * and the rest of what it says still matters. */
static json_t *text_value(const char *s)
{
    if (!s) return json_string("");
    json_t *v = json_string(s);
    if (v) return v;
    size_t n = strlen(s);
    char *copy = malloc(n + 1);
    if (!copy) return NULL;
    for (size_t i = 0; i < n;) {
        /* the longest valid prefix from i, one character at a time */
        size_t len = (unsigned char)s[i] < 0x80    ? 1
                     : (unsigned char)s[i] >= 0xf0 ? 4
                     : (unsigned char)s[i] >= 0xe0 ? 3
                     : (unsigned char)s[i] >= 0xc0 ? 2
                                                   : 0;
        json_t *ch = len && i + len <= n ? json_stringn(s + i, len) : NULL;
        if (ch) {
            memcpy(copy + i, s + i, len);
            json_decref(ch);
            i += len;
        } else {
            copy[i++] = '?';
        }
    }
    copy[n] = '\0';
    v = json_string(copy);
    free(copy);
    return v;
}

void lab_condition(json_t *conditions, const char *code, bool passed, const char *where,
                   const char *expected, const char *observed, const char *hint)
{
    json_t *c =
        json_pack("{s:o, s:b, s:o, s:o, s:o, s:o}", "code", text_value(code), "passed", passed,
                  "where", text_value(where), "expected", text_value(expected), "observed",
                  text_value(observed), "hint", text_value(hint && *hint ? _(hint) : hint));
    if (c) json_array_append_new(conditions, c);
}

json_t *lab_step_result(int step, const char *title, json_t *conditions)
{
    bool passed = json_array_size(conditions) > 0;
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c) passed =
        passed && json_is_true(json_object_get(c, "passed"));
    return json_pack("{s:i, s:s, s:b, s:o}", "step", step, "title", title && *title ? _(title) : "",
                     "passed", passed, "conditions", conditions);
}
