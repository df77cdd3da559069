/* kube_protobuf_decode: the protobuf bodies kubectl 1.32's typed generators POST.
 *
 * The recorded bodies are real: kubectl 1.32.4 (the Google Cloud SDK
 * dispatcher, linux/amd64) was pointed at a throwaway Python recorder with a
 * kubeconfig of `server: http://127.0.0.1:38417`, an empty user, and
 * `--cache-dir` in a scratch folder. The recorder, in essence:
 *
 *   class H(http.server.BaseHTTPRequestHandler):
 *       protocol_version = "HTTP/1.1"
 *       def do_POST(self):
 *           body = self.rfile.read(int(self.headers["Content-Length"]))
 *           open("%02d.bin" % n, "wb").write(body)         # n counts the POSTs
 *           reply 201 application/json {"kind": <from the URL>, "apiVersion": "v1",
 *                                       "metadata": {"name": "recorded"}}
 *       def do_GET(self):  # only /version?timeout=5s came
 *           reply {"major": "1", "minor": "32", "gitVersion": "v1.32.0"}
 *   http.server.ThreadingHTTPServer(("127.0.0.1", 38417), H).serve_forever()
 *
 * Every POST came with Content-Type application/vnd.kubernetes.protobuf and
 * Accept application/vnd.kubernetes.protobuf,application/json, to
 * .../namespaces or .../namespaces/NS/<resource>?fieldManager=kubectl-create&
 * fieldValidation=Strict. The namespace body is byte for byte the one in
 * k8s-semantics.md section 2.5. The expected JSON comes from the command
 * lines (names, literals, file contents), Go's JSON field order for the
 * types, and Go's base64 for bytes; expectations for fields no generator
 * sends come from hand-built bodies, encoded in this file with the field
 * numbers of k8s.io/api and apimachinery generated.proto.
 *
 * JSON in expectations is written with ' for " to stay readable. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/protobuf.h"
#include "util/buf.h"

/* ---- helpers ---- */

/* Exact text, so the order of members is checked too. */
static void assert_dumps_as(const json_t *v, const char *squoted)
{
    json_t *expected = sq_load(squoted);
    char *want = json_dumps(expected, JSON_COMPACT);
    char *got = json_dumps(v, JSON_COMPACT);
    assert_non_null(got);
    if (strcmp(want, got) != 0) print_error("expected %s\n     got %s\n", want, got);
    assert_string_equal(got, want);
    free(want);
    free(got);
    json_decref(expected);
}

typedef struct {
    uint8_t b[8192];
    size_t n;
} buf;

static void put_raw(buf *o, const void *p, size_t n)
{
    assert_true(o->n + n <= sizeof o->b);
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void put_varint(buf *o, uint64_t v)
{
    do {
        uint8_t byte = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) byte |= 0x80;
        put_raw(o, &byte, 1);
    } while (v);
}

static void put_tag(buf *o, unsigned num, unsigned wire_type)
{
    put_varint(o, (uint64_t)num << 3 | wire_type);
}

static void put_bytes(buf *o, unsigned num, const void *p, size_t n)
{
    put_tag(o, num, 2);
    put_varint(o, n);
    put_raw(o, p, n);
}

static void put_str(buf *o, unsigned num, const char *s)
{
    put_bytes(o, num, s, strlen(s));
}

static void put_msg(buf *o, unsigned num, const buf *m)
{
    put_bytes(o, num, m->b, m->n);
}

static void put_uint(buf *o, unsigned num, uint64_t v)
{
    put_tag(o, num, 0);
    put_varint(o, v);
}

/* A map<string, string> entry: {1 key, 2 value}. */
static void put_entry(buf *o, unsigned num, const char *key, const char *value)
{
    buf e = {0};
    put_str(&e, 1, key);
    put_str(&e, 2, value);
    put_msg(o, num, &e);
}

static void put_time(buf *o, unsigned num, int64_t seconds, int32_t nanos)
{
    buf t = {0};
    put_uint(&t, 1, (uint64_t)seconds);
    if (nanos) put_uint(&t, 2, (uint64_t)(int64_t)nanos);
    put_msg(o, num, &t);
}

/* The envelope as kubectl writes it: magic, typeMeta, raw, then the empty
 * contentEncoding and contentType. */
static void put_envelope(buf *o, const char *api_version, const char *kind, const buf *raw)
{
    put_raw(o, "k8s\0", 4);
    buf type = {0};
    put_str(&type, 1, api_version);
    put_str(&type, 2, kind);
    put_msg(o, 1, &type);
    put_msg(o, 2, raw);
    put_raw(o, "\x1a\x00\x22\x00", 4);
}

static size_t from_hex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = strlen(hex) / 2;
    assert_true(n <= cap && strlen(hex) % 2 == 0);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    return n;
}

static json_t *decode_ok(const void *body, size_t len)
{
    gp_error err = {0};
    json_t *v = kube_protobuf_decode(body, len, &err);
    if (!v) print_error("decode failed: %s\n", err.text);
    assert_non_null(v);
    return v;
}

/* Decoding must fail with exactly `message`. */
static void assert_error(const void *body, size_t len, const char *message)
{
    gp_error err = {0};
    json_t *v = kube_protobuf_decode(body, len, &err);
    if (v) {
        char *text = json_dumps(v, JSON_COMPACT);
        print_error("decoded, expected an error: %s\n", text);
        free(text);
        json_decref(v);
        fail();
    }
    assert_string_equal(err.text, message);
}

/* ---- bodies recorded from kubectl 1.32.4 ---- */

typedef struct {
    const char *name;
    const char *command;
    const char *hex;
    const char *expected; /* NULL: checked by its own test */
} recorded;

static const recorded bodies[] = {
    {"namespace", "kubectl create namespace gpu-lab",
     "6b3873000a0f0a02763112094e616d657370616365121f0a170a076770752d6c616212001a002200"
     "2a0032003800420012001a020a001a002200",
     "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'gpu-lab'}}"},
    {"configmap literals",
     "kubectl create configmap lab --from-literal=a=1 --from-literal=b=two "
     "-n gpu-lab",
     "6b3873000a0f0a0276311209436f6e6669674d6170122e0a1a0a036c616212001a076770752d6c61"
     "6222002a0032003800420012060a016112013112080a0162120374776f1a002200",
     "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'lab','namespace':'gpu-lab'},"
     "'data':{'a':'1','b':'two'}}"},
    {"secret generic", "kubectl create secret generic s --from-literal=k=v",
     "6b3873000a0c0a0276311206536563726574121d0a110a017312001a0022002a0032003800420012"
     "060a016b1201761a001a002200",
     "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'s'},'data':{'k':'dg=='}}"},
    {"serviceaccount", "kubectl create serviceaccount sa1",
     "6b3873000a140a027631120e536572766963654163636f756e7412150a130a0373613112001a0022"
     "002a003200380042001a002200",
     "{'apiVersion':'v1','kind':'ServiceAccount','metadata':{'name':'sa1'}}"},
    {"namespace server dry run", "kubectl create namespace x --dry-run=server",
     "6b3873000a0f0a02763112094e616d65737061636512190a110a017812001a0022002a0032003800"
     "420012001a020a001a002200",
     "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'x'}}"},
    /* blob.bin is printf '\x00\x01\x02\xff\xfe\x80binary\n', not UTF-8, so
     * kubectl puts it in binaryData; greeting.txt is "hello\n". */
    {"configmap binary file",
     "kubectl create configmap bin --from-file=blob.bin "
     "--from-file=greeting.txt -n gpu-lab",
     "6b3873000a0f0a0276311209436f6e6669674d6170124f0a1a0a0362696e12001a076770752d6c61"
     "6222002a0032003800420012160a0c6772656574696e672e747874120668656c6c6f0a1a190a0862"
     "6c6f622e62696e120d000102fffe8062696e6172790a1a002200",
     "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'bin','namespace':'gpu-lab'},"
     "'data':{'greeting.txt':'hello\\n'},'binaryData':{'blob.bin':'AAEC//6AYmluYXJ5Cg=='}}"},
    /* No generator flag sets labels; --save-config is how annotations come. */
    {"configmap save-config",
     "kubectl create configmap saved --from-literal=mode=lab "
     "--save-config -n gpu-lab",
     "6b3873000a0f0a0276311209436f6e6669674d617012ec010adc010a05736176656412001a076770"
     "752d6c616222002a0032003800420062bd010a306b75626563746c2e6b756265726e657465732e69"
     "6f2f6c6173742d6170706c6965642d636f6e66696775726174696f6e1288017b226b696e64223a22"
     "436f6e6669674d6170222c2261706956657273696f6e223a227631222c226d65746164617461223a"
     "7b226e616d65223a227361766564222c226e616d657370616365223a226770752d6c6162222c2263"
     "72656174696f6e54696d657374616d70223a6e756c6c7d2c2264617461223a7b226d6f6465223a22"
     "6c6162227d7d0a120b0a046d6f646512036c61621a002200",
     NULL},
    /* --append-hash made the name typed-6hg6c82847 on kubectl's side. */
    {"secret typed",
     "kubectl create secret generic typed --type=kubernetes.io/basic-auth "
     "--from-literal=username=admin --from-file=key=blob.bin --append-hash",
     "6b3873000a0c0a027631120653656372657412650a200a1074797065642d36686736633832383437"
     "12001a0022002a0032003800420012140a036b6579120d000102fffe8062696e6172790a12110a08"
     "757365726e616d65120561646d696e1a186b756265726e657465732e696f2f62617369632d617574"
     "681a002200",
     "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'typed-6hg6c82847'},"
     "'data':{'key':'AAEC//6AYmluYXJ5Cg==','username':'YWRtaW4='},"
     "'type':'kubernetes.io/basic-auth'}"},
    {"secret docker-registry",
     "kubectl create secret docker-registry reg --docker-server=r.example "
     "--docker-username=u --docker-password=p",
     "6b3873000a0c0a02763112065365637265741291010a130a0372656712001a0022002a0032003800"
     "4200125a0a112e646f636b6572636f6e6669676a736f6e12457b226175746873223a7b22722e6578"
     "616d706c65223a7b22757365726e616d65223a2275222c2270617373776f7264223a2270222c2261"
     "757468223a2264547077227d7d7d1a1e6b756265726e657465732e696f2f646f636b6572636f6e66"
     "69676a736f6e1a002200",
     "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'reg'},'data':{'.dockerconfigjson':"
     "'eyJhdXRocyI6eyJyLmV4YW1wbGUiOnsidXNlcm5hbWUiOiJ1IiwicGFzc3dvcmQiOiJwIiwiYXV0aCI6ImRUcHcifX"
     "19'},'type':'kubernetes.io/dockerconfigjson'}"},
};
#define N_BODIES (sizeof bodies / sizeof bodies[0])

static size_t load(const recorded *r, uint8_t *out, size_t cap)
{
    return from_hex(r->hex, out, cap);
}

static void run_recorded(void **state)
{
    const recorded *r = *state;
    uint8_t body[1024];
    size_t n = load(r, body, sizeof body);
    assert_true(kube_is_protobuf(body, n));
    json_t *v = decode_ok(body, n);
    assert_dumps_as(v, r->expected);
    json_decref(v);
}

static void test_save_config_annotation(void **state)
{
    (void)state;
    uint8_t body[1024];
    size_t n = load(&bodies[6], body, sizeof body);
    json_t *v = decode_ok(body, n);
    json_t *meta = json_object_get(v, "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "name")), "saved");
    assert_string_equal(json_string_value(json_object_get(meta, "namespace")), "gpu-lab");
    json_t *notes = json_object_get(meta, "annotations");
    assert_int_equal(json_object_size(notes), 1);
    assert_string_equal(
        json_string_value(
            json_object_get(notes, "kubectl.kubernetes.io/last-applied-configuration")),
        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"saved\","
        "\"namespace\":\"gpu-lab\",\"creationTimestamp\":null},\"data\":{\"mode\":\"lab\"}}\n");
    assert_null(json_object_get(meta, "labels"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "data"), "mode")),
                        "lab");
    /* metadata before data: Go's order, whatever the wire order. */
    const char *keys[] = {"apiVersion", "kind", "metadata", "data"};
    size_t i = 0;
    const char *key;
    json_t *member;
    json_object_foreach(v, key, member)
    {
        assert_true(i < 4);
        assert_string_equal(key, keys[i++]);
    }
    assert_int_equal(i, 4);
    json_decref(v);
}

/* Every prefix of every recorded body fails, except the two that end on a
 * field boundary after raw (kubectl's trailing "1a 00" and "22 00" are the
 * empty contentEncoding and contentType, which change nothing). */
static void test_truncation_every_offset(void **state)
{
    (void)state;
    for (size_t b = 0; b < N_BODIES; b++) {
        uint8_t body[1024];
        size_t n = load(&bodies[b], body, sizeof body);
        assert_memory_equal(body + n - 4, "\x1a\x00\x22\x00", 4);
        json_t *full = decode_ok(body, n);
        for (size_t k = 0; k < n; k++) {
            /* A copy of just k bytes, so that ASan sees any read past it. */
            uint8_t *cut = malloc(k ? k : 1);
            assert_non_null(cut);
            memcpy(cut, body, k);
            gp_error err = {0};
            json_t *v = kube_protobuf_decode(cut, k, &err);
            free(cut);
            if (k == n - 4 || k == n - 2) {
                assert_non_null(v);
                assert_true(json_equal(v, full));
            } else {
                if (v) print_error("%s: prefix of %zu bytes decoded\n", bodies[b].name, k);
                assert_null(v);
                assert_true(strncmp(err.text, "protobuf: ", 10) == 0 && strlen(err.text) > 10);
            }
            json_decref(v);
        }
        json_decref(full);
    }
}

/* The object itself cut short, its length re-encoded so the envelope is
 * sound: decoding must end in an error or an object, never a bad read. */
static void test_object_truncation_never_crashes(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t b = 0; b < N_BODIES; b++) {
        uint8_t body[1024];
        size_t n = load(&bodies[b], body, sizeof body);
        /* raw starts after magic(4) + typeMeta tag, length and bytes. */
        size_t raw_tag = 4 + 2 + body[5];
        assert_int_equal(body[raw_tag], 0x12);
        {
            size_t at = raw_tag + 1, len = 0;
            for (unsigned shift = 0;; shift += 7) {
                len |= (size_t)(body[at] & 0x7f) << shift;
                if (!(body[at++] & 0x80)) break;
            }
            assert_true(at + len <= n);
            for (size_t j = 0; j < len; j++) {
                buf raw = {0}, env = {0};
                put_raw(&raw, body + at, j);
                put_raw(&env, body, raw_tag); /* magic and typeMeta as recorded */
                put_msg(&env, 2, &raw);
                gp_error err = {0};
                json_t *v = kube_protobuf_decode(env.b, env.n, &err);
                if (v) {
                    assert_true(json_is_string(json_object_get(v, "apiVersion")));
                    assert_true(json_is_object(json_object_get(v, "metadata")));
                } else {
                    assert_true(strncmp(err.text, "protobuf: ", 10) == 0);
                    failures++;
                }
                json_decref(v);
            }
        }
    }
    assert_true(failures > 0);
}

/* ---- fields no generator sends, from hand-built bodies ---- */

static void test_object_meta_every_field(void **state)
{
    (void)state;
    buf owner = {0};
    put_str(&owner, 1, "DaemonSet");
    put_str(&owner, 3, "toolkit");
    put_str(&owner, 4, "uid-ds");
    put_str(&owner, 5, "apps/v1");
    put_uint(&owner, 6, 1);
    put_uint(&owner, 7, 0);
    buf fields_v1 = {0};
    put_str(&fields_v1, 1, "{\"f:data\":{\".\":{}}}");
    buf managed = {0};
    put_str(&managed, 1, "kubectl-create");
    put_str(&managed, 2, "Update");
    put_str(&managed, 3, "v1");
    put_time(&managed, 4, 1700000000, 0);
    put_str(&managed, 6, "FieldsV1");
    put_msg(&managed, 7, &fields_v1);
    buf meta = {0};
    /* Out of number order on purpose: the JSON order is Go's, not the wire's. */
    put_entry(&meta, 11, "app", "gpu");
    put_entry(&meta, 11, "empty", "");
    put_str(&meta, 14, "example.com/a");
    put_str(&meta, 1, "cm1");
    put_str(&meta, 2, "cm-");
    put_str(&meta, 3, "gpu-lab");
    put_str(&meta, 4, "/api/v1/namespaces/gpu-lab/configmaps/cm1");
    put_str(&meta, 5, "0b5e9a3c-0000-4000-8000-000000000001");
    put_str(&meta, 6, "42");
    put_uint(&meta, 7, 3);
    put_time(&meta, 8, 1700000000, 5);
    put_time(&meta, 9, 951782400, 0);
    put_uint(&meta, 10, 0);
    put_entry(&meta, 12, "note", "x");
    put_msg(&meta, 13, &owner);
    put_str(&meta, 14, "");
    put_msg(&meta, 17, &managed);
    buf cm = {0};
    put_msg(&cm, 1, &meta);
    buf body = {0};
    put_envelope(&body, "v1", "ConfigMap", &cm);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(
        v, "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'cm1','generateName':'cm-',"
           "'namespace':'gpu-lab','selfLink':'/api/v1/namespaces/gpu-lab/configmaps/cm1',"
           "'uid':'0b5e9a3c-0000-4000-8000-000000000001','resourceVersion':'42','generation':3,"
           "'creationTimestamp':'2023-11-14T22:13:20Z','deletionTimestamp':'2000-02-29T00:00:00Z',"
           "'deletionGracePeriodSeconds':0,'labels':{'app':'gpu','empty':''},"
           "'annotations':{'note':'x'},'ownerReferences':[{'apiVersion':'apps/v1',"
           "'kind':'DaemonSet','name':'toolkit','uid':'uid-ds','controller':true,"
           "'blockOwnerDeletion':false}],'finalizers':['example.com/a',''],"
           "'managedFields':[{'manager':'kubectl-create','operation':'Update','apiVersion':'v1',"
           "'time':'2023-11-14T22:13:20Z','fieldsType':'FieldsV1','fieldsV1':{'f:data':{'.':{}}}}"
           "]}}");
    json_decref(v);
}

/* An ownerReference's apiVersion, kind, name and uid have no omitempty in Go. */
static void test_owner_reference_required_members(void **state)
{
    (void)state;
    buf owner = {0};
    put_str(&owner, 3, "only-name");
    buf meta = {0};
    put_str(&meta, 1, "x");
    put_msg(&meta, 13, &owner);
    buf obj = {0};
    put_msg(&obj, 1, &meta);
    buf body = {0};
    put_envelope(&body, "v1", "Secret", &obj);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v, "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'x',"
                       "'ownerReferences':[{'apiVersion':'','kind':'','name':'only-name',"
                       "'uid':''}]}}");
    json_decref(v);
}

static void test_namespace_spec_and_status(void **state)
{
    (void)state;
    buf meta = {0};
    put_str(&meta, 1, "gpu-lab");
    put_entry(&meta, 11, "kubernetes.io/metadata.name", "gpu-lab");
    buf spec = {0};
    put_str(&spec, 1, "kubernetes");
    buf cond = {0};
    put_str(&cond, 6, "all good");
    put_str(&cond, 1, "NamespaceDeletionDiscoveryFailure");
    put_str(&cond, 2, "False");
    put_time(&cond, 4, 0, 0);
    put_str(&cond, 5, "ResourcesDiscovered");
    buf status = {0};
    put_msg(&status, 2, &cond);
    put_str(&status, 1, "Active");
    buf ns = {0};
    put_msg(&ns, 3, &status);
    put_msg(&ns, 2, &spec);
    put_msg(&ns, 1, &meta);
    buf body = {0};
    put_envelope(&body, "v1", "Namespace", &ns);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v, "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'gpu-lab',"
                       "'labels':{'kubernetes.io/metadata.name':'gpu-lab'}},"
                       "'spec':{'finalizers':['kubernetes']},'status':{'phase':'Active',"
                       "'conditions':[{'type':'NamespaceDeletionDiscoveryFailure',"
                       "'status':'False','lastTransitionTime':'1970-01-01T00:00:00Z',"
                       "'reason':'ResourcesDiscovered','message':'all good'}]}}");
    json_decref(v);
}

static void test_configmap_immutable(void **state)
{
    (void)state;
    buf meta = {0};
    put_str(&meta, 1, "frozen");
    buf cm = {0};
    put_msg(&cm, 1, &meta);
    put_entry(&cm, 2, "k", "v");
    buf bin = {0};
    put_str(&bin, 1, "empty");
    put_bytes(&bin, 2, "", 0);
    put_msg(&cm, 3, &bin);
    put_uint(&cm, 4, 1);
    buf body = {0};
    put_envelope(&body, "v1", "ConfigMap", &cm);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v, "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'frozen'},"
                       "'immutable':true,'data':{'k':'v'},'binaryData':{'empty':''}}");
    json_decref(v);
}

/* DeleteOptions, what kubectl drain's typed pod deletes send: a zero grace
 * period is kept (it is a pointer in Go: "now"), both group versions name
 * it, and metadata is the decoder's empty one. */
static void test_delete_options(void **state)
{
    (void)state;
    buf pre = {0};
    put_str(&pre, 1, "u-1");
    put_str(&pre, 2, "42");
    buf opt = {0};
    put_uint(&opt, 1, 0);
    put_msg(&opt, 2, &pre);
    put_str(&opt, 4, "Foreground");
    put_str(&opt, 5, "All");
    buf body = {0};
    put_envelope(&body, "v1", "DeleteOptions", &opt);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v,
                    "{'apiVersion':'v1','kind':'DeleteOptions','metadata':{},"
                    "'gracePeriodSeconds':0,'preconditions':{'uid':'u-1','resourceVersion':'42'},"
                    "'propagationPolicy':'Foreground','dryRun':['All']}");
    json_decref(v);
    buf grace = {0};
    put_uint(&grace, 1, 7);
    put_uint(&grace, 3, 1);
    buf meta_body = {0};
    put_envelope(&meta_body, "meta.k8s.io/v1", "DeleteOptions", &grace);
    v = decode_ok(meta_body.b, meta_body.n);
    assert_dumps_as(v, "{'apiVersion':'meta.k8s.io/v1','kind':'DeleteOptions','metadata':{},"
                       "'gracePeriodSeconds':7,'orphanDependents':true}");
    json_decref(v);
}

/* policy/v1 Eviction, what kubectl drain POSTs to pods/eviction: its
 * metadata and its DeleteOptions. */
static void test_eviction(void **state)
{
    (void)state;
    buf meta = {0};
    put_str(&meta, 1, "b1");
    put_str(&meta, 3, "default");
    buf opt = {0};
    put_uint(&opt, 1, 5);
    buf ev = {0};
    put_msg(&ev, 1, &meta);
    put_msg(&ev, 2, &opt);
    buf body = {0};
    put_envelope(&body, "policy/v1", "Eviction", &ev);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v, "{'apiVersion':'policy/v1','kind':'Eviction',"
                       "'metadata':{'name':'b1','namespace':'default'},"
                       "'deleteOptions':{'gracePeriodSeconds':5}}");
    json_decref(v);
}

/* Go order: metadata, immutable, data, stringData, type; map keys sorted.
 * Base64 padding of 1, 2 and 3 byte values. */
static void test_secret_every_field(void **state)
{
    (void)state;
    buf meta = {0};
    put_str(&meta, 1, "s2");
    buf sec = {0};
    put_msg(&sec, 1, &meta);
    put_entry(&sec, 2, "one", "a");
    put_entry(&sec, 2, "two", "ab");
    put_entry(&sec, 2, "three", "abc");
    put_str(&sec, 3, "Opaque");
    put_entry(&sec, 4, "plain", "text");
    put_uint(&sec, 5, 0);
    buf body = {0};
    put_envelope(&body, "v1", "Secret", &sec);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v, "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'s2'},"
                       "'immutable':false,'data':{'one':'YQ==','three':'YWJj','two':'YWI='},"
                       "'stringData':{'plain':'text'},'type':'Opaque'}");
    json_decref(v);
}

static void test_serviceaccount_every_field(void **state)
{
    (void)state;
    buf meta = {0};
    put_str(&meta, 1, "builder");
    buf ref = {0};
    put_str(&ref, 7, "spec.x");
    put_str(&ref, 3, "builder-token");
    put_str(&ref, 1, "Secret");
    put_str(&ref, 2, "ci");
    put_str(&ref, 4, "uid-1");
    put_str(&ref, 5, "v1");
    put_str(&ref, 6, "7");
    buf empty_ref = {0};
    put_str(&empty_ref, 3, "");
    buf pull = {0};
    put_str(&pull, 1, "registry");
    buf sa = {0};
    put_msg(&sa, 1, &meta);
    put_msg(&sa, 2, &ref);
    put_msg(&sa, 2, &empty_ref);
    put_msg(&sa, 3, &pull);
    put_uint(&sa, 4, 0);
    buf body = {0};
    put_envelope(&body, "v1", "ServiceAccount", &sa);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v, "{'apiVersion':'v1','kind':'ServiceAccount','metadata':{'name':'builder'},"
                       "'secrets':[{'kind':'Secret','namespace':'ci','name':'builder-token',"
                       "'uid':'uid-1','apiVersion':'v1','resourceVersion':'7',"
                       "'fieldPath':'spec.x'},{}],'imagePullSecrets':[{'name':'registry'}],"
                       "'automountServiceAccountToken':false}");
    json_decref(v);
}

/* Unknown numbers of every wire type, at every level, are skipped. */
static void test_unknown_fields_skipped(void **state)
{
    (void)state;
    buf unknown = {0};
    put_uint(&unknown, 99, 300);
    put_tag(&unknown, 98, 1);
    put_raw(&unknown, "12345678", 8);
    put_str(&unknown, 97, "later");
    put_tag(&unknown, 96, 5);
    put_raw(&unknown, "1234", 4);
    buf entry = {0};
    put_raw(&entry, unknown.b, unknown.n);
    put_str(&entry, 1, "a");
    put_str(&entry, 2, "1");
    buf time = {0};
    put_raw(&time, unknown.b, unknown.n);
    put_uint(&time, 1, 1);
    buf meta = {0};
    put_raw(&meta, unknown.b, unknown.n);
    put_str(&meta, 1, "lab");
    put_msg(&meta, 8, &time);
    buf cm = {0};
    put_msg(&cm, 1, &meta);
    put_raw(&cm, unknown.b, unknown.n);
    put_msg(&cm, 2, &entry);
    buf type = {0};
    put_str(&type, 1, "v1");
    put_raw(&type, unknown.b, unknown.n);
    put_str(&type, 2, "ConfigMap");
    buf body = {0};
    put_raw(&body, "k8s\0", 4);
    put_raw(&body, unknown.b, unknown.n);
    put_msg(&body, 1, &type);
    put_msg(&body, 2, &cm);
    put_raw(&body, unknown.b, unknown.n);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v, "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'lab',"
                       "'creationTimestamp':'1970-01-01T00:00:01Z'},'data':{'a':'1'}}");
    json_decref(v);
}

/* Protobuf merges a singular message written twice; a later scalar wins,
 * a later "" unsets; maps and lists grow; a map key's last value wins. Map
 * keys come out sorted, as Go's encoding/json writes maps. */
static void test_repeated_metadata_merges(void **state)
{
    (void)state;
    buf first = {0};
    put_str(&first, 1, "a");
    put_str(&first, 3, "gone");
    put_entry(&first, 11, "x", "1");
    put_entry(&first, 11, "k", "old");
    put_str(&first, 14, "f1");
    buf second = {0};
    put_str(&second, 1, "b");
    put_str(&second, 3, "");
    put_entry(&second, 11, "y", "2");
    put_entry(&second, 11, "k", "new");
    put_str(&second, 14, "f2");
    buf cm = {0};
    put_msg(&cm, 1, &first);
    put_entry(&cm, 2, "d", "1");
    put_msg(&cm, 1, &second);
    buf body = {0};
    put_envelope(&body, "v1", "ConfigMap", &cm);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v, "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'b',"
                       "'labels':{'k':'new','x':'1','y':'2'},'finalizers':['f1','f2']},"
                       "'data':{'d':'1'}}");
    json_decref(v);
}

/* Seconds and nanos to RFC 3339 at second precision, checked against
 * Python's datetime; Go's zero time (0001-01-01T00:00:00Z exactly) is
 * absent. */
static void test_times(void **state)
{
    (void)state;
    static const struct {
        int64_t seconds;
        int32_t nanos;
        const char *text; /* NULL: absent; "!": an error */
    } cases[] = {
        {0, 0, "1970-01-01T00:00:00Z"},
        {-1, 0, "1969-12-31T23:59:59Z"},
        {951782400, 0, "2000-02-29T00:00:00Z"},
        {4107542400, 0, "2100-03-01T00:00:00Z"},
        {1700000000, 999999999, "2023-11-14T22:13:20Z"},
        {0, 1500000000, "1970-01-01T00:00:01Z"},
        {0, -1, "1969-12-31T23:59:59Z"},
        {253402300799, 0, "9999-12-31T23:59:59Z"},
        {-62130499200, 0, "0001-03-01T00:00:00Z"},
        {-62135596800, 1, "0001-01-01T00:00:00Z"},
        {-62135596800, 0, NULL},
        {253402300800, 0, "!"},
        {-62135596801, 0, "!"},
        {INT64_MAX, 0, "!"},
        {INT64_MIN, -2000000000, "!"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf meta = {0};
        put_str(&meta, 1, "t");
        buf t = {0};
        put_uint(&t, 1, (uint64_t)cases[i].seconds);
        put_uint(&t, 2, (uint64_t)(int64_t)cases[i].nanos);
        put_msg(&meta, 8, &t);
        buf obj = {0};
        put_msg(&obj, 1, &meta);
        buf body = {0};
        put_envelope(&body, "v1", "Namespace", &obj);
        gp_error err = {0};
        json_t *v = kube_protobuf_decode(body.b, body.n, &err);
        const char *want = cases[i].text;
        if (want && strcmp(want, "!") == 0) {
            assert_null(v);
            assert_non_null(strstr(err.text, "metadata.creationTimestamp"));
            assert_non_null(strstr(err.text, "outside 0001-01-01..9999-12-31"));
            continue;
        }
        assert_non_null(v);
        json_t *got = json_object_get(json_object_get(v, "metadata"), "creationTimestamp");
        if (!want)
            assert_null(got);
        else
            assert_string_equal(json_string_value(got), want);
        json_decref(v);
    }
}

/* ---- errors, with the offsets counted by hand from the bytes ---- */

static void test_not_protobuf(void **state)
{
    (void)state;
    const char *magic_error =
        "protobuf: the body does not start with the magic bytes 6b 38 73 00 (\"k8s\\0\")";
    assert_false(kube_is_protobuf("k8s", 3));
    assert_false(kube_is_protobuf("{\"kind\":\"Namespace\"}", 20));
    assert_false(kube_is_protobuf(NULL, 0));
    assert_true(kube_is_protobuf("k8s\0", 4));
    assert_error("k8s", 3, magic_error);
    assert_error("{}", 2, magic_error);
    assert_error(NULL, 0, magic_error);
    assert_error("k8s\0", 4,
                 "protobuf: the envelope at byte 4 has no typeMeta (apiVersion and kind)");
}

static void test_recorded_body_cut_in_type_meta(void **state)
{
    (void)state;
    uint8_t body[1024];
    load(&bodies[0], body, sizeof body);
    /* 0a 0f at bytes 4 and 5: typeMeta of 15 bytes, 5 of them present. */
    assert_error(body, 11,
                 "protobuf: typeMeta: length 15 at byte 5 runs past the end of its message (5 "
                 "bytes left)");
    /* typeMeta whole (bytes 4..20), then nothing. */
    assert_error(body, 21, "protobuf: the envelope at byte 4 has no object (raw field)");
    /* 12 1f at 21 and 22: raw of 31 bytes. */
    assert_error(body, 40,
                 "protobuf: raw: length 31 at byte 22 runs past the end of its message (17 "
                 "bytes left)");
}

static void test_wire_errors(void **state)
{
    (void)state;
    assert_error("k8s\0\x0a\x8f", 6, "protobuf: truncated varint at byte 5");
    assert_error("k8s\0\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 15,
                 "protobuf: varint at byte 5 is longer than 64 bits");
    assert_error("k8s\0\x0b", 5,
                 "protobuf: field 1 at byte 4 is a group (wire type 3); groups are not supported");
    assert_error("k8s\0\x4c", 5,
                 "protobuf: field 9 at byte 4 is a group (wire type 4); groups are not supported");
    assert_error("k8s\0\x0e", 5, "protobuf: invalid wire type 6 at byte 4");
    assert_error("k8s\0\x02\x00", 6, "protobuf: invalid field number 0 at byte 4");
    assert_error("k8s\0\x08\x01", 6, "protobuf: typeMeta at byte 4 has wire type 0, expected 2");
    assert_error("k8s\0\x49\x01\x02", 7, "protobuf: truncated 8-byte value at byte 5");
    assert_error("k8s\0\x4d\x01", 6, "protobuf: truncated 4-byte value at byte 5");
}

/* Inside the object: magic (4) + typeMeta 0a 0f + 15 bytes (to 20) + raw
 * tag and length (21, 22): the object starts at byte 23. */
static void test_object_errors(void **state)
{
    (void)state;
    struct {
        const char *object_hex;
        const char *message;
    } cases[] = {
        /* metadata (23, 24), name 0a 02 at 25, its bytes at 27. */
        {"0a040a02c328", "protobuf: metadata.name at byte 27 is not valid UTF-8"},
        {"0a020801", "protobuf: metadata.name at byte 25 has wire type 0, expected 2"},
        {"0a023a00", "protobuf: metadata.generation at byte 25 has wire type 2, expected 0"},
        /* labels entry at 25, key "a\0" at 29. */
        {"0a095a070a026100120178", "protobuf: metadata.labels key at byte 29 contains a NUL byte"},
        {"0a095a070a02ff00120178", "protobuf: metadata.labels key at byte 29 is not valid UTF-8"},
        /* managedFields 8a 01 05 at 25..27, fieldsV1 3a 03 at 28, raw 0a 01 at
         * 30, its lone '{' at 32. */
        {"0a088a01053a030a017b", "protobuf: metadata.managedFields.fieldsV1 at byte 32 is not "
                                 "valid JSON"},
        {"0a0542030a0178",
         "protobuf: metadata.creationTimestamp at byte 27 has wire type 2, expected 0"},
        {"0a050a0362", "protobuf: metadata: length 5 at byte 24 runs past the end of its message "
                       "(3 bytes left)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf obj = {0};
        obj.n = from_hex(cases[i].object_hex, obj.b, sizeof obj.b);
        buf body = {0};
        put_envelope(&body, "v1", "Namespace", &obj);
        assert_error(body.b, body.n, cases[i].message);
    }
}

static void test_unsupported_kinds(void **state)
{
    (void)state;
    buf obj = {0};
    buf body = {0};
    put_envelope(&body, "v1", "Pod", &obj);
    assert_error(body.b, body.n, "protobuf: kind Pod is not supported; send JSON");
    body.n = 0;
    put_envelope(&body, "apps/v1", "DaemonSet", &obj);
    assert_error(body.b, body.n, "protobuf: kind DaemonSet of apps/v1 is not supported; send JSON");
    body.n = 0;
    put_envelope(&body, "v2", "Namespace", &obj);
    assert_error(body.b, body.n, "protobuf: kind Namespace of v2 is not supported; send JSON");
    body.n = 0;
    /* A NUL inside the kind must not pass for "Secret". */
    put_raw(&body, "k8s\0", 4);
    put_bytes(&body, 1, "\x0a\x02v1\x12\x08Secret\0x", 14);
    put_msg(&body, 2, &obj);
    gp_error err = {0};
    assert_null(kube_protobuf_decode(body.b, body.n, &err));
    assert_non_null(strstr(err.text, "is not supported; send JSON"));
    body.n = 0;
    put_raw(&body, "k8s\0", 4);
    put_bytes(&body, 1, "\x12\x06Secret", 8);
    put_msg(&body, 2, &obj);
    assert_error(body.b, body.n, "protobuf: the envelope's typeMeta has no apiVersion");
}

/* An empty raw is an empty object (Go decodes it so); metadata is still there. */
static void test_empty_object(void **state)
{
    (void)state;
    buf obj = {0};
    buf body = {0};
    put_envelope(&body, "v1", "ServiceAccount", &obj);
    json_t *v = decode_ok(body.b, body.n);
    assert_dumps_as(v, "{'apiVersion':'v1','kind':'ServiceAccount','metadata':{}}");
    json_decref(v);
}

static void test_null_error_pointer_accepted(void **state)
{
    (void)state;
    assert_null(kube_protobuf_decode("k8s\0\x0b", 5, NULL));
}

/* ---- one message by a caller's schema; the encoders ---- */

static const kube_pb_field inner_fields[] = {
    {1, "flag", KUBE_PB_BOOL, 0, NULL},
};
static const kube_pb_message inner = KUBE_PB_SCHEMA(inner_fields);
static const kube_pb_field outer_fields[] = {
    {2, "names", KUBE_PB_STRING, KUBE_PB_REPEATED, NULL},
    {1, "on", KUBE_PB_BOOL, 0, NULL},
    {3, "inner", KUBE_PB_MESSAGE, KUBE_PB_REPEATED, &inner},
};
static const kube_pb_message outer = KUBE_PB_SCHEMA(outer_fields);

static void test_message_by_schema(void **state)
{
    (void)state;
    gp_buf b = {0};
    assert_int_equal(kube_protobuf_put_bool(&b, 1, true), 0);
    assert_int_equal(kube_protobuf_put_string(&b, 2, "id==cri", 7), 0);
    assert_int_equal(kube_protobuf_put_string(&b, 2, "", 0), 0);
    /* The bytes protoc writes for {on: true, names: ["id==cri", ""]}. */
    const unsigned char want[] = {0x08, 0x01, 0x12, 0x07, 'i',  'd', '=',
                                  '=',  'c',  'r',  'i',  0x12, 0x00};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);
    gp_error err = {0};
    json_t *v = kube_protobuf_decode_message(b.data, b.len, &outer, &err);
    assert_non_null(v);
    assert_dumps_as(v, "{'names': ['id==cri', ''], 'on': true}");
    json_decref(v);
    /* A field number of 300 takes a two-byte tag. */
    gp_buf_free(&b);
    assert_int_equal(kube_protobuf_put_bool(&b, 300, false), 0);
    const unsigned char tag300[] = {0xe0, 0x12, 0x00};
    assert_memory_equal(b.data, tag300, sizeof tag300);
    gp_buf_free(&b);
    /* Nothing is an empty message; a nested one is decoded by its schema. */
    v = kube_protobuf_decode_message(NULL, 0, &outer, &err);
    assert_dumps_as(v, "{}");
    json_decref(v);
    const unsigned char nested[] = {0x1a, 0x02, 0x08, 0x01, 0x1a, 0x00};
    v = kube_protobuf_decode_message(nested, sizeof nested, &outer, &err);
    assert_dumps_as(v, "{'inner': [{'flag': true}, {}]}");
    json_decref(v);
    const unsigned char cut[] = {0x1a, 0x05, 0x08};
    assert_null(kube_protobuf_decode_message(cut, sizeof cut, &outer, &err));
    assert_non_null(strstr(err.text, "inner: length 5 at byte 1 runs past the end"));
}

/* The writer and the field reader agree, and the reader refuses what is
 * not protobuf with the offset of the bad field. */
static void test_wire_fields(void **state)
{
    (void)state;
    gp_buf b = {0};
    assert_int_equal(kube_protobuf_put_uint(&b, 1, 300), 0);
    assert_int_equal(kube_protobuf_put_string(&b, 2, "runc", 4), 0);
    assert_int_equal(kube_protobuf_put_bytes(&b, 3, "", 0), 0); /* an empty message, present */
    assert_int_equal(kube_protobuf_put_bool(&b, 4, true), 0);
    const uint8_t fixed[] = {(5 << 3) | 5, 1, 2, 3, 4}; /* a fixed32, skipped */
    gp_buf_addn(&b, fixed, sizeof fixed);
    kube_pb_cursor c = {(const uint8_t *)b.data, (const uint8_t *)b.data + b.len};
    kube_pb_wire f;
    gp_error err = {0};
    assert_int_equal(kube_protobuf_next(&c, NULL, &f, &err), 1);
    assert_int_equal(f.num, 1);
    assert_int_equal(f.wire, 0);
    assert_int_equal(f.varint, 300);
    assert_int_equal(kube_protobuf_next(&c, NULL, &f, &err), 1);
    assert_int_equal(f.num, 2);
    assert_int_equal(f.wire, 2);
    assert_int_equal(f.len, 4);
    assert_memory_equal(f.bytes, "runc", 4);
    assert_int_equal(kube_protobuf_next(&c, NULL, &f, &err), 1);
    assert_int_equal(f.num, 3);
    assert_int_equal(f.len, 0);
    assert_int_equal(kube_protobuf_next(&c, NULL, &f, &err), 1);
    assert_int_equal(f.num, 4);
    assert_int_equal(f.varint, 1);
    assert_int_equal(kube_protobuf_next(&c, NULL, &f, &err), 1);
    assert_int_equal(f.num, 5);
    assert_int_equal(f.wire, 5);
    assert_int_equal(kube_protobuf_next(&c, NULL, &f, &err), 0);
    gp_buf_free(&b);

    /* a length past the end, at byte 2 of the message */
    const uint8_t cut[] = {0x08, 0x01, 0x12, 0x05, 'a'};
    kube_pb_cursor bad = {cut, cut + sizeof cut};
    assert_int_equal(kube_protobuf_next(&bad, cut, &f, &err), 1);
    assert_int_equal(kube_protobuf_next(&bad, cut, &f, &err), -1);
    assert_non_null(strstr(err.text, "at byte 3"));
    /* a group */
    const uint8_t group[] = {(1 << 3) | 3};
    kube_pb_cursor g = {group, group + 1};
    assert_int_equal(kube_protobuf_next(&g, group, &f, &err), -1);
    assert_non_null(strstr(err.text, "group"));
}

int main(void)
{
    static const struct CMUnitTest singles[] = {
        cmocka_unit_test(test_save_config_annotation),
        cmocka_unit_test(test_truncation_every_offset),
        cmocka_unit_test(test_object_truncation_never_crashes),
        cmocka_unit_test(test_object_meta_every_field),
        cmocka_unit_test(test_owner_reference_required_members),
        cmocka_unit_test(test_namespace_spec_and_status),
        cmocka_unit_test(test_configmap_immutable),
        cmocka_unit_test(test_delete_options),
        cmocka_unit_test(test_eviction),
        cmocka_unit_test(test_secret_every_field),
        cmocka_unit_test(test_serviceaccount_every_field),
        cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_repeated_metadata_merges),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_not_protobuf),
        cmocka_unit_test(test_recorded_body_cut_in_type_meta),
        cmocka_unit_test(test_wire_errors),
        cmocka_unit_test(test_object_errors),
        cmocka_unit_test(test_unsupported_kinds),
        cmocka_unit_test(test_empty_object),
        cmocka_unit_test(test_null_error_pointer_accepted),
        cmocka_unit_test(test_message_by_schema),
        cmocka_unit_test(test_wire_fields),
    };
    static struct CMUnitTest tests[N_BODIES + sizeof singles / sizeof singles[0]];
    size_t n = 0;
    /* One test per recorded body, named after it, so a failure says which. */
    for (size_t i = 0; i < N_BODIES; i++)
        if (bodies[i].expected)
            tests[n++] =
                (struct CMUnitTest){bodies[i].name, run_recorded, NULL, NULL, (void *)&bodies[i]};
    for (size_t i = 0; i < sizeof singles / sizeof singles[0]; i++)
        tests[n++] = singles[i];
    return _cmocka_run_group_tests("kube_protobuf", tests, n, NULL, NULL);
}
