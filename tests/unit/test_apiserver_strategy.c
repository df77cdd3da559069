/* as_strategy_*: what kube-apiserver 1.32 adds to and checks on objects.
 *
 * Expected values come from /work/shared/design/k8s-semantics.md (cited as
 * "doc 3.2" etc.) or from the Kubernetes source read for this module (cited by
 * file): pkg/apis/core/v1/defaults.go, pkg/apis/apps/v1/defaults.go,
 * pkg/registry/{core/pod,apps/daemonset}/strategy.go,
 * pkg/apis/core/validation/validation.go, pkg/apis/apps/validation,
 * apimachinery util/validation{,/field}, api/errors/errors.go (NewInvalid),
 * plugin/pkg/admission/{runtimeclass,defaulttolerationseconds}. Where a real
 * kubectl/apiserver output was published for the same input it is cited too.
 * JSON is written with ' for ". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/strategy.h"

/* ---- helpers ---- */

static void assert_json(const json_t *actual, const char *squoted)
{
    json_t *expected = sq_load(squoted);
    if (!json_equal(actual, expected)) {
        char *a = json_dumps(actual, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        char *e = json_dumps(expected, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        print_error("expected %s\n     got %s\n", e, a);
        free(a);
        free(e);
        json_decref(expected);
        fail();
    }
    json_decref(expected);
}

/* obj at a dotted path ("spec.containers.0.resources") */
static json_t *at(json_t *obj, const char *path)
{
    char *copy = strdup(path), *save = NULL;
    json_t *cur = obj;
    for (char *tok = strtok_r(copy, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save)) {
        if (json_is_array(cur))
            cur = json_array_get(cur, (size_t)strtoul(tok, NULL, 10));
        else
            cur = json_object_get(cur, tok);
    }
    free(copy);
    return cur;
}

/* Causes as "field: message" lines, in order (the array is consumed). */
static char *lines_of(json_t *causes)
{
    assert_non_null(causes);
    size_t len = 1;
    size_t i;
    json_t *c;
    json_array_foreach(causes, i, c)
    {
        len += strlen(json_string_value(json_object_get(c, "field"))) +
               strlen(json_string_value(json_object_get(c, "message"))) + 3;
    }
    char *out = calloc(1, len);
    assert_non_null(out);
    json_array_foreach(causes, i, c)
    {
        strcat(out, json_string_value(json_object_get(c, "field")));
        strcat(out, ": ");
        strcat(out, json_string_value(json_object_get(c, "message")));
        strcat(out, "\n");
    }
    json_decref(causes);
    return out;
}

/* Validation result as "field: message" lines, in order. */
static char *causes_text(const char *group, const char *kind, const json_t *obj, const json_t *old)
{
    return lines_of(as_strategy_validate(group, kind, obj, old));
}

static void assert_lines(char *got, const char *expected)
{
    if (strcmp(got, expected) != 0) print_error("expected:\n%s\ngot:\n%s\n", expected, got);
    assert_string_equal(got, expected);
    free(got);
}

static void assert_causes(const char *group, const char *kind, const json_t *obj, const json_t *old,
                          const char *expected)
{
    assert_lines(causes_text(group, kind, obj, old), expected);
}

static json_t *created(const char *group, const char *kind, const char *squoted)
{
    json_t *obj = sq_load(squoted);
    as_strategy_create(group, kind, obj);
    return obj;
}

/* The lab's cuda-probe manifest (doc 9), as kubectl sends it: the GPU limit
 * is the YAML int 1. */
#define CUDA_PROBE                                                                                 \
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'cuda-probe','namespace':'gpu-lab'},"      \
    "'spec':{'runtimeClassName':'nvidia','containers':[{'name':'cuda','image':"                    \
    "'nvidia/cuda:12.4.1-base-ubuntu22.04','command':['nvidia-smi'],"                              \
    "'resources':{'limits':{'nvidia.com/gpu':1}}}]}}"

#define LAB_RC                                                                                     \
    "{'apiVersion':'node.k8s.io/"                                                                  \
    "v1','kind':'RuntimeClass','metadata':{'name':'nvidia'},'handler':'nvidia'}"

/* ---- create: pods ---- */

/* doc 9 "cuda-probe right after create", every field the doc lists (the
 * token volume is optional there and not added) */
static void test_cuda_probe_create(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod", CUDA_PROBE);
    assert_json(json_object_get(pod, "spec"),
                "{'containers':[{'name':'cuda','image':'nvidia/cuda:12.4.1-base-ubuntu22.04',"
                "'command':['nvidia-smi'],'imagePullPolicy':'IfNotPresent',"
                "'resources':{'limits':{'nvidia.com/gpu':'1'},'requests':{'nvidia.com/gpu':'1'}},"
                "'terminationMessagePath':'/dev/termination-log',"
                "'terminationMessagePolicy':'File'}],"
                "'dnsPolicy':'ClusterFirst','enableServiceLinks':true,"
                "'preemptionPolicy':'PreemptLowerPriority','priority':0,"
                "'restartPolicy':'Always','runtimeClassName':'nvidia',"
                "'schedulerName':'default-scheduler','securityContext':{},"
                "'serviceAccount':'default','serviceAccountName':'default',"
                "'terminationGracePeriodSeconds':30,"
                "'tolerations':[{'key':'node.kubernetes.io/not-ready','operator':'Exists',"
                "'effect':'NoExecute','tolerationSeconds':300},"
                "{'key':'node.kubernetes.io/unreachable','operator':'Exists',"
                "'effect':'NoExecute','tolerationSeconds':300}]}");
    /* doc 3.2: GPU only -> BestEffort */
    assert_json(json_object_get(pod, "status"), "{'phase':'Pending','qosClass':'BestEffort'}");
    assert_causes("", "Pod", pod, NULL, "");
    json_decref(pod);
}

/* doc 3.2: client status is discarded */
static void test_pod_create_discards_status(void **state)
{
    (void)state;
    json_t *pod =
        created("", "Pod",
                "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i'}]},"
                "'status':{'phase':'Running','podIP':'10.0.0.1'}}");
    assert_json(json_object_get(pod, "status"), "{'phase':'Pending','qosClass':'BestEffort'}");
    json_decref(pod);
}

/* doc 3.2: a DS pod with only a memory request is Burstable */
static void test_qos_burstable(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod",
                          "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i',"
                          "'resources':{'requests':{'memory':'64Gi'}}}]}}");
    assert_string_equal(json_string_value(at(pod, "status.qosClass")), "Burstable");
    json_decref(pod);
}

/* qos.go: cpu and memory limits in every container, requests equal (copied
 * from the limits by SetDefaults_Pod) -> Guaranteed; a memory limit missing
 * -> Burstable */
static void test_qos_guaranteed(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod",
                          "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i',"
                          "'resources':{'limits':{'cpu':'1','memory':'1Gi'}}}]}}");
    assert_string_equal(json_string_value(at(pod, "status.qosClass")), "Guaranteed");
    assert_json(at(pod, "spec.containers.0.resources"),
                "{'limits':{'cpu':'1','memory':'1Gi'},'requests':{'cpu':'1','memory':'1Gi'}}");
    json_decref(pod);
    pod = created("", "Pod",
                  "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i',"
                  "'resources':{'limits':{'cpu':'1'}}}]}}");
    assert_string_equal(json_string_value(at(pod, "status.qosClass")), "Burstable");
    json_decref(pod);
    /* requests below limits: Burstable */
    pod = created("", "Pod",
                  "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i',"
                  "'resources':{'limits':{'cpu':'1','memory':'1Gi'},"
                  "'requests':{'cpu':'500m','memory':'1Gi'}}}]}}");
    assert_string_equal(json_string_value(at(pod, "status.qosClass")), "Burstable");
    json_decref(pod);
}

/* doc 3.2: 1 -> "1", 0.5 -> "500m", 1024Mi -> "1Gi", 128Mi stays */
static void test_quantities_canonical(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod",
                          "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i',"
                          "'resources':{'limits':{'cpu':0.5,'memory':'1024Mi','nvidia.com/gpu':1},"
                          "'requests':{'memory':'128Mi','cpu':0.1}}}]}}");
    /* 0.1 is what YAML's 0.1 became: 100m, as the server reads the text */
    assert_json(at(pod, "spec.containers.0.resources"),
                "{'limits':{'cpu':'500m','memory':'1Gi','nvidia.com/gpu':'1'},"
                "'requests':{'memory':'128Mi','cpu':'100m','nvidia.com/gpu':'1'}}");
    json_decref(pod);
    /* SetDefaults_ResourceList rounds up to milli: 1.0001 -> 1001m */
    json_t *node = created("", "Node",
                           "{'metadata':{'name':'n'},'status':{'capacity':{'cpu':'1.0001',"
                           "'memory':'32768Mi','pods':110}}}");
    assert_json(at(node, "status"), "{'capacity':{'cpu':'1001m','memory':'32Gi','pods':'110'},"
                                    "'allocatable':{'cpu':'1001m','memory':'32Gi','pods':'110'}}");
    json_decref(node);
}

/* defaults.go SetDefaults_Container: "latest" or no tag -> Always, other tag
 * -> IfNotPresent; ports get TCP */
static void test_container_defaults(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod",
                          "{'metadata':{'name':'p'},'spec':{'containers':["
                          "{'name':'a','image':'busybox'},{'name':'b','image':'busybox:latest'},"
                          "{'name':'c','image':'registry.local:5000/tools/busybox'},"
                          "{'name':'d','image':'busybox@sha256:"
                          "0000000000000000000000000000000000000000000000000000000000000000'},"
                          "{'name':'e','image':'busybox:1.36','ports':[{'containerPort':80}],"
                          "'imagePullPolicy':'Never'}]}}");
    assert_string_equal(json_string_value(at(pod, "spec.containers.0.imagePullPolicy")), "Always");
    assert_string_equal(json_string_value(at(pod, "spec.containers.1.imagePullPolicy")), "Always");
    assert_string_equal(json_string_value(at(pod, "spec.containers.2.imagePullPolicy")), "Always");
    assert_string_equal(json_string_value(at(pod, "spec.containers.3.imagePullPolicy")),
                        "IfNotPresent");
    assert_string_equal(json_string_value(at(pod, "spec.containers.4.imagePullPolicy")), "Never");
    assert_json(at(pod, "spec.containers.4.ports"), "[{'containerPort':80,'protocol':'TCP'}]");
    json_decref(pod);
}

/* DefaultTolerationSeconds: a toleration of the taint (or an empty key)
 * with NoExecute or no effect suppresses the default one */
static void test_default_tolerations(void **state)
{
    (void)state;
    json_t *pod =
        created("", "Pod",
                "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i'}],"
                "'tolerations':[{'key':'node.kubernetes.io/not-ready',"
                "'operator':'Exists'}]}}");
    assert_json(at(pod, "spec.tolerations"),
                "[{'key':'node.kubernetes.io/not-ready','operator':'Exists'},"
                "{'key':'node.kubernetes.io/unreachable','operator':'Exists',"
                "'effect':'NoExecute','tolerationSeconds':300}]");
    json_decref(pod);
    pod = created("", "Pod",
                  "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i'}],"
                  "'tolerations':[{'operator':'Exists'}]}}");
    assert_json(at(pod, "spec.tolerations"), "[{'operator':'Exists'}]");
    json_decref(pod);
}

/* Priority admission: no class -> 0; the built-in system-node-critical is
 * SystemCriticalPriority (2 * HighestUserDefinablePriority = 2000000000) +
 * 1000 (pkg/apis/scheduling); both PreemptLowerPriority */
static void test_priority(void **state)
{
    (void)state;
    json_t *pod =
        created("", "Pod",
                "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i'}],"
                "'priorityClassName':'system-node-critical'}}");
    assert_int_equal(json_integer_value(at(pod, "spec.priority")), 2000001000);
    assert_string_equal(json_string_value(at(pod, "spec.preemptionPolicy")),
                        "PreemptLowerPriority");
    json_decref(pod);
}

/* ---- create: other kinds ---- */

#define LAB_DS                                                                                     \
    "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'toolkit','namespace':"         \
    "'gpu-operator'},'spec':{'selector':{'matchLabels':{'app':'toolkit'}},'template':"             \
    "{'metadata':{'labels':{'app':'toolkit'}},'spec':{'containers':[{'name':'toolkit',"            \
    "'image':'nvcr.io/nvidia/k8s/container-toolkit:v1.17.0','resources':{'requests':"              \
    "{'memory':'64Gi'},'limits':{'nvidia.com/gpu':1}}}]}}}}"

/* doc 3.3: defaults, status cleared, generation 1, the annotation; template
 * gets PodSpec/container defaults but not enableServiceLinks nor
 * limits->requests */
static void test_daemonset_create(void **state)
{
    (void)state;
    json_t *ds = created("apps", "DaemonSet", LAB_DS);
    assert_json(at(ds, "spec.updateStrategy"),
                "{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':1,'maxSurge':0}}");
    assert_int_equal(json_integer_value(at(ds, "spec.revisionHistoryLimit")), 10);
    assert_json(at(ds, "spec.template.spec"),
                "{'containers':[{'name':'toolkit','image':"
                "'nvcr.io/nvidia/k8s/container-toolkit:v1.17.0','resources':{'requests':"
                "{'memory':'64Gi'},'limits':{'nvidia.com/gpu':'1'}},"
                "'imagePullPolicy':'IfNotPresent','terminationMessagePath':'/dev/termination-log',"
                "'terminationMessagePolicy':'File'}],'dnsPolicy':'ClusterFirst',"
                "'restartPolicy':'Always','securityContext':{},'terminationGracePeriodSeconds':30,"
                "'schedulerName':'default-scheduler'}");
    /* apps/v1 DaemonSetStatus: these four have no omitempty */
    assert_json(at(ds, "status"), "{'currentNumberScheduled':0,'numberMisscheduled':0,"
                                  "'desiredNumberScheduled':0,'numberReady':0}");
    assert_int_equal(json_integer_value(at(ds, "metadata.generation")), 1);
    assert_json(at(ds, "metadata.annotations"), "{'deprecated.daemonset.template.generation':'1'}");
    assert_causes("apps", "DaemonSet", ds, NULL, "");
    json_decref(ds);
    /* doc 3.3: with maxUnavailable given, maxSurge 0 is still added */
    ds = created("apps", "DaemonSet",
                 "{'metadata':{'name':'d'},'spec':{'updateStrategy':{'rollingUpdate':"
                 "{'maxUnavailable':'25%'}}},'status':{'numberReady':3}}");
    assert_json(at(ds, "spec.updateStrategy"),
                "{'rollingUpdate':{'maxUnavailable':'25%','maxSurge':0},'type':'RollingUpdate'}");
    assert_int_equal(json_integer_value(at(ds, "status.numberReady")), 0);
    json_decref(ds);
}

/* doc 3.1 */
static void test_namespace_create(void **state)
{
    (void)state;
    json_t *ns = created("", "Namespace", "{'metadata':{'name':'gpu-lab'}}");
    assert_json(ns, "{'metadata':{'name':'gpu-lab','labels':{'kubernetes.io/metadata.name':"
                    "'gpu-lab'}},'spec':{'finalizers':['kubernetes']},"
                    "'status':{'phase':'Active'}}");
    json_decref(ns);
}

/* doc 3.4: create accepts status; allocatable defaults to capacity */
static void test_node_create(void **state)
{
    (void)state;
    json_t *node = created("", "Node",
                           "{'metadata':{'name':'lab-node-0'},'status':{'capacity':{'cpu':'16',"
                           "'nvidia.com/gpu':4},'allocatable':{'cpu':'15'},"
                           "'conditions':[{'type':'Ready','status':'True'}]}}");
    assert_json(at(node, "status"), "{'capacity':{'cpu':'16','nvidia.com/gpu':'4'},"
                                    "'allocatable':{'cpu':'15'},"
                                    "'conditions':[{'type':'Ready','status':'True'}]}");
    json_decref(node);
}

/* ---- update ---- */

static json_t *updated(const char *group, const char *kind, const json_t *old, const char *squoted,
                       bool status)
{
    json_t *obj = sq_load(squoted);
    as_strategy_update(group, kind, obj, old, status);
    return obj;
}

/* doc 2.9/3.3: generation +1 on any spec change, template change also bumps
 * the template generation; metadata-only and status changes keep both */
static void test_daemonset_generation(void **state)
{
    (void)state;
    json_t *v1 = created("apps", "DaemonSet", LAB_DS);
    /* template change: image */
    json_t *v2 = json_deep_copy(v1);
    json_array_set_new(json_object_get(at(v2, "spec.template.spec"), "containers"), 0,
                       sq_load("{'name':'toolkit','image':'nvcr.io/nvidia/k8s/"
                               "container-toolkit:v1.17.1'}"));
    as_strategy_update("apps", "DaemonSet", v2, v1, false);
    assert_int_equal(json_integer_value(at(v2, "metadata.generation")), 2);
    assert_string_equal(json_string_value(at(v2, "metadata.annotations")
                                              ? json_object_get(at(v2, "metadata.annotations"),
                                                                "deprecated.daemonset.template."
                                                                "generation")
                                              : NULL),
                        "2");
    /* spec change outside the template */
    json_t *v3 = json_deep_copy(v2);
    json_object_set_new(json_object_get(v3, "spec"), "revisionHistoryLimit", json_integer(3));
    as_strategy_update("apps", "DaemonSet", v3, v2, false);
    assert_int_equal(json_integer_value(at(v3, "metadata.generation")), 3);
    assert_string_equal(json_string_value(json_object_get(at(v3, "metadata.annotations"),
                                                          "deprecated.daemonset.template."
                                                          "generation")),
                        "2");
    /* metadata only; the client's annotation value is not taken */
    json_t *v4 = json_deep_copy(v3);
    json_object_set_new(json_object_get(v4, "metadata"), "labels", sq_load("{'tier':'gpu'}"));
    json_object_set_new(at(v4, "metadata.annotations"), "deprecated.daemonset.template.generation",
                        json_string("9"));
    as_strategy_update("apps", "DaemonSet", v4, v3, false);
    assert_int_equal(json_integer_value(at(v4, "metadata.generation")), 3);
    assert_string_equal(json_string_value(json_object_get(at(v4, "metadata.annotations"),
                                                          "deprecated.daemonset.template."
                                                          "generation")),
                        "2");
    /* a re-apply of the same manifest (defaults absent in the body) is no
     * spec change */
    json_t *v5 = sq_load(LAB_DS);
    json_object_set_new(json_object_get(v5, "spec"), "revisionHistoryLimit", json_integer(3));
    json_array_set_new(json_object_get(at(v5, "spec.template.spec"), "containers"), 0,
                       sq_load("{'name':'toolkit','image':'nvcr.io/nvidia/k8s/"
                               "container-toolkit:v1.17.1'}"));
    as_strategy_update("apps", "DaemonSet", v5, v4, false);
    assert_int_equal(json_integer_value(at(v5, "metadata.generation")), 3);
    /* /status: spec and generation kept, status taken */
    json_t *v6 = json_deep_copy(v4);
    json_object_set_new(json_object_get(v6, "spec"), "revisionHistoryLimit", json_integer(99));
    json_object_set_new(v6, "status",
                        sq_load("{'numberReady':3,'desiredNumberScheduled':3,"
                                "'currentNumberScheduled':3,"
                                "'numberMisscheduled':0,'observedGeneration':3}"));
    as_strategy_update("apps", "DaemonSet", v6, v4, true);
    assert_int_equal(json_integer_value(at(v6, "spec.revisionHistoryLimit")), 3);
    assert_int_equal(json_integer_value(at(v6, "status.numberReady")), 3);
    assert_int_equal(json_integer_value(at(v6, "metadata.generation")), 3);
    /* main update: status kept from old */
    json_t *v7 = json_deep_copy(v6);
    json_object_set_new(v7, "status", sq_load("{'numberReady':0}"));
    as_strategy_update("apps", "DaemonSet", v7, v6, false);
    assert_int_equal(json_integer_value(at(v7, "status.numberReady")), 3);
    json_t *objs[] = {v1, v2, v3, v4, v5, v6, v7};
    for (size_t i = 0; i < 7; i++)
        json_decref(objs[i]);
}

/* doc 2.9: main-resource updates keep status (a node status patch without
 * --subresource=status is a no-op); /status keeps spec */
/* The NodeTaint admission plugin: a new Node is tainted not-ready
 * NoSchedule (after any taint it was created with), once. */
static void test_node_taint_admission(void **state)
{
    (void)state;
    json_t *n = created("", "Node", "{'metadata':{'name':'n'}}");
    assert_json(at(n, "spec"),
                "{'taints':[{'key':'node.kubernetes.io/not-ready','effect':'NoSchedule'}]}");
    json_decref(n);
    n = created(
        "", "Node",
        "{'metadata':{'name':'n'},'spec':{'taints':[{'key':'gpu','effect':'NoSchedule'}]}}");
    assert_json(at(n, "spec"), "{'taints':[{'key':'gpu','effect':'NoSchedule'},{'key':"
                               "'node.kubernetes.io/not-ready','effect':'NoSchedule'}]}");
    json_decref(n);
    n = created("", "Node",
                "{'metadata':{'name':'n'},'spec':{'taints':[{'key':'node.kubernetes.io/not-ready',"
                "'effect':'NoSchedule','value':'x'}]}}");
    assert_int_equal(json_array_size(at(n, "spec.taints")), 1);
    json_decref(n);
}

static void test_status_kept_spec_kept(void **state)
{
    (void)state;
    json_t *node = created("", "Node",
                           "{'metadata':{'name':'n'},'spec':{'unschedulable':true},"
                           "'status':{'capacity':{'nvidia.com/gpu':'4'}}}");
    json_t *n2 = updated("", "Node", node,
                         "{'metadata':{'name':'n'},'spec':{'unschedulable':true},"
                         "'status':{'capacity':{'nvidia.com/gpu':'20'}}}",
                         false);
    assert_json(at(n2, "status"),
                "{'capacity':{'nvidia.com/gpu':'4'},'allocatable':{'nvidia.com/gpu':'4'}}");
    json_t *n3 = updated("", "Node", node,
                         "{'metadata':{'name':'n'},'spec':{},"
                         "'status':{'capacity':{'nvidia.com/gpu':20}}}",
                         true);
    assert_json(at(n3, "spec"), "{'unschedulable':true,'taints':[{'key':"
                                "'node.kubernetes.io/not-ready','effect':'NoSchedule'}]}");
    assert_json(at(n3, "status"),
                "{'capacity':{'nvidia.com/gpu':'20'},'allocatable':{'nvidia.com/gpu':'20'}}");

    json_t *pod = created("", "Pod", CUDA_PROBE);
    json_t *p2 = json_deep_copy(pod);
    json_object_set_new(p2, "status", sq_load("{'phase':'Running'}"));
    as_strategy_update("", "Pod", p2, pod, false);
    assert_json(at(p2, "status"), "{'phase':'Pending','qosClass':'BestEffort'}");
    /* pod status strategy: spec and ownerReferences from old, an empty
     * qosClass backfilled; labels from the request */
    json_t *p3 = json_deep_copy(pod);
    json_object_set_new(json_object_get(p3, "spec"), "nodeName", json_string("lab-node-0"));
    json_object_set_new(json_object_get(p3, "metadata"), "labels", sq_load("{'a':'b'}"));
    json_object_set_new(json_object_get(p3, "metadata"), "ownerReferences",
                        sq_load("[{'kind':'X','name':'x','uid':'1','apiVersion':'v1'}]"));
    json_object_set_new(p3, "status", sq_load("{'phase':'Running'}"));
    as_strategy_update("", "Pod", p3, pod, true);
    assert_null(at(p3, "spec.nodeName"));
    assert_null(at(p3, "metadata.ownerReferences"));
    assert_json(at(p3, "metadata.labels"), "{'a':'b'}");
    assert_json(at(p3, "status"), "{'phase':'Running','qosClass':'BestEffort'}");

    /* namespace: finalizers and status kept on a main update */
    json_t *ns = created("", "Namespace", "{'metadata':{'name':'gpu-lab'}}");
    json_t *ns2 = updated("", "Namespace", ns,
                          "{'metadata':{'name':'gpu-lab','labels':{'x':'y'}},'spec':{},"
                          "'status':{'phase':'Terminating'}}",
                          false);
    assert_json(ns2, "{'metadata':{'name':'gpu-lab','labels':{'x':'y',"
                     "'kubernetes.io/metadata.name':'gpu-lab'}},'spec':{'finalizers':"
                     "['kubernetes']},'status':{'phase':'Active'}}");
    json_t *objs[] = {node, n2, n3, pod, p2, p3, ns, ns2};
    for (size_t i = 0; i < 8; i++)
        json_decref(objs[i]);
}

/* Pods carry no generation in 1.32 (doc 2.9) */
static void test_pod_update_no_generation(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod", CUDA_PROBE);
    json_t *p2 = json_deep_copy(pod);
    json_object_set_new(json_object_get(p2, "metadata"), "generation", json_integer(4));
    as_strategy_update("", "Pod", p2, pod, false);
    assert_null(at(p2, "metadata.generation"));
    json_decref(pod);
    json_decref(p2);
}

/* ---- validation ---- */

/* doc 2.8, the table's validation row */
static void test_validate_image_required(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod",
                          "{'metadata':{'name':'bad','namespace':'default'},"
                          "'spec':{'containers':[{'name':'c'}]}}");
    json_t *causes = as_strategy_validate("", "Pod", pod, NULL);
    assert_json(causes, "[{'reason':'FieldValueRequired','message':'Required value',"
                        "'field':'spec.containers[0].image'}]");
    char *msg = as_strategy_invalid_message("Pod", "bad", causes);
    assert_string_equal(msg, "Pod \"bad\" is invalid: spec.containers[0].image: Required value");
    free(msg);
    json_decref(causes);
    json_decref(pod);
}

/* NewInvalid: several errors as "[e1, e2]"; repeated texts once (ToAggregate);
 * apps kinds qualified (GroupKind.String()) */
static void test_invalid_message_joining(void **state)
{
    (void)state;
    json_t *causes = sq_load("[{'reason':'FieldValueRequired','message':'Required value',"
                             "'field':'spec.containers[0].name'},"
                             "{'reason':'FieldValueRequired','message':'Required value',"
                             "'field':'spec.containers[0].image'},"
                             "{'reason':'FieldValueRequired','message':'Required value',"
                             "'field':'spec.containers[0].name'}]");
    char *msg = as_strategy_invalid_message("Pod", "bad", causes);
    assert_string_equal(msg, "Pod \"bad\" is invalid: [spec.containers[0].name: Required value, "
                             "spec.containers[0].image: Required value]");
    free(msg);
    msg = as_strategy_invalid_message("DaemonSet", "x", json_array_get(causes, 0) ? causes : NULL);
    assert_string_equal(msg, "DaemonSet.apps \"x\" is invalid: [spec.containers[0].name: Required "
                             "value, spec.containers[0].image: Required value]");
    free(msg);
    json_t *one =
        sq_load("[{'reason':'FieldValueInvalid','message':'Invalid value: \\u0022a\\u0022',"
                "'field':'f'}]");
    /* the name is %q-quoted */
    msg = as_strategy_invalid_message("RuntimeClass.node.k8s.io", "a\"b", one);
    assert_string_equal(msg, "RuntimeClass.node.k8s.io \"a\\\"b\" is invalid: f: Invalid value: "
                             "\"a\"");
    free(msg);
    json_decref(one);
    json_decref(causes);
}

#define DNS_LABEL_MSG                                                                              \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define DNS_SUBDOMAIN_MSG                                                                          \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

/* objectmeta.go and validation.go; the namespace text matches published
 * kubectl output ("The Namespace \"NameSpaceName\" is invalid: metadata.name:
 * Invalid value: ...", kubeconform issue #259) */
static void test_validate_names(void **state)
{
    (void)state;
    json_t *ns = created("", "Namespace", "{'metadata':{'name':'NameSpaceName'}}");
    assert_causes("", "Namespace", ns, NULL,
                  "metadata.name: Invalid value: \"NameSpaceName\": " DNS_LABEL_MSG "\n");
    json_decref(ns);
    /* IsDNS1123Label: a valid subdomain that is no label */
    ns = sq_load("{'metadata':{'name':'gpu.lab'}}");
    assert_causes("", "Namespace", ns, NULL,
                  "metadata.name: Invalid value: \"gpu.lab\": must not contain dots\n");
    json_decref(ns);
    json_t *pod = created("", "Pod",
                          "{'metadata':{'namespace':'default'},'spec':{'containers':["
                          "{'name':'c','image':'i'}]}}");
    assert_causes("", "Pod", pod, NULL,
                  "metadata.name: Required value: name or generateName is required\n");
    json_decref(pod);
    pod = created("", "Pod",
                  "{'metadata':{'name':'Cuda_Probe','namespace':'default'},'spec':{'containers':"
                  "[{'name':'c','image':'i'}]}}");
    assert_causes("", "Pod", pod, NULL,
                  "metadata.name: Invalid value: \"Cuda_Probe\": " DNS_SUBDOMAIN_MSG "\n");
    json_decref(pod);
    json_t *node = sq_load("{'metadata':{'name':'lab_node'}}");
    assert_causes("", "Node", node, NULL,
                  "metadata.name: Invalid value: \"lab_node\": " DNS_SUBDOMAIN_MSG "\n");
    json_decref(node);
}

/* validateContainers / validateContainerCommon / ValidateLabels */
static void test_validate_containers(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod", "{'metadata':{'name':'p','namespace':'d'},'spec':{}}");
    assert_causes("", "Pod", pod, NULL, "spec.containers: Required value\n");
    json_decref(pod);
    pod = created("", "Pod",
                  "{'metadata':{'name':'p','namespace':'d','labels':{'gpu':'yes please'}},"
                  "'spec':{'containers':[{'name':'CUDA','image':'i'},{'name':'CUDA','image':'i',"
                  "'ports':[{'containerPort':70000}]}],'restartPolicy':'Sometimes'}}");
    assert_causes("", "Pod", pod, NULL,
                  "metadata.labels: Invalid value: \"yes please\": a valid label must be an empty "
                  "string or consist of alphanumeric characters, '-', '_' or '.', and must start "
                  "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                  "'12345', regex used for validation is "
                  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')\n"
                  "spec.containers[0].name: Invalid value: \"CUDA\": " DNS_LABEL_MSG "\n"
                  "spec.containers[1].name: Invalid value: \"CUDA\": " DNS_LABEL_MSG "\n"
                  "spec.containers[1].ports[0].containerPort: Invalid value: 70000: must be "
                  "between 1 and 65535, inclusive\n"
                  "spec.containers[1].name: Duplicate value: \"CUDA\"\n"
                  "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: "
                  "\"Always\", \"OnFailure\", \"Never\"\n");
    json_decref(pod);
}

/* ValidateLabels: keys are qualified names (IsQualifiedName, validation.go),
 * nodeSelector too (ValidatePodSpec) */
static void test_validate_label_keys(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod",
                          "{'metadata':{'name':'p','namespace':'d','labels':{'a/b/c':'x'}},"
                          "'spec':{'containers':[{'name':'c','image':'i'}],"
                          "'nodeSelector':{'nvidia.com/gpu present':'true'}}}");
    assert_causes("", "Pod", pod, NULL,
                  "metadata.labels: Invalid value: \"a/b/c\": a qualified name must consist of "
                  "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                  "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
                  "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')\n"
                  "spec.nodeSelector: Invalid value: \"nvidia.com/gpu present\": name part must "
                  "consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                  "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                  "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n");
    json_decref(pod);
}

/* validateResourceRequirements: extended resources must equal their limit
 * (text as published: "spec.containers[1].resources.requests: Invalid value:
 * \"6\": must be equal to huawei.com/ascend-1980 limit of 8"), cpu/memory
 * requests may not exceed limits, an extended request needs a limit */
static void test_validate_resources(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod",
                          "{'metadata':{'name':'p','namespace':'d'},'spec':{'containers':[{"
                          "'name':'c','image':'i','resources':{'limits':{'nvidia.com/gpu':2,"
                          "'cpu':'1'},'requests':{'nvidia.com/gpu':1,'cpu':'2'}}}]}}");
    assert_causes("", "Pod", pod, NULL,
                  "spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to "
                  "nvidia.com/gpu limit of 2\n"
                  "spec.containers[0].resources.requests: Invalid value: \"2\": must be less than "
                  "or equal to cpu limit of 1\n");
    json_decref(pod);
    /* not through create: no limits->requests copy (a template would do) */
    pod = sq_load("{'metadata':{'name':'p','namespace':'d'},'spec':{'containers':[{'name':'c',"
                  "'image':'i','imagePullPolicy':'Always','terminationMessagePolicy':'File',"
                  "'resources':{'requests':{'nvidia.com/gpu':'1','gpu':'1'}}}],"
                  "'restartPolicy':'Always','dnsPolicy':'ClusterFirst',"
                  "'terminationGracePeriodSeconds':30}}");
    assert_causes("", "Pod", pod, NULL,
                  "spec.containers[0].resources.limits: Required value: Limit must be set for non "
                  "overcommitable resources\n"
                  "spec.containers[0].resources.requests[gpu]: Invalid value: gpu: must be a "
                  "standard resource type or fully qualified\n"
                  "spec.containers[0].resources.requests[gpu]: Invalid value: gpu: must be a "
                  "standard resource for containers\n");
    json_decref(pod);
}

/* ValidateResourceQuantityValue on an extended resource: whole numbers only,
 * in limits and in the requests copied from them. (The value itself prints
 * as Go's %#v of resource.Quantity in 1.32, which is not reproduced; only the
 * path and the reason are checked.) */
static void test_validate_extended_whole(void **state)
{
    (void)state;
    json_t *pod =
        created("", "Pod",
                "{'metadata':{'name':'p','namespace':'d'},'spec':{'containers':[{"
                "'name':'c','image':'i','resources':{'limits':{'nvidia.com/gpu':0.5}}}]}}");
    json_t *causes = as_strategy_validate("", "Pod", pod, NULL);
    assert_int_equal(json_array_size(causes), 2);
    static const char *const fields[] = {"spec.containers[0].resources.limits[nvidia.com/gpu]",
                                         "spec.containers[0].resources.requests[nvidia.com/gpu]"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *c = json_array_get(causes, i);
        assert_string_equal(json_string_value(json_object_get(c, "field")), fields[i]);
        assert_string_equal(json_string_value(json_object_get(c, "reason")), "FieldValueInvalid");
        const char *m = json_string_value(json_object_get(c, "message"));
        assert_memory_equal(m, "Invalid value: ", 15);
        assert_string_equal(m + strlen(m) - strlen(": must be an integer"), ": must be an integer");
    }
    json_decref(causes);
    json_decref(pod);
}

/* doc 3.2 pod update rules; message text from ValidatePodUpdate
 * (updatablePodSpecFields joined with ","), "add or remove containers" as
 * published in kubectl output */
static void test_validate_pod_update(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod", CUDA_PROBE);
    /* image and added tolerations are allowed */
    json_t *p2 = json_deep_copy(pod);
    json_object_set_new(at(p2, "spec.containers.0"), "image", json_string("nvidia/cuda:12.6.0"));
    json_array_append_new(at(p2, "spec.tolerations"),
                          sq_load("{'key':'nvidia.com/gpu','operator':'Exists',"
                                  "'effect':'NoSchedule'}"));
    as_strategy_update("", "Pod", p2, pod, false);
    assert_causes("", "Pod", p2, pod, "");
    /* a changed command is not */
    json_t *p3 = json_deep_copy(pod);
    json_object_set_new(at(p3, "spec.containers.0"), "command", sq_load("['sleep','1']"));
    as_strategy_update("", "Pod", p3, pod, false);
    json_t *causes = as_strategy_validate("", "Pod", p3, pod);
    assert_int_equal(json_array_size(causes), 1);
    assert_string_equal(json_string_value(at(causes, "0.field")), "spec");
    assert_string_equal(json_string_value(at(causes, "0.reason")), "FieldValueForbidden");
    const char *prefix =
        "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
        "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to "
        "be set to 1 if it was previously negative)\n";
    assert_memory_equal(json_string_value(at(causes, "0.message")), prefix, strlen(prefix));
    json_decref(causes);
    /* a second container */
    json_t *p4 = json_deep_copy(pod);
    json_array_append_new(at(p4, "spec.containers"), sq_load("{'name':'x','image':'i'}"));
    as_strategy_update("", "Pod", p4, pod, false);
    assert_causes("", "Pod", p4, pod,
                  "spec.containers: Forbidden: pod updates may not add or remove containers\n");
    /* a removed toleration */
    json_t *p5 = json_deep_copy(p2);
    json_array_remove(at(p5, "spec.tolerations"), 2);
    json_array_remove(at(p5, "spec.tolerations"), 0);
    as_strategy_update("", "Pod", p5, p2, false);
    /* DefaultTolerationSeconds re-adds not-ready; nvidia.com/gpu is gone */
    char *got = causes_text("", "Pod", p5, p2);
    assert_non_null(strstr(got, "spec.tolerations: Forbidden: existing toleration can not be "
                                "modified except its tolerationSeconds\n"));
    free(got);
    json_t *objs[] = {pod, p2, p3, p4, p5};
    for (size_t i = 0; i < 5; i++)
        json_decref(objs[i]);
}

/* doc 3.3 and apps validation; the selector texts match published apiserver
 * output ("spec.template.metadata.labels: Invalid value:
 * map[string]string{\"k8s-app\":\"fluentd-loggly\", \"version\":\"v1\"}:
 * `selector` does not match template `labels`", and "spec.selector: Invalid
 * value: v1.LabelSelector{MatchLabels:map[string]string{...},
 * MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable") */
static void test_validate_daemonset(void **state)
{
    (void)state;
    json_t *ds = created("apps", "DaemonSet",
                         "{'metadata':{'name':'fluentd','namespace':'d'},'spec':{'template':"
                         "{'metadata':{'labels':{'version':'v1','k8s-app':'fluentd-loggly'}},"
                         "'spec':{'containers':[{'name':'c','image':'i'}]}}}}");
    assert_causes("apps", "DaemonSet", ds, NULL,
                  "spec.template.metadata.labels: Invalid value: map[string]string{\"k8s-app\":"
                  "\"fluentd-loggly\", \"version\":\"v1\"}: `selector` does not match template "
                  "`labels`\n");
    json_decref(ds);
    json_t *v1 = created("apps", "DaemonSet", LAB_DS);
    json_t *v2 = json_deep_copy(v1);
    json_object_set_new(at(v2, "spec.selector.matchLabels"), "app", json_string("other"));
    json_object_set_new(at(v2, "spec.template.metadata.labels"), "app", json_string("other"));
    as_strategy_update("apps", "DaemonSet", v2, v1, false);
    assert_causes("apps", "DaemonSet", v2, v1,
                  "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
                  "\"app\":\"other\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field "
                  "is immutable\n");
    /* maxUnavailable and maxSurge both 0 */
    json_t *v3 = json_deep_copy(v1);
    json_object_set_new(at(v3, "spec.updateStrategy.rollingUpdate"), "maxUnavailable",
                        json_integer(0));
    as_strategy_update("apps", "DaemonSet", v3, v1, false);
    /* ValidateDaemonSet and ValidateDaemonSetUpdate both check the spec: the
     * cause is there twice, the message once */
    const char *twice = "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot "
                        "be 0 when maxSurge is 0\n"
                        "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot "
                        "be 0 when maxSurge is 0\n";
    assert_causes("apps", "DaemonSet", v3, v1, twice);
    json_t *causes = as_strategy_validate("apps", "DaemonSet", v3, v1);
    char *msg = as_strategy_invalid_message("DaemonSet", "toolkit", causes);
    assert_string_equal(msg, "DaemonSet.apps \"toolkit\" is invalid: "
                             "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: "
                             "cannot be 0 when maxSurge is 0");
    free(msg);
    json_decref(causes);
    json_t *objs[] = {v1, v2, v3};
    for (size_t i = 0; i < 3; i++)
        json_decref(objs[i]);
}

/* ValidateRollingUpdateDaemonSet: a percent over 100, and both non-zero.
 * The IntOrString prints with %#v (field.Error's fallback: its String() has
 * a pointer receiver): intstr.IntOrString{Type, IntVal, StrVal}. */
static void test_validate_daemonset_rolling(void **state)
{
    (void)state;
    json_t *ds = created("apps", "DaemonSet", LAB_DS);
    json_object_set_new(at(ds, "spec.updateStrategy.rollingUpdate"), "maxUnavailable",
                        json_string("150%"));
    json_object_set_new(at(ds, "spec.updateStrategy.rollingUpdate"), "maxSurge", json_integer(1));
    assert_causes("apps", "DaemonSet", ds, NULL,
                  "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "
                  "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater "
                  "than 100%\n"
                  "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "
                  "intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}: may not be set when "
                  "maxUnavailable is non-zero\n");
    json_decref(ds);
}

/* pkg/apis/node/validation: handler is a DNS label (an empty one is
 * Invalid, not Required) and immutable */
static void test_validate_runtimeclass(void **state)
{
    (void)state;
    json_t *rc = sq_load("{'metadata':{'name':'nvidia'}}");
    assert_causes("node.k8s.io", "RuntimeClass", rc, NULL,
                  "handler: Invalid value: \"\": " DNS_LABEL_MSG "\n");
    json_t *good = sq_load(LAB_RC);
    assert_causes("node.k8s.io", "RuntimeClass", good, NULL, "");
    json_t *changed = sq_load("{'metadata':{'name':'nvidia'},'handler':'nvidia-cdi'}");
    assert_causes("node.k8s.io", "RuntimeClass", changed, good,
                  "handler: Invalid value: \"nvidia-cdi\": field is immutable\n");
    json_decref(rc);
    json_decref(good);
    json_decref(changed);
}

/* ValidateConfigMap: keys are config keys, values total at most 1 MiB
 * (published: "ConfigMap \"chi-storage-core\" is invalid: []: Too long: ...";
 * the 1.32 wording of TooLong as published for k3s v1.32.3: "may not be more
 * than N bytes") */
static void test_validate_configmap(void **state)
{
    (void)state;
    json_t *cm = sq_load("{'metadata':{'name':'c','namespace':'d'},'data':{'a b':'x','ok':'y'}}");
    assert_causes("", "ConfigMap", cm, NULL,
                  "data[a b]: Invalid value: \"a b\": a valid config key must consist of "
                  "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
                  "'key-name', regex used for validation is '[-._a-zA-Z0-9]+')\n");
    json_decref(cm);
    size_t n = 1024 * 1024 + 1;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'x', n);
    big[n] = '\0';
    cm = sq_load("{'metadata':{'name':'c','namespace':'d'},'data':{}}");
    json_object_set_new(json_object_get(cm, "data"), "big", json_string(big));
    free(big);
    assert_causes("", "ConfigMap", cm, NULL, "[]: Too long: may not be more than 1048576 bytes\n");
    json_decref(cm);
}

/* ValidateTolerations / validateTaintEffect */
static void test_validate_tolerations(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod",
                          "{'metadata':{'name':'p','namespace':'d'},'spec':{'containers':[{"
                          "'name':'c','image':'i'}],'tolerations':[{'key':'nvidia.com/gpu',"
                          "'operator':'Exists','effect':'NoScheduel'},{'operator':'Equal',"
                          "'value':'x'}]}}");
    assert_causes("", "Pod", pod, NULL,
                  "spec.tolerations[0].effect: Unsupported value: \"NoScheduel\": supported "
                  "values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"\n"
                  "spec.tolerations[1].operator: Invalid value: \"Equal\": operator must be Exists "
                  "when `key` is empty, which means \"match all values and all keys\"\n");
    json_decref(pod);
}

/* ---- RuntimeClass admission ---- */

static void test_runtimeclass_merge(void **state)
{
    (void)state;
    json_t *rc = sq_load("{'metadata':{'name':'nvidia'},'handler':'nvidia',"
                         "'overhead':{'podFixed':{'cpu':0.25,'memory':'128Mi'}},"
                         "'scheduling':{'nodeSelector':{'nvidia.com/gpu.present':'true'},"
                         "'tolerations':[{'key':'nvidia.com/gpu','operator':'Exists',"
                         "'effect':'NoSchedule'},{'key':'node.kubernetes.io/not-ready',"
                         "'operator':'Exists','effect':'NoExecute','tolerationSeconds':300}]}}");
    json_t *pod = created("", "Pod", CUDA_PROBE);
    json_object_set_new(json_object_get(pod, "spec"), "nodeSelector", sq_load("{'zone':'a'}"));
    char *message = (char *)"untouched";
    assert_int_equal(as_strategy_runtimeclass(pod, rc, &message), 0);
    assert_null(message);
    assert_json(at(pod, "spec.overhead"), "{'cpu':'250m','memory':'128Mi'}");
    assert_json(at(pod, "spec.nodeSelector"), "{'zone':'a','nvidia.com/gpu.present':'true'}");
    /* MergeTolerations: the RC's not-ready toleration equals the pod's
     * default one and is dropped; the first of equal ones is kept */
    assert_json(at(pod, "spec.tolerations"),
                "[{'key':'node.kubernetes.io/not-ready','operator':'Exists','effect':'NoExecute',"
                "'tolerationSeconds':300},{'key':'node.kubernetes.io/unreachable','operator':"
                "'Exists','effect':'NoExecute','tolerationSeconds':300},{'key':'nvidia.com/gpu',"
                "'operator':'Exists','effect':'NoSchedule'}]");
    assert_causes("", "Pod", pod, NULL, "");
    json_decref(pod);

    /* conflicts, texts from plugin/pkg/admission/runtimeclass/admission.go */
    pod = created("", "Pod", CUDA_PROBE);
    json_object_set_new(json_object_get(pod, "spec"), "overhead", sq_load("{'cpu':'1'}"));
    json_t *before = json_deep_copy(pod);
    assert_int_equal(as_strategy_runtimeclass(pod, rc, &message), -1);
    assert_string_equal(message,
                        "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined "
                        "Overhead");
    free(message);
    assert_true(json_equal(pod, before));
    json_decref(before);
    json_object_set_new(json_object_get(pod, "spec"), "overhead",
                        sq_load("{'memory':'128Mi','cpu':'250m'}"));
    json_object_set_new(json_object_get(pod, "spec"), "nodeSelector",
                        sq_load("{'nvidia.com/gpu.present':'false'}"));
    assert_int_equal(as_strategy_runtimeclass(pod, rc, &message), -1);
    assert_string_equal(message, "conflict: runtimeClass.scheduling.nodeSelector["
                                 "nvidia.com/gpu.present] = true; pod.spec.nodeSelector["
                                 "nvidia.com/gpu.present] = false");
    free(message);
    json_t *plain = sq_load(LAB_RC);
    assert_int_equal(as_strategy_runtimeclass(pod, plain, &message), -1);
    assert_string_equal(message, "pod rejected: Pod Overhead set without corresponding "
                                 "RuntimeClass defined Overhead");
    free(message);
    json_decref(plain);
    json_decref(pod);
    json_decref(rc);
}

/* a toleration covered by a broader one goes (isSuperset) */
static void test_runtimeclass_superset(void **state)
{
    (void)state;
    json_t *rc =
        sq_load("{'handler':'nvidia','scheduling':{'tolerations':[{'operator':'Exists'}]}}");
    json_t *pod = sq_load("{'spec':{'tolerations':[{'key':'a','operator':'Equal','value':'b',"
                          "'effect':'NoSchedule'}]}}");
    char *message = NULL;
    assert_int_equal(as_strategy_runtimeclass(pod, rc, &message), 0);
    assert_json(at(pod, "spec.tolerations"), "[{'operator':'Exists'}]");
    json_decref(pod);
    json_decref(rc);
}

/* ---- misc ---- */

/* other kinds pass through untouched and valid */
static void test_other_kinds(void **state)
{
    (void)state;
    const char *text = "{'metadata':{'name':'Weird Name'},'spec':{'x':1},'status':{'y':2}}";
    json_t *obj = created("", "Event", text);
    assert_json(obj, text);
    assert_causes("", "Event", obj, NULL, "");
    json_decref(obj);
}

/* The same for a write of pods/status (ValidatePodStatusUpdate). */
static void assert_status_causes(const json_t *obj, const json_t *old, const char *expected)
{
    assert_lines(lines_of(as_strategy_validate_status("", "Pod", obj, old)), expected);
}

/* pods/status is judged as ValidatePodStatusUpdate does: the spec is the old
 * one, so a spec the update rules refuse does not count; QoS stays; a
 * terminated container of a pod that does not restart stays terminated
 * (sidecars excepted); a nominated node must be a node name. */
static void test_validate_pod_status_update(void **state)
{
    (void)state;
    json_t *pod = created("", "Pod",
                          "{'metadata':{'name':'p','namespace':'default'},"
                          "'spec':{'restartPolicy':'Never','containers':"
                          "[{'name':'c','image':'busybox'}],'initContainers':"
                          "[{'name':'side','image':'busybox','restartPolicy':'Always'},"
                          "{'name':'init','image':'busybox'}]}}");
    /* what the kubelet wrote (a create drops the status) */
    json_object_update_new(json_object_get(pod, "status"),
                           sq_load("{'phase':'Running','containerStatuses':"
                                   "[{'name':'c','state':{'terminated':{'exitCode':0}}}],"
                                   "'initContainerStatuses':"
                                   "[{'name':'side','state':{'terminated':{'exitCode':1}}},"
                                   "{'name':'init','state':{'terminated':{'exitCode':0}}}]}"));
    /* a changed command would be refused on the pod itself */
    json_t *p2 = json_deep_copy(pod);
    json_object_set_new(at(p2, "spec.containers.0"), "command", sq_load("['sleep','1']"));
    as_strategy_update("", "Pod", p2, pod, true);
    assert_null(at(p2, "spec.containers.0.command"));
    assert_status_causes(p2, pod, "");
    json_decref(p2);
    /* QoS, a nominated node, terminated containers */
    json_t *p3 = json_deep_copy(pod);
    json_t *st = json_object_get(p3, "status");
    json_object_set_new(st, "qosClass", json_string("Guaranteed"));
    json_object_set_new(st, "nominatedNodeName", json_string("Bad_Node"));
    json_object_set_new(at(st, "containerStatuses.0"), "state", sq_load("{'running':{}}"));
    json_object_set_new(at(st, "initContainerStatuses.0"), "state", sq_load("{'running':{}}"));
    json_object_set_new(at(st, "initContainerStatuses.1"), "state", sq_load("{'running':{}}"));
    as_strategy_update("", "Pod", p3, pod, true);
    assert_status_causes(
        p3, pod,
        "status.nominatedNodeName: Invalid value: \"Bad_Node\": a lowercase RFC 1123 subdomain "
        "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n"
        "status.qosClass: Invalid value: \"Guaranteed\": field is immutable\n"
        "status.containerStatuses[0].state: Forbidden: may not be transitioned to "
        "non-terminated state\n"
        "status.initContainerStatuses[1].state: Forbidden: may not be transitioned to "
        "non-terminated state\n");
    json_decref(p3);
    /* the same under restartPolicy Always: only QoS and the name */
    json_object_set_new(json_object_get(pod, "spec"), "restartPolicy", json_string("Always"));
    json_t *p4 = json_deep_copy(pod);
    json_object_set_new(at(p4, "status.containerStatuses.0"), "state", sq_load("{'running':{}}"));
    as_strategy_update("", "Pod", p4, pod, true);
    assert_status_causes(p4, pod, "");
    json_decref(p4);
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuda_probe_create),
        cmocka_unit_test(test_pod_create_discards_status),
        cmocka_unit_test(test_qos_burstable),
        cmocka_unit_test(test_qos_guaranteed),
        cmocka_unit_test(test_quantities_canonical),
        cmocka_unit_test(test_container_defaults),
        cmocka_unit_test(test_default_tolerations),
        cmocka_unit_test(test_priority),
        cmocka_unit_test(test_daemonset_create),
        cmocka_unit_test(test_namespace_create),
        cmocka_unit_test(test_node_create),
        cmocka_unit_test(test_daemonset_generation),
        cmocka_unit_test(test_status_kept_spec_kept),
        cmocka_unit_test(test_node_taint_admission),
        cmocka_unit_test(test_pod_update_no_generation),
        cmocka_unit_test(test_validate_image_required),
        cmocka_unit_test(test_invalid_message_joining),
        cmocka_unit_test(test_validate_names),
        cmocka_unit_test(test_validate_containers),
        cmocka_unit_test(test_validate_label_keys),
        cmocka_unit_test(test_validate_resources),
        cmocka_unit_test(test_validate_extended_whole),
        cmocka_unit_test(test_validate_pod_update),
        cmocka_unit_test(test_validate_pod_status_update),
        cmocka_unit_test(test_validate_daemonset),
        cmocka_unit_test(test_validate_daemonset_rolling),
        cmocka_unit_test(test_validate_runtimeclass),
        cmocka_unit_test(test_validate_configmap),
        cmocka_unit_test(test_validate_tolerations),
        cmocka_unit_test(test_runtimeclass_merge),
        cmocka_unit_test(test_runtimeclass_superset),
        cmocka_unit_test(test_other_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
