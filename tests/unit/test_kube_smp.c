/* kube_strategic_merge_patch: every rule of k8s-semantics.md section 4.3 and
 * every directive, on each kind's keyed, set and atomic lists, and the
 * errors the API server gives.
 *
 * Every expected value in the table is what the real kubectl 1.32 printed
 * for the same object and patch (`kubectl patch --local --type=strategic`,
 * which runs k8s.io/apimachinery's strategicpatch), with the "$..." and null
 * members its typed decode drops taken out; each expected error is a part of
 * kubectl's message. The same cases and more, against kubectl live, are in
 * tests/cli/smp_vs_kubectl.py.
 *
 * Run as `test_kube_smp --apply OBJECT.json PATCH.json KIND` it prints the
 * result of one patch instead (compact JSON; "error: ..." on stderr and exit
 * 1 when refused, exit 2 on an unreadable file): the driver
 * smp_vs_kubectl.py compares with kubectl. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/smp.h"

/* ---- helpers ---- */

/* Parses JSON written with ' for " (no case needs a literal '). Duplicate
 * keys are refused so a typo in a table cannot hide a member. */

static bool has_dollar_key(const json_t *v)
{
    const char *key;
    json_t *m;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, m)
        {
            if (key[0] == '$' || has_dollar_key(m)) return true;
        }
    } else if (json_is_array(v)) {
        json_array_foreach((json_t *)v, i, m)
        {
            if (has_dollar_key(m)) return true;
        }
    }
    return false;
}

/* Applies the patch and checks what every call promises: the inputs come
 * back unchanged, and a result holds no "$..." key. */
static json_t *apply(const json_t *target, const json_t *patch, const char *kind, gp_error *err)
{
    char *target_before = json_test_dump(target), *patch_before = json_test_dump(patch);
    json_t *out = kube_strategic_merge_patch(target, patch, kind, err);
    char *target_after = json_test_dump(target), *patch_after = json_test_dump(patch);
    assert_string_equal(target_after, target_before);
    assert_string_equal(patch_after, patch_before);
    free(target_before);
    free(patch_before);
    free(target_after);
    free(patch_after);
    if (out && has_dollar_key(out)) {
        char *text = json_test_dump(out);
        print_error("a directive key is left in %s\n", text);
        free(text);
        fail();
    }
    return out;
}

/* ---- table-driven cases ---- */

typedef struct {
    const char *name;
    const char *kind;
    const char *target;
    const char *patch;
    const char *expected; /* NULL: the patch must be refused */
    const char *error;    /* for a refusal: a part of kubectl's message */
} smp_case;

static const smp_case cases[] = {
    {"4.3 env [X,Y] + [W] gives [W,X,Y]", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','env':[{'name':'X'},{'name':'Y'}]}]}}",
     "{'spec':{'containers':[{'name':'a','env':[{'name':'W'}]}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'env':[{'name':'W'},{'name':'X'},"
     "{'name':'Y'}],'name':'a'}]}}",
     NULL},
    {"4.3 containers [a,b] + [b',z] gives [a,b',z]", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'},{'name':'b'}]}}",
     "{'spec':{'containers':[{'name':'b','image':'b2'},{'name':'z'}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'},{'image':'b2','name':'b'},"
     "{'name':'z'}]}}",
     NULL},
    {"4.3 tolerations [t1,t2] + [t3] gives [t3]", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'tolerations':[{'key':'t1'},{'key':'t2'}]}}",
     "{'spec':{'tolerations':[{'key':'t3'}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'tolerations':[{'key':'t3'}]}}",
     NULL},
    {"4.3 node capacity merges key by key", "Node",
     "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'},"
     "'spec':{},'status':{'capacity':{'cpu':'8','memory':'32Gi',"
     "'pods':'110'}}}",
     "{'status':{'capacity':{'nvidia.com/gpu':'4'},'allocatable':{'nvidia.com/gpu':'4'}}}",
     "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'},"
     "'spec':{},'status':{'allocatable':{'nvidia.com/gpu':'4'},"
     "'capacity':{'cpu':'8','memory':'32Gi','nvidia.com/gpu':'4',"
     "'pods':'110'}}}",
     NULL},
    {"4.3 apply body on a DaemonSet", "DaemonSet",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'labels':{'app':'dp'}"
     "},"
     "'spec':{'containers':[{'name':'agent','image':'dp:v0.16.2',"
     "'resources':{'requests':{'cpu':'50m'}}}]}}}}",
     "{'metadata':{'annotations':{'kubectl.kubernetes.io/last-applied-configuration':'{}\\n'}},"
     "'spec':{'template':{'spec':{'$setElementOrder/containers':[{'name':'agent'}],"
     "'containers':[{'image':'dp:v0.17.0','name':'agent','resources':{'requests':{'memory':'64Gi'}}"
     "}]}}}}",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'annotations':{'kubectl.kubernetes.io/"
     "last-applied-configuration':'{}\\n'},"
     "'name':'ds'},'spec':{'selector':{'matchLabels':{'app':'dp'}},"
     "'template':{'metadata':{'labels':{'app':'dp'}},'spec':{'containers':[{'image':'dp:v0.17.0',"
     "'name':'agent','resources':{'requests':{'cpu':'50m','memory':'64Gi'}}}]}}}}",
     NULL},
    {"4.3 set image on a DaemonSet", "DaemonSet",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'labels':{'app':'dp'}"
     "},"
     "'spec':{'containers':[{'name':'side','image':'busybox'},"
     "{'name':'agent','image':'dp:v0.16.2'}]}}}}",
     "{'spec':{'template':{'spec':{'$setElementOrder/containers':[{'name':'side'},"
     "{'name':'agent'}],'containers':[{'image':'dp:v0.17.0','name':'agent'}]}}}}",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'labels':{'app':'dp'}"
     "},"
     "'spec':{'containers':[{'image':'busybox','name':'side'},"
     "{'image':'dp:v0.17.0','name':'agent'}]}}}}",
     NULL},
    {"4.3 set resources on a DaemonSet", "DaemonSet",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'labels':{'app':'dp'}"
     "},"
     "'spec':{'containers':[{'name':'agent','image':'dp','resources':{'requests':{'cpu':'50m',"
     "'memory':'128Mi'}}}]}}}}",
     "{'spec':{'template':{'spec':{'$setElementOrder/containers':[{'name':'agent'}],"
     "'containers':[{'name':'agent','resources':{'requests':{'memory':'64Gi'}}}]}}}}",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'labels':{'app':'dp'}"
     "},"
     "'spec':{'containers':[{'image':'dp','name':'agent','resources':{'requests':{'cpu':'50m',"
     "'memory':'64Gi'}}}]}}}}",
     NULL},
    {"4.3 rollout restart annotates the template", "DaemonSet",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'labels':{'app':'dp'}"
     "},"
     "'spec':{'containers':[{'name':'agent'}]}}}}",
     "{'spec':{'template':{'metadata':{'annotations':{'kubectl.kubernetes.io/"
     "restartedAt':'2025-06-20T10:00:00Z'}}}}}",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'annotations':{'"
     "kubectl.kubernetes.io/restartedAt':'2025-06-20T10:00:00Z'},"
     "'labels':{'app':'dp'}},'spec':{'containers':[{'name':'agent'}]}}}}",
     NULL},
    {"null deletes a map member", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'labels':{'x':'1'}},'spec':{'nodeSelector':{'a':'1','b':'2'}}}",
     "{'metadata':{'labels':{'x':null,'y':'2'}},'spec':{'nodeSelector':{'a':null,"
     "'absent':null}}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'labels':{'y':'2'},"
     "'name':'p'},'spec':{'nodeSelector':{'b':'2'}}}",
     NULL},
    {"null deletes a member of a keyed element", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','image':'i','workingDir':'/w'}]}}",
     "{'spec':{'containers':[{'name':'a','workingDir':null}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'image':'i','name':'a'}]}}",
     NULL},
    {"finalizers [a,b] + [c,a] gives [c,a,b]", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'finalizers':['a','b']}}",
     "{'metadata':{'finalizers':['c','a']}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'finalizers':['c',"
     "'a','b'],'name':'p'}}",
     NULL},
    {"a new element follows its patch predecessor", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','env':[{'name':'A'},{'name':'B'},"
     "{'name':'C'},{'name':'D'}]}]}}",
     "{'spec':{'containers':[{'name':'a','env':[{'name':'C','value':'2'},"
     "{'name':'N'},{'name':'A','value':'2'},{'name':'M'}]}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'env':[{'name':'B'},{'name':'C',"
     "'value':'2'},{'name':'N'},{'name':'A','value':'2'},{'name':'M'},"
     "{'name':'D'}],'name':'a'}]}}",
     NULL},
    {"ports merge by containerPort", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','ports':[{'containerPort':80},"
     "{'containerPort':443}]}]}}",
     "{'spec':{'containers':[{'name':'a','ports':[{'containerPort':443,"
     "'name':'https'},{'containerPort':9400}]}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','ports':[{'containerPort':80},"
     "{'containerPort':443,'name':'https'},{'containerPort':9400}]}]}}",
     NULL},
    {"volumeMounts merge by mountPath", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','volumeMounts':[{'name':'x',"
     "'mountPath':'/x'}]}]}}",
     "{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/x',"
     "'readOnly':true},{'name':'y','mountPath':'/y'}]}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/x',"
     "'name':'x','readOnly':true},{'mountPath':'/y','name':'y'}]}]}}",
     NULL},
    {"pod status conditions by type, podIPs by ip", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'status':{'conditions':[{'type':'Initialized','status':'True'},"
     "{'type':'PodScheduled','status':'False'}],'podIPs':[{'ip':'10.0.0.1'}]}}",
     "{'status':{'conditions':[{'type':'Ready','status':'True'},"
     "{'type':'PodScheduled','status':'True'}],'podIPs':[{'ip':'fd00::1'}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'status':{'conditions':[{'status':'True','type':'Ready'},"
     "{'status':'True','type':'Initialized'},{'status':'True',"
     "'type':'PodScheduled'}],'podIPs':[{'ip':'fd00::1'},{'ip':'10.0.0.1'}]}}",
     NULL},
    {"ownerReferences merge by uid", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'ownerReferences':[{'uid':'u1','name':'ds'}]}}",
     "{'metadata':{'ownerReferences':[{'uid':'u1','controller':true},"
     "{'uid':'u2','name':'n'}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'ownerReferences':[{'controller':true,'name':'ds','uid':'u1'},"
     "{'name':'n','uid':'u2'}]}}",
     NULL},
    {"node conditions and addresses by type", "Node",
     "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'},"
     "'spec':{},'status':{'conditions':[{'type':'Ready','status':'False'},"
     "{'type':'MemoryPressure','status':'False'}],'addresses':[{'type':'InternalIP',"
     "'address':'a'}]}}",
     "{'status':{'conditions':[{'type':'Ready','status':'True'}],"
     "'addresses':[{'type':'Hostname','address':'h'}]}}",
     "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'},"
     "'spec':{},'status':{'addresses':[{'address':'h','type':'Hostname'},"
     "{'address':'a','type':'InternalIP'}],'conditions':[{'status':'True',"
     "'type':'Ready'},{'status':'False','type':'MemoryPressure'}]}}",
     NULL},
    {"node taints and images are atomic", "Node",
     "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'},"
     "'spec':{'taints':[{'key':'a','effect':'NoSchedule'}]},'status':{'images':[{'names':['a']}]}}",
     "{'spec':{'taints':[{'key':'b','effect':'NoSchedule'}]},"
     "'status':{'images':[{'names':['b']}]}}",
     "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'},"
     "'spec':{'taints':[{'effect':'NoSchedule','key':'b'}]},'status':{'images':[{'names':['b']}]}}",
     NULL},
    {"node podCIDRs is a set", "Node",
     "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'},"
     "'spec':{'podCIDRs':['10.0.0.0/24']},'status':{}}",
     "{'spec':{'podCIDRs':['fd00::/64']}}",
     "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'},"
     "'spec':{'podCIDRs':['fd00::/64','10.0.0.0/24']},'status':{}}",
     NULL},
    {"namespace conditions by type, finalizers atomic", "Namespace",
     "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'ns'},"
     "'spec':{'finalizers':['kubernetes','x']},'status':{'conditions':[{'type':'A',"
     "'status':'True'}]}}",
     "{'spec':{'finalizers':['kubernetes']},'status':{'conditions':[{'type':'B',"
     "'status':'True'}]}}",
     "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'ns'},"
     "'spec':{'finalizers':['kubernetes']},'status':{'conditions':[{'status':'True',"
     "'type':'B'},{'status':'True','type':'A'}]}}",
     NULL},
    {"daemonset status conditions by type", "DaemonSet",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'labels':{'app':'dp'}"
     "},"
     "'spec':{'containers':[{'name':'agent'}]}}},'status':{'conditions':[{'type':'A',"
     "'status':'True'},{'type':'C','status':'True'}]}}",
     "{'status':{'conditions':[{'type':'B','status':'True'},{'type':'A',"
     "'status':'False'}]}}",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'labels':{'app':'dp'}"
     "},"
     "'spec':{'containers':[{'name':'agent'}]}}},'status':{'conditions':[{'status':'True',"
     "'type':'B'},{'status':'False','type':'A'},{'status':'True',"
     "'type':'C'}]}}",
     NULL},
    {"daemonset template metadata finalizers are a set", "DaemonSet",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'finalizers':['x']},"
     "'spec':{'containers':[{'name':'agent'}]}}}}",
     "{'spec':{'template':{'metadata':{'finalizers':['y']}}}}",
     "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds'},"
     "'spec':{'selector':{'matchLabels':{'app':'dp'}},'template':{'metadata':{'finalizers':['y',"
     "'x']},'spec':{'containers':[{'name':'agent'}]}}}}",
     NULL},
    {"serviceaccount secrets by name, imagePullSecrets atomic", "ServiceAccount",
     "{'apiVersion':'v1','kind':'ServiceAccount','metadata':{'name':'sa'},"
     "'secrets':[{'name':'s1'}],'imagePullSecrets':[{'name':'p1'}]}",
     "{'secrets':[{'name':'s2'}],'imagePullSecrets':[{'name':'p2'}]}",
     "{'apiVersion':'v1','imagePullSecrets':[{'name':'p2'}],'kind':'ServiceAccount',"
     "'metadata':{'name':'sa'},'secrets':[{'name':'s2'},{'name':'s1'}]}",
     NULL},
    {"runtimeclass scheduling tolerations are atomic", "RuntimeClass",
     "{'apiVersion':'node.k8s.io/v1','kind':'RuntimeClass','metadata':{'name':'nvidia'},"
     "'handler':'nvidia','scheduling':{'tolerations':[{'key':'a'}]}}",
     "{'scheduling':{'tolerations':[{'key':'b'}]}}",
     "{'apiVersion':'node.k8s.io/v1','handler':'nvidia','kind':'RuntimeClass',"
     "'metadata':{'name':'nvidia'},'scheduling':{'tolerations':[{'key':'b'}]}}",
     NULL},
    {"$deleteFromPrimitiveList on finalizers", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'finalizers':['a','b','c']}}",
     "{'metadata':{'$deleteFromPrimitiveList/finalizers':['b',"
     "'zz']}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'finalizers':['a',"
     "'c'],'name':'p'}}",
     NULL},
    {"$deleteFromPrimitiveList on an atomic list", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','args':['-x','-y','-x']}]}}",
     "{'spec':{'containers':[{'name':'a','$deleteFromPrimitiveList/args':['-x']}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'args':['-y'],'name':'a'}]}}",
     NULL},
    {"$patch delete removes a keyed element", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
     "{'spec':{'containers':[{'name':'n'},{'name':'b','$patch':'delete'}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'n'},{'name':'a'},{'name':'c'}]}}",
     NULL},
    {"$patch replace in a list", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','env':[{'name':'A'},{'name':'B'}]}]}}",
     "{'spec':{'containers':[{'name':'a','env':[{'$patch':'replace'},"
     "{'name':'C'}]}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'env':[{'name':'C'}],'name':'a'}]}}",
     NULL},
    {"$patch replace in a map", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'nodeSelector':{'a':'1','b':'2'}}}",
     "{'spec':{'nodeSelector':{'$patch':'replace','c':'3'}}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'nodeSelector':{'c':'3'}}}",
     NULL},
    {"$patch delete in a map", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'securityContext':{'runAsUser':0},'hostname':'h'}}",
     "{'spec':{'securityContext':{'$patch':'delete'}}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'hostname':'h','securityContext':{}}}",
     NULL},
    {"$setElementOrder orders a keyed list", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
     "{'spec':{'$setElementOrder/containers':[{'name':'c'},{'name':'z'},"
     "{'name':'a'}],'containers':[{'name':'z'},{'name':'a','image':'a2'}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'b'},{'name':'c'},{'name':'z'},"
     "{'image':'a2','name':'a'}]}}",
     NULL},
    {"$setElementOrder alone reorders", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a','env':[{'name':'X'},{'name':'Y'},"
     "{'name':'Z'}]}]}}",
     "{'spec':{'containers':[{'name':'a','$setElementOrder/env':[{'name':'Z'},"
     "{'name':'X'},{'name':'Y'}]}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'env':[{'name':'Z'},{'name':'X'},"
     "{'name':'Y'}],'name':'a'}]}}",
     NULL},
    {"$setElementOrder on finalizers", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'finalizers':['a','b','c']}}",
     "{'metadata':{'$setElementOrder/finalizers':['c','new','a'],"
     "'finalizers':['new']}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'finalizers':['b',"
     "'c','new','a'],'name':'p'}}",
     NULL},
    {"$setElementOrder after a delete reads Go's shifted array", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'b'},{'name':'c'},{'name':'d'}]}}",
     "{'spec':{'$setElementOrder/containers':[{'name':'g'},{'name':'b'},"
     "{'name':'d'}],'containers':[{'name':'b','$patch':'delete'},"
     "{'name':'g'}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'c'},{'name':'g'},{'name':'d'}]}}",
     NULL},
    {"$retainKeys keeps only the listed members", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'volumes':[{'name':'v','hostPath':{'path':'/x'}}]}}",
     "{'spec':{'volumes':[{'name':'v','$retainKeys':['emptyDir',"
     "'name'],'emptyDir':{}}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'volumes':[{'emptyDir':{},'name':'v'}]}}",
     NULL},
    {"a new field drops nulls and $patch objects", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'initContainers':[{'name':'i','args':null,'env':[{'name':'A'},"
     "{'name':'Z','$patch':'delete'}]},{'name':'gone','$patch':'delete'}],"
     "'affinity':{'nodeAffinity':{'$patch':'replace'},'podAffinity':{}}}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'affinity':{'podAffinity':{}},'containers':[{'name':'a'}],"
     "'initContainers':[{'env':[{'name':'A'}],'name':'i'}]}}",
     NULL},
    {"an atomic list is stored as the typed decode keeps it", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'tolerations':[{'key':'t1'}]}}",
     "{'spec':{'tolerations':[{'key':'k','$patch':'delete'},{'key':'t3',"
     "'value':null}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'tolerations':[{'key':'k'},{'key':'t3'}]}}",
     NULL},
    {"a new keyed element is stored as the typed decode keeps it", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'containers':[{'name':'z','image':null,'env':[{'name':'Q',"
     "'$patch':'delete'}],'$setElementOrder/env':[{'name':'Q'}]}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'env':[{'name':'Q'}],'name':'z'},"
     "{'name':'a'}]}}",
     NULL},
    {"an unknown $ member is dropped", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'$unknown':1,'containers':[{'name':'a','$also':{'x':1}}]}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     NULL},
    {"a member changing type takes the patch value", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'nodeSelector':{'a':'b'},'hostname':'h'}}",
     "{'spec':{'nodeSelector':'x','hostname':{'name':'h','drop':null}}}",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'hostname':{'name':'h'},'nodeSelector':'x'}}",
     NULL},
    {"$patch replace at the top", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'$patch':'replace','kind':'Pod','metadata':{'name':'q'}}",
     "{'kind':'Pod','metadata':{'name':'q'}}", NULL},
    {"error: $patch with an unknown value", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{}}",
     "{'spec':{'$patch':'remove'}}", NULL, "unknown patch type"},
    {"error: $patch merge in a map", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{}}",
     "{'spec':{'$patch':'merge','hostname':'h'}}", NULL, "unknown patch type"},
    {"error: $patch merge in a list", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'containers':[{'$patch':'merge'}]}}", NULL, "merging lists cannot yet be specified"},
    {"error: $patch with an unknown value in a list", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'containers':[{'name':'a','$patch':'remove'}]}}", NULL, "unknown patch type"},
    {"error: keyed element without its merge key", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'containers':[{'image':'x'}]}}", NULL, "does not contain declared merge key: name"},
    {"error: $patch delete without the merge key", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'containers':[{'$patch':'delete'}]}}", NULL,
     "does not contain declared merge key: name"},
    {"error: target element without its merge key", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'image':'x'}]}}",
     "{'spec':{'containers':[{'name':'a'}]}}", NULL, "does not contain declared merge key: name"},
    {"error: $setElementOrder disagrees with the patch", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'},{'name':'b'}]}}",
     "{'spec':{'$setElementOrder/containers':[{'name':'a'},{'name':'b'}],"
     "'containers':[{'name':'b'},{'name':'a'}]}}",
     NULL, "doesn't match $setElementOrder list"},
    {"error: $setElementOrder is not a list", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'$setElementOrder/containers':{'name':'a'}}}", NULL, ""},
    {"error: $setElementOrder without a field", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'$setElementOrder':[{'name':'a'}]}}", NULL, ""},
    {"error: $deleteFromPrimitiveList without a field", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'finalizers':['a']}}",
     "{'metadata':{'$deleteFromPrimitiveList':['a']}}", NULL, ""},
    {"error: $retainKeys leaves out a patched member", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'volumes':[{'name':'v'}]}}",
     "{'spec':{'volumes':[{'name':'v','$retainKeys':['name'],"
     "'emptyDir':{}}]}}",
     NULL, "retainKeys"},
    {"error: $retainKeys is not a list", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
     "'spec':{'volumes':[{'name':'v'}]}}",
     "{'spec':{'volumes':[{'name':'v','$retainKeys':'name'}]}}", NULL, "retainKeys"},
    {"error: merged list elements of different types", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'finalizers':['a']}}",
     "{'metadata':{'finalizers':[1]}}", NULL, "list element types are not identical"},
    {"error: a list and a list of lists", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'finalizers':['a']}}",
     "{'metadata':{'finalizers':[['b']]}}", NULL, "list element types are not identical"},
    {"error: list of lists", "Pod",
     "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
     "'finalizers':[]}}",
     "{'metadata':{'finalizers':[['b']]}}", NULL, "lists of lists"},
};

static void run_case(void **state)
{
    const smp_case *c = *state;
    json_t *target = sq_load(c->target), *patch = sq_load(c->patch);
    gp_error err = {0};
    json_t *out = apply(target, patch, c->kind, &err);
    if (c->expected) {
        if (!out) print_error("refused: %s\n", err.text);
        assert_non_null(out);
        json_t *want = sq_load(c->expected);
        assert_json_equal(out, want);
        json_decref(want);
    } else {
        if (out) {
            char *text = json_test_dump(out);
            print_error("accepted, giving %s\n", text);
            free(text);
        }
        assert_null(out);
        if (!strstr(err.text, c->error)) print_error("message: %s\n", err.text);
        assert_non_null(strstr(err.text, c->error));
    }
    json_decref(out);
    json_decref(target);
    json_decref(patch);
}

/* ---- single behaviours ---- */

/* The result is a new tree: changing it leaves the inputs alone, even where
 * a part came from the patch unchanged. */
static void test_result_shares_nothing(void **state)
{
    (void)state;
    json_t *target = sq_load("{'kind':'Pod','metadata':{'labels':{'a':'1'}},"
                             "'spec':{'containers':[{'name':'a','env':[{'name':'X'}]}]}}");
    json_t *patch = sq_load("{'spec':{'tolerations':[{'key':'t'}],'nodeSelector':{'n':'1'},"
                            "'containers':[{'name':'z','env':[{'name':'Y'}]}]}}");
    json_t *target_copy = json_deep_copy(target), *patch_copy = json_deep_copy(patch);
    json_t *out = apply(target, patch, "Pod", NULL);
    assert_non_null(out);
    json_t *spec = json_object_get(out, "spec");
    json_object_set_new(json_object_get(json_object_get(out, "metadata"), "labels"), "b",
                        json_string("2"));
    json_object_set_new(json_array_get(json_object_get(spec, "tolerations"), 0), "key",
                        json_string("changed"));
    json_object_set_new(json_object_get(spec, "nodeSelector"), "m", json_string("2"));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(spec, "containers"), i, c)
    {
        json_array_clear(json_object_get(c, "env"));
    }
    assert_json_equal(target, target_copy);
    assert_json_equal(patch, patch_copy);
    json_decref(out);
    json_decref(target);
    json_decref(patch);
    json_decref(target_copy);
    json_decref(patch_copy);
}

/* {} changes nothing, for every target in the table. */
static void test_empty_patch_gives_the_target(void **state)
{
    (void)state;
    json_t *empty = json_object();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *target = sq_load(cases[i].target);
        json_t *out = apply(target, empty, cases[i].kind, NULL);
        assert_non_null(out);
        assert_ptr_not_equal(out, target);
        assert_json_equal(out, target);
        json_decref(out);
        json_decref(target);
    }
    json_decref(empty);
}

/* kubectl gave the same from a target holding only apiVersion and kind. */
static void test_null_target_is_an_empty_object(void **state)
{
    (void)state;
    json_t *patch = sq_load("{'metadata':{'name':'p','labels':{'a':null}},'spec':{'containers':"
                            "[{'name':'a','$patch':'delete'},{'name':'b'}]}}");
    json_t *out = kube_strategic_merge_patch(NULL, patch, "Pod", NULL);
    json_t *want =
        sq_load("{'metadata':{'name':'p','labels':{}},'spec':{'containers':[{'name':'b'}]}}");
    assert_non_null(out);
    assert_json_equal(out, want);
    json_decref(out);
    json_decref(want);
    json_decref(patch);
}

/* A kind without a schema: lists are replaced as by a JSON merge patch
 * (the brief); objects still merge and directives in objects still apply. */
static void test_unknown_kind_replaces_lists(void **state)
{
    (void)state;
    json_t *target = sq_load("{'kind':'Widget','metadata':{'finalizers':['a']},"
                             "'spec':{'containers':[{'name':'a'},{'name':'b'}],'m':{'x':1,'y':2},"
                             "'r':{'k':1}}}");
    json_t *patch = sq_load("{'metadata':{'finalizers':['b']},'spec':{'containers':[{'name':'b',"
                            "'image':'i'}],'m':{'x':null},'r':{'$patch':'replace','j':2}}}");
    json_t *want = sq_load("{'kind':'Widget','metadata':{'finalizers':['b']},"
                           "'spec':{'containers':[{'name':'b','image':'i'}],'m':{'y':2},"
                           "'r':{'j':2}}}");
    const char *kinds[] = {"Widget", "pod", NULL};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        json_t *out = apply(target, patch, kinds[i], NULL);
        assert_non_null(out);
        assert_json_equal(out, want);
        json_decref(out);
    }
    json_decref(want);
    json_decref(target);
    json_decref(patch);
}

/* Go applies a list and its "$deleteFromPrimitiveList" in random order;
 * kubectl gave these in 9 runs of 12 (and the other order in the rest). The
 * deletion going last is the order `kubectl apply`'s patches rely on. */
static void test_deletions_apply_after_the_list(void **state)
{
    (void)state;
    json_t *target = sq_load("{'kind':'Pod','metadata':{'finalizers':['a','b']},"
                             "'spec':{'containers':[{'name':'c','args':['-a','-b']}]}}");
    json_t *patch = sq_load("{'metadata':{'$deleteFromPrimitiveList/finalizers':['c','a'],"
                            "'finalizers':['c']},'spec':{'containers':[{'name':'c',"
                            "'$deleteFromPrimitiveList/args':['-a'],'args':['-a']}]}}");
    json_t *want = sq_load("{'kind':'Pod','metadata':{'finalizers':['b']},"
                           "'spec':{'containers':[{'name':'c','args':[]}]}}");
    json_t *out = apply(target, patch, "Pod", NULL);
    assert_non_null(out);
    assert_json_equal(out, want);
    json_decref(out);
    json_decref(want);
    json_decref(target);
    json_decref(patch);
}

/* kubectl: "invalid JSON document" for a patch that is not an object. */
static void test_patch_and_target_must_be_objects(void **state)
{
    (void)state;
    json_t *obj = sq_load("{'kind':'Pod'}");
    const char *patches[] = {"[]", "[{'spec':{}}]", "'x'", "1", "null"};
    for (size_t i = 0; i < sizeof patches / sizeof patches[0]; i++) {
        json_t *patch = sq_load(patches[i]);
        gp_error err = {0};
        assert_null(kube_strategic_merge_patch(obj, patch, "Pod", &err));
        assert_non_null(strstr(err.text, "must be a JSON object"));
        json_decref(patch);
    }
    json_t *list = sq_load("[]");
    gp_error err = {0};
    assert_null(kube_strategic_merge_patch(list, obj, "Pod", &err));
    assert_non_null(strstr(err.text, "applies to a JSON object"));
    assert_null(kube_strategic_merge_patch(obj, NULL, "Pod", NULL));
    json_decref(list);
    json_decref(obj);
}

static void test_null_error_pointer_accepted(void **state)
{
    (void)state;
    json_t *target = sq_load("{'spec':{'containers':[{'name':'a'}]}}");
    json_t *patch = sq_load("{'spec':{'containers':[{'image':'x'}]}}");
    assert_null(kube_strategic_merge_patch(target, patch, "Pod", NULL));
    json_decref(target);
    json_decref(patch);
}

/* ---- the driver mode ---- */

static int apply_files(const char *obj_path, const char *patch_path, const char *kind)
{
    json_error_t jerr;
    json_t *obj = json_load_file(obj_path, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj) {
        fprintf(stderr, "%s: %s\n", obj_path, jerr.text);
        return 2;
    }
    json_t *patch = json_load_file(patch_path, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!patch) {
        fprintf(stderr, "%s: %s\n", patch_path, jerr.text);
        json_decref(obj);
        return 2;
    }
    gp_error err = {0};
    json_t *out = kube_strategic_merge_patch(obj, patch, kind, &err);
    int rc = 0;
    if (out) {
        char *text = json_dumps(out, JSON_COMPACT);
        printf("%s\n", text ? text : "");
        rc = text ? 0 : 2;
        free(text);
    } else {
        fprintf(stderr, "error: %s\n", err.text);
        rc = 1;
    }
    json_decref(out);
    json_decref(obj);
    json_decref(patch);
    return rc;
}

#define N_CASES (sizeof cases / sizeof cases[0])

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--apply") == 0) return apply_files(argv[2], argv[3], argv[4]);
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--apply OBJECT.json PATCH.json KIND]\n", argv[0]);
        return 2;
    }
    static const struct CMUnitTest singles[] = {
        cmocka_unit_test(test_result_shares_nothing),
        cmocka_unit_test(test_empty_patch_gives_the_target),
        cmocka_unit_test(test_null_target_is_an_empty_object),
        cmocka_unit_test(test_unknown_kind_replaces_lists),
        cmocka_unit_test(test_deletions_apply_after_the_list),
        cmocka_unit_test(test_patch_and_target_must_be_objects),
        cmocka_unit_test(test_null_error_pointer_accepted),
    };
    size_t n_singles = sizeof singles / sizeof singles[0];
    /* One cmocka test per table row, named after it, so a failure says which. */
    static struct CMUnitTest tests[N_CASES + sizeof singles / sizeof singles[0]];
    size_t n = 0;
    for (size_t i = 0; i < N_CASES; i++)
        tests[n++] = (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, (void *)&cases[i]};
    for (size_t i = 0; i < n_singles; i++)
        tests[n++] = singles[i];
    return _cmocka_run_group_tests("kube_smp", tests, n, NULL, NULL);
}
