/* Pod validation as pkg/apis/core/validation/validation.go does it:
 * ValidatePodCreate, ValidatePodUpdate, ValidatePodStatusUpdate,
 * ValidatePodSpec and the container
 * rules a learner can run into (resources and tolerations are in
 * validate_resources.c). Checks the lab never
 * reaches (affinity, DNS config, security contexts, host aliases...) are left
 * out. */
#include "apiserver/strategy_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- containers ---- */

static void validate_ports(json_t *errs, const json_t *ports, const char *path)
{
    static const char *const protocols[] = {"SCTP", "TCP", "UDP", NULL};
    json_t *names = json_object();
    size_t i;
    const json_t *p;
    json_array_foreach(ports, i, p)
    {
        char idx[AS_PATH_MAX], f[AS_PATH_MAX];
        as_index(idx, path, i);
        const char *name = kube_str(p, "name");
        if (*name) {
            if (json_object_get(names, name))
                as_duplicate(errs, as_child(f, idx, "name"), name);
            else
                json_object_set_new(names, name, json_true());
        }
        json_int_t cp = json_integer_value(json_object_get(p, "containerPort"));
        if (cp == 0)
            as_required(errs, as_child(f, idx, "containerPort"), NULL);
        else if (cp < 1 || cp > 65535)
            as_invalid_int(errs, as_child(f, idx, "containerPort"), cp,
                           "must be between 1 and 65535, inclusive");
        json_int_t hp = json_integer_value(json_object_get(p, "hostPort"));
        if (hp != 0 && (hp < 1 || hp > 65535))
            as_invalid_int(errs, as_child(f, idx, "hostPort"), hp,
                           "must be between 1 and 65535, inclusive");
        const char *proto = kube_str(p, "protocol");
        if (!*proto)
            as_required(errs, as_child(f, idx, "protocol"), NULL);
        else if (!as_in_list(proto, protocols))
            as_not_supported(errs, as_child(f, idx, "protocol"), proto, protocols);
    }
    json_decref(names);
}

static void validate_mounts(json_t *errs, const json_t *mounts, const json_t *volumes,
                            const char *path)
{
    json_t *seen = json_object();
    size_t i;
    const json_t *m;
    json_array_foreach(mounts, i, m)
    {
        char idx[AS_PATH_MAX], f[AS_PATH_MAX];
        as_index(idx, path, i);
        const char *name = kube_str(m, "name"), *mp = kube_str(m, "mountPath");
        if (!*name) as_required(errs, as_child(f, idx, "name"), NULL);
        if (!json_object_get(volumes, name)) as_not_found(errs, as_child(f, idx, "name"), name);
        if (!*mp) as_required(errs, as_child(f, idx, "mountPath"), NULL);
        if (json_object_get(seen, mp))
            as_invalid(errs, as_child(f, idx, "mountPath"), mp, "must be unique");
        json_object_set_new(seen, mp, json_true());
    }
    json_decref(seen);
}

/* validateContainerCommon */
static void validate_container(json_t *errs, const json_t *c, const json_t *volumes,
                               const char *path)
{
    char f[AS_PATH_MAX];
    const char *name = kube_str(c, "name");
    if (!*name) {
        as_required(errs, as_child(f, path, "name"), NULL);
    } else {
        char *msgs[AS_MSGS_MAX];
        size_t n = as_dns1123_label(name, msgs);
        as_invalid_each(errs, as_child(f, path, "name"), name, msgs, n);
        as_msgs_free(msgs, n);
    }
    if (!*kube_str(c, "image")) as_required(errs, as_child(f, path, "image"), NULL);
    static const char *const tmp[] = {"File", "FallbackToLogsOnError", NULL};
    const char *policy = kube_str(c, "terminationMessagePolicy");
    if (!*policy)
        as_required(errs, as_child(f, path, "terminationMessagePolicy"), NULL);
    else if (!as_in_list(policy, tmp))
        as_not_supported(errs, as_child(f, path, "terminationMessagePolicy"), policy, tmp);
    validate_ports(errs, json_object_get(c, "ports"), as_child(f, path, "ports"));
    validate_mounts(errs, json_object_get(c, "volumeMounts"), volumes,
                    as_child(f, path, "volumeMounts"));
    static const char *const pulls[] = {"Always", "IfNotPresent", "Never", NULL};
    const char *pull = kube_str(c, "imagePullPolicy");
    if (!*pull)
        as_required(errs, as_child(f, path, "imagePullPolicy"), NULL);
    else if (!as_in_list(pull, pulls))
        as_not_supported(errs, as_child(f, path, "imagePullPolicy"), pull, pulls);
    as_validate_resources(errs, json_object_get(c, "resources"), as_child(f, path, "resources"));
}

static void validate_containers(json_t *errs, const json_t *spec, const json_t *volumes,
                                const char *spec_path)
{
    char path[AS_PATH_MAX], idx[AS_PATH_MAX], f[AS_PATH_MAX];
    const json_t *containers = json_object_get(spec, "containers");
    as_child(path, spec_path, "containers");
    json_t *names = json_object();
    size_t i;
    const json_t *c;
    if (json_array_size(containers) == 0) {
        as_required(errs, path, NULL);
    } else {
        json_array_foreach(containers, i, c)
        {
            as_index(idx, path, i);
            validate_container(errs, c, volumes, idx);
            const char *name = kube_str(c, "name");
            if (json_object_get(names, name))
                as_duplicate(errs, as_child(f, idx, "name"), name);
            else
                json_object_set_new(names, name, json_true());
            if (json_object_get(c, "restartPolicy"))
                as_forbidden(errs, as_child(f, idx, "restartPolicy"),
                             "may not be set for non-init containers");
        }
    }
    as_child(path, spec_path, "initContainers");
    json_array_foreach(json_object_get(spec, "initContainers"), i, c)
    {
        as_index(idx, path, i);
        validate_container(errs, c, volumes, idx);
        const char *name = kube_str(c, "name");
        if (json_object_get(names, name))
            as_duplicate(errs, as_child(f, idx, "name"), name);
        else if (*name)
            json_object_set_new(names, name, json_true());
    }
    json_decref(names);
}

/* ValidateVolumes: returns the names of the valid volumes (for mounts). */
static json_t *validate_volumes(json_t *errs, const json_t *vols, const char *path)
{
    json_t *names = json_object();
    size_t i;
    const json_t *v;
    json_array_foreach(vols, i, v)
    {
        char idx[AS_PATH_MAX], f[AS_PATH_MAX];
        as_index(idx, path, i);
        as_child(f, idx, "name");
        const char *name = kube_str(v, "name");
        size_t before = json_array_size(errs);
        if (!*name) {
            as_required(errs, f, NULL);
        } else {
            char *msgs[AS_MSGS_MAX];
            size_t n = as_dns1123_label(name, msgs);
            as_invalid_each(errs, f, name, msgs, n);
            as_msgs_free(msgs, n);
        }
        if (json_object_get(names, name)) as_duplicate(errs, f, name);
        if (json_array_size(errs) == before) json_object_set_new(names, name, json_true());
    }
    return names;
}

/* ---- pod spec ---- */

static void name_field(json_t *errs, const json_t *spec, const char *member, const char *spec_path,
                       as_name_rule rule)
{
    const char *v = kube_str(spec, member);
    if (!*v) return;
    char f[AS_PATH_MAX], *msgs[AS_MSGS_MAX];
    size_t n = rule(v, msgs);
    as_invalid_each(errs, as_child(f, spec_path, member), v, msgs, n);
    as_msgs_free(msgs, n);
}

static void enum_field(json_t *errs, const json_t *spec, const char *member, const char *spec_path,
                       const char *const *valid)
{
    char f[AS_PATH_MAX];
    const char *v = kube_str(spec, member);
    as_child(f, spec_path, member);
    if (!*v)
        as_required(errs, f, NULL);
    else if (!as_in_list(v, valid))
        as_not_supported(errs, f, v, valid);
}

/* ValidatePodSpec, at spec_path ("spec" or "spec.template.spec"). */
static void validate_pod_spec(json_t *errs, const json_t *spec, const char *spec_path)
{
    char f[AS_PATH_MAX];
    const json_t *tgps = json_object_get(spec, "terminationGracePeriodSeconds");
    if (!tgps || json_is_null(tgps))
        as_required(errs, as_child(f, spec_path, "terminationGracePeriodSeconds"), NULL);
    json_t *volumes =
        validate_volumes(errs, json_object_get(spec, "volumes"), as_child(f, spec_path, "volumes"));
    validate_containers(errs, spec, volumes, spec_path);
    json_decref(volumes);
    static const char *const restart[] = {"Always", "OnFailure", "Never", NULL};
    enum_field(errs, spec, "restartPolicy", spec_path, restart);
    static const char *const dns[] = {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None",
                                      NULL};
    enum_field(errs, spec, "dnsPolicy", spec_path, dns);
    as_validate_labels(errs, json_object_get(spec, "nodeSelector"),
                       as_child(f, spec_path, "nodeSelector"));
    name_field(errs, spec, "serviceAccountName", spec_path, as_dns1123_subdomain);
    name_field(errs, spec, "nodeName", spec_path, as_dns1123_subdomain);
    const json_t *ads = json_object_get(spec, "activeDeadlineSeconds");
    if (json_is_integer(ads) &&
        (json_integer_value(ads) < 1 || json_integer_value(ads) > INT32_MAX))
        as_invalid_int(errs, as_child(f, spec_path, "activeDeadlineSeconds"),
                       json_integer_value(ads), "must be between 1 and 2147483647, inclusive");
    name_field(errs, spec, "hostname", spec_path, as_dns1123_label);
    name_field(errs, spec, "subdomain", spec_path, as_dns1123_label);
    as_validate_tolerations(errs, json_object_get(spec, "tolerations"),
                            as_child(f, spec_path, "tolerations"));
    name_field(errs, spec, "priorityClassName", spec_path, as_dns1123_subdomain);
    const json_t *rcn = json_object_get(spec, "runtimeClassName");
    if (json_is_string(rcn)) {
        char *msgs[AS_MSGS_MAX];
        size_t n = as_dns1123_subdomain(json_string_value(rcn), msgs);
        as_invalid_each(errs, as_child(f, spec_path, "runtimeClassName"), json_string_value(rcn),
                        msgs, n);
        as_msgs_free(msgs, n);
    }
    if (json_is_string(json_object_get(spec, "preemptionPolicy"))) {
        static const char *const pp[] = {"PreemptLowerPriority", "Never", NULL};
        enum_field(errs, spec, "preemptionPolicy", spec_path, pp);
    }
    const json_t *overhead = json_object_get(spec, "overhead");
    if (json_is_object(overhead))
        as_validate_limits_only(errs, overhead, as_child(f, spec_path, "overhead"));
}

void as_validate_pod_template(json_t *errs, const json_t *tmpl, const char *path)
{
    char f[AS_PATH_MAX];
    const json_t *meta = json_object_get(tmpl, "metadata");
    /* ValidatePodTemplateSpec validates labels at <path>.labels, not
     * <path>.metadata.labels */
    as_validate_labels(errs, json_object_get(meta, "labels"), as_child(f, path, "labels"));
    as_validate_annotations(errs, json_object_get(meta, "annotations"),
                            as_child(f, path, "annotations"));
    validate_pod_spec(errs, json_object_get(tmpl, "spec"), as_child(f, path, "spec"));
    if (json_array_size(json_object_get(json_object_get(tmpl, "spec"), "ephemeralContainers")))
        as_forbidden(errs, as_child(f, path, "spec.ephemeralContainers"),
                     "ephemeral containers not allowed in pod template");
}

/* validatePodMetadataAndSpec */
static void validate_pod_meta_spec(json_t *errs, const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    as_validate_meta(errs, json_object_get(pod, "metadata"), true, as_dns1123_subdomain);
    validate_pod_spec(errs, spec, "spec");
    if (!as_str_unset(spec, "serviceAccountName")) return;
    size_t vi, si;
    const json_t *vol, *src;
    json_array_foreach(json_object_get(spec, "volumes"), vi, vol)
    {
        json_array_foreach(json_object_get(json_object_get(vol, "projected"), "sources"), si, src)
        {
            if (!json_object_get(src, "serviceAccountToken")) continue;
            char f[AS_PATH_MAX];
            snprintf(f, sizeof f, "spec.volumes[%zu].projected.sources[%zu].serviceAccountToken",
                     vi, si);
            as_forbidden(errs, f, "must not be specified when serviceAccountName is not set");
        }
    }
}

/* ---- ValidatePodUpdate ---- */

static bool container_updates(json_t *errs, const json_t *spec, const json_t *old_spec,
                              const char *list)
{
    const json_t *now = json_object_get(spec, list), *was = json_object_get(old_spec, list);
    char path[AS_PATH_MAX], idx[AS_PATH_MAX], f[AS_PATH_MAX];
    as_child(path, "spec", list);
    if (json_array_size(now) != json_array_size(was)) {
        as_forbidden(errs, path, "pod updates may not add or remove containers");
        return false;
    }
    size_t i;
    const json_t *c;
    json_array_foreach(now, i, c)
    {
        const char *image = kube_str(c, "image");
        as_index(idx, path, i);
        if (!*image) as_required(errs, as_child(f, idx, "image"), NULL);
        size_t n = strlen(image);
        if (n && (strchr(" \t\n\r\v\f", image[0]) || strchr(" \t\n\r\v\f", image[n - 1])))
            as_invalid(errs, as_child(f, idx, "image"), image,
                       "must not have leading or trailing whitespace");
    }
    return true;
}

static bool deadline_update(json_t *errs, const json_t *spec, const json_t *old_spec)
{
    const json_t *now = json_object_get(spec, "activeDeadlineSeconds");
    const json_t *was = json_object_get(old_spec, "activeDeadlineSeconds");
    if (json_is_integer(now)) {
        json_int_t v = json_integer_value(now);
        if (v < 0 || v > INT32_MAX) {
            as_invalid_int(errs, "spec.activeDeadlineSeconds", v,
                           "must be between 0 and 2147483647, inclusive");
            return false;
        }
        if (json_is_integer(was) && json_integer_value(was) < v) {
            as_invalid_int(errs, "spec.activeDeadlineSeconds", v,
                           "must be less than or equal to previous value");
            return false;
        }
    } else if (json_is_integer(was)) {
        /* a nil *int64 prints as the string "null" */
        as_invalid(errs, "spec.activeDeadlineSeconds", "null",
                   "must not update from a positive integer to nil value");
    }
    return true;
}

/* validateOnlyAddedTolerations */
static void tolerations_added_only(json_t *errs, const json_t *spec, const json_t *old_spec)
{
    const json_t *now = json_object_get(spec, "tolerations");
    size_t i, j;
    const json_t *old_t, *new_t;
    json_array_foreach(json_object_get(old_spec, "tolerations"), i, old_t)
    {
        bool found = false;
        json_array_foreach(now, j, new_t)
        {
            json_t *clone = json_deep_copy(old_t);
            const json_t *secs = json_object_get(new_t, "tolerationSeconds");
            if (secs)
                json_object_set(clone, "tolerationSeconds", (json_t *)secs);
            else
                json_object_del(clone, "tolerationSeconds");
            found = as_sem_equal(clone, new_t);
            json_decref(clone);
            if (found) break;
        }
        if (!found) {
            as_forbidden(errs, "spec.tolerations",
                         "existing toleration can not be modified except its tolerationSeconds");
            return;
        }
    }
    as_validate_tolerations(errs, now, "spec.tolerations");
}

static void munge_images(json_t *munged, const json_t *old_spec, const char *list)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(munged, list), i, c)
    {
        const json_t *was = json_array_get(json_object_get(old_spec, list), i);
        json_t *image = json_object_get(was, "image");
        if (image)
            json_object_set(c, "image", image);
        else
            json_object_del(c, "image");
    }
}

static void munge_copy(json_t *munged, const json_t *old_spec, const char *member)
{
    json_t *was = json_object_get(old_spec, member);
    if (was)
        json_object_set_new(munged, member, json_deep_copy(was));
    else
        json_object_del(munged, member);
}

/* cmp.Diff of the internal PodSpec cannot be reproduced; this lists the
 * differing spec members, old then new, in the same -/+ style. */
static void spec_diff(gp_buf *sb, const json_t *was, const json_t *now)
{
    gp_buf_add(sb, "  core.PodSpec{\n");
    json_t *keys = json_object();
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)was, k, v)
    {
        json_object_set_new(keys, k, json_true());
    }
    json_object_foreach((json_t *)now, k, v)
    {
        json_object_set_new(keys, k, json_true());
    }
    json_object_foreach(keys, k, v)
    {
        const json_t *a = json_object_get(was, k), *b = json_object_get(now, k);
        if (as_sem_equal(a, b)) continue;
        char *ta = a ? json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        char *tb = b ? json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        gp_buf_addf(sb, "- \t%s: %s,\n+ \t%s: %s,\n", k, ta ? ta : "nil", k, tb ? tb : "nil");
        free(ta);
        free(tb);
    }
    json_decref(keys);
    gp_buf_add(sb, "  }\n");
}

static void spec_immutable(json_t *errs, const json_t *spec, const json_t *old_spec)
{
    if (as_sem_equal(spec, old_spec)) return;
    json_t *munged = json_deep_copy(spec);
    if (!munged) return;
    munge_images(munged, old_spec, "containers");
    munge_images(munged, old_spec, "initContainers");
    munge_copy(munged, old_spec, "activeDeadlineSeconds");
    munge_copy(munged, old_spec, "schedulingGates");
    munge_copy(munged, old_spec, "tolerations");
    const json_t *old_tgps = json_object_get(old_spec, "terminationGracePeriodSeconds");
    const json_t *new_tgps = json_object_get(munged, "terminationGracePeriodSeconds");
    if (json_is_integer(old_tgps) && json_integer_value(old_tgps) < 0 &&
        json_is_integer(new_tgps) && json_integer_value(new_tgps) == 1)
        munge_copy(munged, old_spec, "terminationGracePeriodSeconds");
    if (!as_sem_equal(munged, old_spec)) {
        gp_buf sb = {0};
        gp_buf_add(&sb, "pod updates may not change fields other than "
                        "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                        "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                        "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to "
                        "be set to 1 if it was previously negative)\n");
        spec_diff(&sb, old_spec, munged);
        char *detail = gp_buf_take(&sb);
        if (detail) as_forbidden(errs, "spec", detail);
        free(detail);
    }
    json_decref(munged);
}

void as_validate_pod(json_t *errs, const json_t *pod, const json_t *old)
{
    const json_t *spec = json_object_get(pod, "spec");
    if (!old) {
        validate_pod_meta_spec(errs, pod);
        if (json_array_size(json_object_get(spec, "ephemeralContainers")))
            as_forbidden(errs, "spec.ephemeralContainers", "cannot be set on create");
        if (!as_str_unset(spec, "nodeName") &&
            json_array_size(json_object_get(spec, "schedulingGates")))
            as_forbidden(errs, "spec.nodeName",
                         "cannot be set until all schedulingGates have been cleared");
        return;
    }
    const json_t *old_spec = json_object_get(old, "spec");
    as_validate_meta_update(errs, json_object_get(pod, "metadata"));
    validate_pod_meta_spec(errs, pod);
    if (!container_updates(errs, spec, old_spec, "containers")) return;
    if (!container_updates(errs, spec, old_spec, "initContainers")) return;
    if (!deadline_update(errs, spec, old_spec)) return;
    tolerations_added_only(errs, spec, old_spec);
    spec_immutable(errs, spec, old_spec);
}

/* ---- ValidatePodStatusUpdate ---- */

/* Whether the old pod's init container `name` restarts always. */
static bool sidecar(const json_t *old_spec, const char *name)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(old_spec, "initContainers"), i, c)
    {
        if (strcmp(kube_str(c, "name"), name) == 0)
            return strcmp(kube_str(c, "restartPolicy"), "Always") == 0;
    }
    return false;
}

/* ValidateContainerStateTransition: unless the pod restarts always, a
 * container that terminated (with success, under OnFailure) stays so; an
 * init container that restarts always (a sidecar) may leave the state, as
 * ValidateInitContainerStateTransition lets it. */
static void terminated_stay(json_t *errs, const json_t *status, const json_t *old, const char *list,
                            const char *policy)
{
    if (strcmp(policy, "Always") == 0) return;
    const json_t *old_status = json_object_get(old, "status"),
                 *old_spec = json_object_get(old, "spec");
    size_t i, j;
    const json_t *was, *now;
    json_array_foreach(json_object_get(old_status, list), i, was)
    {
        if (strcmp(list, "initContainerStatuses") == 0 && sidecar(old_spec, kube_str(was, "name")))
            continue;
        const json_t *term = json_object_get(json_object_get(was, "state"), "terminated");
        if (!json_is_object(term)) continue;
        json_int_t code = json_integer_value(json_object_get(term, "exitCode"));
        if (code != 0 && strcmp(policy, "OnFailure") == 0) continue;
        json_array_foreach(json_object_get(status, list), j, now)
        {
            if (strcmp(kube_str(now, "name"), kube_str(was, "name")) != 0) continue;
            if (json_is_object(json_object_get(json_object_get(now, "state"), "terminated")))
                continue;
            char f[AS_PATH_MAX];
            snprintf(f, sizeof f, "status.%s[%zu].state", list, i);
            as_forbidden(errs, f, "may not be transitioned to non-terminated state");
        }
    }
}

/* The status strategy copied the spec from the old pod (as_pod_update), so
 * the spec is not validated again: a status write is judged on metadata
 * and status alone, as ValidatePodStatusUpdate does (read in the upstream
 * source; the checks of conditions, IPs and claim statuses are left out,
 * as above). The QoS class is immutable there since kubernetes#127744
 * (1.32); podStatusStrategy fills an unset one from the old pod first. */
void as_validate_pod_status(json_t *errs, const json_t *pod, const json_t *old)
{
    as_validate_meta_update(errs, json_object_get(pod, "metadata"));
    const json_t *status = json_object_get(pod, "status"),
                 *old_status = json_object_get(old, "status");
    const char *nominated = kube_str(status, "nominatedNodeName");
    if (*nominated && strcmp(nominated, kube_str(old_status, "nominatedNodeName")) != 0) {
        char *msgs[AS_MSGS_MAX];
        size_t n = as_dns1123_subdomain(nominated, msgs);
        as_invalid_each(errs, "status.nominatedNodeName", nominated, msgs, n);
        as_msgs_free(msgs, n);
    }
    const char *qos = kube_str(status, "qosClass");
    if (strcmp(qos, kube_str(old_status, "qosClass")) != 0)
        as_invalid(errs, "status.qosClass", qos, "field is immutable");
    const char *policy = kube_str(json_object_get(old, "spec"), "restartPolicy");
    terminated_stay(errs, status, old, "containerStatuses", policy);
    terminated_stay(errs, status, old, "initContainerStatuses", policy);
    /* the kubelet never restarts an ephemeral container */
    terminated_stay(errs, status, old, "ephemeralContainerStatuses", "Never");
}
