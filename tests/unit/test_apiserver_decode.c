/* as_decode_*: request bodies against the Go types of the served kinds.
 *
 * Expected texts are those of the Go code kube-apiserver 1.32 decodes with:
 * sigs.k8s.io/json internal/golang/encoding/json decode.go (UnmarshalTypeError,
 * its error context, strict paths), apimachinery runtime/converter.go
 * (fromUnstructured's errors), resource.Quantity, metav1.Time (Go's
 * time.Parse errors), and the recording
 * ../shared/k8s-cases/real-1.32.13/kubectl-probes.txt. JSON is written with
 * ' for ". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include "apiserver/decode.h"
#include "apiserver/strategy.h"
#include "apiserver/views.h"

/* The first error of obj decoded as kind (core group). */
static void assert_error(const char *kind, as_decoder decoder, const char *squoted,
                         const char *want)
{
    json_t *obj = sq_load(squoted);
    as_decode_result r;
    int rc = as_decode_check(obj, as_gotype_find("", kind), decoder, true, &r);
    if (!r.error || strcmp(r.error, want) != 0)
        print_error("expected %s\n     got %s\n", want, r.error ? r.error : "(none)");
    assert_int_equal(rc, -1);
    assert_non_null(r.error);
    assert_string_equal(r.error, want);
    as_decode_result_clear(&r);
    json_decref(obj);
}

/* The strict errors of obj, joined by "|"; none is "". */
static void assert_strict(const char *kind, const char *squoted, const char *want)
{
    json_t *obj = sq_load(squoted);
    as_decode_result r;
    assert_int_equal(as_decode_check(obj, as_gotype_find("", kind), AS_DECODE_JSON, true, &r), 0);
    char got[1024] = "";
    size_t i;
    json_t *v;
    json_array_foreach(r.strict, i, v)
    {
        if (i) strcat(got, "|");
        strcat(got, json_string_value(v));
    }
    assert_string_equal(got, want);
    as_decode_result_clear(&r);
    json_decref(obj);
}

/* kubectl-probes.txt: `data: {a: 5, b: {x: 1}}` */
static void test_configmap_data_number(void **state)
{
    (void)state;
    assert_error("ConfigMap", AS_DECODE_JSON,
                 "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'bad'},"
                 "'data':{'a':5,'b':{'x':1}}}",
                 "json: cannot unmarshal number into Go struct field ConfigMap.data of type "
                 "string");
}

/* The struct of the innermost field, the JSON names from the root without
 * indices, the Go type's String(). */
static void test_type_error_context(void **state)
{
    (void)state;
    assert_error("ConfigMap", AS_DECODE_JSON, "{'metadata':{'labels':[1]}}",
                 "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of "
                 "type map[string]string");
    assert_error(
        "ConfigMap", AS_DECODE_JSON, "{'metadata':{'finalizers':'x'}}",
        "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers "
        "of type []string");
    assert_error(
        "Pod", AS_DECODE_JSON, "{'spec':{'containers':[{'name':'a'},{'name':7}]}}",
        "json: cannot unmarshal number into Go struct field Container.spec.containers.name "
        "of type string");
    assert_error("Pod", AS_DECODE_JSON, "{'spec':{'restartPolicy':1}}",
                 "json: cannot unmarshal number into Go struct field PodSpec.spec.restartPolicy of "
                 "type v1.RestartPolicy");
    assert_error("Pod", AS_DECODE_JSON, "{'spec':{'affinity':'x'}}",
                 "json: cannot unmarshal string into Go struct field PodSpec.spec.affinity of type "
                 "v1.Affinity");
    assert_error("Namespace", AS_DECODE_JSON, "{'spec':{'finalizers':[1]}}",
                 "json: cannot unmarshal number into Go struct field "
                 "NamespaceSpec.spec.finalizers of type v1.FinalizerName");
    /* an integer that is not one, or does not fit */
    assert_error("Pod", AS_DECODE_JSON, "{'spec':{'priority':1.5}}",
                 "json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.priority of "
                 "type int32");
    assert_error("Pod", AS_DECODE_JSON, "{'spec':{'priority':3000000000}}",
                 "json: cannot unmarshal number 3000000000 into Go struct field "
                 "PodSpec.spec.priority of type int32");
}

/* encoding/json reports the first type error and goes on; a value with its
 * own UnmarshalJSON stops the decoding with its error, which wins. */
static void test_first_error_and_custom_types(void **state)
{
    (void)state;
    assert_error("ConfigMap", AS_DECODE_JSON, "{'data':{'a':1},'immutable':'no'}",
                 "json: cannot unmarshal number into Go struct field ConfigMap.data of type "
                 "string");
    assert_error("Pod", AS_DECODE_JSON,
                 "{'metadata':{'name':1},'spec':{'containers':[{'resources':{'limits':{'cpu':"
                 "'one'}}}]}}",
                 "quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    assert_error("Pod", AS_DECODE_JSON,
                 "{'spec':{'containers':[{'livenessProbe':{'httpGet':{'port':true}}}]}}",
                 "json: cannot unmarshal bool into Go struct field "
                 "HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32");
    assert_error("ConfigMap", AS_DECODE_JSON, "{'metadata':{'creationTimestamp':5}}",
                 "json: cannot unmarshal number into Go struct field "
                 "ObjectMeta.metadata.creationTimestamp of type string");
    assert_error("ConfigMap", AS_DECODE_JSON,
                 "{'metadata':{'creationTimestamp':'2024-13-01T00:00:00Z'}}",
                 "parsing time \"2024-13-01T00:00:00Z\": month out of range");
    assert_error("ConfigMap", AS_DECODE_JSON, "{'metadata':{'creationTimestamp':'yesterday'}}",
                 "parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
                 "\"yesterday\" as \"2006\"");
    assert_error("ConfigMap", AS_DECODE_JSON,
                 "{'metadata':{'creationTimestamp':'2024-01-01 10:00:00'}}",
                 "parsing time \"2024-01-01 10:00:00\" as \"2006-01-02T15:04:05Z07:00\": cannot "
                 "parse \" 10:00:00\" as \"T\"");
    assert_error("ConfigMap", AS_DECODE_JSON, "{'binaryData':{'k':'a$'}}",
                 "illegal base64 data at input byte 1");
    /* null leaves any value as it is; quantities take numbers */
    json_t *ok = sq_load("{'metadata':{'labels':null,'name':null},'spec':{'containers':[{'name':"
                         "'c','resources':{'limits':{'nvidia.com/gpu':1,'cpu':0.5}}}],"
                         "'priority':null}}");
    as_decode_result r;
    assert_int_equal(as_decode_check(ok, as_gotype_find("", "Pod"), AS_DECODE_JSON, true, &r), 0);
    assert_int_equal(json_array_size(r.strict), 0);
    as_decode_result_clear(&r);
    json_decref(ok);
}

/* Strict errors: the path with indices (and map keys), each once. */
static void test_unknown_fields(void **state)
{
    (void)state;
    assert_strict("Pod", "{'spec':{'bogus':1,'containers':[{'name':'c','imagePullPolicyy':'x'}]}}",
                  "unknown field \"spec.bogus\"|unknown field "
                  "\"spec.containers[0].imagePullPolicyy\"");
    assert_strict("Pod", "{'spec':{'containers':[{'bogus':1},{'bogus':2}]},'x':1}",
                  "unknown field \"spec.containers[0].bogus\"|unknown field "
                  "\"spec.containers[1].bogus\"|unknown field \"x\"");
    /* the values of unknown and free-form fields are not looked into */
    assert_strict("ControllerRevision", "{'data':{'anything':{'at':'all'}},'nope':{'deep':1}}",
                  "unknown field \"nope\"");
    /* events of events.k8s.io are their own type */
    json_t *ev = sq_load("{'note':'n','message':'m'}");
    as_decode_result r;
    assert_int_equal(
        as_decode_check(ev, as_gotype_find("events.k8s.io", "Event"), AS_DECODE_JSON, true, &r), 0);
    assert_int_equal(json_array_size(r.strict), 1);
    assert_string_equal(json_string_value(json_array_get(r.strict, 0)),
                        "unknown field \"message\"");
    as_decode_result_clear(&r);
    json_decref(ev);
}

static void test_duplicates(void **state)
{
    (void)state;
    const char *text = "{\"metadata\":{\"name\":\"a\",\"name\":\"b\",\"labels\":{\"x\":\"1\",\"x\":"
                       "\"2\"}},\"data\":{\"k\":\"v\"},\"bogus\":{\"z\":1,\"z\":2}}";
    json_t *strict = json_array();
    size_t n = as_decode_duplicates(text, strlen(text), as_gotype_find("", "ConfigMap"), strict);
    assert_int_equal(n, 2);
    assert_string_equal(json_string_value(json_array_get(strict, 0)),
                        "duplicate field \"metadata.name\"");
    assert_string_equal(json_string_value(json_array_get(strict, 1)),
                        "duplicate field \"metadata.labels.x\"");
    json_decref(strict);
    /* a patch is read into map[string]interface{}: only its top level */
    const char *patch = "{\"a\":1,\"a\":2,\"b\":{\"c\":1,\"c\":2}}";
    strict = json_array();
    assert_int_equal(
        as_decode_duplicates(patch, strlen(patch), as_gotype_find("", "patch"), strict), 1);
    assert_string_equal(json_string_value(json_array_get(strict, 0)), "duplicate field \"a\"");
    json_decref(strict);
}

/* A strategic merge patch's object goes through the unstructured converter. */
static void test_unstructured_converter_texts(void **state)
{
    (void)state;
    assert_error("ConfigMap", AS_DECODE_UNSTRUCTURED, "{'data':{'a':5}}",
                 "cannot convert int64 to string");
    assert_error("ConfigMap", AS_DECODE_UNSTRUCTURED, "{'data':{'a':true}}",
                 "unrecognized type: string");
    assert_error("ConfigMap", AS_DECODE_UNSTRUCTURED, "{'metadata':{'labels':[1]}}",
                 "cannot restore map from slice");
    assert_error("ConfigMap", AS_DECODE_UNSTRUCTURED, "{'metadata':{'finalizers':'x'}}",
                 "cannot restore slice from string");
    assert_error("Pod", AS_DECODE_UNSTRUCTURED, "{'spec':5}", "cannot restore struct from: int64");
    assert_error("Pod", AS_DECODE_UNSTRUCTURED, "{'spec':{'priority':1.5}}",
                 "cannot convert float64 to int32");
    /* a whole float is an integer to the converter */
    json_t *ok = sq_load("{'spec':{'priority':2.0}}");
    as_decode_result r;
    assert_int_equal(
        as_decode_check(ok, as_gotype_find("", "Pod"), AS_DECODE_UNSTRUCTURED, true, &r), 0);
    as_decode_result_clear(&r);
    json_decref(ok);
}

/* the value of the patcher's `patch: Invalid value: "map[...]"` */
static void test_go_value(void **state)
{
    (void)state;
    json_t *v = sq_load("{'spec':{'bogus':1,'a':[1.5,'x',null,true]},'metadata':{'annotations':{"
                        "'k':'{\\'a\\':1}'}}}");
    char *text = as_decode_go_value(v);
    assert_string_equal(text, "map[metadata:map[annotations:map[k:{\"a\":1}]] spec:map[a:[1.5 x "
                              "<nil> true] bogus:1]]");
    free(text);
    json_decref(v);
    json_t *strict = sq_load("['unknown field \\'a\\'','duplicate field \\'b\\'']");
    text = as_decode_strict_message(strict);
    assert_string_equal(text, "strict decoding error: unknown field \"a\", duplicate field \"b\"");
    free(text);
    json_decref(strict);
}

/* pkg/apis/events/v1/conversion.go, both ways */
static void test_events_view(void **state)
{
    (void)state;
    const as_resource *view = as_resource_find("events.k8s.io", "v1", "events");
    assert_ptr_equal(as_storage(view), as_resource_find("", "v1", "events"));
    json_t *core =
        sq_load("{'apiVersion':'v1','kind':'Event','metadata':{'name':'e'},"
                "'involvedObject':{'kind':'Pod','name':'p'},'reason':'R','message':'m',"
                "'source':{'component':'kubelet'},'firstTimestamp':'2025-01-01T00:00:00Z',"
                "'lastTimestamp':'2025-01-01T00:00:05Z','count':3,'type':'Normal'}");
    json_t *v1 = as_view_from_stored(view, json_incref(core));
    json_t *want =
        sq_load("{'apiVersion':'events.k8s.io/v1','kind':'Event','metadata':{'name':'e'},"
                "'eventTime':null,'reason':'R','regarding':{'kind':'Pod','name':'p'},"
                "'note':'m','type':'Normal','deprecatedSource':{'component':'kubelet'},"
                "'deprecatedFirstTimestamp':'2025-01-01T00:00:00Z',"
                "'deprecatedLastTimestamp':'2025-01-01T00:00:05Z','deprecatedCount':3}");
    assert_true(json_equal(v1, want));
    json_t *back = as_view_to_stored(view, v1);
    json_object_set_new(core, "eventTime", json_null());
    assert_true(json_equal(back, core));
    json_decref(back);
    json_decref(want);
    json_decref(core);
    /* an events.k8s.io Event read through core */
    json_t *ev = sq_load("{'metadata':{'name':'s'},'eventTime':'2025-01-01T00:00:00.000001Z',"
                         "'reportingController':'default-scheduler','note':'n','regarding':{}}");
    json_t *c = as_view_to_stored(view, ev);
    assert_string_equal(json_string_value(json_object_get(c, "message")), "n");
    assert_string_equal(json_string_value(json_object_get(c, "reportingComponent")),
                        "default-scheduler");
    assert_true(json_is_null(json_object_get(c, "lastTimestamp")));
    assert_int_equal(json_object_size(json_object_get(c, "source")), 0);
    assert_null(json_object_get(c, "count"));
    json_decref(c);
}

/* plugin/pkg/admission/serviceaccount: mountServiceAccountToken */
static void test_service_account_volume(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'spec':{'initContainers':[{'name':'i'}],'containers':[{'name':'a'},"
                          "{'name':'b','volumeMounts':[{'name':'own','mountPath':"
                          "'/var/run/secrets/kubernetes.io/serviceaccount'}]}]}}");
    json_t *sa = sq_load("{'imagePullSecrets':[{'name':'reg'}]}");
    as_strategy_service_account(pod, sa, "x7k2p");
    json_t *spec = json_object_get(pod, "spec");
    json_t *vol = json_array_get(json_object_get(spec, "volumes"), 0);
    assert_string_equal(json_string_value(json_object_get(vol, "name")), "kube-api-access-x7k2p");
    json_t *projected = json_object_get(vol, "projected");
    assert_int_equal(json_integer_value(json_object_get(projected, "defaultMode")), 420);
    json_t *sources = json_object_get(projected, "sources");
    assert_int_equal(json_array_size(sources), 3);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_array_get(sources, 0), "serviceAccountToken"),
                         "expirationSeconds")),
                     3607);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_array_get(sources, 1), "configMap"), "name")),
                        "kube-root-ca.crt");
    /* init containers and containers without a mount there get one */
    json_t *mi =
        json_object_get(json_array_get(json_object_get(spec, "initContainers"), 0), "volumeMounts");
    json_t *ma =
        json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "volumeMounts");
    json_t *mb =
        json_object_get(json_array_get(json_object_get(spec, "containers"), 1), "volumeMounts");
    assert_int_equal(json_array_size(mi), 1);
    assert_int_equal(json_array_size(ma), 1);
    assert_int_equal(json_array_size(mb), 1); /* its own stays alone */
    assert_true(json_is_true(json_object_get(json_array_get(ma, 0), "readOnly")));
    assert_string_equal(json_string_value(json_object_get(json_array_get(ma, 0), "name")),
                        "kube-api-access-x7k2p");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(spec, "imagePullSecrets"), 0), "name")),
                        "reg");
    json_decref(pod);
    /* the pod's automountServiceAccountToken wins over the account's */
    pod = sq_load("{'spec':{'automountServiceAccountToken':false,'containers':[{'name':'a'}]}}");
    json_t *sa_on = sq_load("{'automountServiceAccountToken':true}");
    as_strategy_service_account(pod, sa_on, "abcde");
    assert_null(json_object_get(json_object_get(pod, "spec"), "volumes"));
    json_decref(pod);
    pod = sq_load("{'spec':{'containers':[{'name':'a'}]}}");
    json_t *sa_off = sq_load("{'automountServiceAccountToken':false}");
    as_strategy_service_account(pod, sa_off, "abcde");
    assert_null(json_object_get(json_object_get(pod, "spec"), "volumes"));
    json_decref(pod);
    json_decref(sa);
    json_decref(sa_on);
    json_decref(sa_off);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configmap_data_number),
        cmocka_unit_test(test_type_error_context),
        cmocka_unit_test(test_first_error_and_custom_types),
        cmocka_unit_test(test_unknown_fields),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_unstructured_converter_texts),
        cmocka_unit_test(test_go_value),
        cmocka_unit_test(test_events_view),
        cmocka_unit_test(test_service_account_volume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
