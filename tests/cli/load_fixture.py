#!/usr/bin/env python3
"""Puts a snapshot of tests/data/analyze (a `kubectl get ... -A -o json`
List) into an empty cluster with the real kubectl, so that a field tool run
against that cluster reads the objects as the snapshot holds them.

    load_fixture.py SNAPSHOT.json

Run it against `gpuop cluster up --no-controllers`: with no scheduler,
kubelet or controller, nothing changes what is loaded. Objects are created
in dependency order (namespaces, RuntimeClasses, ConfigMaps, nodes,
DaemonSets, ControllerRevisions, pods, events) without the fields the
server owns (uid, resourceVersion, creationTimestamp, managedFields); the
server gives new uids, so owner references and events' involvedObject.uid
are rewritten to them. A pod's status is dropped on create, as the API
server drops it, and put back with `kubectl replace --subresource=status`;
so is a DaemonSet's. Exit status 0 when everything loaded, 1 otherwise
(kubectl's message on stderr)."""
import json
import subprocess
import sys

ORDER = ["Namespace", "RuntimeClass", "ConfigMap", "Node", "DaemonSet",
         "ControllerRevision", "Pod", "Event"]
SERVER_FIELDS = ["uid", "resourceVersion", "creationTimestamp", "managedFields",
                 "generation", "selfLink"]
STATUS_KINDS = {"Pod", "DaemonSet"}


def kubectl(args, obj=None):
    out = subprocess.run(["kubectl", "--request-timeout=20s"] + args,
                         input=json.dumps(obj) if obj is not None else None,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(1)
    return objects(out.stdout)


def objects(text):
    """kubectl -o json prints one document per object it wrote, back to
    back; a get of a collection prints one List."""
    found, dec, pos = [], json.JSONDecoder(), 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        obj, pos = dec.raw_decode(text, pos)
        found.extend(obj["items"] if obj.get("kind", "").endswith("List") else [obj])
    return found


def as_list(items):
    return {"apiVersion": "v1", "kind": "List", "items": items}


def main():
    items = json.load(open(sys.argv[1]))["items"]
    uids = {}
    namespaces = sorted({i["metadata"].get("namespace") for i in items} - {None, ""})
    have = {i["metadata"]["name"] for i in kubectl(["get", "namespaces", "-o", "json"])}
    for ns in namespaces:
        if ns not in have:
            kubectl(["create", "namespace", ns, "-o", "json"])
    statuses = []
    for kind in ORDER:
        batch = []
        for it in items:
            if it["kind"] != kind:
                continue
            if kind == "ConfigMap" and it["metadata"]["name"] == "kube-root-ca.crt":
                continue  # the server makes its own
            obj = json.loads(json.dumps(it))
            meta = obj["metadata"]
            old_uid = meta.get("uid")
            for f in SERVER_FIELDS:
                meta.pop(f, None)
            for ref in meta.get("ownerReferences", []):
                ref["uid"] = uids.get(ref.get("uid"), ref.get("uid"))
            if kind == "Event" and obj.get("involvedObject", {}).get("uid") in uids:
                obj["involvedObject"]["uid"] = uids[obj["involvedObject"]["uid"]]
            status = obj.pop("status", None) if kind in STATUS_KINDS else None
            batch.append((old_uid, obj, status))
        if not batch:
            continue
        made = kubectl(["create", "--validate=false", "-o", "json", "-f", "-"],
                       as_list([b[1] for b in batch]))
        for (old_uid, _, status), new in zip(batch, made):
            if old_uid:
                uids[old_uid] = new["metadata"]["uid"]
            if status:
                new["status"] = status
                statuses.append(new)
    if statuses:
        kubectl(["replace", "--validate=false", "--subresource=status", "-o", "json", "-f", "-"], as_list(statuses))


if __name__ == "__main__":
    main()
