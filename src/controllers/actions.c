/* Building the actions of actions_internal.h. */
#include "controllers/actions_internal.h"

#include "kube/json.h"

const json_t *ctl_action_object(const json_t *entry)
{
    const json_t *obj = json_object_get(entry, "object");
    return json_is_object(obj) ? obj : NULL;
}

void ctl_push(bool *ok, json_t *array, json_t *value)
{
    if (json_array_append_new(array, value) != 0) *ok = false;
}

void ctl_put(bool *ok, json_t *obj, const char *key, json_t *value)
{
    if (json_object_set_new(obj, key, value) != 0) *ok = false;
}

json_t *ctl_action(const char *op, const json_t *entry)
{
    const json_t *m = kube_obj(ctl_action_object(entry), "metadata");
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "op", op, "resource",
                     kube_str(entry, "resource"), "group", kube_str(entry, "group"), "namespace",
                     kube_str(m, "namespace"), "name", kube_str(m, "name"), "uid",
                     kube_str(m, "uid"));
}

void ctl_action_delete(bool *ok, json_t *actions, const json_t *entry, const char *policy)
{
    json_t *a = ctl_action("delete", entry);
    if (a) ctl_put(ok, a, "propagationPolicy", json_string(policy));
    ctl_push(ok, actions, a);
}

void ctl_action_patch(bool *ok, json_t *actions, const char *op, const json_t *entry,
                      const char *type, json_t *patch)
{
    json_t *a = ctl_action(op, entry);
    if (a) {
        ctl_put(ok, a, "patchType", json_string(type));
        ctl_put(ok, a, "patch", patch);
    } else {
        json_decref(patch);
    }
    ctl_push(ok, actions, a);
}
