/* How the controllers' runtime talks to the API server: object paths, writes
 * queued or sent at once, and the writes in flight it leaves objects alone
 * for (controllers_internal.h). */
#include <stdio.h>
#include <string.h>

#include "apiserver/loopback.h"
#include "controllers/controllers_internal.h"

void ctl_object_path(char *buf, size_t size, const char *group, const char *resource,
                     const char *ns, const char *name, const char *sub)
{
    int n = group && *group ? snprintf(buf, size, "/apis/%s/v1", group)
                            : snprintf(buf, size, "/api/v1");
    if (ns && *ns) n += snprintf(buf + n, size - (size_t)n, "/namespaces/%s", ns);
    n += snprintf(buf + n, size - (size_t)n, "/%s", resource);
    if (name) n += snprintf(buf + n, size - (size_t)n, "/%s", name);
    if (sub) snprintf(buf + n, size - (size_t)n, "/%s", sub);
}

bool ctl_send(ctl_loop *c, const char *method, const char *path, const char *query,
              const char *type, const json_t *body, json_t **answer)
{
    if (!answer) {
        ctl_wq_push(c->wq,
                    ctl_wq_write_new(method, path, query, type, json_incref((json_t *)body)));
        return true;
    }
    c->failed_writes += ctl_wq_drain(c->wq);
    as_reply r = as_loopback_call(c->api, method, path, query, type, body);
    *answer = r.body;
    return r.status >= 200 && r.status < 300;
}

bool ctl_send_now(ctl_loop *c, const char *method, const char *path, const char *query,
                  const char *type, const json_t *body)
{
    json_t *answer = NULL;
    bool ok = ctl_send(c, method, path, query, type, body, &answer);
    json_decref(answer);
    return ok;
}

json_t *ctl_get(ctl_loop *c, const char *path)
{
    as_reply r = as_loopback_call(c->api, "GET", path, NULL, NULL, NULL);
    if (r.status == 200) return r.body;
    json_decref(r.body);
    return NULL;
}

/* Appends s at buf[at], cut to what fits with the NUL; the new length. */
static size_t key_part(char *buf, size_t size, size_t at, const char *s)
{
    size_t n = strlen(s);
    if (at + n >= size) n = size - 1 - at;
    memcpy(buf + at, s, n);
    buf[at + n] = '\0';
    return at + n;
}

/* "resource|ns/name", as snprintf would cut it: asked for every node and
 * every pod on every pass, where snprintf's formatting showed. */
void ctl_inflight_key(char *buf, size_t size, const char *resource, const char *ns,
                      const char *name)
{
    if (!size) return;
    buf[0] = '\0';
    size_t at = key_part(buf, size, 0, resource);
    at = key_part(buf, size, at, "|");
    at = key_part(buf, size, at, ns ? ns : "");
    at = key_part(buf, size, at, "/");
    key_part(buf, size, at, name ? name : "");
}

static void write_done(void *ud, const char *tag, bool ok)
{
    ctl_loop *c = ud;
    as_store_lock(c->api->store);
    uint64_t rv = as_store_rv(c->api->store);
    as_store_unlock(c->api->store);
    ctl_inflight_done(c->inflight, tag, ok, rv);
}

bool ctl_waiting_at(ctl_loop *c, const snapshot *s, const char *resource, const char *ns,
                    const char *name, uint64_t rv)
{
    char key[600];
    ctl_inflight_key(key, sizeof key, resource, ns, name);
    return ctl_inflight_pending(c->inflight, key, rv, s->listed_rv);
}

bool ctl_pod_waiting(ctl_loop *c, const snapshot *s, const pod_summary *p)
{
    return ctl_waiting_at(c, s, "pods", p->ns, p->name, p->rv);
}

int ctl_send_tracked(ctl_loop *c, ctl_wq_write *w, const char *resource, const json_t *obj,
                     const char *node, const char *ip)
{
    if (!w) return 0;
    char key[600];
    ctl_inflight_key(key, sizeof key, resource,
                     kube_str_or_null(kube_obj(obj, "metadata"), "namespace"),
                     kube_str_or_null(kube_obj(obj, "metadata"), "name"));
    ctl_inflight_add(c->inflight, key, rv_of(obj), node, ip);
    ctl_wq_write_notify(w, write_done, c, key);
    ctl_wq_push(c->wq, w);
    return 1;
}
