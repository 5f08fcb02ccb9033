// cel_diff_gen.js — differential test generator for gr_cel.
//
// Generates random CEL expressions over JSON data shaped like gpuready's four
// call sites (docs/cel.md): gang discovery (`podGroup`), the Job node-health
// monitor (`node`), Workflow override matchers (`platform`,
// `gpuArchitecture`, `workloadKind`, `topologyMode`, `domainCount`) and
// performance thresholds (`value`, a double). Each expression is evaluated by
// the reference evaluator @bufbuild/cel (with its strings extension, the
// Kubernetes string functions); the cases and the reference results are
// written as JSON for test_cel_differential.c, which evaluates them with
// gr_cel and fails on any disagreement (value, type, or error/no-error).
//
// Deterministic: a seeded PRNG drives everything; the same seed and count give
// the same file.
//
// Usage: node cel_diff_gen.js <node_modules dir> <seed> <count> <out.json>
//
// Output: {"seed": n, "cases": [CASE...], "unrepresentable": n}
//   CASE = {"site": "podGroup"|"node"|"override"|"threshold", "expr": str,
//           "vars": {name: JSON data}, "expect": {"value": VALUE} | {"error": str}}
// VALUE is the conformance format of ../shared/conformance/cel/README.md
// (doubles as strings, see cel_spec_to_json.js) plus two local kinds:
// {"duration_ns": "123"} and {"timestamp": {"seconds": "1", "nanos": 5}}.
// The "vars" data is JSON written so that integers have no fraction and
// doubles always have one ("4" is an int, "4.0" a double), exactly the JSON
// number mapping gr_cel documents.
"use strict";
const path = require("path");

const [nodeModules, seedArg, countArg, outFile] = process.argv.slice(2);
const nm = path.resolve(nodeModules);
const load = (m) => require(require.resolve(m, { paths: [path.dirname(nm)] }));
const cel = load("@bufbuild/cel");
const { strings } = load("@bufbuild/cel/ext");
const fs = require("fs");

// ---- deterministic PRNG (mulberry32) ----
let state = Number(seedArg) >>> 0;
function rnd() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const ri = (n) => Math.floor(rnd() * n);
const pick = (a) => a[ri(a.length)];
const chance = (p) => rnd() < p;

// ---- data: ints are BigInt, doubles are numbers (JSON "4" vs "4.0") ----
function toJson(v) {
  if (v === null) return "null";
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error("non-finite double in data");
    if (Object.is(v, -0)) return "-0.0";
    const s = String(v);
    return /[.eE]/.test(s) ? s : s + ".0";
  }
  if (typeof v === "string" || typeof v === "boolean") return JSON.stringify(v);
  if (Array.isArray(v)) return "[" + v.map(toJson).join(",") + "]";
  return "{" + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ":" + toJson(x)).join(",") + "}";
}

const WORDS = ["gpu", "Ready", "True", "False", "H100", "A100", "hopper", "ampere", "gke", "eks",
  "nvidia.com/gpu", "NoSchedule", "a,b,c", " pad ", "Ünïcödé", "", "worker-1", "team-a", "x"];
const GPU_PRODUCTS = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-40GB", "Tesla-T4", "NVIDIA-GB200"];

function labels() {
  const l = {};
  if (chance(0.8)) l["nvidia.com/gpu.product"] = pick(GPU_PRODUCTS);
  if (chance(0.6)) l["nvidia.com/gpu.count"] = String(pick([1, 2, 4, 8]));
  if (chance(0.5)) l["topology.kubernetes.io/zone"] = pick(["us-east1-b", "eu-west4-a"]);
  if (chance(0.5)) l.team = pick(["team-a", "team-b", "ml"]);
  if (chance(0.3)) l.app = pick(["trainer", "Ready", ""]);
  return l;
}

function podGroup() {
  const pg = {
    apiVersion: "scheduling.x-k8s.io/v1alpha1",
    kind: "PodGroup",
    metadata: { name: pick(["job-a", "train-123", "pg"]), namespace: pick(["default", "ml"]), labels: labels() },
    spec: {},
    status: {},
  };
  if (chance(0.1)) pg.metadata.annotations = { "gpuready.io/min": pick(["2", "x", "8"]) };
  if (chance(0.9)) pg.spec.minMember = chance(0.85) ? BigInt(ri(16)) : pick([4.0, 2.5, 0.5, 8.0]);
  if (chance(0.5)) pg.spec.minResources = { cpu: pick(["4", "500m"]), "nvidia.com/gpu": String(ri(9)) };
  if (chance(0.4)) pg.spec.minTaskMember = { worker: BigInt(ri(8)), launcher: 1n };
  if (chance(0.4)) pg.spec.scheduleTimeoutSeconds = BigInt(pick([0, 60, 300]));
  if (chance(0.3)) pg.spec.queue = pick(["default", "gpu-queue"]);
  pg.status.phase = pick(["Pending", "Running", "Inqueue", "Unknown"]);
  if (chance(0.6)) pg.status.running = BigInt(ri(16));
  if (chance(0.3)) pg.status.succeeded = BigInt(ri(4));
  if (chance(0.2)) pg.status.failed = BigInt(ri(3));
  return pg;
}

function node() {
  const n = {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: pick(["gpu-node-1", "node-a", "worker-7"]), labels: labels() },
    spec: {},
    status: { conditions: [], capacity: {}, allocatable: {} },
  };
  if (chance(0.6)) n.spec.unschedulable = chance(0.5);
  if (chance(0.5)) {
    n.spec.taints = [];
    for (let i = ri(3); i >= 0; i--)
      n.spec.taints.push({ key: pick(["nvidia.com/gpu", "node.kubernetes.io/unreachable", "x"]), effect: pick(["NoSchedule", "NoExecute", "PreferNoSchedule"]), ...(chance(0.5) ? { value: pick(["present", "true"]) } : {}) });
  }
  for (const t of ["Ready", "MemoryPressure", "DiskPressure", "GpuHealthy"]) {
    if (chance(0.8))
      n.status.conditions.push({ type: t, status: pick(["True", "False", "Unknown"]), reason: pick(["KubeletReady", "XidError", ""]), ...(chance(0.3) ? { lastTransitionTime: "2024-05-01T12:00:00Z" } : {}) });
  }
  n.status.capacity = { cpu: pick(["64", "96"]), memory: "1056Gi", "nvidia.com/gpu": String(pick([0, 4, 8])) };
  n.status.allocatable = { cpu: "63500m", "nvidia.com/gpu": String(pick([0, 4, 7, 8])) };
  if (chance(0.3)) n.status.nodeInfo = { kubeletVersion: pick(["v1.30.2", "v1.29.0"]), architecture: pick(["amd64", "arm64"]) };
  return n;
}

function overrides() {
  return {
    platform: pick(["gke", "eks", "aks", "oci", "dgx-cloud", "", "GKE"]),
    gpuArchitecture: pick(["hopper", "ampere", "blackwell", "Hopper"]),
    workloadKind: pick(["Job", "JobSet", "PyTorchJob", "MPIJob"]),
    topologyMode: pick(["none", "rack", "nvlink-domain", "block"]),
    domainCount: BigInt(pick([0, 1, 2, 4, 8, 18, 72])),
  };
}

function threshold() {
  return { value: pick([900, 899.5, 0, -1.5, 1e6, 0.001, 123.25, 1024, 2.5e-7, 9007199254740993]) };
}

// ---- expression generator ----
// Each site offers typed "atoms" (paths into its data, possibly absent).
const SITES = {
  podGroup: {
    data: () => ({ podGroup: podGroup() }),
    int: ["podGroup.spec.minMember", "podGroup.status.running", "podGroup.status.succeeded", "podGroup.spec.scheduleTimeoutSeconds", "podGroup.spec.minTaskMember.worker", "podGroup.spec.minTaskMember['launcher']"],
    dbl: ["podGroup.spec.minMember"],
    str: ["podGroup.metadata.name", "podGroup.metadata.namespace", "podGroup.status.phase", "podGroup.spec.queue", "podGroup.metadata.labels['nvidia.com/gpu.product']", "podGroup.metadata.labels.team", "podGroup.spec.minResources['nvidia.com/gpu']", "podGroup.metadata.annotations['gpuready.io/min']", "podGroup.kind"],
    map: ["podGroup.metadata.labels", "podGroup.spec.minResources", "podGroup.spec.minTaskMember", "podGroup.spec", "podGroup.status"],
    list: [],
    sel: ["podGroup.spec.minMember", "podGroup.spec.queue", "podGroup.status.running", "podGroup.metadata.annotations", "podGroup.spec.minTaskMember", "podGroup.status.failed"],
    bool: [],
  },
  node: {
    data: () => ({ node: node() }),
    int: ["size(node.status.conditions)", "size(node.metadata.labels)"],
    dbl: [],
    str: ["node.metadata.name", "node.status.capacity['nvidia.com/gpu']", "node.status.allocatable['nvidia.com/gpu']", "node.metadata.labels['nvidia.com/gpu.product']", "node.status.conditions[0].type", "node.status.conditions[0].status", "node.spec.taints[0].key", "node.status.nodeInfo.kubeletVersion", "node.status.capacity.cpu"],
    map: ["node.metadata.labels", "node.status.capacity", "node.status.allocatable", "node.spec", "node.status.conditions[0]"],
    list: ["node.status.conditions", "node.spec.taints"],
    sel: ["node.spec.unschedulable", "node.spec.taints", "node.status.nodeInfo", "node.metadata.labels.team", "node.status.conditions"],
    bool: ["node.spec.unschedulable"],
  },
  override: {
    data: overrides,
    int: ["domainCount"],
    dbl: [],
    str: ["platform", "gpuArchitecture", "workloadKind", "topologyMode"],
    map: [],
    list: [],
    sel: [],
    bool: [],
  },
  threshold: {
    data: threshold,
    int: [],
    dbl: ["value"],
    str: [],
    map: [],
    list: [],
    sel: [],
    bool: [],
  },
};

const REGEXES = ["'^gpu'", "'[0-9]+$'", "'H100|A100'", "'^(a|b)c*$'", "'\\\\d'", "'(?i)ready'", "'^$'", "'.'", "'^[a-z-]+$'", "'Ü'"];

function strLit() {
  const w = pick(WORDS);
  return chance(0.5) ? JSON.stringify(w) : "'" + w.replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'";
}

function nonEmptyLit() {
  let l;
  do l = strLit();
  while (l.length === 2);
  return l;
}

function tsExpr() {
  const lit = pick(["'2024-05-01T12:00:00Z'", "'2024-02-29T23:59:59.5+01:00'", "'2001-09-09T01:46:40Z'", "'2023-12-31T23:00:00-08:00'", "'9999-12-31T12:00:00Z'"]);
  const base = S === SITES.node && chance(0.5) ? "timestamp(node.status.conditions[0].lastTransitionTime)" : `timestamp(${lit})`;
  return chance(0.3) ? `(${base} ${pick(["+", "-"])} duration(${pick(["'1h'", "'36h'", "'-15m'", "'2s'"])}))` : base;
}

function intLit() {
  return pick(["0", "1", "2", "-1", "8", "16", "100", "900", "9223372036854775807", "0x10", String(ri(50))]);
}

function dblLit() {
  return pick(["0.0", "1.5", "-2.5", "900.0", "899.5", "1e3", "0.1", "1e300", "-0.0", "3.0", ".5", "1e-7"]);
}

// Known deviations of the reference @bufbuild/cel 0.6.1 from the CEL spec and
// cel-go (which gr_cel follows); the generator does not produce them:
//  * string to number conversions use JavaScript semantics: double('abc') is
//    NaN, double('') and int('') are 0, int(' 1') and int('0x1') are 1 (cel-go:
//    errors). Conversions here get well-formed or clearly invalid literals.
//  * string(double) formats like JavaScript (string(1e6) == '1000000'), not
//    like cel-go's %g ('1e+06', which the conformance suite and gr_cel use).
//  * has(x.f) on an int/string/list operand is false (cel-go: an error);
//    has() is only applied to maps here.
//  * the global overload matches(s, re) is missing.
//  * uint division of a dividend >= 2^63 fails with "int overflow";
//    uint division gets small dividends.
//  * `--9223372036854775808` is the out-of-range int 2^63 instead of an
//    error, and -(-(x)) is x even for x = int64 min (cel-go: an overflow);
//    negation is generated as -(x) and int64 min is not a literal here.
//  * split(sep, n) with n > 0 truncates like JavaScript instead of leaving
//    the rest in the last element (Go's strings.SplitN); replace(a, b, -1)
//    replaces nothing instead of everything. Those counts are not generated.
//  * timestamp calendar accessors are wrong on some dates (2024-04-30 has
//    getDayOfMonth() 0, 1970-01-01T00:15Z has getDayOfYear() 1, the epoch
//    has getDayOfWeek() 5; cel-go: 29, 0 and 4) and past 9999-12-31 in a
//    time zone; getDayOfMonth/getDate/getDayOfYear are not generated and no
//    timestamp is near the epoch.
//  * subtracting a sub-second duration from a timestamp normalises the
//    nanoseconds wrongly ((T12:00Z - 1ns).getHours() is 12); durations
//    added to timestamps here are whole seconds.
//  * int/uint versus double comparisons are exact, where cel-go (and gr_cel)
//    convert the integer to double: 18446744073709551615u ==
//    double(18446744073709551615u) is true in cel-go. Mixed-type comparisons
//    here use values below 2^53.
//  * 'abc'.replace('', x) does not insert x around every code point as Go's
//    strings.Replace (cel-go, gr_cel) does; replace() gets non-empty needles.
let S; // current site
let locals = []; // comprehension variables in scope: {name, type}

function gen(type, d) {
  if (d <= 0 || chance(0.2)) return leaf(type);
  switch (type) {
    case "bool":
      return genBool(d);
    case "int":
      return genInt(d);
    case "dbl":
      return genDbl(d);
    case "str":
      return genStr(d);
    case "list":
      return genList(d);
    case "map":
      return leaf("map");
    case "any":
      return gen(pick(["bool", "int", "dbl", "str", "list", "uint"]), d);
    case "uint":
      return pick([() => pick(["0u", "1u", "18446744073709551615u", "42u"]), () => `uint(${gen("int", d - 1)})`, () => `${gen("uint", d - 1)} ${pick(["+", "-", "*", "%"])} ${gen("uint", d - 1)}`, () => `${pick(["7u", "100u", "0u"])} / ${gen("uint", d - 1)}`])();
    default:
      throw new Error("type " + type);
  }
}

function leaf(type) {
  const loc = locals.filter((l) => l.type === type);
  if (loc.length && chance(0.5)) return pick(loc).name;
  const atoms = S[type] || [];
  if (atoms.length && chance(0.7)) return pick(atoms);
  switch (type) {
    case "bool":
      return pick(["true", "false"]);
    case "int":
      return intLit();
    case "dbl":
      return dblLit();
    case "str":
      return strLit();
    case "uint":
      return pick(["0u", "1u", "7u", "18446744073709551615u"]);
    case "list":
      return pick(["[]", "[1, 2, 3]", "['a', 'b']", "[1, 2.0, 3u]", "['gke', 'eks']", "[[1], [2, 3]]"]);
    case "map":
      return pick(["{}", "{'a': 1, 'b': 2}", "{1: 'x', 2u: 'y', true: 'z'}", "{'gke': 4, 'eks': 8}"]);
    default: // "any"
      return chance(0.1) ? "null" : leaf(pick(["bool", "int", "dbl", "str", "uint", "list", "map"]));
  }
}

// Mixed-type numeric comparisons use values below 2^53 (see the deviations).
function smallNum() {
  const t = pick(["int", "dbl", "uint"]);
  const atoms = S[t] || [];
  if (atoms.length && chance(0.5)) return pick(atoms);
  if (t === "int") return pick(["0", "1", "-1", "8", "900", "4503599627370496"]);
  if (t === "uint") return pick(["0u", "1u", "8u", "900u"]);
  return pick(["0.0", "-0.0", "1.5", "900.0", "899.5", "8.0", "1e300", "-1e-7"]);
}

function genBool(d) {
  const k = d - 1;
  const f = pick([
    () => {
      const t = pick(["int", "dbl", "uint"]);
      return `${gen(t, k)} ${pick(["==", "!=", "<", "<=", ">", ">="])} ${gen(t, k)}`;
    },
    () => `${smallNum()} ${pick(["==", "!=", "<", "<=", ">", ">="])} ${smallNum()}`,
    () => `${gen("str", k)} ${pick(["==", "!=", "<", ">="])} ${gen("str", k)}`,
    () => `!${gen("bool", k)}`,
    () => `!!(${gen("any", k)})`,
    () => `${gen("bool", k)} && ${gen("bool", k)}`,
    () => `${gen("bool", k)} || ${gen("bool", k)}`,
    () => `(${gen("bool", k)} ? ${gen("bool", k)} : ${gen("bool", k)})`,
    () => (S.sel.length ? `has(${pick(S.sel)})` : `has({'a': 1}.a)`),
    () => `${gen("str", k)}.${pick(["startsWith", "endsWith", "contains"])}(${gen("str", k)})`,
    () => `${gen("str", k)}.matches(${pick(REGEXES)})`,
    // (the global form matches(s, re) is standard CEL, but @bufbuild/cel 0.6.1
    // lacks that overload; test_cel.c covers it)
    () => `${gen("str", k)} in ${gen("list", k)}`,
    () => `${gen("int", k)} in ${gen("list", k)}`,
    () => `${gen("str", k)} in ${gen("map", k)}`,
    () => comp(pick(["all", "exists", "exists_one"]), "bool", k),
    () => `size(${gen(pick(["str", "list", "map"]), k)}) ${pick(["==", ">", "<="])} ${gen("int", k)}`,
    () => `${gen("bool", k)} == ${gen("bool", k)}`,
    () => `${gen("any", k)} == ${gen("any", k)}`,
    () => `bool(${pick(["'true'", "'false'", "'1'", "'t'", "'TRUE'", "'yes'"])})`,
    () => (S.bool.length ? `${pick(S.bool)} == ${pick(["true", "false"])}` : "true"),
    () => `${tsExpr()} ${pick(["<", "<=", "==", "!=", ">"])} ${tsExpr()}`,
    () => `${tsExpr()} - ${tsExpr()} ${pick(["<", ">=", "=="])} duration(${pick(["'1h'", "'90m'", "'0s'", "'-1.5s'", "'720h'"])})`,
    () => `type(${gen("any", k)}) == ${pick(["int", "uint", "double", "string", "bool", "list", "map", "null_type"])}`,
  ]);
  return f();
}

function genInt(d) {
  const k = d - 1;
  return pick([
    () => `${gen("int", k)} ${pick(["+", "-", "*", "/", "%"])} ${gen("int", k)}`,
    () => `-(${gen("int", k)})`,
    () => `--${pick(S.int.length ? S.int : ["(3)"])}`,
    () => `size(${gen(pick(["str", "list", "map"]), k)})`,
    () => `${gen("str", k)}.size()`,
    () => `int(${gen(pick(["dbl", "uint"]), k)})`,
    () => `int(${pick(["'42'", "'-7'", "'abc'", "'9223372036854775808'", "'1.5'", "'-0'"])})`,
    () => `(${gen("bool", k)} ? ${gen("int", k)} : ${gen("int", k)})`,
    () => `${gen("str", k)}.${pick(["indexOf", "lastIndexOf"])}(${gen("str", k)})`,
    () => `${gen("list", k)}.filter(x, ${withLocal("x", "any", () => gen("bool", k))}).size()`,
    () => `${tsExpr()}.${pick(["getFullYear", "getMonth", "getDayOfWeek", "getHours", "getMinutes", "getSeconds", "getMilliseconds"])}(${pick(["", "", "'UTC'", "'+05:30'", "'America/Los_Angeles'", "'Europe/Berlin'"])})`,
    () => `duration(${pick(["'1h30m'", "'-90s'", "'1.5s'", "'300ms'", "'2h'"])}).${pick(["getHours", "getMinutes", "getSeconds", "getMilliseconds"])}()`,
    () => `int(${tsExpr()})`,
    () => `[${gen("int", k)}, ${gen("int", k)}][${pick(["0", "1", "2", "-1", "1u", "1.0"])}]`,
  ])();
}

function genDbl(d) {
  const k = d - 1;
  return pick([
    () => `${gen("dbl", k)} ${pick(["+", "-", "*", "/"])} ${gen("dbl", k)}`,
    () => `-(${gen("dbl", k)})`,
    () => `double(${gen(pick(["int", "uint"]), k)})`,
    () => `double(${pick(["'1.5'", "'1e3'", "'NaN'", "'-Infinity'", "'-0.25'", "'2.5e-3'"])})`,
    () => `(${gen("bool", k)} ? ${gen("dbl", k)} : ${gen("dbl", k)})`,
  ])();
}

function genStr(d) {
  const k = d - 1;
  return pick([
    () => `${gen("str", k)} + ${gen("str", k)}`,
    () => `${gen("str", k)}.${pick(["lowerAscii", "upperAscii", "trim"])}()`,
    () => `${gen("str", k)}.replace(${nonEmptyLit()}, ${gen("str", k)})`,
    () => `${gen("str", k)}.replace(${nonEmptyLit()}, ${strLit()}, ${pick(["0", "1", "2"])})`,
    () => `${gen("str", k)}.substring(${pick(["0", "1", "2", "-1", "5", "100"])})`,
    () => `${gen("str", k)}.substring(${pick(["0", "1", "3"])}, ${pick(["1", "2", "4", "0"])})`,
    () => `${gen("str", k)}.charAt(${pick(["0", "1", "3", "-1", "100"])})`,
    () => `string(${gen(pick(["int", "uint", "bool", "str"]), k)})`,
    () => `${gen("list", k)}.join(${pick(["", "','", "'-'"])})`,
    () => `${gen("str", k)}.split(${pick(["','", "'-'", "''", "'.'"])})[0]`,
    () => `(${gen("bool", k)} ? ${gen("str", k)} : ${gen("str", k)})`,
    () => `${gen("map", k)}[${gen("str", k)}]`,
  ])();
}

function genList(d) {
  const k = d - 1;
  return pick([
    () => `[${gen("any", k)}, ${gen("any", k)}]`,
    () => `${gen("list", k)} + ${gen("list", k)}`,
    () => `${gen("str", k)}.split(${pick(["','", "'-'", "'.'", "''"])})`,
    () => `${gen("str", k)}.split(${pick(["','", "'-'"])}, ${pick(["0", "-1"])})`,
    () => comp("map", "list", k),
    () => comp("filter", "list", k),
    () => `${gen("map", k)}.map(k, k)`,
  ])();
}

function withLocal(name, type, f) {
  locals.push({ name, type });
  try {
    return f();
  } finally {
    locals.pop();
  }
}

function comp(macro, _result, k) {
  const range = chance(0.3) ? gen("map", k) : gen("list", k);
  const v = pick(["x", "e", "item"]);
  const elemType = pick(["any", "str", "int", "map"]);
  const body = withLocal(v, elemType, () => {
    if (macro === "map") return chance(0.3) ? `${gen("bool", k)}, ${gen("any", k)}` : gen("any", k);
    if (elemType === "map" && chance(0.6))
      return pick([`${v}.status == 'True'`, `${v}.type == 'Ready' && ${v}.status != 'True'`, `${v}.effect == 'NoSchedule'`, `${v}.key.startsWith('nvidia')`]);
    return gen("bool", k);
  });
  return `${range}.${macro}(${v}, ${body})`;
}

// ---- reference evaluation and result encoding ----
function dbl(d) {
  if (Object.is(d, -0)) return "-0.0";
  return String(d);
}

function celValue(v) {
  if (v === null) return { null: null };
  if (typeof v === "boolean") return { bool: v };
  if (typeof v === "bigint") return { int64: v.toString() };
  if (typeof v === "number") return { double: dbl(v) };
  if (typeof v === "string") return { string: v };
  if (v instanceof Uint8Array) return { bytes_b64: Buffer.from(v).toString("base64") };
  if (cel.isCelUint(v)) return { uint64: v.value.toString() };
  if (cel.isCelList(v)) return { list: Array.from(v, celValue) };
  if (cel.isCelMap(v)) return { map: Array.from(v.entries(), ([key, x]) => ({ key: celValue(key), value: celValue(x) })) };
  if (cel.isCelType(v)) return { type: v.name };
  const m = v && v.message;
  if (m && m.$typeName === "google.protobuf.Duration") return { duration_ns: (BigInt(m.seconds) * 1000000000n + BigInt(m.nanos)).toString() };
  if (m && m.$typeName === "google.protobuf.Timestamp") return { timestamp: { seconds: BigInt(m.seconds).toString(), nanos: m.nanos } };
  throw new Error("unrepresentable result");
}

const funcs = strings;
const count = Number(countArg);
const cases = [];
let unrepresentable = 0;
const siteNames = Object.keys(SITES);
for (let i = 0; cases.length < count && i < count * 4; i++) {
  const site = siteNames[i % siteNames.length];
  S = SITES[site];
  locals = [];
  const vars = S.data();
  const type = chance(0.7) ? "bool" : pick(["int", "dbl", "str", "list", "any", "uint"]);
  const expr = gen(type, 1 + ri(4));
  const r = cel.run(expr, vars, { funcs });
  let expect;
  if (cel.isCelError(r)) {
    expect = { error: String(r.message) };
  } else {
    try {
      expect = { value: celValue(r) };
    } catch (e) {
      unrepresentable++;
      continue;
    }
  }
  cases.push({ site, expr, vars, expect });
}

// Serialise by hand: data ints stay integral, doubles keep a fraction.
const parts = cases.map((c) =>
  "{" +
  `"site":${JSON.stringify(c.site)},"expr":${JSON.stringify(c.expr)},` +
  `"vars":${toJson(c.vars)},"expect":${JSON.stringify(c.expect)}` +
  "}",
);
fs.writeFileSync(outFile, `{"seed":${Number(seedArg)},"unrepresentable":${unrepresentable},"cases":[\n${parts.join(",\n")}\n]}\n`);
