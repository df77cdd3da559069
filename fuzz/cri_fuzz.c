/* libFuzzer target for the decoders of a running containerd's answers
 * (containerd/cri.h): the CRI StatusResponse and VersionResponse and the
 * introspection PluginsResponse. `gpuop containerd check --source daemon`
 * feeds them whatever the socket sent, and a node in trouble may send
 * anything.
 *
 * The first byte picks the decoder ('s' Status, 'v' Version, 'p' Plugins;
 * any other byte: all three), the rest is the message, copied to a buffer of
 * exactly its size so that ASan sees any read past it. For every input:
 *   - a failure comes with a NUL-terminated, non-empty message;
 *   - a decoded status names only NUL-terminated runtimes and handlers,
 *     each of which cd_cri_status_has_handler finds again, and its decoded
 *     answer and config serialize;
 *   - a decoded plugin error has NUL-terminated texts, and `failed`
 *     implies `found`.
 * A broken promise ends in __builtin_trap() after a note on stderr. Seeds:
 * fuzz/seeds-cri/, the recorded daemons' answers (fuzz/make_cri_seeds.py).
 * Build and run with fuzz/run.sh. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "containerd/cri.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cri_fuzz: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    __builtin_trap();
}

static void check_error(const char *what, const gp_error *err)
{
    size_t len = strnlen(err->text, sizeof err->text);
    if (len == sizeof err->text) fail("%s: error text is not NUL-terminated", what);
    if (len == 0) fail("%s: failed without a message", what);
}

static void check_text(const char *what, const char *text, size_t cap)
{
    if (strnlen(text, cap) == cap) fail("%s is not NUL-terminated", what);
}

static void check_serializes(const char *what, const json_t *v)
{
    if (!v) return;
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) fail("%s does not serialize", what);
    free(text);
}

static void check_status(const cd_cri_status *s)
{
    check_text("api", s->api, sizeof s->api);
    check_text("runtime_name", s->runtime_name, sizeof s->runtime_name);
    check_text("runtime_version", s->runtime_version, sizeof s->runtime_version);
    const cd_names *names = s->handlers_reported ? &s->handlers : &s->runtimes;
    for (size_t i = 0; i < names->n; i++) {
        if (!names->items[i]) fail("runtime %zu is NULL", i);
        if (!cd_cri_status_has_handler(s, names->items[i]))
            fail("runtime '%s' is listed but not found", names->items[i]);
    }
    check_serializes("the decoded answer", s->answer);
    check_serializes("info.config", s->config);
    check_serializes("the decoded version", s->version);
}

static void fuzz_status(const uint8_t *msg, size_t len, bool version)
{
    cd_cri_status s;
    memset(&s, 0, sizeof s);
    gp_error err = {0};
    int rc = version ? cd_cri_version_decode(msg, len, &s, &err)
                     : cd_cri_status_decode(msg, len, &s, &err);
    if (rc != 0)
        check_error(version ? "Version" : "Status", &err);
    else
        check_status(&s);
    cd_cri_status_free(&s);
}

static void fuzz_plugins(const uint8_t *msg, size_t len)
{
    cd_cri_plugin_error p;
    memset(&p, 0, sizeof p);
    gp_error err = {0};
    if (cd_cri_plugins_decode(msg, len, &p, &err) != 0) {
        check_error("Plugins", &err);
        return;
    }
    check_text("plugin", p.plugin, sizeof p.plugin);
    check_text("message", p.message, sizeof p.message);
    if (p.failed && !p.found) fail("a failed plugin that was not found");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    uint8_t which = data[0];
    size_t len = size - 1;
    uint8_t *msg = malloc(len ? len : 1);
    if (!msg) return 0;
    memcpy(msg, data + 1, len);
    if (which == 's' || which == 'v') {
        fuzz_status(msg, len, which == 'v');
    } else if (which == 'p') {
        fuzz_plugins(msg, len);
    } else {
        fuzz_status(msg, len, false);
        fuzz_status(msg, len, true);
        fuzz_plugins(msg, len);
    }
    free(msg);
    return 0;
}
