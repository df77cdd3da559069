/* libFuzzer target for the streaming list parser (client/list_stream.c),
 * which reads every page a Kubernetes API server sends the field tools.
 *
 * For every input, the bytes are fed twice, whole and cut in chunks whose
 * sizes come from the input's first byte, with and without a field list:
 *   - feeding never crashes; a refusal always explains itself;
 *   - every item handed over is a JSON object that serializes;
 *   - whole and chunked feeding agree: the same outcome, the same items and
 *     the same continue token (the parser must not depend on where the
 *     socket cut the bytes);
 *   - kc_object_parse_exact (the API server's request bodies) reads the
 *     bytes as json_loadb does, members in order and duplicates told, or
 *     declines.
 * A broken promise ends in __builtin_trap() after a note on stderr. Build
 * and run with fuzz/run.sh. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/list_stream.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "list_fuzz: %s\n", what);
    __builtin_trap();
}

static int collect(json_t *item, void *ud)
{
    if (!json_is_object(item)) fail("an item that is not an object");
    char *text = json_dumps(item, JSON_COMPACT);
    if (!text) fail("an item that does not serialize");
    free(text);
    return json_array_append(ud, item) == 0 ? 0 : 1;
}

typedef struct outcome {
    int rc; /* 0 parsed, -1 refused */
    json_t *items;
    char *cont;
} outcome;

static outcome parse(const kc_fields *keep, const char *text, size_t size, size_t chunk)
{
    outcome o = {0, json_array(), NULL};
    kc_list_parser *p = kc_list_parser_new(keep, collect, o.items);
    if (!p) fail("no parser");
    gp_error err = {0};
    for (size_t at = 0; at < size && o.rc == 0; at += chunk) {
        size_t n = size - at < chunk ? size - at : chunk;
        o.rc = kc_list_parser_feed(p, text + at, n, &err) < 0 ? -1 : 0;
    }
    if (o.rc == 0 && kc_list_parser_finish(p, &o.cont, &err) != 0) o.rc = -1;
    if (o.rc != 0 && !err.text[0]) fail("a refusal without a message");
    kc_list_parser_free(p);
    return o;
}

static void outcome_free(outcome *o)
{
    json_decref(o->items);
    free(o->cont);
}

static void exact_as_jansson(const char *text, size_t size)
{
    bool dup = false;
    json_t *got = kc_object_parse_exact(text, size, &dup);
    if (!got) return;
    json_error_t e;
    json_t *want = json_loadb(text, size, 0, NULL);
    if (!want) fail("read exactly what jansson refuses");
    char *g = json_dumps(got, JSON_COMPACT), *w = json_dumps(want, JSON_COMPACT);
    if (!g || !w || strcmp(g, w) != 0) fail("read otherwise than jansson");
    json_t *strict = json_loadb(text, size, JSON_REJECT_DUPLICATES, &e);
    if (dup != (!strict && strstr(e.text, "duplicate") != NULL))
        fail("duplicate keys told otherwise than jansson");
    json_decref(strict);
    free(g);
    free(w);
    json_decref(want);
    json_decref(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const paths[] = {"metadata.name", "spec.containers.resources", "status",
                                        NULL};
    static kc_fields *keep;
    if (!keep && !(keep = kc_fields_new(paths))) return 0;
    if (size == 0) return 0;
    size_t chunk = (size_t)data[0] % 17 + 1;
    const char *text = (const char *)data + 1;
    size--;
    for (int pruned = 0; pruned < 2; pruned++) {
        const kc_fields *k = pruned ? keep : NULL;
        outcome whole = parse(k, text, size, size ? size : 1);
        outcome cut = parse(k, text, size, chunk);
        if (whole.rc != cut.rc) fail("whole and chunked feeding disagree on the outcome");
        if (whole.rc == 0) {
            if (!json_equal(whole.items, cut.items)) fail("whole and chunked items differ");
            if ((whole.cont == NULL) != (cut.cont == NULL) ||
                (whole.cont && strcmp(whole.cont, cut.cont) != 0))
                fail("whole and chunked continue tokens differ");
        }
        outcome_free(&whole);
        outcome_free(&cut);
    }
    exact_as_jansson(text, size);
    return 0;
}
