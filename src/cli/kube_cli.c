/* What every command that talks to a cluster shares: the kubeconfig
 * options kubectl users already know, and one mapping from the client's
 * results to messages and exit codes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kube_cli.h"

#include "analyze/common.h"

/* kubectl's --request-timeout: a number of seconds, or a number with a unit
 * (s, m, h); "0" means no timeout. */
static int parse_timeout(const char *text, long *ms)
{
    char *end;
    double v = strtod(text, &end);
    double unit = 1000;
    if (end == text || v < 0) return -1;
    if (strcmp(end, "h") == 0)
        unit = 3600000;
    else if (strcmp(end, "m") == 0)
        unit = 60000;
    else if (strcmp(end, "ms") == 0)
        unit = 1;
    else if (*end && strcmp(end, "s") != 0)
        return -1;
    /* kc_options: 0 is the default (30 s); "no timeout" is a very long one */
    *ms = v == 0 ? 365L * 24 * 3600 * 1000 : (long)(v * unit) > 0 ? (long)(v * unit) : 1;
    return 0;
}

int cli_kube_option(int argc, char **argv, int *i, kc_options *o)
{
    const char *arg = argv[*i];
    const char *value = NULL;
    const char *const names[] = {"--kubeconfig", "--context", "--namespace", "-n",
                                 "--request-timeout"};
    size_t which = sizeof names / sizeof names[0];
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t n = strlen(names[k]);
        if (strcmp(arg, names[k]) == 0) {
            if (*i + 1 >= argc) return -1;
            value = argv[++*i];
            which = k;
            break;
        }
        if (strncmp(arg, names[k], n) == 0 && arg[n] == '=') {
            value = arg + n + 1;
            which = k;
            break;
        }
    }
    switch (which) {
    case 0:
        o->kubeconfig = value;
        return 1;
    case 1:
        o->context = value;
        return 1;
    case 2:
    case 3:
        o->nspace = value;
        return 1;
    case 4:
        return parse_timeout(value, &o->timeout_ms) == 0 ? 1 : -2;
    default:
        return 0;
    }
}

int cli_kube_option_error(const char *cmd, int k, const char *arg)
{
    if (k == -1) return cli_kube_usage(cmd, _("%s needs a value"), arg);
    return cli_kube_usage(cmd, _("%s wants a duration such as 30s, 2m or 0 (no timeout)"), arg);
}

/* ---- the error a report command ends with ---- */

static struct {
    char code[32], message[1024], where[512];
    bool printed; /* a report went to stdout */
} last_error;

void cli_kube_errors_begin(void)
{
    memset(&last_error, 0, sizeof last_error);
}

void cli_kube_note_error(const char *code, const char *message, const char *where)
{
    snprintf(last_error.code, sizeof last_error.code, "%s", code);
    snprintf(last_error.message, sizeof last_error.message, "%s", message ? message : "");
    snprintf(last_error.where, sizeof last_error.where, "%s", where ? where : "");
}

int cli_kube_usage(const char *cmd, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    cli_kube_note_error("usage", what, "command line");
    return cli_usage_error(cmd, "%s", what);
}

/* "FILE:LINE:COL" of a located error's text, into buf; false when the
 * error has no position. */
static bool error_position(const gp_error *err, char *buf, size_t size)
{
    if (!err->line) return false;
    char tail[64];
    snprintf(tail, sizeof tail, ":%u:%u: ", err->line, err->col);
    const char *at = strstr(err->text, tail);
    if (!at) return false;
    snprintf(buf, size, "%.*s:%u:%u", (int)(at - err->text), err->text, err->line, err->col);
    return true;
}

int cli_kube_report_error(const char *code, const gp_error *err, const char *where)
{
    char pos[512];
    cli_report(err);
    cli_kube_note_error(code, err->text, error_position(err, pos, sizeof pos) ? pos : where);
    return EXIT_CANNOT_TELL;
}

static const char *result_code(kc_result r)
{
    switch (r) {
    case KC_NOT_FOUND:
        return "not-found";
    case KC_CONFLICT:
        return "conflict";
    case KC_UNREACHABLE:
        return "unreachable";
    case KC_BAD_RESPONSE:
        return "bad-response";
    case KC_OK:
    case KC_API_ERROR:
    default:
        return "api-error";
    }
}

int cli_kube_fail_at(kc_result r, const gp_error *err, const char *path)
{
    if (r == KC_OK) return EXIT_HOLDS;
    /* The client's text is a whole line already, kubectl's words
     * ("Error from server (NotFound): ..."). */
    return cli_kube_report_error(result_code(r), err, path);
}

int cli_kube_fail(kc_result r, const gp_error *err)
{
    return cli_kube_fail_at(r, err, "");
}

int cli_kube_errors_end(int rc, int argc, char **argv, const char *schema)
{
    if (rc != EXIT_CANNOT_TELL || last_error.printed) return rc;
    bool json = false;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-o") == 0 && strcmp(argv[i + 1], "json") == 0) json = true;
    if (!json) return rc;
    if (!*last_error.code) cli_kube_note_error("cannot-tell", "", "");
    json_t *out =
        json_pack("{s:s, s:{s:s, s:s, s:s}}", "schema", schema, "error", "code", last_error.code,
                  "message", last_error.message, "where", last_error.where);
    if (out) an_render_json(out, stdout);
    json_decref(out);
    return rc;
}

int cli_kube_connect(const kc_options *o, kc_client **out)
{
    gp_error err = {0};
    kc_result r = kc_client_open(o, out, &err);
    if (r != KC_OK) return cli_kube_fail_at(r, &err, "kubeconfig");
    return EXIT_HOLDS;
}

void cli_kube_options_help(FILE *out)
{
    fputs(_("Cluster options (as kubectl reads them):\n"
            "  --kubeconfig FILE   the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)\n"
            "  --context NAME      the context (default: current-context)\n"
            "  -n, --namespace NS  the namespace (default: the context's, else default)\n"
            "  --request-timeout S seconds to wait for each answer (default 30)\n"),
          out);
}

int cli_kube_format(const char *name, bool has_lab, an_format *out)
{
    if (strcmp(name, "text") == 0)
        *out = AN_TEXT;
    else if (strcmp(name, "json") == 0)
        *out = AN_JSON;
    else if (has_lab && strcmp(name, "lab") == 0)
        *out = AN_LAB;
    else
        return -1;
    return 0;
}

int cli_kube_print_report(const json_t *report, an_format fmt,
                          char *(*render)(const json_t *, an_format))
{
    char *text = fmt == AN_JSON ? json_dumps(report, JSON_INDENT(2)) : render(report, fmt);
    if (!text) {
        cli_error(_("out of memory"));
        cli_kube_note_error("out-of-memory", "out of memory", "");
        return EXIT_CANNOT_TELL;
    }
    last_error.printed = true;
    fputs(text, stdout);
    if (fmt == AN_JSON || (*text && text[strlen(text) - 1] != '\n')) putchar('\n');
    free(text);
    return EXIT_HOLDS;
}

kc_result cli_kube_list_pods(kc_client *c, kc_item_fn each, void *ud, gp_error *err)
{
    kc_fields *keep = kc_fields_new(an_pod_fields);
    if (!keep) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return KC_BAD_RESPONSE;
    }
    kc_result r = kc_list_fields(c, "/api/v1/pods", 0, keep, each, ud, err);
    kc_fields_free(keep);
    return r;
}

int cli_kube_object_args(int argc, char **argv, const char *cmd, bool has_lab,
                         void (*usage)(FILE *), const char *missing, cli_kube_object *o)
{
    memset(o, 0, sizeof *o);
    o->fmt = AN_TEXT;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            usage(stdout);
            return EXIT_HOLDS;
        }
        int k = cli_kube_option(argc, argv, &i, &o->kube);
        if (k < 0) return cli_kube_option_error(cmd, k, arg);
        if (k > 0) continue;
        if (strcmp(arg, "-o") == 0) {
            if (i + 1 >= argc || cli_kube_format(argv[++i], has_lab, &o->fmt) != 0)
                return cli_kube_usage(cmd, "%s",
                                      has_lab ? _("-o wants text, json or lab")
                                              : _("-o wants text or json"));
        } else if (arg[0] != '-' && !o->target) {
            o->target = arg;
        } else {
            return cli_kube_usage(cmd, _("unexpected argument '%s'"), arg);
        }
    }
    if (!o->target) return cli_kube_usage(cmd, "%s", missing);
    const char *slash = strchr(o->target, '/');
    if (slash) {
        char ns[256];
        snprintf(ns, sizeof ns, "%.*s", (int)(slash - o->target), o->target);
        if (!cli_kube_name_ok(cmd, "namespace", ns)) return EXIT_CANNOT_TELL;
    }
    if (!cli_kube_name_ok(cmd, "object", slash ? slash + 1 : o->target)) return EXIT_CANNOT_TELL;
    return -1;
}

bool cli_kube_name_ok(const char *cmd, const char *what, const char *name)
{
    /* "" would list the collection, "." and ".." would climb the path */
    if (*name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0) return true;
    cli_kube_usage(cmd, _("'%s' is not a valid %s name"), name, what);
    return false;
}

void cli_kube_object_path(kc_client *c, const char *target, const char *format, char *path,
                          size_t size, char ns[256])
{
    const char *slash = strchr(target, '/');
    if (slash)
        snprintf(ns, 256, "%.*s", (int)(slash - target), target);
    else
        snprintf(ns, 256, "%s", kc_client_config(c)->nspace);
    char *ens = kc_escape(ns), *ename = kc_escape(slash ? slash + 1 : target);
    snprintf(path, size, format, ens ? ens : "", ename ? ename : "");
    free(ens);
    free(ename);
}
