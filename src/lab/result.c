/* The grader's result objects (lab.h). */
#include "lab/lab.h"

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

void lab_condition(json_t *conditions, const char *code, bool passed, const char *where,
                   const char *expected, const char *observed, const char *hint)
{
    json_t *c = json_pack("{s:s, s:b, s:s, s:s, s:s, s:s}", "code", code ? code : "", "passed",
                          passed, "where", where ? where : "", "expected", expected ? expected : "",
                          "observed", observed ? observed : "", "hint", hint ? hint : "");
    /* json_pack refuses text that is not UTF-8, e.g. a learner's file in
     * another encoding: keep the condition, without the bad text. */
    if (!c)
        c = json_pack("{s:s, s:b, s:s, s:s, s:s, s:s}", "code", code ? code : "", "passed", passed,
                      "where", "", "expected", "", "observed", "(not UTF-8)", "hint",
                      hint ? hint : "");
    json_array_append_new(conditions, c);
}

json_t *lab_step_result(int step, const char *title, json_t *conditions)
{
    bool passed = json_array_size(conditions) > 0;
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c) passed =
        passed && json_is_true(json_object_get(c, "passed"));
    return json_pack("{s:i, s:s, s:b, s:o}", "step", step, "title", title ? title : "", "passed",
                     passed, "conditions", conditions);
}
