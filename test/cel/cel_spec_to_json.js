// cel_spec_to_json.js — converts the complete cel-spec conformance suite that
// ships in the npm package @bufbuild/cel-spec (test/node) into the JSON format
// of ../shared/conformance/cel/README.md, one <file>.json per suite, so that
// test_cel_conformance can run every file, not only the shared subset.
//
// Usage: node cel_spec_to_json.js <node_modules dir> <output dir>
"use strict";
const fs = require("fs");
const path = require("path");

const [nodeModules, outDir] = process.argv.slice(2).map((p) => path.resolve(p));
const { tests } = require(path.join(nodeModules, "@bufbuild/cel-spec/dist/cjs/testdata/conformance.js"));

// Doubles are written as strings in their shortest round-trip form ("1.5",
// "9223372036854776000", "-0.0", "NaN", "Infinity"): a JSON number without a
// fraction would read back as an (overflowing) integer, and JSON.stringify
// drops the sign of -0. The runner parses them with strtod.
function dbl(d) {
  if (typeof d !== "number") return String(d);
  if (Object.is(d, -0)) return "-0.0";
  return String(d);
}

function value(v) {
  if (v === undefined || v === null) return { unconverted: "missing" };
  if ("nullValue" in v) return { null: null };
  if ("boolValue" in v) return { bool: v.boolValue };
  if ("int64Value" in v) return { int64: String(v.int64Value) };
  if ("uint64Value" in v) return { uint64: String(v.uint64Value) };
  if ("doubleValue" in v) return { double: dbl(v.doubleValue) };
  if ("stringValue" in v) return { string: v.stringValue };
  if ("bytesValue" in v) return { bytes_b64: v.bytesValue };
  if ("listValue" in v) return { list: (v.listValue.values || []).map(value) };
  if ("mapValue" in v)
    return { map: (v.mapValue.entries || []).map((e) => ({ key: value(e.key), value: value(e.value) })) };
  if ("typeValue" in v) return { type: v.typeValue };
  if ("enumValue" in v) return { enum: v.enumValue };
  if ("objectValue" in v) return { object: { type_url: v.objectValue["@type"] || "", text: JSON.stringify(v.objectValue) } };
  return { unconverted: JSON.stringify(v) };
}

function decl(d) {
  // proto JSON (camelCase) → the README's snake_case shape, for what the runner reads
  const out = { name: d.name };
  if (d.ident) out.ident = { type: type(d.ident.type || {}) };
  if (d.function) out.function = {};
  return out;
}

function type(t) {
  if (t.primitive) return { primitive: t.primitive };
  if (t.listType) return { list_type: {} };
  if (t.mapType) return { map_type: {} };
  if (t.messageType) return { message_type: t.messageType };
  return { dyn: {} };
}

function test(o) {
  const t = {
    name: o.name || o.expr,
    description: o.description || "",
    expr: o.expr,
    disable_check: !!o.disableCheck,
    container: o.container || "",
    bindings: {},
  };
  if (o.disableMacros) t.disable_macros = true;
  if (o.checkOnly) t.check_only = true;
  if (o.typeEnv) t.type_env = o.typeEnv.map(decl);
  for (const [k, b] of Object.entries(o.bindings || {})) t.bindings[k] = b.value ? value(b.value) : { unconverted: "non-value binding" };
  if (o.value) t.expect = { value: value(o.value) };
  else if (o.evalError) t.expect = { eval_error: (o.evalError.errors || []).map((e) => e.message || "") };
  else if (o.anyEvalErrors) t.expect = { any_eval_errors: [] };
  else if (o.unknown) t.expect = { unknown: [] };
  else if (o.anyUnknowns) t.expect = { any_unknowns: [] };
  else if (o.typedResult) t.expect = { typed_result: {} };
  else t.expect = { value: { bool: true } };
  return t;
}

fs.mkdirSync(outDir, { recursive: true });
for (const file of tests.suites || []) {
  const out = { name: file.name, description: "", sections: [] };
  for (const sec of file.suites || []) {
    out.sections.push({ name: sec.name, description: "", tests: (sec.tests || []).map((x) => test(x.original)) });
  }
  if (file.tests && file.tests.length) out.sections.push({ name: "", description: "", tests: file.tests.map((x) => test(x.original)) });
  fs.writeFileSync(path.join(outDir, file.name + ".json"), JSON.stringify(out));
}
