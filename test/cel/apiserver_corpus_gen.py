#!/usr/bin/env python3
"""apiserver_corpus_gen.py — writes apiserver_corpus.txt, the rules that
cel_apiserver_diff runs through kube-apiserver (x-kubernetes-validations on
the test CRD in cel_apiserver_diff.c) and through gr_cel.

Every line is one rule over `self` (the CRD's spec: s, i, d, b, l, ls, m, q,
addr, net, u, v, o, big). Lines starting with '#' are comments. The corpus is
deterministic; rerun after editing. Left out on purpose (docs/cel.md): rules
that only the type checker refuses (`self.i == 3u`), and rules refused for an
estimated cost that is unbounded only statically (`'%e'.format([self.d])`,
`lists.range(self.i)`): gr_cel has neither a checker nor a static estimator
and bounds the real cost at run time. Rerun after editing: python3 apiserver_corpus_gen.py > apiserver_corpus.txt
"""

rules = []


def add(*exprs):
    rules.extend(exprs)


# ---- core language over the typed fields ----
for k in range(-2, 6):
    add(f"self.i > {k}", f"self.i <= {k} || self.i % 2 == 0", f"self.l.size() >= {k}")
for k in (0, 1, 2.5, 3.5, 100.0):
    add(f"self.d > {float(k)}", f"self.d * 2.0 < {float(k) + 1.0}", f"self.i < {float(k)}")
add("self.b", "!self.b", "self.b == (self.i > 2)", "self.b ? self.i > 0 : self.i < 0")
add("has(self.o)", "has(self.o) && has(self.o.a)", "!has(self.o) || self.o.a >= 0",
    "has(self.m) && 'k1' in self.m", "has(self.l) && 3 in self.l", "has(self.big)")
add("self.i + 1 > self.i", "self.i * self.i >= 0", "self.i - 1 < self.i",
    "self.i / 2 <= self.i", "9223372036854775807 + self.i > 0", "self.i / (self.i - self.i) == 0",
    "int(self.d) <= self.i", "double(self.i) < self.d", "uint(self.i) >= 0u",
    "string(self.i) == '3'", "string(self.d).startsWith('2')", "int(self.s) > 0",
    "uint(-0.5 * self.d) == 0u", "type(self.i) == int", "type(self.s) == string",
    "dyn(self.i) == 3.0", "[1, 2, 3].exists(x, x == self.i)",
    "self.l.all(x, x >= 0)", "self.l.exists(x, x > 5)", "self.l.exists_one(x, x == 2)",
    "self.l.map(x, x * 2).exists(x, x == 4)", "self.l.filter(x, x % 2 == 1).size() <= 2",
    "self.l.map(x, x > 1, x).size() >= 0", "self.ls.all(x, x.size() > 0)",
    "self.m.all(k, self.m[k].size() < 10)", "self.m.exists(k, k.startsWith('k'))",
    "size(self.m) < 3", "self.ls.size() == size(self.ls)")

# ---- strings (Kubernetes strings v2) ----
for t in ("a", "b", "abc", "x", "", "é"):
    add(f"self.s.contains('{t}')", f"self.s.startsWith('{t}')", f"self.s.endsWith('{t}')",
        f"self.s.indexOf('{t}') >= 0", f"self.s.lastIndexOf('{t}') < 2",
        f"self.s.indexOf('{t}', 1) != 0", f"self.s.lastIndexOf('{t}', 2) != 1")
for k in range(0, 6):
    add(f"self.s.size() > {k}", f"self.s.charAt({k}) != 'c'", f"self.s.substring({k}).size() < 3",
        f"self.s.indexOf('c', {k}) == 2", f"self.s.lastIndexOf('b', {k}) == 1",
        f"self.s.substring(0, {k}) == 'ab'")
add("self.s.lowerAscii() == self.s", "self.s.upperAscii() != self.s",
    "self.s.replace('b', 'B') == 'aBc'", "self.s.replace('', '-', 2).size() > 3",
    "self.s.split('b').size() == 2", "self.s.split('', 2).size() <= 2",
    "self.s.trim() == self.s", "self.ls.join(',') == 'x,y'", "self.ls.join() == 'xy'",
    "self.s.matches('^[a-z]+$')", "self.s.matches('[0-9]')", "matches(self.s, 'b.')",
    "self.s.format([]) == self.s", "'%s-%d'.format([self.s, self.i]) == 'abc-3'",
    "'%.2f'.format([self.d]) == '2.50'", "'%e'.format([2.5]) == '2.500000×10⁰⁰'",
    "'%x'.format([self.i]) == '3'", "'%o|%b'.format([self.i, self.i]) == '3|11'",
    "'%s'.format([self.l]) == '[1, 2, 3]'", "'%s'.format([self.m]).size() > 2",
    "'%s'.format([['x', 1.5]]) == '[\"x\", 1.500000]'", "'%X'.format([self.s]) == '616263'",
    "'%.3f'.format([1234.5678]) == '1,234.568'", "'%s'.format([self.d]) == '2.5'",
    "strings.quote(self.s) == '\"abc\"'", "strings.quote('a\\nb') == '\"a\\\\nb\"'",
    "'%d'.format([self.l.size()]) == '3'", "'%s %s'.format([self.b, null]) == 'true null'")

# ---- lists (Kubernetes lists + cel-go lists v3) and sets ----
add("self.l.isSorted()", "self.l.sum() > 4", "self.l.sum() == 6", "self.l.min() == 1",
    "self.l.max() <= 3", "self.l.indexOf(2) == 1", "self.l.lastIndexOf(3) >= 0",
    "self.ls.isSorted()", "self.ls.min() == 'x'", "self.ls.max() == 'y'",
    "self.l.slice(0, 2) == [1, 2]", "self.l.slice(1, self.l.size()).size() == 2",
    "self.l.sort() == self.l", "self.l.reverse().isSorted()", "self.l.distinct() == self.l",
    "[self.l, [4]].flatten().size() == 4", "[[self.l]].flatten(2).size() == 3",
    "lists.range(3).size() == self.i", "self.l.map(x, x % 2).distinct().size() <= 2",
    "sets.contains(self.l, [1, 2])", "sets.equivalent(self.l, [3, 2, 1])",
    "sets.intersects(self.l, [7, 8])", "sets.contains(self.ls, ['x'])")
for k in range(0, 5):
    add(f"self.l.indexOf({k}) == {k - 1}", f"self.l.slice(0, {k}).sum() <= 3",
        f"lists.range({k}).all(x, x < self.i)", f"self.l.exists(x, x == {k}) == ({k} in self.l)")

# ---- regex ----
for p in ("[0-9]+", "[a-z]", "b+", "x*", "^a", "c$"):
    add(f"self.s.find('{p}') != ''", f"self.s.findAll('{p}').size() > 0",
        f"self.s.findAll('{p}', 1).size() <= 1")

# ---- quantity ----
for q in ("100m", "1", "1Gi", "10Gi", "1.5G", "1000M", "0", "1e3", "500Mi"):
    add(f"isQuantity(self.q) && quantity(self.q).compareTo(quantity('{q}')) <= 0",
        f"quantity(self.q).isGreaterThan(quantity('{q}'))",
        f"quantity(self.q).add(quantity('{q}')).isLessThan(quantity('20Gi'))",
        f"quantity('{q}').isInteger()", f"quantity('{q}').sub(1).asApproximateFloat() > 0.0")
add("quantity(self.q).asInteger() > 0", "quantity(self.q) == quantity('1024Mi')",
    "quantity(self.q).asApproximateFloat() > 1e9", "isQuantity(self.s)",
    "quantity(self.q).add(self.i).isInteger()")

# ---- IP and CIDR ----
for a in ("10.0.0.1", "192.168.1.7", "::1", "fe80::1", "2001:db8::5"):
    add(f"ip('{a}').family() == ip(self.addr).family()", f"cidr(self.net).containsIP('{a}')",
        f"ip('{a}').isGlobalUnicast()", f"ip('{a}') == ip(self.addr)")
add("isIP(self.addr) && ip(self.addr).family() == 4", "ip(self.addr).isLoopback()",
    "ip(self.addr).isUnspecified()", "ip(self.addr).isLinkLocalUnicast()",
    "ip.isCanonical(self.addr)", "cidr(self.net).containsIP(ip(self.addr))",
    "cidr(self.net).prefixLength() >= 16", "cidr(self.net).masked() == cidr(self.net)",
    "string(cidr(self.net).ip()) == self.addr", "isCIDR(self.net)",
    "cidr(self.net).containsCIDR('10.1.0.0/16')", "string(ip(self.addr)) == self.addr",
    "isCIDR(self.addr)")

# ---- URL, semver ----
add("isURL(self.u)", "url(self.u).getScheme() == 'https'", "url(self.u).getHost() == 'example.com:8443'",
    "url(self.u).getHostname() == 'example.com'", "url(self.u).getPort() == '8443'",
    "url(self.u).getEscapedPath() == '/a/b'", "url(self.u).getQuery()['x'] == ['1']",
    "'y' in url(self.u).getQuery()", "isSemver(self.v)", "semver(self.v).major() >= 1",
    "semver(self.v).isLessThan(semver('2.0.0'))", "semver(self.v).compareTo(semver('1.2.3')) == 0",
    "semver(self.v, true).minor() == 2", "isSemver(self.v, true)", "semver(self.v) == semver('1.2.3+b')")

# ---- two-variable comprehensions, optionals ----
add("self.l.all(i, v, v == i + 1)", "self.l.exists(i, v, i == v)", "self.m.all(k, v, k != v)",
    "self.m.exists(k, v, v == 'v1')", "self.l.existsOne(i, v, v > 2)",
    "self.l.transformList(i, v, v * i) == [0, 2, 6]", "self.l.transformList(i, v, v > 1, v) == [2, 3]",
    "self.m.transformMap(k, v, v + k).size() == size(self.m)",
    "self.l.transformMap(i, v, v)[0] == 1", "self.m.transformMapEntry(k, v, {v: k}).size() >= 0",
    "self.?o.?a.orValue(0) > 1", "self.m[?'k1'].orValue('') == 'v1'", "self.m[?'zz'].hasValue()",
    "self.?o.?b.hasValue()", "self.l[?5].orValue(7) == 7", "optional.of(self.i).value() == self.i",
    "[?self.m[?'k1'], ?self.m[?'k9']].size() == 1", "{?'a': self.?o.?a}.size() == 1",
    "optional.ofNonZeroValue(self.s).hasValue()", "self.?o.optMap(x, x.a).orValue(-1) >= 0")

# ---- Kubernetes format library ----
for f in ("dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "labelValue",
          "dns1123LabelPrefix", "uri", "uuid", "byte", "date", "datetime"):
    add(f"!format.{f}().validate(self.s).hasValue()",
        f"format.{f}().validate(self.addr).orValue(['ok'])[0].size() < 40",
        f"format.named('{f}').value().validate(self.u).hasValue()")
add("format.named('nope').hasValue()", "format.dns1123Label().validate(self.s).orValue([]).size() <= 1")

# ---- timestamps, durations, time zones ----
add("timestamp('2038-07-01T12:00:00Z').getHours('America/New_York') == 8",
    "timestamp('2024-01-15T12:00:00Z').getHours('Europe/Berlin') == 13",
    "timestamp('2050-07-01T12:00:00Z').getHours('Australia/Sydney') == 22",
    "timestamp('2024-03-10T07:00:00Z').getHours('America/Los_Angeles') == 0",
    "duration('1h30m').getMinutes() == 90", "timestamp('2024-01-01T00:00:00Z') + duration('24h') > timestamp('2024-01-01T12:00:00Z')",
    "timestamp('2024-02-29T00:00:00Z').getDayOfYear() == 59", "duration(self.s) > duration('0s')")

# ---- the five defects, as rules ----
add("uint(-0.5) == 0u", "'abc'.indexOf('c', 3) == -1", "'abc'.lastIndexOf('c', 3) == -1",
    "'abc'.indexOf('c', 4) == -1", "'abc'.indexOf('c', -1) == -1")

# ---- rules kube-apiserver must reject (syntax, undeclared, cost) ----
add("self.i +", "self.i == )", "{'null': 1}.null == 1", "{'in': 1}.in == 1", "nosuchfn(self.i)",
    "self.nosuchfield == 1", "self.s.nosuchmethod()", "self.i.true",
    "self.big.all(x, self.big.all(y, x + y >= 0))",
    "self.big.map(x, self.big.map(y, x * y)).size() > 0",
    "self.big.all(x, self.big.exists(y, x == y))")

# ---- more values for the same shapes ----
for k in range(0, 12):
    add(f"self.i * {k} - {k} < {3 * k}", f"self.l.filter(x, x > {k % 4}).size() == {3 - (k % 4)}",
        f"self.s.size() + {k} == {3 + k}", f"'{k}' + self.s == '{k}abc'",
        f"self.ls.exists(x, x.size() == {k % 3})", f"self.m.size() + {k} > {k + 1}")
for q in ("2Gi", "3", "0.5", "250m", "1Ki", "1024Ki", "1Mi", "5e2"):
    add(f"quantity('{q}').compareTo(quantity(self.q)) >= 0",
        f"quantity('{q}').add(quantity('{q}')) == quantity(self.q)")
for n in ("10.0.0.0/8", "192.168.0.0/16", "::/0", "fe80::/10", "10.1.2.0/24"):
    add(f"cidr('{n}').containsIP(self.addr)", f"cidr('{n}').containsCIDR(self.net)",
        f"cidr(self.net).containsCIDR('{n}')")
for v in ("1.2.3", "1.2.4", "0.9.0", "1.2.3-rc.1", "2.0.0"):
    add(f"semver(self.v).compareTo(semver('{v}')) >= 0", f"semver('{v}').isGreaterThan(semver(self.v))")

for k in range(0, 8):
    add(f"self.l.all(x, x != {k})", f"self.ls.all(x, x != '{chr(ord('a') + k)}')",
        f"self.s.charAt({k % 3}) == '{chr(ord('a') + k)}'", f"self.i == {k} ? self.b : !self.b",
        f"self.d < {k}.5")

seen = set()
for r in rules:
    if r not in seen:
        seen.add(r)
        print(r)
