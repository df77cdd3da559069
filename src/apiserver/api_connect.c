/* pods/log, pods/exec, pods/attach and pods/portforward.
 *
 * kube-apiserver answers them by proxying to the pod's kubelet
 * (pkg/registry/core/pod/strategy.go: LogLocation, ExecLocation,
 * AttachLocation, PortForwardLocation), after checking the container and
 * the node: a pod the scheduler has not placed has no kubelet, so its log
 * is empty (200, nothing) and its exec, attach and port-forward are a 400
 * `pod p1 does not have a host assigned`.
 *
 * gpuop's nodes are fake, as kwok's are, and kwok's kubelet server
 * (sigs.k8s.io/kwok pkg/kwok/server/debugging_*.go) serves logs, exec,
 * attach and port-forward only for pods its Logs, Exec, Attach and
 * PortForward configurations name; gpuop has none of them, so a placed pod
 * gets kwok's answer for an unconfigured one, a 400 with kwok's text (`no
 * logs found for container "c" in pod "ns/p"`): a learner sees that the
 * node runs no container rather than a made-up output. kwok gives exec's
 * and port-forward's error inside the stream it opened; gpuop answers
 * before opening any, so kubectl prints the same text as an error from the
 * server. A container that a node agent runs for real (`--node-agents`:
 * the toolkit's installer, the device plugin) has a log: what it wrote at
 * its last start (as_api.pod_log). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_internal.h"
#include "kube/json.h"
#include "util/buf.h"

static bool has_container(const json_t *spec, const char *name)
{
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
    for (size_t l = 0; l < 3; l++) {
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i,
                           c) if (strcmp(kube_str(c, "name"), name) == 0) return true;
    }
    return false;
}

static void names(gp_buf *b, const json_t *containers)
{
    size_t i;
    const json_t *c;
    json_array_foreach((json_t *)containers, i, c)
    {
        if (i) gp_buf_addc(b, ' ');
        gp_buf_add(b, kube_str(c, "name"));
    }
}

/* validateContainer (logs) and streamLocation's check (the others): the
 * container asked for, or the pod's only one. NULL after answering 400. */
static const char *container_of(const as_request *req, const json_t *pod, const char *name,
                                bool log, as_response *resp)
{
    const json_t *spec = json_object_get(pod, "spec");
    const char *c = as_query(req, "container");
    if (c && *c) {
        if (has_container(spec, c)) return c;
        char *msg = gp_format("container %s is not valid for pod %s", c, name);
        as_error_bad_request(resp, msg ? msg : "container is not valid");
        free(msg);
        return NULL;
    }
    const json_t *containers = json_object_get(spec, "containers");
    if (json_array_size(containers) == 1) return kube_str(json_array_get(containers, 0), "name");
    gp_buf b = {0};
    gp_buf_addf(&b, "a container name must be specified for pod %s", name);
    if (json_array_size(containers) > 1) {
        const json_t *init = json_object_get(spec, "initContainers");
        gp_buf_add(&b, ", choose one of: [");
        /* logs name every container, init containers first (VisitContainers) */
        if (log && json_array_size(init)) {
            names(&b, init);
            gp_buf_addc(&b, ' ');
        }
        names(&b, containers);
        gp_buf_addc(&b, ']');
        if (!log && json_array_size(init)) {
            gp_buf_add(&b, " or one of the init containers: [");
            names(&b, init);
            gp_buf_addc(&b, ']');
        }
    }
    char *msg = gp_buf_take(&b);
    as_error_bad_request(resp, msg ? msg : "a container name must be specified");
    free(msg);
    return NULL;
}

static void respond_empty_log(as_response *resp)
{
    memset(resp, 0, sizeof *resp);
    resp->status = 200;
    resp->content_type = "text/plain";
    resp->body = strdup("");
}

/* The log of a container the node agents run (as_api.pod_log). */
static bool agent_log(as_api *api, const char *node, const json_t *pod, const char *container,
                      as_response *resp)
{
    if (!api->pod_log) return false;
    const char *uid = kube_str(json_object_get(pod, "metadata"), "uid");
    gp_buf text = {0};
    if (api->pod_log(api->extension_ctx, node, uid, container, &text) != 1) {
        gp_buf_free(&text);
        return false;
    }
    memset(resp, 0, sizeof *resp);
    resp->status = 200;
    resp->content_type = "text/plain";
    resp->len = text.len;
    resp->body = text.data ? gp_buf_take(&text) : strdup("");
    return true;
}

void as_api_pod_connect(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    bool log = strcmp(p->sub, "log") == 0;
    bool get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
    if (!get && (log || strcmp(req->method, "POST") != 0)) {
        as_status(resp, 405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource");
        return;
    }
    as_store_lock(api->store);
    const as_object *o = as_store_get(api->store, p->resource, p->ns, p->name);
    json_t *pod = o ? json_loadb(o->json->text, o->json->len, 0, NULL) : NULL;
    as_store_unlock(api->store);
    if (!pod) {
        as_error_not_found(resp, p->resource, p->name);
        return;
    }
    const char *container = container_of(req, pod, p->name, log, resp);
    const char *node = kube_str(json_object_get(pod, "spec"), "nodeName");
    char *msg = NULL;
    if (!container) {
        /* answered */
    } else if (!*node && log) {
        respond_empty_log(resp);
    } else if (log && agent_log(api, node, pod, container, resp)) {
        /* a container the node agents run: what it wrote */
    } else if (!*node) {
        msg = gp_format("pod %s does not have a host assigned", p->name);
    } else if (strcmp(p->sub, "portforward") == 0) {
        const char *port = as_query(req, "ports");
        msg = gp_format("no forward found for port %s in pod \"%s/%s\"", port ? port : "0", p->ns,
                        p->name);
    } else {
        /* kwok's attach reads the pod's Logs configuration, as its logs do */
        const char *what = strcmp(p->sub, "exec") == 0 ? "exec" : "logs";
        msg = gp_format("no %s found for container \"%s\" in pod \"%s/%s\"", what, container, p->ns,
                        p->name);
    }
    if (msg) as_error_bad_request(resp, msg);
    free(msg);
    json_decref(pod);
}
