/* kube_merge_patch (RFC 7386) and kube_json_patch (RFC 6902): every example in
 * both RFCs' Appendix A, the json-patch-tests edge cases, and the promises
 * the header makes (inputs untouched, atomic failure, key order, errors that
 * name the operation).
 *
 * Cases are data: JSON written with ' for " so the tables stay readable. Each
 * case is its own cmocka test, named after the RFC section or behaviour. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/patch.h"

/* ---- helpers ---- */

/* Parses JSON written with ' for " (no case needs a literal '). Duplicate
 * keys are refused so a typo in a table cannot hide a member. */

/* Exact text, so the order of object members is checked too. */
static void assert_dumps_as(const json_t *v, const char *squoted)
{
    json_t *expected = sq_load(squoted);
    char *want = json_test_dump(expected), *got = json_test_dump(v);
    if (strcmp(want, got) != 0) print_error("expected %s\n     got %s\n", want, got);
    assert_string_equal(got, want);
    free(want);
    free(got);
    json_decref(expected);
}

/* ---- table-driven cases ---- */

typedef struct {
    const char *name;
    const char *doc;
    const char *patch;
    const char *expected; /* NULL: the patch must fail */
    const char *error;    /* for a failure: a part of the message that says why */
} patch_case;

/* RFC 7386 section 3 and every row of Appendix A. */
static const patch_case merge_cases[] = {
    {"rfc7386 3 example",
     "{'title':'Goodbye!','author':{'givenName':'John','familyName':'Doe'},"
     "'tags':['example','sample'],'content':'This will be unchanged'}",
     "{'title':'Hello!','phoneNumber':'+01-123-456-7890','author':{'familyName':null},"
     "'tags':['example']}",
     "{'title':'Hello!','author':{'givenName':'John'},'tags':['example'],"
     "'content':'This will be unchanged','phoneNumber':'+01-123-456-7890'}",
     NULL},
    {"rfc7386 A.1 replace member", "{'a':'b'}", "{'a':'c'}", "{'a':'c'}", NULL},
    {"rfc7386 A.2 add member", "{'a':'b'}", "{'b':'c'}", "{'a':'b','b':'c'}", NULL},
    {"rfc7386 A.3 null deletes", "{'a':'b'}", "{'a':null}", "{}", NULL},
    {"rfc7386 A.4 null deletes one", "{'a':'b','b':'c'}", "{'a':null}", "{'b':'c'}", NULL},
    {"rfc7386 A.5 string replaces array", "{'a':['b']}", "{'a':'c'}", "{'a':'c'}", NULL},
    {"rfc7386 A.6 array replaces string", "{'a':'c'}", "{'a':['b']}", "{'a':['b']}", NULL},
    {"rfc7386 A.7 nested merge", "{'a':{'b':'c'}}", "{'a':{'b':'d','c':null}}", "{'a':{'b':'d'}}",
     NULL},
    {"rfc7386 A.8 array replaced whole", "{'a':[{'b':'c'}]}", "{'a':[1]}", "{'a':[1]}", NULL},
    {"rfc7386 A.9 array patch on array", "['a','b']", "['c','d']", "['c','d']", NULL},
    {"rfc7386 A.10 array patch on object", "{'a':'b'}", "['c']", "['c']", NULL},
    {"rfc7386 A.11 null patch", "{'a':'foo'}", "null", "null", NULL},
    {"rfc7386 A.12 string patch", "{'a':'foo'}", "'bar'", "'bar'", NULL},
    {"rfc7386 A.13 null in target kept", "{'e':null}", "{'a':1}", "{'e':null,'a':1}", NULL},
    {"rfc7386 A.14 object patch on array", "[1,2]", "{'a':'b','c':null}", "{'a':'b'}", NULL},
    {"rfc7386 A.15 nulls dropped in new subtree", "{}", "{'a':{'bb':{'ccc':null}}}",
     "{'a':{'bb':{}}}", NULL},
    /* Beyond the RFC table. */
    {"merge nulls inside arrays kept", "{}", "{'a':[null,{'b':null}]}", "{'a':[null,{'b':null}]}",
     NULL},
    {"merge delete of absent key", "{'a':1}", "{'b':null}", "{'a':1}", NULL},
    {"merge object patch on scalar target", "'x'", "{'a':{'b':1}}", "{'a':{'b':1}}", NULL},
    {"merge replaces object with scalar", "{'a':{'b':1}}", "{'a':2}", "{'a':2}", NULL},
    {"merge keeps number type", "{'a':1}", "{'a':1.0}", "{'a':1.0}", NULL},
    {"merge empty patch", "{'a':{'b':[1]}}", "{}", "{'a':{'b':[1]}}", NULL},
    {"merge kubectl label", "{'metadata':{'name':'n1','labels':{'a':'1','gpu':'no'}},'spec':{}}",
     "{'metadata':{'labels':{'gpu':'yes','a':null,'nvidia.com/gpu.present':'true'}}}",
     "{'metadata':{'name':'n1','labels':{'gpu':'yes','nvidia.com/gpu.present':'true'}},"
     "'spec':{}}",
     NULL},
};

/* RFC 6902 Appendix A (A.13 is its own test: it is about duplicate keys), then
 * the json-patch-tests suite's edge cases. */
static const patch_case json_cases[] = {
    {"rfc6902 A.1 add object member", "{'foo':'bar'}", "[{'op':'add','path':'/baz','value':'qux'}]",
     "{'baz':'qux','foo':'bar'}", NULL},
    {"rfc6902 A.2 add array element", "{'foo':['bar','baz']}",
     "[{'op':'add','path':'/foo/1','value':'qux'}]", "{'foo':['bar','qux','baz']}", NULL},
    {"rfc6902 A.3 remove object member", "{'baz':'qux','foo':'bar'}",
     "[{'op':'remove','path':'/baz'}]", "{'foo':'bar'}", NULL},
    {"rfc6902 A.4 remove array element", "{'foo':['bar','qux','baz']}",
     "[{'op':'remove','path':'/foo/1'}]", "{'foo':['bar','baz']}", NULL},
    {"rfc6902 A.5 replace value", "{'baz':'qux','foo':'bar'}",
     "[{'op':'replace','path':'/baz','value':'boo'}]", "{'baz':'boo','foo':'bar'}", NULL},
    {"rfc6902 A.6 move value", "{'foo':{'bar':'baz','waldo':'fred'},'qux':{'corge':'grault'}}",
     "[{'op':'move','from':'/foo/waldo','path':'/qux/thud'}]",
     "{'foo':{'bar':'baz'},'qux':{'corge':'grault','thud':'fred'}}", NULL},
    {"rfc6902 A.7 move array element", "{'foo':['all','grass','cows','eat']}",
     "[{'op':'move','from':'/foo/1','path':'/foo/3'}]", "{'foo':['all','cows','eat','grass']}",
     NULL},
    {"rfc6902 A.8 test success", "{'baz':'qux','foo':['a',2,'c']}",
     "[{'op':'test','path':'/baz','value':'qux'},{'op':'test','path':'/foo/1','value':2}]",
     "{'baz':'qux','foo':['a',2,'c']}", NULL},
    {"rfc6902 A.9 test error", "{'baz':'qux'}", "[{'op':'test','path':'/baz','value':'bar'}]", NULL,
     "test failed"},
    {"rfc6902 A.10 add nested member object", "{'foo':'bar'}",
     "[{'op':'add','path':'/child','value':{'grandchild':{}}}]",
     "{'foo':'bar','child':{'grandchild':{}}}", NULL},
    {"rfc6902 A.11 unrecognized elements ignored", "{'foo':'bar'}",
     "[{'op':'add','path':'/baz','value':'qux','xyz':123}]", "{'foo':'bar','baz':'qux'}", NULL},
    {"rfc6902 A.12 add to nonexistent target", "{'foo':'bar'}",
     "[{'op':'add','path':'/baz/bat','value':'qux'}]", NULL, "\"/baz\" does not exist"},
    {"rfc6902 A.14 escape ordering", "{'/':9,'~1':10}", "[{'op':'test','path':'/~01','value':10}]",
     "{'/':9,'~1':10}", NULL},
    {"rfc6902 A.15 string vs number", "{'/':9,'~1':10}",
     "[{'op':'test','path':'/~01','value':'10'}]", NULL, "test failed"},
    {"rfc6902 A.16 add array value", "{'foo':['bar']}",
     "[{'op':'add','path':'/foo/-','value':['abc','def']}]", "{'foo':['bar',['abc','def']]}", NULL},

    /* add */
    {"add replaces existing member", "{'foo':1}", "[{'op':'add','path':'/foo','value':2}]",
     "{'foo':2}", NULL},
    {"add replaces root", "{'foo':'bar'}", "[{'op':'add','path':'','value':{'baz':'qux'}}]",
     "{'baz':'qux'}", NULL},
    {"add dash appends", "[1,2]", "[{'op':'add','path':'/-','value':{'foo':['bar','baz']}}]",
     "[1,2,{'foo':['bar','baz']}]", NULL},
    {"add dash appends n levels down", "[1,2,[3,[4,5]]]",
     "[{'op':'add','path':'/2/1/-','value':{'foo':['bar','baz']}}]",
     "[1,2,[3,[4,5,{'foo':['bar','baz']}]]]", NULL},
    {"add at index == size appends", "[1]", "[{'op':'add','path':'/1','value':2}]", "[1,2]", NULL},
    {"add at index 0 inserts", "[1]", "[{'op':'add','path':'/0','value':2}]", "[2,1]", NULL},
    {"add past the end fails", "[1]", "[{'op':'add','path':'/2','value':2}]", NULL,
     "out of bounds"},
    {"add negative index fails", "[1]", "[{'op':'add','path':'/-1','value':2}]", NULL,
     "not an array index"},
    {"add member name on array fails", "[1]", "[{'op':'add','path':'/bar','value':42}]", NULL,
     "not an array index"},
    {"add index 1e0 fails", "['foo','sil']", "[{'op':'add','path':'/1e0','value':'bar'}]", NULL,
     "not an array index"},
    {"add under scalar fails", "{'a':1}", "[{'op':'add','path':'/a/b','value':2}]", NULL,
     "\"/a\" is neither an object nor an array"},
    {"add with missing object", "{'q':{'bar':2}}", "[{'op':'add','path':'/a/b','value':1}]", NULL,
     "\"/a\" does not exist"},
    {"add dash mid-path fails", "{'a':[[1]]}", "[{'op':'add','path':'/a/-/0','value':2}]", NULL,
     "'-' names no element"},
    {"add case-sensitive key", "{'foo':'bar'}", "[{'op':'add','path':'/FOO','value':'BAR'}]",
     "{'foo':'bar','FOO':'BAR'}", NULL},
    {"add null value", "{}", "[{'op':'add','path':'/a','value':null}]", "{'a':null}", NULL},
    {"add empty key", "{}", "[{'op':'add','path':'/','value':1}]", "{'':1}", NULL},
    {"add numeric key on object", "{}", "[{'op':'add','path':'/1e0','value':'foo'}]",
     "{'1e0':'foo'}", NULL},

    /* remove */
    {"remove last array element", "[1,2,3,4]", "[{'op':'remove','path':'/3'}]", "[1,2,3]", NULL},
    {"remove first array element", "[1,2,3,4]", "[{'op':'remove','path':'/0'}]", "[2,3,4]", NULL},
    {"remove repeated", "[1,2,3,4]", "[{'op':'remove','path':'/1'},{'op':'remove','path':'/2'}]",
     "[1,3]", NULL},
    {"remove dash fails", "[1,2]", "[{'op':'remove','path':'/-'}]", NULL, "'-' names no element"},
    {"remove index == size fails", "['foo','bar']", "[{'op':'remove','path':'/2'}]", NULL,
     "out of bounds"},
    {"remove 1e0 fails", "[1,2,3,4]", "[{'op':'remove','path':'/1e0'}]", NULL,
     "not an array index"},
    {"remove nested bad number fails", "{'foo':1,'baz':[{'qux':'hello'}]}",
     "[{'op':'remove','path':'/baz/1e0/qux'}]", NULL, "not an array index"},
    {"remove missing member fails", "{'foo':'bar'}", "[{'op':'remove','path':'/baz'}]", NULL,
     "\"/baz\" does not exist"},
    {"remove deep missing fails", "{'foo':'bar'}", "[{'op':'remove','path':'/missing1/missing2'}]",
     NULL, "\"/missing1\" does not exist"},
    {"remove nested member", "{'foo':1,'baz':[{'qux':'hello'}]}",
     "[{'op':'remove','path':'/baz/0/qux'}]", "{'foo':1,'baz':[{}]}", NULL},
    {"remove null member", "{'foo':null}", "[{'op':'remove','path':'/foo'}]", "{}", NULL},
    {"remove root fails", "{'foo':1}", "[{'op':'remove','path':''}]", NULL,
     "cannot remove the whole document"},

    /* replace */
    {"replace whole document", "{'foo':'bar'}",
     "[{'op':'replace','path':'','value':{'baz':'qux'}}]", "{'baz':'qux'}", NULL},
    {"replace array element", "['a','b']", "[{'op':'replace','path':'/1','value':[1]}]",
     "['a',[1]]", NULL},
    {"replace with null", "{'foo':'bar'}", "[{'op':'replace','path':'/foo','value':null}]",
     "{'foo':null}", NULL},
    {"replace null member", "{'foo':null}", "[{'op':'replace','path':'/foo','value':'truthy'}]",
     "{'foo':'truthy'}", NULL},
    {"replace missing member fails", "{'bar':'baz'}",
     "[{'op':'replace','path':'/foo','value':false}]", NULL, "\"/foo\" does not exist"},
    {"replace missing parent fails", "{'bar':'baz'}",
     "[{'op':'replace','path':'/foo/bar','value':false}]", NULL, "\"/foo\" does not exist"},
    {"replace index == size fails", "['']", "[{'op':'replace','path':'/1','value':false}]", NULL,
     "out of bounds"},
    {"replace dash fails", "['']", "[{'op':'replace','path':'/-','value':false}]", NULL,
     "'-' names no element"},
    {"replace 1e0 fails", "['']", "[{'op':'replace','path':'/1e0','value':false}]", NULL,
     "not an array index"},

    /* move and copy */
    {"move to same location is a no-op", "{'foo':1}", "[{'op':'move','from':'/foo','path':'/foo'}]",
     "{'foo':1}", NULL},
    {"move member", "{'foo':1,'baz':[{'qux':'hello'}]}",
     "[{'op':'move','from':'/foo','path':'/bar'}]", "{'baz':[{'qux':'hello'}],'bar':1}", NULL},
    {"move into array", "{'baz':[{'qux':'hello'}],'bar':1}",
     "[{'op':'move','from':'/baz/0/qux','path':'/baz/1'}]", "{'baz':[{},'hello'],'bar':1}", NULL},
    {"move null member", "{'foo':null}", "[{'op':'move','from':'/foo','path':'/bar'}]",
     "{'bar':null}", NULL},
    {"move to own child refused", "{'a':{'b':{}}}", "[{'op':'move','from':'/a','path':'/a/b/c'}]",
     NULL, "cannot move \"/a\" into its own child \"/a/b/c\""},
    {"move root to child refused", "{'a':1}", "[{'op':'move','from':'','path':'/b'}]", NULL,
     "into its own child"},
    {"move to sibling with common prefix", "{'a':1,'ab':{}}",
     "[{'op':'move','from':'/a','path':'/ab/x'}]", "{'ab':{'x':1}}", NULL},
    {"move child to parent", "{'a':{'b':{'c':1}}}", "[{'op':'move','from':'/a/b','path':'/a'}]",
     "{'a':{'c':1}}", NULL},
    {"move missing from fails", "{'foo':1}", "[{'op':'move','from':'/bar','path':'/foo'}]", NULL,
     "from \"/bar\": \"/bar\" does not exist"},
    {"move 1e0 fails", "{'baz':[1,2,3],'bar':1}", "[{'op':'move','from':'/baz/1e0','path':'/foo'}]",
     NULL, "not an array index"},
    {"copy member", "{'baz':[{'qux':'hello'}],'bar':1}",
     "[{'op':'copy','from':'/baz/0','path':'/boo'}]",
     "{'baz':[{'qux':'hello'}],'bar':1,'boo':{'qux':'hello'}}", NULL},
    {"copy null member", "{'foo':null}", "[{'op':'copy','from':'/foo','path':'/bar'}]",
     "{'foo':null,'bar':null}", NULL},
    {"copy into own child", "{'a':{'b':1}}", "[{'op':'copy','from':'/a','path':'/a/c'}]",
     "{'a':{'b':1,'c':{'b':1}}}", NULL},
    {"copy missing from fails", "{'foo':1}", "[{'op':'copy','from':'/bar','path':'/foo'}]", NULL,
     "from \"/bar\""},
    {"copy 1e0 fails", "{'baz':[1,2,3],'bar':1}", "[{'op':'copy','from':'/baz/1e0','path':'/boo'}]",
     NULL, "not an array index"},

    /* test */
    {"test whole document", "{'foo':1}", "[{'op':'test','path':'','value':{'foo':1}}]", "{'foo':1}",
     NULL},
    {"test integer equals real", "{'a':1}", "[{'op':'test','path':'/a','value':1.0}]", "{'a':1}",
     NULL},
    {"test real equals integer", "{'a':[2.0]}", "[{'op':'test','path':'/a','value':[2]}]",
     "{'a':[2.0]}", NULL},
    {"test 1 vs 1.5 fails", "{'a':1}", "[{'op':'test','path':'/a','value':1.5}]", NULL,
     "test failed"},
    {"test 2^53+1 vs 2^53 real fails", "{'a':9007199254740993}",
     "[{'op':'test','path':'/a','value':9007199254740992.0}]", NULL, "test failed"},
    {"test huge real vs integer fails", "{'a':9223372036854775807}",
     "[{'op':'test','path':'/a','value':9223372036854775808.0}]", NULL, "test failed"},
    {"test most negative integer equals real", "{'a':-9223372036854775808}",
     "[{'op':'test','path':'/a','value':-9223372036854775808.0}]", "{'a':-9223372036854775808}",
     NULL},
    {"test number vs string fails", "{'a':1}", "[{'op':'test','path':'/a','value':'1'}]", NULL,
     "test failed"},
    {"test true vs 1 fails", "{'a':true}", "[{'op':'test','path':'/a','value':1}]", NULL,
     "test failed"},
    {"test null vs false fails", "{'a':null}", "[{'op':'test','path':'/a','value':false}]", NULL,
     "test failed"},
    {"test empty array vs empty object fails", "{'a':[]}", "[{'op':'test','path':'/a','value':{}}]",
     NULL, "test failed"},
    {"test true vs false fails", "{'a':true}", "[{'op':'test','path':'/a','value':false}]", NULL,
     "test failed"},
    {"test null value", "{'foo':null}", "[{'op':'test','path':'/foo','value':null}]",
     "{'foo':null}", NULL},
    {"test members in any order", "{'foo':{'foo':1,'bar':2}}",
     "[{'op':'test','path':'/foo','value':{'bar':2,'foo':1}}]", "{'foo':{'foo':1,'bar':2}}", NULL},
    {"test nested rearrangement", "{'foo':[{'foo':1,'bar':2}]}",
     "[{'op':'test','path':'/foo','value':[{'bar':2,'foo':1}]}]", "{'foo':[{'foo':1,'bar':2}]}",
     NULL},
    {"test array order matters", "{'a':[1,2]}", "[{'op':'test','path':'/a','value':[2,1]}]", NULL,
     "test failed"},
    {"test extra member fails", "{'a':{'x':1}}",
     "[{'op':'test','path':'/a','value':{'x':1,'y':null}}]", NULL, "test failed"},
    {"test object vs array fails", "{'foo':{'bar':[1,2,5,4]}}",
     "[{'op':'test','path':'/foo','value':[1,2]}]", NULL, "test failed"},
    {"test leading zero 00 fails", "['foo','bar']", "[{'op':'test','path':'/00','value':'foo'}]",
     NULL, "not an array index"},
    {"test leading zero 01 fails", "['foo','bar']", "[{'op':'test','path':'/01','value':'bar'}]",
     NULL, "not an array index"},
    {"test 1e0 on array fails", "['foo','bar']", "[{'op':'test','path':'/1e0','value':'bar'}]",
     NULL, "not an array index"},
    {"test spurious members ignored", "{'foo':1}",
     "[{'op':'test','path':'/foo','value':1,'spurious':1}]", "{'foo':1}", NULL},

    /* pointers (RFC 6901 section 5 document) */
    {"pointer rfc6901 examples",
     "{'foo':['bar','baz'],'':0,'a/b':1,'c%d':2,'e^f':3,'g|h':4,'i\\\\j':5,'k\\'l':6,' "
     "':7,'m~n':8}",
     "[{'op':'test','path':'/foo','value':['bar','baz']},{'op':'test','path':'/foo/"
     "0','value':'bar'},"
     "{'op':'test','path':'/','value':0},{'op':'test','path':'/a~1b','value':1},"
     "{'op':'test','path':'/c%d','value':2},{'op':'test','path':'/e^f','value':3},"
     "{'op':'test','path':'/g|h','value':4},{'op':'test','path':'/i\\\\j','value':5},"
     "{'op':'test','path':'/k\\'l','value':6},{'op':'test','path':'/ ','value':7},"
     "{'op':'test','path':'/m~0n','value':8}]",
     "{'foo':['bar','baz'],'':0,'a/b':1,'c%d':2,'e^f':3,'g|h':4,'i\\\\j':5,'k\\'l':6,' "
     "':7,'m~n':8}",
     NULL},
    {"pointer ~01 is ~1 not /", "{'~1':1,'/':2}", "[{'op':'replace','path':'/~01','value':3}]",
     "{'~1':3,'/':2}", NULL},
    {"pointer ~10 is /0", "{'/0':1,'~0':2}", "[{'op':'remove','path':'/~10'}]", "{'~0':2}", NULL},
    {"pointer escapes in added key", "{}", "[{'op':'add','path':'/a~1b~0c','value':1}]",
     "{'a/b~c':1}", NULL},
    {"pointer ~2 fails", "{'~2':1}", "[{'op':'test','path':'/~2','value':1}]", NULL,
     "'~' must be followed by '0' or '1'"},
    {"pointer trailing ~ fails", "{'~':1}", "[{'op':'test','path':'/~','value':1}]", NULL,
     "'~' must be followed by '0' or '1'"},
    {"pointer without leading slash fails", "{}", "[{'op':'add','path':'foo','value':'bar'}]", NULL,
     "must be empty or start with '/'"},
    {"pointer index overflow fails", "[1]",
     "[{'op':'test','path':'/99999999999999999999999','value':1}]", NULL, "not an array index"},
    {"pointer through scalar fails", "{'a':'x'}", "[{'op':'test','path':'/a/0','value':'x'}]", NULL,
     "\"/a\" is neither an object nor an array"},

    /* malformed operations */
    {"missing op fails", "{}", "[{'path':'/a','value':1}]", NULL, "\"op\" is missing"},
    {"unknown op fails", "{'foo':1}", "[{'op':'spam','path':'/foo','value':1}]", NULL,
     "unknown op"},
    {"op is case-sensitive", "{}", "[{'op':'Add','path':'/a','value':1}]", NULL, "unknown op"},
    {"missing path fails", "{'foo':1}", "[{'op':'add','value':'bar'}]", NULL,
     "\"path\" is missing or not a string"},
    {"null path fails", "{'foo':1}", "[{'op':'add','path':null,'value':'bar'}]", NULL,
     "\"path\" is missing or not a string"},
    {"missing value to add fails", "{'foo':1}", "[{'op':'add','path':'/bar'}]", NULL,
     "\"value\" is missing"},
    {"missing value to replace fails", "['foo']", "[{'op':'replace','path':'/0'}]", NULL,
     "\"value\" is missing"},
    {"missing value to test fails", "[null]", "[{'op':'test','path':'/0'}]", NULL,
     "\"value\" is missing"},
    {"missing from to copy fails", "{'foo':1}", "[{'op':'copy','path':'/bar'}]", NULL,
     "\"from\" is missing or not a string"},
    {"missing from to move fails", "{'foo':1}", "[{'op':'move','path':''}]", NULL,
     "\"from\" is missing or not a string"},
    {"operation not an object fails", "{}", "[1]", NULL, "not a JSON object"},
    {"patch not an array fails", "{}", "{'op':'add','path':'/a','value':1}", NULL,
     "not an array of operations"},
    {"empty patch", "{'a':1}", "[]", "{'a':1}", NULL},
};

static void run_merge_case(void **state)
{
    const patch_case *c = *state;
    json_t *target = sq_load(c->doc), *patch = sq_load(c->patch);
    json_t *target_before = json_deep_copy(target), *patch_before = json_deep_copy(patch);
    json_t *expected = sq_load(c->expected);

    json_t *result = kube_merge_patch(target, patch);
    assert_non_null(result);
    assert_json_equal(result, expected);
    assert_json_equal(target, target_before);
    assert_json_equal(patch, patch_before);

    json_decref(result);
    json_decref(expected);
    json_decref(target);
    json_decref(patch);
    json_decref(target_before);
    json_decref(patch_before);
}

static void run_json_case(void **state)
{
    const patch_case *c = *state;
    json_t *doc = sq_load(c->doc), *ops = sq_load(c->patch);
    json_t *doc_before = json_deep_copy(doc), *ops_before = json_deep_copy(ops);
    gp_error err = {0};

    json_t *result = kube_json_patch(doc, ops, &err);
    if (c->expected) {
        if (!result) print_error("unexpected failure: %s\n", err.text);
        assert_non_null(result);
        json_t *expected = sq_load(c->expected);
        assert_json_equal(result, expected);
        json_decref(expected);
    } else {
        if (result) {
            char *text = json_test_dump(result);
            print_error("expected a failure, got %s\n", text);
            free(text);
        }
        assert_null(result);
        if (!strstr(err.text, c->error)) print_error("error: %s\n", err.text);
        assert_non_null(strstr(err.text, c->error));
    }
    /* Success or failure, the inputs are as they were. */
    assert_json_equal(doc, doc_before);
    assert_json_equal(ops, ops_before);

    json_decref(result);
    json_decref(doc);
    json_decref(ops);
    json_decref(doc_before);
    json_decref(ops_before);
}

/* ---- single behaviours ---- */

/* A replaced member keeps its place, a new one goes last (RFC 7386's own
 * example prints phoneNumber last). */
static void test_merge_key_order(void **state)
{
    (void)state;
    json_t *target = sq_load(merge_cases[0].doc), *patch = sq_load(merge_cases[0].patch);
    json_t *result = kube_merge_patch(target, patch);
    assert_dumps_as(result, merge_cases[0].expected);
    json_decref(result);
    json_decref(target);
    json_decref(patch);
}

/* The result is a new tree: changing it leaves target and patch alone. */
static void test_merge_shares_nothing(void **state)
{
    (void)state;
    json_t *target = sq_load("{'a':{'x':1},'keep':{'y':2}}");
    json_t *patch = sq_load("{'a':{'z':[1]},'new':{'w':3}}");
    json_t *result = kube_merge_patch(target, patch);
    assert_non_null(result);
    json_object_set_new(json_object_get(result, "keep"), "mutated", json_true());
    json_array_append_new(json_object_get(json_object_get(result, "a"), "z"), json_true());
    json_object_set_new(json_object_get(result, "new"), "mutated", json_true());
    assert_dumps_as(target, "{'a':{'x':1},'keep':{'y':2}}");
    assert_dumps_as(patch, "{'a':{'z':[1]},'new':{'w':3}}");
    json_decref(result);
    json_decref(target);
    json_decref(patch);
}

/* A scalar patch also comes back as a copy, not the patch itself. */
static void test_merge_scalar_patch_is_copied(void **state)
{
    (void)state;
    json_t *target = sq_load("{'a':1}"), *patch = sq_load("['x']");
    json_t *result = kube_merge_patch(target, patch);
    assert_non_null(result);
    assert_ptr_not_equal(result, patch);
    json_array_append_new(result, json_true());
    assert_int_equal(json_array_size(patch), 1);
    json_decref(result);
    json_decref(target);
    json_decref(patch);
}

static void test_merge_null_target_is_absent(void **state)
{
    (void)state;
    json_t *patch = sq_load("{'a':{'b':null,'c':1}}");
    json_t *result = kube_merge_patch(NULL, patch);
    assert_dumps_as(result, "{'a':{'c':1}}");
    json_decref(result);
    json_decref(patch);
}

/* Merging a document into itself drops its nulls and nothing else. */
static void test_merge_self_drops_nulls(void **state)
{
    (void)state;
    json_t *x = sq_load("{'a':null,'b':{'c':null,'d':[null]},'e':1}");
    json_t *result = kube_merge_patch(x, x);
    assert_dumps_as(result, "{'b':{'d':[null]},'e':1}");
    json_decref(result);
    json_decref(x);
}

/* replace and add on a member keep its place, a new member goes last, and a
 * move to the same place is a no-op rather than a remove and re-append. */
static void test_json_patch_key_order(void **state)
{
    (void)state;
    json_t *doc = sq_load("{'a':1,'b':2,'c':3}");
    json_t *ops = sq_load("[{'op':'replace','path':'/a','value':10},"
                          "{'op':'add','path':'/b','value':20},"
                          "{'op':'add','path':'/d','value':4},"
                          "{'op':'move','from':'/c','path':'/e'},"
                          "{'op':'move','from':'/a','path':'/a'}]");
    gp_error err = {0};
    json_t *result = kube_json_patch(doc, ops, &err);
    assert_non_null(result);
    assert_dumps_as(result, "{'a':10,'b':20,'d':4,'e':3}");
    json_decref(result);
    json_decref(doc);
    json_decref(ops);
}

/* Atomic: the first operations succeed on the copy, the third fails, and the
 * caller's document shows none of it. */
static void test_failed_patch_leaves_input_untouched(void **state)
{
    (void)state;
    const char *text = "{'spec':{'replicas':1,'list':[1,2]},'status':{}}";
    json_t *doc = sq_load(text);
    json_t *ops = sq_load("[{'op':'replace','path':'/spec/replicas','value':3},"
                          "{'op':'remove','path':'/spec/list/0'},"
                          "{'op':'remove','path':'/status/missing'},"
                          "{'op':'add','path':'/x','value':1}]");
    gp_error err = {0};
    json_t *result = kube_json_patch(doc, ops, &err);
    assert_null(result);
    assert_dumps_as(doc, text);
    assert_int_equal(doc->refcount, 1);
    json_decref(doc);
    json_decref(ops);
}

/* The message names the operation's index, op and path, then why. */
static void test_error_names_operation(void **state)
{
    (void)state;
    json_t *doc = sq_load("{'foo':'bar'}");
    json_t *ops = sq_load("[{'op':'test','path':'/foo','value':'bar'},"
                          "{'op':'add','path':'/a','value':1},"
                          "{'op':'remove','path':'/baz'}]");
    gp_error err = {0};
    assert_null(kube_json_patch(doc, ops, &err));
    assert_string_equal(err.text, "JSON patch operation 2 (op \"remove\", path \"/baz\"): "
                                  "\"/baz\" does not exist");
    json_decref(doc);
    json_decref(ops);
}

/* Added, replaced and tested values are copies: the result shares nothing
 * with the patch, and the input document is not the result. */
static void test_json_patch_shares_nothing(void **state)
{
    (void)state;
    json_t *doc = sq_load("{'a':{'x':1}}");
    json_t *ops = sq_load("[{'op':'add','path':'/b','value':{'y':[1]}},"
                          "{'op':'replace','path':'/a','value':{'z':2}}]");
    gp_error err = {0};
    json_t *result = kube_json_patch(doc, ops, &err);
    assert_non_null(result);
    assert_ptr_not_equal(result, doc);
    json_object_set_new(json_object_get(result, "b"), "mutated", json_true());
    json_object_set_new(json_object_get(result, "a"), "mutated", json_true());
    assert_dumps_as(ops, "[{'op':'add','path':'/b','value':{'y':[1]}},"
                         "{'op':'replace','path':'/a','value':{'z':2}}]");
    assert_dumps_as(doc, "{'a':{'x':1}}");
    json_decref(result);
    json_decref(doc);
    json_decref(ops);
}

/* RFC 6902 A.13: a patch with two "op" members is invalid. jansson keeps
 * only one of them, so the decoder must refuse it (the API server answers
 * 400 to an undecodable patch); kube_json_patch never sees the duplicate. */
static void test_rfc6902_a13_duplicate_op(void **state)
{
    (void)state;
    const char *text = "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"op\":\"remove\"}]";
    json_error_t jerr;
    assert_null(json_loads(text, JSON_REJECT_DUPLICATES, &jerr));
    /* Decoded leniently, the last "op" wins: remove of a missing member. */
    json_t *ops = json_loads(text, 0, &jerr);
    assert_non_null(ops);
    json_t *doc = sq_load("{'foo':'bar'}");
    gp_error err = {0};
    assert_null(kube_json_patch(doc, ops, &err));
    assert_non_null(strstr(err.text, "\"/baz\" does not exist"));
    json_decref(doc);
    json_decref(ops);
}

/* A pointer with a NUL in it would otherwise match the key before the NUL. */
static void test_pointer_with_nul_refused(void **state)
{
    (void)state;
    json_t *doc = sq_load("{'a':1}");
    json_t *ops = json_array();
    json_t *op = json_object();
    json_object_set_new(op, "op", json_string("remove"));
    json_object_set_new(op, "path", json_stringn("/a\0b", 4));
    json_array_append_new(ops, op);
    gp_error err = {0};
    assert_null(kube_json_patch(doc, ops, &err));
    assert_non_null(strstr(err.text, "NUL character"));
    json_object_set_new(op, "op", json_stringn("remove\0x", 8));
    json_object_set_new(op, "path", json_string("/a"));
    assert_null(kube_json_patch(doc, ops, &err));
    assert_non_null(strstr(err.text, "unknown op"));
    json_decref(doc);
    json_decref(ops);
}

/* A patch whose value is the document itself: no aliasing surprises. */
static void test_patch_value_is_the_document(void **state)
{
    (void)state;
    json_t *doc = sq_load("{'a':1}");
    json_t *ops = json_array();
    json_t *op = json_object();
    json_object_set_new(op, "op", json_string("add"));
    json_object_set_new(op, "path", json_string("/self"));
    json_object_set(op, "value", doc);
    json_array_append_new(ops, op);
    gp_error err = {0};
    json_t *result = kube_json_patch(doc, ops, &err);
    assert_non_null(result);
    assert_dumps_as(result, "{'a':1,'self':{'a':1}}");
    assert_dumps_as(doc, "{'a':1}");
    json_decref(result);
    json_decref(ops);
    json_decref(doc);
}

static void test_null_error_pointer_accepted(void **state)
{
    (void)state;
    json_t *doc = sq_load("{}");
    json_t *ops = sq_load("[{'op':'remove','path':'/x'}]");
    assert_null(kube_json_patch(doc, ops, NULL));
    json_decref(doc);
    json_decref(ops);
}

#define N_MERGE (sizeof merge_cases / sizeof merge_cases[0])
#define N_JSON  (sizeof json_cases / sizeof json_cases[0])

int main(void)
{
    static const struct CMUnitTest singles[] = {
        cmocka_unit_test(test_merge_key_order),
        cmocka_unit_test(test_merge_shares_nothing),
        cmocka_unit_test(test_merge_scalar_patch_is_copied),
        cmocka_unit_test(test_merge_null_target_is_absent),
        cmocka_unit_test(test_merge_self_drops_nulls),
        cmocka_unit_test(test_json_patch_key_order),
        cmocka_unit_test(test_failed_patch_leaves_input_untouched),
        cmocka_unit_test(test_error_names_operation),
        cmocka_unit_test(test_json_patch_shares_nothing),
        cmocka_unit_test(test_rfc6902_a13_duplicate_op),
        cmocka_unit_test(test_pointer_with_nul_refused),
        cmocka_unit_test(test_patch_value_is_the_document),
        cmocka_unit_test(test_null_error_pointer_accepted),
    };
    size_t n_singles = sizeof singles / sizeof singles[0];
    /* One cmocka test per table row, named after it, so a failure says which. */
    static struct CMUnitTest tests[N_MERGE + N_JSON + sizeof singles / sizeof singles[0]];
    size_t n = 0;
    for (size_t i = 0; i < N_MERGE; i++)
        tests[n++] = (struct CMUnitTest){merge_cases[i].name, run_merge_case, NULL, NULL,
                                         (void *)&merge_cases[i]};
    for (size_t i = 0; i < N_JSON; i++)
        tests[n++] = (struct CMUnitTest){json_cases[i].name, run_json_case, NULL, NULL,
                                         (void *)&json_cases[i]};
    for (size_t i = 0; i < n_singles; i++)
        tests[n++] = singles[i];
    return _cmocka_run_group_tests("kube_patch", tests, n, NULL, NULL);
}
