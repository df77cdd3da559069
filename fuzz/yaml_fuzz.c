/* libFuzzer target for what gpuop reads from YAML and from scheduler text:
 * gp_yaml_to_json (kubeconfigs, manifests, the device plugin's config),
 * an_dp_config_parse (the device plugin's sharing rules) and
 * an_sched_message_parse (kube-scheduler's FitError text).
 *
 * For every input:
 *   - gp_yaml_to_json either fails with a located, non-empty error, or
 *     returns one document per entry with a positions object each, every
 *     document serializable as JSON; asking a position never crashes;
 *   - an_dp_config_parse returns a config with "sharing" or fails with a
 *     message;
 *   - an_sched_message_parse of the input as text (cut at the first NUL)
 *     either fails with a message or names a blocker.
 * A broken promise ends in __builtin_trap() after a note on stderr. Build
 * and run with fuzz/run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analyze/devplugin_config.h"
#include "analyze/sched_message.h"
#include "util/error.h"
#include "util/yaml_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "yaml_fuzz: %s\n", what);
    __builtin_trap();
}

static void check_yaml(const char *text, size_t size)
{
    json_t *docs = NULL, *positions = NULL;
    gp_error err = {0};
    if (gp_yaml_to_json(text, size, "input", &docs, &positions, &err) != 0) {
        if (!err.text[0]) fail("gp_yaml_to_json failed without a message");
        if (docs || positions) fail("gp_yaml_to_json failed but returned documents");
        return;
    }
    if (!json_is_array(docs) || !json_is_array(positions) ||
        json_array_size(docs) != json_array_size(positions))
        fail("documents and positions do not pair up");
    size_t i;
    json_t *doc;
    json_array_foreach(docs, i, doc)
    {
        char *dump = json_dumps(doc, JSON_ENCODE_ANY | JSON_COMPACT);
        if (!dump) fail("a document does not serialize");
        free(dump);
        unsigned line = 0, col = 0;
        const json_t *pos = json_array_get(positions, i);
        gp_yaml_position(pos, "", &line, &col);
        gp_yaml_position(pos, "/a/0/b", &line, &col);
    }
    json_decref(docs);
    json_decref(positions);
}

static void check_config(const char *text, size_t size)
{
    gp_error err = {0};
    char *log = NULL;
    json_t *config = an_dp_config_parse(text, size, "config", &log, &err);
    if (config) {
        if (!json_is_object(config)) fail("an_dp_config_parse returned a non-object");
        json_decref(config);
    } else if (!err.text[0]) {
        fail("an_dp_config_parse failed without a message");
    }
    free(log);
}

static void check_message(const char *text)
{
    gp_error err = {0};
    json_t *parsed = an_sched_message_parse(text, &err);
    if (!parsed) {
        if (!err.text[0]) fail("an_sched_message_parse failed without a message");
        return;
    }
    const char *blocker = an_sched_primary_blocker(parsed);
    if (!blocker || !*blocker) fail("a parsed message names no blocker");
    json_decref(parsed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    check_yaml(text, size);
    check_config(text, size);
    check_message(text);
    free(text);
    return 0;
}
