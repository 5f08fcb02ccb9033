#!/usr/bin/env python3
"""k8s-jsontags — the JSON facts of Kubernetes API types, from their Go struct tags.

Used by scripts/fetch-k8s-protos. Arguments: pairs of (Go import path, package
directory). For every field of every struct that carries a `protobuf:"..."`
tag, prints one tab-separated line:

    <proto message full name> <field number> <JSON name> <flags>

The proto message full name is the Go import path with '/' replaced by '.'
plus the type name (go-to-protobuf's rule; the generated.proto files declare
exactly these packages). Flags (comma-separated, '-' when none), from the Go
field type and its `json:"..."` tag, i.e. what encoding/json does:
  inline     json:",inline": the message's fields are written into the parent
  omitempty  json:",omitempty"
  ptr        the Go field is a pointer (nil means absent; a set zero is written)
  slice      the Go field is a slice (nil is written as null without omitempty)
  map        the Go field is a map
  bytes      the Go field is []byte (base64 in JSON)
  skip       json:"-": not part of the JSON form
"""
import os
import re
import sys

FIELD = re.compile(r'^\s*(?:(\w+)\s+)?([\*\[\]\w\.]+(?:\[[\w\.]+\][\*\[\]\w\.]+)?)\s+`([^`]*)`')
TAG = re.compile(r'(\w+):"([^"]*)"')


def main(argv):
    if len(argv) % 2:
        sys.exit("usage: k8s-jsontags.py IMPORTPATH DIR [IMPORTPATH DIR]...")
    out = []
    for i in range(0, len(argv), 2):
        pkg, d = argv[i], argv[i + 1]
        prefix = pkg.replace("/", ".")
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".go") or fn.endswith("_test.go") or fn.startswith("zz_") \
                    or fn.endswith(".pb.go"):
                continue
            with open(os.path.join(d, fn), encoding="utf-8") as f:
                lines = f.read().split("\n")
            cur = None
            depth = 0
            for line in lines:
                s = line.strip()
                if s.startswith("//"):
                    continue
                m = re.match(r"^type\s+(\w+)\s+struct\s*\{\s*$", line)
                if m:
                    cur, depth = m.group(1), 1
                    continue
                if cur is None:
                    continue
                if s == "}" and depth == 1:
                    cur = None
                    continue
                fm = FIELD.match(line)
                if not fm:
                    continue
                name, typ, tags = fm.group(1), fm.group(2), dict(TAG.findall(fm.group(3)))
                if "protobuf" not in tags:
                    continue
                p = tags["protobuf"].split(",")
                if len(p) < 2 or not p[1].isdigit():
                    continue
                num = int(p[1])
                pname = next((x[5:] for x in p if x.startswith("name=")), "")
                flags = []
                if "json" in tags:
                    j = tags["json"].split(",")
                    jname = j[0]
                    if jname == "-":
                        flags.append("skip")
                        jname = pname
                    if "inline" in j[1:]:
                        flags.append("inline")
                    if "omitempty" in j[1:]:
                        flags.append("omitempty")
                else:
                    jname = pname  # no json tag: encoding/json uses the Go name
                    if name:
                        jname = name
                if typ.startswith("*"):
                    flags.append("ptr")
                if typ == "[]byte":
                    flags.append("bytes")
                elif typ.startswith("[]"):
                    flags.append("slice")
                if typ.startswith("map["):
                    flags.append("map")
                out.append("%s.%s\t%d\t%s\t%s" % (prefix, cur, num, jname or pname,
                                                  ",".join(flags) or "-"))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
