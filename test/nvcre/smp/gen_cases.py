#!/usr/bin/env python3
"""Generate test/nvcre/smp/cases.jsonl: the strategic-merge-patch corpus that
test_smp_kubectl.sh runs through both gr_smp_apply() and
`kubectl patch --type strategic --dry-run=server`. Deterministic (fixed
seed); rerun after editing and commit the output. Each line:
{"id", "kind", "doc" (object without metadata.name/namespace), "patch"}."""
import json, random, copy, sys

rnd = random.Random(16)
cases = []

def add(kind, doc, patch, note):
    cases.append({"id": "c%03d" % (len(cases) + 1), "note": note, "kind": kind,
                  "doc": doc, "patch": patch})

def ctr(name, image="busybox:1", **kw):
    c = {"name": name, "image": image}
    c.update(kw)
    return c

def pt(containers, labels=None, ann=None, **spec):
    s = {"containers": containers}
    s.update(spec)
    d = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {},
         "template": {"metadata": {"labels": labels or {"app": "x"}}, "spec": s}}
    if ann:
        d["metadata"]["annotations"] = ann
    return d

def tp(spec_patch, meta=None):
    p = {"template": {"spec": spec_patch}}
    if meta:
        p["template"]["metadata"] = meta
    return p

names = ["a", "b", "c", "d"]
# 1. containers merged by name: change, add, delete, replace, reorder
for n in range(1, 4):
    base = [ctr(names[i]) for i in range(n)]
    for i in range(n):
        add("PodTemplate", pt(copy.deepcopy(base)), tp({"containers": [{"name": names[i], "image": "nginx:%d" % i}]}), "containers: change image of one")
        add("PodTemplate", pt(copy.deepcopy(base)), tp({"containers": [{"name": names[i], "$patch": "delete"}]}) if n > 1 else tp({"containers": [{"name": "z", "image": "z:1"}, {"name": names[i], "$patch": "delete"}]}), "containers: $patch delete")
    add("PodTemplate", pt(copy.deepcopy(base)), tp({"containers": [ctr("new")]}), "containers: add one")
    add("PodTemplate", pt(copy.deepcopy(base)), tp({"containers": [ctr("new"), {"name": names[0], "image": "x:2"}]}), "containers: add and change")
    add("PodTemplate", pt(copy.deepcopy(base)), tp({"containers": [ctr("only", "r:1"), {"$patch": "replace"}]}), "containers: $patch replace")
    order = list(reversed([{"name": names[i]} for i in range(n)]))
    add("PodTemplate", pt(copy.deepcopy(base)), tp({"$setElementOrder/containers": order}), "containers: $setElementOrder reverse")
    order2 = [{"name": "new"}] + [{"name": names[i]} for i in range(n)]
    add("PodTemplate", pt(copy.deepcopy(base)), tp({"$setElementOrder/containers": order2, "containers": [ctr("new")]}), "containers: $setElementOrder with new first")
    order3 = [{"name": names[i]} for i in range(n)] + [{"name": "new"}]
    add("PodTemplate", pt(copy.deepcopy(base)), tp({"$setElementOrder/containers": order3, "containers": [ctr("new")]}), "containers: $setElementOrder with new last")

# 2. env merged by name inside a container
envs = [{"name": "E%d" % i, "value": "v%d" % i} for i in range(4)]
for n in range(0, 4):
    base_env = copy.deepcopy(envs[:n])
    def base():
        c = ctr("a")
        if base_env:
            c["env"] = copy.deepcopy(base_env)
        return pt([c, ctr("b")])
    add("PodTemplate", base(), tp({"containers": [{"name": "a", "env": [{"name": "NEW", "value": "1"}]}]}), "env: add")
    for i in range(n):
        add("PodTemplate", base(), tp({"containers": [{"name": "a", "env": [{"name": "E%d" % i, "value": "changed"}]}]}), "env: change")
        add("PodTemplate", base(), tp({"containers": [{"name": "a", "env": [{"name": "E%d" % i, "$patch": "delete"}]}]}), "env: delete")
        add("PodTemplate", base(), tp({"containers": [{"name": "a", "env": [{"name": "E%d" % i, "value": None, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}]}), "env: value -> valueFrom with null")
    if n:
        add("PodTemplate", base(), tp({"containers": [{"name": "a", "env": [{"name": "R", "value": "r"}, {"$patch": "replace"}]}]}), "env: replace")
        add("PodTemplate", base(), tp({"containers": [{"name": "a", "$setElementOrder/env": [{"name": e["name"]} for e in reversed(base_env)]}]}), "env: $setElementOrder")
        add("PodTemplate", base(), tp({"containers": [{"name": "a", "env": None}]}), "env: null deletes")

# 3. ports (merge key containerPort), volumeMounts (mountPath), args/command replace
for n in range(1, 4):
    ports = [{"containerPort": 8000 + i, "name": "p%d" % i} for i in range(n)]
    add("PodTemplate", pt([ctr("a", ports=copy.deepcopy(ports))]), tp({"containers": [{"name": "a", "ports": [{"containerPort": 9000, "name": "new"}]}]}), "ports: add")
    add("PodTemplate", pt([ctr("a", ports=copy.deepcopy(ports))]), tp({"containers": [{"name": "a", "ports": [{"containerPort": 8000, "name": "renamed"}]}]}), "ports: change by containerPort")
    add("PodTemplate", pt([ctr("a", ports=copy.deepcopy(ports))]), tp({"containers": [{"name": "a", "ports": [{"containerPort": 8000 + n - 1, "$patch": "delete"}]}]}), "ports: delete")
    mounts = [{"name": "v%d" % i, "mountPath": "/m%d" % i} for i in range(n)]
    vols = [{"name": "v%d" % i, "emptyDir": {}} for i in range(n)]
    add("PodTemplate", pt([ctr("a", volumeMounts=copy.deepcopy(mounts))], volumes=copy.deepcopy(vols)), tp({"containers": [{"name": "a", "volumeMounts": [{"name": "v0", "mountPath": "/m0", "readOnly": True}]}]}), "volumeMounts: change by mountPath")
    add("PodTemplate", pt([ctr("a", volumeMounts=copy.deepcopy(mounts))], volumes=copy.deepcopy(vols)), tp({"containers": [{"name": "a", "volumeMounts": [{"name": "v0", "mountPath": "/new"}]}]}), "volumeMounts: add")
    add("PodTemplate", pt([ctr("a", args=["x%d" % i for i in range(n)], command=["sh"])]), tp({"containers": [{"name": "a", "args": ["y"]}]}), "args: replace")
    add("PodTemplate", pt([ctr("a", args=["x%d" % i for i in range(n)], command=["sh"])]), tp({"containers": [{"name": "a", "command": None}]}), "command: null")

# 4. volumes: merge by name, $retainKeys
for n in range(1, 4):
    vols = [{"name": "v%d" % i, "emptyDir": {}} for i in range(n)]
    add("PodTemplate", pt([ctr("a")], volumes=copy.deepcopy(vols)), tp({"volumes": [{"name": "v0", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}}]}), "volumes: $retainKeys switch source")
    add("PodTemplate", pt([ctr("a")], volumes=copy.deepcopy(vols)), tp({"volumes": [{"name": "v0", "emptyDir": {"medium": "Memory"}}]}), "volumes: merge emptyDir")
    add("PodTemplate", pt([ctr("a")], volumes=copy.deepcopy(vols)), tp({"volumes": [{"name": "nv", "hostPath": {"path": "/tmp"}}]}), "volumes: add")
    add("PodTemplate", pt([ctr("a")], volumes=copy.deepcopy(vols)), tp({"volumes": [{"name": "v%d" % (n - 1), "$patch": "delete"}]}), "volumes: delete")
    add("PodTemplate", pt([ctr("a")], volumes=copy.deepcopy(vols)), tp({"$setElementOrder/volumes": [{"name": v["name"]} for v in reversed(vols)]}), "volumes: order")

# 5. tolerations, imagePullSecrets, hostAliases, nodeSelector, affinity, misc scalars
tol = [{"key": "k%d" % i, "operator": "Exists", "effect": "NoSchedule"} for i in range(3)]
for n in range(0, 3):
    add("PodTemplate", pt([ctr("a")], tolerations=copy.deepcopy(tol[:n]) or None) if n else pt([ctr("a")]), tp({"tolerations": [{"operator": "Exists"}]}), "tolerations: replace (no strategy)")
    ips = [{"name": "s%d" % i} for i in range(n)]
    b = pt([ctr("a")], imagePullSecrets=copy.deepcopy(ips)) if n else pt([ctr("a")])
    add("PodTemplate", b, tp({"imagePullSecrets": [{"name": "new"}]}), "imagePullSecrets: add")
    if n:
        add("PodTemplate", copy.deepcopy(b), tp({"imagePullSecrets": [{"name": "s0", "$patch": "delete"}]}), "imagePullSecrets: delete")
    ha = [{"ip": "10.0.0.%d" % i, "hostnames": ["h%d" % i]} for i in range(n)]
    b = pt([ctr("a")], hostAliases=copy.deepcopy(ha)) if n else pt([ctr("a")])
    add("PodTemplate", b, tp({"hostAliases": [{"ip": "10.0.0.0", "hostnames": ["x"]}]}), "hostAliases: merge by ip")
for ns in [None, {"a": "1"}, {"a": "1", "b": "2"}]:
    b = pt([ctr("a")], nodeSelector=ns) if ns else pt([ctr("a")])
    add("PodTemplate", copy.deepcopy(b), tp({"nodeSelector": {"c": "3"}}), "nodeSelector: merge")
    add("PodTemplate", copy.deepcopy(b), tp({"nodeSelector": {"a": None}}), "nodeSelector: null member")
    add("PodTemplate", copy.deepcopy(b), tp({"nodeSelector": {"$patch": "replace", "z": "9"}}), "nodeSelector: $patch replace")
    add("PodTemplate", copy.deepcopy(b), tp({"nodeSelector": None}), "nodeSelector: null")
aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "In", "values": ["a"]}]}]}}}
add("PodTemplate", pt([ctr("a")], affinity=copy.deepcopy(aff)), tp({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "j", "operator": "Exists"}]}]}}}}), "affinity: terms replace")
add("PodTemplate", pt([ctr("a")], affinity=copy.deepcopy(aff)), tp({"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {"topologyKey": "t", "labelSelector": {"matchLabels": {"x": "y"}}}}]}}}), "affinity: add podAntiAffinity")
add("PodTemplate", pt([ctr("a")], affinity=copy.deepcopy(aff)), tp({"affinity": None}), "affinity: null")
add("PodTemplate", pt([ctr("a")], affinity=copy.deepcopy(aff)), tp({"affinity": {"nodeAffinity": {"$patch": "delete"}}}), "affinity: $patch delete map")
for v in [1, 30, None]:
    b = pt([ctr("a")], terminationGracePeriodSeconds=v) if v else pt([ctr("a")])
    add("PodTemplate", copy.deepcopy(b), tp({"terminationGracePeriodSeconds": 7}), "scalar: replace")
    add("PodTemplate", copy.deepcopy(b), tp({"terminationGracePeriodSeconds": None, "restartPolicy": "Never"}), "scalar: null + set")
    add("PodTemplate", copy.deepcopy(b), tp({"schedulerName": "kai-scheduler", "priorityClassName": None}), "scalar: add")

# 6. resources, securityContext, probes inside containers
for lim in [None, {"cpu": "1"}, {"cpu": "1", "memory": "1Gi"}]:
    c = ctr("a", resources={"limits": lim, "requests": {"cpu": "100m"}}) if lim else ctr("a")
    add("PodTemplate", pt([copy.deepcopy(c)]), tp({"containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}), "resources: add gpu limit")
    add("PodTemplate", pt([copy.deepcopy(c)]), tp({"containers": [{"name": "a", "resources": {"limits": {"cpu": None}}}]}), "resources: null limit")
    add("PodTemplate", pt([copy.deepcopy(c)]), tp({"containers": [{"name": "a", "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}}]}), "securityContext: add caps")
    add("PodTemplate", pt([copy.deepcopy(c)]), tp({"containers": [{"name": "a", "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 5}}]}), "probe: add")

# 7. template metadata labels/annotations, object metadata finalizers, ownerReferences
for lab in [{"app": "x"}, {"app": "x", "tier": "t"}]:
    add("PodTemplate", pt([ctr("a")], labels=copy.deepcopy(lab)), tp({}, meta={"labels": {"new": "1"}}), "labels: add")
    add("PodTemplate", pt([ctr("a")], labels=copy.deepcopy(lab)), tp({}, meta={"labels": {"app": None}}), "labels: null")
    add("PodTemplate", pt([ctr("a")], labels=copy.deepcopy(lab)), tp({}, meta={"labels": {"app": "y"}, "annotations": {"a/b": "c"}}), "labels: change + annotations")
    add("PodTemplate", pt([ctr("a")], labels=copy.deepcopy(lab)), tp({}, meta={"labels": {"$patch": "replace", "only": "1"}}), "labels: replace")
for fin in [[], ["a.io/x"], ["a.io/x", "b.io/y"]]:
    b = pt([ctr("a")])
    if fin:
        b["metadata"]["finalizers"] = list(fin)
    add("PodTemplate", copy.deepcopy(b), {"metadata": {"finalizers": ["c.io/z"]}}, "finalizers: add (primitive merge)")
    add("PodTemplate", copy.deepcopy(b), {"metadata": {"finalizers": ["a.io/x", "c.io/z"]}}, "finalizers: add + existing")
    if fin:
        add("PodTemplate", copy.deepcopy(b), {"metadata": {"$deleteFromPrimitiveList/finalizers": [fin[0]]}}, "finalizers: $deleteFromPrimitiveList")
        add("PodTemplate", copy.deepcopy(b), {"metadata": {"$setElementOrder/finalizers": list(reversed(fin))}}, "finalizers: $setElementOrder")
        add("PodTemplate", copy.deepcopy(b), {"metadata": {"$setElementOrder/finalizers": ["c.io/z"] + list(reversed(fin)), "finalizers": ["c.io/z"]}}, "finalizers: $setElementOrder with new")
    add("PodTemplate", copy.deepcopy(b), {"metadata": {"annotations": {"x": "1"}, "labels": {"l": "v"}}}, "metadata: annotations + labels")

# 8. ConfigMap data / binaryData / immutable
for n in range(0, 4):
    data = {"k%d" % i: "v%d" % i for i in range(n)}
    b = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}
    if data:
        b["data"] = data
    add("ConfigMap", copy.deepcopy(b), {"data": {"new": "x"}}, "configmap: add key")
    if n:
        add("ConfigMap", copy.deepcopy(b), {"data": {"k0": None}}, "configmap: null key")
        add("ConfigMap", copy.deepcopy(b), {"data": {"k0": "changed", "k1": None} if n > 1 else {"k0": "c"}}, "configmap: change")
        add("ConfigMap", copy.deepcopy(b), {"data": {"$patch": "replace", "r": "1"}}, "configmap: replace data")
        add("ConfigMap", copy.deepcopy(b), {"data": None, "binaryData": {"b": "aGVsbG8="}}, "configmap: data null, binaryData")
    add("ConfigMap", copy.deepcopy(b), {"metadata": {"labels": {"a": "b"}}, "data": {"z": "1"}}, "configmap: labels + data")

# 9. Service ports (merge key port), selector
for n in range(1, 4):
    ports = [{"name": "p%d" % i, "port": 80 + i, "protocol": "TCP"} for i in range(n)]
    b = {"apiVersion": "v1", "kind": "Service", "metadata": {}, "spec": {"ports": ports, "selector": {"app": "x"}}}
    add("Service", copy.deepcopy(b), {"spec": {"ports": [{"name": "p0", "port": 80, "targetPort": 8080}]}}, "service: change port by key")
    add("Service", copy.deepcopy(b), {"spec": {"ports": [{"name": "new", "port": 443}]}}, "service: add port")
    if n > 1:
        add("Service", copy.deepcopy(b), {"spec": {"ports": [{"port": 80, "$patch": "delete"}]}}, "service: delete port")
    add("Service", copy.deepcopy(b), {"spec": {"$setElementOrder/ports": [{"port": p["port"]} for p in reversed(ports)]}}, "service: order ports")
    add("Service", copy.deepcopy(b), {"spec": {"selector": {"app": None, "b": "c"}}}, "service: selector")
    add("Service", copy.deepcopy(b), {"spec": {"ports": [{"name": "only", "port": 9}, {"$patch": "replace"}]}}, "service: replace ports")

# 10. directives on members the original lacks
add("PodTemplate", pt([ctr("a")]), tp({"nodeSelector": {"$patch": "delete"}}), "new map: $patch delete")
add("PodTemplate", pt([ctr("a")]), tp({"affinity": {"nodeAffinity": {"$patch": "replace", "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Exists"}]}]}}}}), "new nested map: $patch replace")
add("PodTemplate", pt([ctr("a")]), tp({"securityContext": {"runAsUser": 5, "$patch": "replace"}}), "defaulted map: $patch replace")
add("PodTemplate", pt([ctr("a")]), tp({"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "$patch": "delete"}]}]}), "new list: delete item dropped")
add("PodTemplate", pt([ctr("a")]), tp({"containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": None}}}]}), "new map: nulls dropped")

# 11. randomized combinations of the above ops on multi-container templates
ops = []
for k in range(60):
    cs = [ctr(names[i], env=[{"name": "E%d" % j, "value": str(j)} for j in range(rnd.randint(0, 3))] or None)
          for i in range(rnd.randint(1, 3))]
    for c in cs:
        if c.get("env") is None:
            c.pop("env", None)
    base = pt(cs, ann={"x": "y"} if rnd.random() < 0.5 else None)
    pc = []
    for c in cs:
        r = rnd.random()
        if r < 0.3:
            pc.append({"name": c["name"], "image": "img:%d" % k})
        elif r < 0.5:
            pc.append({"name": c["name"], "env": [{"name": "E0", "value": "p%d" % k}, {"name": "N%d" % k, "value": "n"}]})
        elif r < 0.6 and len(cs) > 1:
            pc.append({"name": c["name"], "$patch": "delete"})
        elif r < 0.7:
            pc.append({"name": c["name"], "env": [{"name": "E1", "$patch": "delete"}]})
    if rnd.random() < 0.4:
        pc.append(ctr("n%d" % k))
    patch = {"template": {"spec": {"containers": pc}}} if pc else {"template": {"spec": {"activeDeadlineSeconds": k + 1}}}
    if rnd.random() < 0.3:
        patch.setdefault("metadata", {})["annotations"] = {"x": None, "k%d" % k: "v"}
    if rnd.random() < 0.3:
        patch["template"]["spec"]["nodeSelector"] = {"n": str(k)}
    if rnd.random() < 0.25 and pc:
        keep = [{"name": c["name"]} for c in cs if not any(p.get("name") == c["name"] and p.get("$patch") == "delete" for p in pc)]
        new = [{"name": p["name"]} for p in pc if not any(c["name"] == p.get("name") for c in cs)]
        order = keep + new
        rnd.shuffle(order)
        # the order list must list the patch items in patch order
        patch_names = [p["name"] for p in pc if "$patch" not in p]
        order_names = [o["name"] for o in order]
        pos = [order_names.index(n) for n in patch_names]
        if pos == sorted(pos):
            patch["template"]["spec"]["$setElementOrder/containers"] = order
    add("PodTemplate", base, patch, "random combination")

for c in cases:
    sys.stdout.write(json.dumps(c, sort_keys=True) + "\n")
sys.stderr.write("%d cases\n" % len(cases))
