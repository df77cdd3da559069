/* The API server's routes to the node agents (agents.h), what `gpuop node`
 * calls; under the server's token like every other path:
 *   GET  /gpuop/v1/agents                        {"kind": "NodeAgentList", "items": [NAME...]}
 *   GET  /gpuop/v1/agents/NAME                   the node's state (ag_agents_status)
 *   POST /gpuop/v1/agents/NAME/restart-containerd  systemctl restart containerd
 *   POST /gpuop/v1/agents/NAME/signal            {"signal": "HUP"}: kill -HUP $(pidof containerd)
 *   POST /gpuop/v1/agents/NAME/reboot            {"kernelUpdate": true|false}
 * A POST answers a Status: Success, or Failure with 404 (no such node), 400
 * (a bad body), 409 (no containerd process took the signal), 500. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "agents/agents.h"
#include "kube/json.h"

#define PREFIX "/gpuop/v1/agents"

static void ok(as_response *resp, const char *message)
{
    as_json_response(resp, 200,
                     json_pack("{s:s, s:s, s:{}, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                               "v1", "metadata", "status", "Success", "message", message, "code",
                               200));
}

static void failed(as_response *resp, const gp_error *err)
{
    bool unknown = strstr(err->text, "has no agent") != NULL;
    as_status(resp, unknown ? 404 : 500, unknown ? "NotFound" : "InternalError", err->text);
}

static int signal_named(const char *name)
{
    static const struct {
        const char *name;
        int sig;
    } known[] = {{"HUP", SIGHUP},   {"TERM", SIGTERM}, {"INT", SIGINT},  {"KILL", SIGKILL},
                 {"USR1", SIGUSR1}, {"PIPE", SIGPIPE}, {"QUIT", SIGQUIT}};
    if (strncmp(name, "SIG", 3) == 0) name += 3;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].name, name) == 0) return known[i].sig;
    return 0;
}

static json_t *body_of(const as_request *req, as_response *resp)
{
    json_error_t jerr;
    json_t *body = req->body_len ? json_loadb(req->body, req->body_len, 0, &jerr) : json_object();
    if (!json_is_object(body)) {
        json_decref(body);
        as_status(resp, 400, "BadRequest", "the body must be a JSON object");
        return NULL;
    }
    return body;
}

static void action(ag_agents *a, const char *node, const char *verb, const as_request *req,
                   as_response *resp)
{
    json_t *body = body_of(req, resp);
    if (!body) return;
    gp_error err = {0};
    char message[300];
    if (strcmp(verb, "restart-containerd") == 0) {
        if (ag_agents_restart_containerd(a, node, &err) != 0)
            failed(resp, &err);
        else
            ok(resp, "containerd restarted");
    } else if (strcmp(verb, "signal") == 0) {
        const char *name = kube_str(body, "signal");
        int sig = signal_named(name);
        int rc = sig ? ag_agents_signal(a, node, sig, &err) : -2;
        snprintf(message, sizeof message, "SIG%s sent to containerd", name);
        if (rc == -2)
            as_status(resp, 400, "BadRequest", "signal: not a signal gpuop delivers");
        else if (rc < 0)
            failed(resp, &err);
        else if (rc == 1)
            as_status(resp, 409, "Conflict", "no containerd process runs on the node");
        else
            ok(resp, message);
    } else if (strcmp(verb, "reboot") == 0) {
        bool update = json_is_true(json_object_get(body, "kernelUpdate"));
        if (ag_agents_reboot(a, node, update, &err) != 0)
            failed(resp, &err);
        else
            ok(resp, update ? "rebooted into a new kernel" : "rebooted");
    } else {
        as_status(resp, 404, "NotFound", "the server could not find the requested resource");
    }
    json_decref(body);
}

void ag_agents_route(void *ctx, const as_request *req, as_response *resp)
{
    ag_agents *a = ctx;
    const char *path = req->path;
    size_t plen = strlen(PREFIX);
    if (req->path_len || strncmp(path, PREFIX, plen) != 0 ||
        (path[plen] != '\0' && path[plen] != '/')) {
        as_status(resp, 404, "NotFound", "the server could not find the requested resource");
        return;
    }
    const char *rest = path[plen] ? path + plen + 1 : "";
    const char *slash = strchr(rest, '/');
    char node[256];
    snprintf(node, sizeof node, "%.*s", (int)(slash ? (size_t)(slash - rest) : strlen(rest)), rest);
    bool get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
    if (!node[0] && get) {
        as_json_response(
            resp, 200,
            json_pack("{s:s, s:o}", "kind", "NodeAgentList", "items", ag_agents_names(a)));
    } else if (node[0] && !slash && get) {
        gp_error err = {0};
        json_t *st = ag_agents_status(a, node, &err);
        if (st)
            as_json_response(resp, 200, st);
        else
            failed(resp, &err);
    } else if (node[0] && slash && post && !strchr(slash + 1, '/')) {
        action(a, node, slash + 1, req, resp);
    } else {
        as_status(resp, 405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource");
    }
}
