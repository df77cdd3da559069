#include "kube/taints.h"

#include <string.h>

#include "kube/json.h"

bool kube_toleration_tolerates(const json_t *t, const char *key, const char *value,
                               const char *effect)
{
    const char *want_effect = kube_str(t, "effect"), *want_key = kube_str(t, "key");
    if (*want_effect && strcmp(want_effect, effect) != 0) return false;
    if (*want_key && strcmp(want_key, key) != 0) return false;
    const char *op = kube_str(t, "operator");
    if (!*op || strcmp(op, "Equal") == 0) return strcmp(kube_str(t, "value"), value) == 0;
    return strcmp(op, "Exists") == 0;
}

bool kube_tolerations_tolerate(const json_t *tolerations, const char *key, const char *value,
                               const char *effect)
{
    size_t i;
    const json_t *t;
    json_array_foreach(tolerations, i, t)
    {
        if (kube_toleration_tolerates(t, key, value, effect)) return true;
    }
    return false;
}

static unsigned effect_bit(const char *effect)
{
    if (!strcmp(effect, "NoSchedule")) return KUBE_TAINT_NO_SCHEDULE;
    if (!strcmp(effect, "PreferNoSchedule")) return KUBE_TAINT_PREFER_NO_SCHEDULE;
    if (!strcmp(effect, "NoExecute")) return KUBE_TAINT_NO_EXECUTE;
    return 0;
}

const json_t *kube_untolerated_taint(const json_t *taints, const json_t *tolerations,
                                     unsigned effects)
{
    size_t i;
    const json_t *taint;
    json_array_foreach(taints, i, taint)
    {
        const char *effect = kube_str(taint, "effect");
        if (!(effect_bit(effect) & effects)) continue;
        if (!kube_tolerations_tolerate(tolerations, kube_str(taint, "key"),
                                       kube_str(taint, "value"), effect))
            return taint;
    }
    return NULL;
}
