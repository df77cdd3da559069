#!/usr/bin/env python3
"""Write src/apiserver/data/kube-types-1.32.txt: the Go types that
kube-apiserver 1.32 decodes the served kinds into, as the API server's
request decoder reads them (src/apiserver/decode.c).

usage: gen-kube-types.py MODELS_DIR > src/apiserver/data/kube-types-1.32.txt

MODELS_DIR is dist/gen/models of the npm package @kubernetes/client-node
1.0.0, which OpenAPI Generator made from Kubernetes' OpenAPI v1.32.0 (each
file says "OpenAPI spec version: v1.32.0"):

    npm install --prefix /tmp/k8s-models @kubernetes/client-node@1.0.0
    scripts/gen-kube-types.py \
        /tmp/k8s-models/node_modules/@kubernetes/client-node/dist/gen/models \
        > src/apiserver/data/kube-types-1.32.txt

OpenAPI says what JSON a field takes but not two things the decoder's
messages need: which strings are resource.Quantity (the models say
"string"), and the Go names of named types (`restartPolicy` is a
v1.RestartPolicy, which `json: cannot unmarshal number into Go struct field
PodSpec.spec.restartPolicy of type v1.RestartPolicy` shows). Both are in
GO_TYPES below, read from k8s.io/api v0.32.0's types.go.

The output, one struct a paragraph:

    struct NAME [GONAME]   a Go struct (its package is always `v1` here);
                           GONAME when two share a name (CoreV1Event and
                           EventsV1Event are both Event)
    FIELD TYPE [GONAME]    one line a JSON field

TYPE is string, bool, int32, int64, float64, bytes (base64), quantity,
intstr, time, microtime, any (RawExtension, FieldsV1), a struct NAME,
[]TYPE or map[string]TYPE. GONAME is the Go type's String() when it is not
what TYPE implies (v1.RestartPolicy, []v1.FinalizerName, v1.ResourceList).
`root KIND STRUCT` lines name the struct each served kind decodes into.
"""
import os
import re
import sys

# The kinds the API server serves and the request bodies it decodes, by
# their model (class) name.
ROOTS = [
    ("Namespace", "V1Namespace"),
    ("Node", "V1Node"),
    ("Pod", "V1Pod"),
    ("ConfigMap", "V1ConfigMap"),
    ("Event", "CoreV1Event"),
    ("ServiceAccount", "V1ServiceAccount"),
    ("DaemonSet", "V1DaemonSet"),
    ("ControllerRevision", "V1ControllerRevision"),
    ("RuntimeClass", "V1RuntimeClass"),
    ("events.k8s.io/Event", "EventsV1Event"),
    ("Lease", "V1Lease"),
    ("Binding", "V1Binding"),
    ("DeleteOptions", "V1DeleteOptions"),
    ("SelfSubjectAccessReview", "V1SelfSubjectAccessReview"),
    ("SelfSubjectRulesReview", "V1SelfSubjectRulesReview"),
]

# STRUCT.FIELD -> (TYPE or None to keep the model's, GONAME or None), from
# k8s.io/api v0.32.0 core/v1, apps/v1, node/v1, coordination/v1 types.go
# and apimachinery's meta/v1 types.go.
RL = ("map[string]quantity", "v1.ResourceList")
GO_TYPES = {
    "ResourceRequirements.limits": RL,
    "ResourceRequirements.requests": RL,
    "NodeStatus.capacity": RL,
    "NodeStatus.allocatable": RL,
    "PodSpec.overhead": RL,
    "Overhead.podFixed": RL,
    "ContainerStatus.allocatedResources": RL,
    "EmptyDirVolumeSource.sizeLimit": ("quantity", None),
    "ResourceFieldSelector.divisor": ("quantity", None),
    "ObjectMeta.uid": (None, "types.UID"),
    "OwnerReference.uid": (None, "types.UID"),
    "ObjectReference.uid": (None, "types.UID"),
    "Preconditions.uid": (None, "*types.UID"),
    "ManagedFieldsEntry.operation": (None, "v1.ManagedFieldsOperationType"),
    "ManagedFieldsEntry.fieldsV1": (None, "v1.FieldsV1"),
    "LabelSelectorRequirement.operator": (None, "v1.LabelSelectorOperator"),
    "ControllerRevision.data": (None, "runtime.RawExtension"),
    "NamespaceSpec.finalizers": (None, "[]v1.FinalizerName"),
    "NamespaceStatus.phase": (None, "v1.NamespacePhase"),
    "NamespaceCondition.type": (None, "v1.NamespaceConditionType"),
    "NamespaceCondition.status": (None, "v1.ConditionStatus"),
    "NodeStatus.phase": (None, "v1.NodePhase"),
    "NodeCondition.type": (None, "v1.NodeConditionType"),
    "NodeCondition.status": (None, "v1.ConditionStatus"),
    "NodeAddress.type": (None, "v1.NodeAddressType"),
    "NodeStatus.volumesInUse": (None, "[]v1.UniqueVolumeName"),
    "AttachedVolume.name": (None, "v1.UniqueVolumeName"),
    "Taint.effect": (None, "v1.TaintEffect"),
    "Toleration.effect": (None, "v1.TaintEffect"),
    "Toleration.operator": (None, "v1.TolerationOperator"),
    "NodeSelectorRequirement.operator": (None, "v1.NodeSelectorOperator"),
    "PodSpec.restartPolicy": (None, "v1.RestartPolicy"),
    "PodSpec.dnsPolicy": (None, "v1.DNSPolicy"),
    "PodSpec.preemptionPolicy": (None, "v1.PreemptionPolicy"),
    "PodStatus.phase": (None, "v1.PodPhase"),
    "PodStatus.qosClass": (None, "v1.PodQOSClass"),
    "PodStatus.resize": (None, "v1.PodResizeStatus"),
    "PodCondition.type": (None, "v1.PodConditionType"),
    "PodCondition.status": (None, "v1.ConditionStatus"),
    "Container.imagePullPolicy": (None, "v1.PullPolicy"),
    "Container.terminationMessagePolicy": (None, "v1.TerminationMessagePolicy"),
    "Container.restartPolicy": (None, "v1.ContainerRestartPolicy"),
    "EphemeralContainer.imagePullPolicy": (None, "v1.PullPolicy"),
    "EphemeralContainer.terminationMessagePolicy": (None, "v1.TerminationMessagePolicy"),
    "EphemeralContainer.restartPolicy": (None, "v1.ContainerRestartPolicy"),
    "ContainerPort.protocol": (None, "v1.Protocol"),
    "ContainerResizePolicy.resourceName": (None, "v1.ResourceName"),
    "ContainerResizePolicy.restartPolicy": (None, "v1.ResourceResizeRestartPolicy"),
    "VolumeMount.mountPropagation": (None, "v1.MountPropagationMode"),
    "VolumeMount.recursiveReadOnly": (None, "v1.RecursiveReadOnlyMode"),
    "HTTPGetAction.scheme": (None, "v1.URIScheme"),
    "Capabilities.add": (None, "[]v1.Capability"),
    "Capabilities.drop": (None, "[]v1.Capability"),
    "SecurityContext.procMount": (None, "v1.ProcMountType"),
    "SeccompProfile.type": (None, "v1.SeccompProfileType"),
    "AppArmorProfile.type": (None, "v1.AppArmorProfileType"),
    "PodSecurityContext.fsGroupChangePolicy": (None, "v1.PodFSGroupChangePolicy"),
    "PodSecurityContext.supplementalGroupsPolicy": (None, "v1.SupplementalGroupsPolicy"),
    "PodOS.name": (None, "v1.OSName"),
    "HostPathVolumeSource.type": (None, "v1.HostPathType"),
    "EmptyDirVolumeSource.medium": (None, "v1.StorageMedium"),
    "TopologySpreadConstraint.whenUnsatisfiable": (None, "v1.UnsatisfiableConstraintAction"),
    "TopologySpreadConstraint.nodeAffinityPolicy": (None, "v1.NodeInclusionPolicy"),
    "TopologySpreadConstraint.nodeTaintsPolicy": (None, "v1.NodeInclusionPolicy"),
    "DaemonSetUpdateStrategy.type": (None, "v1.DaemonSetUpdateStrategyType"),
    "DaemonSetCondition.type": (None, "v1.DaemonSetConditionType"),
    "DaemonSetCondition.status": (None, "v1.ConditionStatus"),
    "LeaseSpec.strategy": (None, "v1.CoordinatedLeaseStrategy"),
    "LeaseSpec.preferredHolder": (None, None),
    "DeleteOptions.propagationPolicy": (None, "v1.DeletionPropagation"),
}

PREFIX = re.compile(r"^(?:[A-Z][a-z]+)?V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])")
ENTRY = re.compile(
    r'\{\s*"name":\s*"([^"]+)",\s*"baseName":\s*"([^"]+)",\s*"type":\s*"([^"]+)",'
    r'\s*"format":\s*"([^"]*)"\s*\}')


def struct_name(model):
    """The Go struct's name: V1PodSpec -> PodSpec, CoreV1Event -> Event."""
    return PREFIX.sub("", model, count=1)


def struct_id(model):
    """The struct's name in the output, unique: PodSpec, but CoreV1Event and
    EventsV1Event, which are both Go's Event."""
    return model[2:] if re.match(r"V1[A-Z]", model) else model


def load(models_dir, model):
    path = os.path.join(models_dir, model + ".js")
    with open(path) as f:
        text = f.read()
    if "OpenAPI spec version: v1.32.0" not in text:
        sys.exit(f"{path}: not made from Kubernetes' OpenAPI v1.32.0")
    return ENTRY.findall(text)


def field_type(t, fmt, refs):
    """The model's type (and format) as a TYPE of the output."""
    m = re.fullmatch(r"Array<(.+)>", t)
    if m:
        return "[]" + field_type(m.group(1), fmt, refs)
    m = re.fullmatch(r"\{ \[key: string\]: (.+); \}", t)
    if m:
        return "map[string]" + field_type(m.group(1), fmt, refs)
    if t == "string":
        return "bytes" if fmt == "byte" else "string"
    if t == "number":
        return {"int32": "int32", "int64": "int64", "double": "float64"}[fmt]
    if t == "boolean":
        return "bool"
    if t == "Date":
        return "time"
    if t == "V1MicroTime":
        return "microtime"
    if t == "IntOrString":
        return "intstr"
    if t == "any":
        return "any"
    refs.append(t)
    return struct_id(t)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    models_dir = sys.argv[1]
    out = ["# Generated by scripts/gen-kube-types.py from Kubernetes' OpenAPI v1.32.0",
           "# (through @kubernetes/client-node 1.0.0's models): do not edit.", ""]
    for kind, model in ROOTS:
        out.append(f"root {kind} {struct_id(model)}")
    seen, queue, used = set(), [m for _, m in ROOTS], set()
    while queue:
        model = queue.pop(0)
        name, goname = struct_id(model), struct_name(model)
        if name in seen:
            continue
        seen.add(name)
        out += ["", f"struct {name}" + (f" {goname}" if goname != name else "")]
        for _, json_name, t, fmt in sorted(load(models_dir, model), key=lambda e: e[1]):
            refs = []
            typ = field_type(t, fmt, refs)
            key = f"{goname}.{json_name}"
            override, field_goname = GO_TYPES.get(key, (None, None))
            if key in GO_TYPES:
                used.add(key)
            if override:
                typ = override
            else:
                queue += refs
            out.append(f"{json_name} {typ}" + (f" {field_goname}" if field_goname else ""))
    unused = sorted(set(GO_TYPES) - used)
    if unused:
        sys.exit("GO_TYPES names fields the models do not have: " + ", ".join(unused))
    print("\n".join(out))


if __name__ == "__main__":
    main()
