/* Commands that talk to a cluster: kubectl's options, one error mapping. */
#ifndef GPUOP_CLI_KUBE_CLI_H
#define GPUOP_CLI_KUBE_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "analyze/analyze.h"

#include "client/kubeconfig.h"
#include "client/rest.h"

/* Consumes argv[*i] (and its value) when it is --kubeconfig, --context,
 * -n/--namespace or --request-timeout (also as --opt=VALUE): 1 when it
 * did, 0 when argv[*i] is something else, -1 when the value is missing,
 * -2 when it is not a valid duration. */
int cli_kube_option(int argc, char **argv, int *i, kc_options *o);
/* The usage error for a cli_kube_option result below 0; returns 2. */
int cli_kube_option_error(const char *cmd, int k, const char *arg);

/* Resolves the kubeconfig and opens a client; prints what went wrong and
 * returns EXIT_CANNOT_TELL, or EXIT_HOLDS. */
int cli_kube_connect(const kc_options *o, kc_client **out);

/* Prints err and returns the exit code for r (2: cannot tell). */
int cli_kube_fail(kc_result r, const gp_error *err);

void cli_kube_options_help(FILE *out);

/* What a command about one object reads from its command line:
 * [NAMESPACE/]NAME, -o FORMAT and the cluster options. */
typedef struct cli_kube_object {
    kc_options kube;
    an_format fmt;
    const char *target;
} cli_kube_object;

/* Parses argv for `cmd` (lab output allowed when has_lab). Returns -1 when
 * the command may go on, else the exit code to return (after --help, 0;
 * after a usage error, 2). `missing` is the message when no target is
 * given. */
int cli_kube_object_args(int argc, char **argv, const char *cmd, bool has_lab,
                         void (*usage)(FILE *), const char *missing, cli_kube_object *o);

/* Whether `name` can name an object ("", "." and ".." cannot); prints
 * the usage error for `cmd` when not. `what` is "pod", "namespace"... */
bool cli_kube_name_ok(const char *cmd, const char *what, const char *name);

/* The API path of the target: `format` holds two %s, the escaped
 * namespace (the target's, else the context's) and the escaped name;
 * *ns receives the namespace. */
void cli_kube_object_path(kc_client *c, const char *target, const char *format, char *path,
                          size_t size, char ns[256]);

/* Every pod of the cluster, page by page, each built with only the fields
 * the analyzers read (an_pod_fields): what a 150,000-pod list costs is
 * mostly the fields nobody reads. */
kc_result cli_kube_list_pods(kc_client *c, kc_item_fn each, void *ud, gp_error *err);

/* "text", "json" and (when has_lab) "lab" -> *out; -1 for anything else. */
int cli_kube_format(const char *name, bool has_lab, an_format *out);

/* Prints an analyzer's report: its JSON, or render(report, fmt). */
int cli_kube_print_report(const json_t *report, an_format fmt,
                          char *(*render)(const json_t *, an_format));

/* ---- -o json when the command cannot tell ----
 *
 * A report command runs its body between cli_kube_errors_begin and
 * cli_kube_errors_end. Every error on the way is printed on stderr as
 * before and noted (the last one wins) with a code: "usage", "not-found",
 * "conflict", "api-error", "unreachable", "bad-response", "input",
 * "out-of-memory". When the body ends with exit 2, -o json is on the
 * command line and no report was printed, stdout gets
 *   {"schema": SCHEMA, "error": {"code", "message", "where"}}
 * so that a script never reads an empty stdout. */
void cli_kube_errors_begin(void);
int cli_kube_errors_end(int rc, int argc, char **argv, const char *schema);
/* Notes an error (message and where are copied; where may be NULL). */
void cli_kube_note_error(const char *code, const char *message, const char *where);
/* cli_usage_error, noted as "usage". */
int cli_kube_usage(const char *cmd, const char *fmt, ...) GP_PRINTF(2, 3);
/* cli_report, noted with `code`; where is the error's FILE:LINE:COL when
 * it has one, else `where`. Returns EXIT_CANNOT_TELL. */
int cli_kube_report_error(const char *code, const gp_error *err, const char *where);
/* cli_kube_fail, noting the API path asked for. */
int cli_kube_fail_at(kc_result r, const gp_error *err, const char *path);

#endif
