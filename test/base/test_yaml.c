/* Unit tests for gr_yaml: YAML 1.2 core-schema scalars, structure, aliases,
 * merge keys, multi-document streams, errors with positions, caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_buf.h"
#include "gr_json.h"
#include "gr_yaml.h"

/* Dump compactly with sorted keys; the caller frees. */
static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

typedef struct okcase {
    const char *yaml;
    const char *json; /* all documents, as a JSON array */
} okcase;

static const okcase ok_cases[] = {
    /* line breaks: CR LF and CR read as LF (YAML 1.2 §5.4); the first case
     * leaked inside libfyaml 0.7.12 before gr_yaml normalized breaks */
    {"\"\n\n\r\n\n\n\r\n\n\n\"", "[\"\\n\\n\\n\\n\\n\\n\\n\"]"},
    {"a: 1\r\nb: \"x\r\n\r\n y\"\rc: |\r\n  l1\r\n  l2\r\n",
     "[{\"a\":1,\"b\":\"x\\ny\",\"c\":\"l1\\nl2\\n\"}]"},
    /* nulls */
    {"a: ~", "[{\"a\":null}]"},
    {"a: null", "[{\"a\":null}]"},
    {"a: Null", "[{\"a\":null}]"},
    {"a: NULL", "[{\"a\":null}]"},
    {"a:", "[{\"a\":null}]"},
    {"a: nULL", "[{\"a\":\"nULL\"}]"},
    {"- ~\n-\n- null\n", "[[null,null,null]]"},
    /* booleans: only the core-schema spellings */
    {"[true, True, TRUE, false, False, FALSE]", "[[true,true,true,false,false,false]]"},
    {"[tRUE, yes, no, on, off, y, n]", "[[\"tRUE\",\"yes\",\"no\",\"on\",\"off\",\"y\",\"n\"]]"},
    /* integers */
    {"[0, -17, +17, 007, -0]", "[[0,-17,17,7,0]]"},
    {"[0x1F, 0xff, 0o17, 0o0]", "[[31,255,15,0]]"},
    {"[0o8, 0x, 0o, -0x1, 0X1F, 1_000]", "[[\"0o8\",\"0x\",\"0o\",\"-0x1\",\"0X1F\",\"1_000\"]]"},
    {"[9223372036854775807, -9223372036854775808, 0x7fffffffffffffff]",
     "[[9223372036854775807,-9223372036854775808,9223372036854775807]]"},
    /* floats */
    {"[1.5, -1.5, .5, 1., +12.5e+1, 1e3, 1E-2, -0.0]",
     "[[1.5,-1.5,0.5,1.0,125.0,1000.0,0.01,-0.0]]"},
    {"[1e, ., .e1, 1.2.3, e3, 1e3.5]", "[[\"1e\",\".\",\".e1\",\"1.2.3\",\"e3\",\"1e3.5\"]]"},
    {"[.Nan, .INf, inf, nan]", "[[\".Nan\",\".INf\",\"inf\",\"nan\"]]"},
    /* quoted and block scalars stay strings */
    {"[\"1\", '2', \"true\", 'null', '', \"~\"]", "[[\"1\",\"2\",\"true\",\"null\",\"\",\"~\"]]"},
    {"a: |\n  123\n  x\nb: >\n  1\n  2\n", "[{\"a\":\"123\\nx\\n\",\"b\":\"1 2\\n\"}]"},
    {"a: \"\\u00e9\\t\\\"\"", "[{\"a\":\"\xc3\xa9\\t\\\"\"}]"},
    {"a: 'it''s'", "[{\"a\":\"it's\"}]"},
    /* single-quoted scalars are decoded by gr_yaml (libfyaml 0.7.12 gets runs
     * of '' wrong and leaks); expectations cross-checked with PyYAML */
    {"k: 'a''''a '''\n", "[{\"k\":\"a''a '\"}]"},
    {"k: '''''a'\n", "[{\"k\":\"''a\"}]"},
    {"k: ''''''''''''''''\n", "[{\"k\":\"'''''''\"}]"},
    {"- 'a\n '\n", "[[\"a \"]]"},
    {"- '\n \t '\n", "[[\" \"]]"},
    {"k: '  \n\n\n\n  x''y\n '\n", "[{\"k\":\"\\n\\n\\nx'y \"}]"},
    {"k: ' one  \n   two\n\n  three \n\n\n  four\t'\nb: 1",
     "[{\"b\":1,\"k\":\" one two\\nthree\\n\\nfour\\t\"}]"},
    {"k: 'a\r\n  b'\r\n", "[{\"k\":\"a b\"}]"},
    {"\xef\xbb\xbfk: 'x''y'\n", "[{\"k\":\"x'y\"}]"},
    {"a: \"\\x01\\x7f\"\r\nb: \"\tx\"\r\n", "[{\"a\":\"\\u0001\x7f\",\"b\":\"\\tx\"}]"},
    {"a: .inf is not special", "[{\"a\":\".inf is not special\"}]"},
    /* explicit tags */
    {"[!!str 1, !!str true, !!str ~, !!int '42', !!int 0x10, !!float 1, !!float '2.5']",
     "[[\"1\",\"true\",\"~\",42,16,1.0,2.5]]"},
    {"[!!bool 'true', !!null '', !!null ~, !custom 5, !!binary aGk=, ! 12]",
     "[[true,null,null,\"5\",\"aGk=\",\"12\"]]"},
    {"!<tag:yaml.org,2002:int> 7", "[7]"},
    {"a: !!map {b: 1}\nc: !!seq [1]", "[{\"a\":{\"b\":1},\"c\":[1]}]"},
    {"a: !Ref [x]", "[{\"a\":[\"x\"]}]"},
    /* structure, comments, flow style */
    {"# top\na: 1 # trailing\n# between\nb:\n  - x\n  - y: z\n",
     "[{\"a\":1,\"b\":[\"x\",{\"y\":\"z\"}]}]"},
    {"{a: [1, 2, {b: c}], d: 'e', f: {}}", "[{\"a\":[1,2,{\"b\":\"c\"}],\"d\":\"e\",\"f\":{}}]"},
    {"- - 1\n  - 2\n- []\n", "[[[1,2],[]]]"},
    {"key with spaces: value with:colon", "[{\"key with spaces\":\"value with:colon\"}]"},
    {"url: http://x.y/z#frag", "[{\"url\":\"http://x.y/z#frag\"}]"},
    /* non-string keys become JSON strings */
    {"{1: a, 0x10: b, true: c, ~: d, 1.5: e, -3: f}",
     "[{\"-3\":\"f\",\"1\":\"a\",\"1.5\":\"e\",\"16\":\"b\",\"null\":\"d\",\"true\":\"c\"}]"},
    /* anchors and aliases */
    {"a: &x 1\nb: *x", "[{\"a\":1,\"b\":1}]"},
    {"a: &m {k: [1, 2]}\nb: *m\nc: [*m, *m]",
     "[{\"a\":{\"k\":[1,2]},\"b\":{\"k\":[1,2]},\"c\":[{\"k\":[1,2]},{\"k\":[1,2]}]}]"},
    {"a: &x 1\nb: &x 2\nc: *x", "[{\"a\":1,\"b\":2,\"c\":2}]"},
    {"&k key: v\nother: *k", "[{\"key\":\"v\",\"other\":\"key\"}]"},
    {"a: &q '5'\nb: *q", "[{\"a\":\"5\",\"b\":\"5\"}]"},
    /* merge keys */
    {"base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n",
     "[{\"base\":{\"x\":1,\"y\":2},\"d\":{\"x\":1,\"y\":3}}]"},
    {"d:\n  y: 3\n  <<: {x: 1, y: 2}\n", "[{\"d\":{\"x\":1,\"y\":3}}]"},
    {"a: &a {x: 1, z: a}\nb: &b {x: 2, w: b}\nc:\n  <<: [*a, *b]\n",
     "[{\"a\":{\"x\":1,\"z\":\"a\"},\"b\":{\"w\":\"b\",\"x\":2},\"c\":{\"w\":\"b\",\"x\":1,\"z\":"
     "\"a\"}}]"},
    {"a: {'<<': {x: 1}}", "[{\"a\":{\"<<\":{\"x\":1}}}]"},
    /* multi-document streams; empty documents are skipped */
    {"a: 1\n---\nb: 2\n...\n---\nc: 3\n", "[{\"a\":1},{\"b\":2},{\"c\":3}]"},
    {"---\n---\n# only a comment\n---\na: 1\n---\n", "[{\"a\":1}]"},
    {"", "[]"},
    {"# nothing\n", "[]"},
    {"--- ~\n", "[null]"},
    {"--- ''\n", "[\"\"]"},
    {"--- 42\n--- text\n", "[42,\"text\"]"},
    {"%YAML 1.2\n---\na: 010\n", "[{\"a\":10}]"},
    /* JSON input takes jansson's path (kubectl's YAMLOrJSONDecoder does the
     * same); results are the ones the YAML path gives */
    {"{\"a\":1,\"b\":[1,2.5,null,true,\"x\"],\"c\":-0,\"d\":1e3}",
     "[{\"a\":1,\"b\":[1,2.5,null,true,\"x\"],\"c\":0,\"d\":1000.0}]"},
    {"\xef\xbb\xbf \n {\"a\":1}\n{\"b\":2} [3]\n", "[{\"a\":1},{\"b\":2},[3]]"},
    {"[1]\n---\n[2]\n", "[[1],[2]]"},
    {"{a: 1, \"b\": [x]}", "[{\"a\":1,\"b\":[\"x\"]}]"},
    {"{\"a\": 1} # comment\n", "[{\"a\":1}]"},
    {"\xef\xbb\xbf"
     "a: 1\n",
     "[{\"a\":1}]"},
    {"a: \xf0\x9f\x98\x80 \xe2\x82\xac", "[{\"a\":\"\xf0\x9f\x98\x80 \xe2\x82\xac\"}]"},
};

static void test_ok_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ok_cases / sizeof ok_cases[0]; i++) {
        const okcase *tc = &ok_cases[i];
        json_t *docs = NULL;
        gr_err e;
        int rc = gr_yaml_load_all(tc->yaml, strlen(tc->yaml), "t.yaml", &docs, &e);
        if (rc != GR_OK)
            fail_msg("case %zu %s: unexpected error %s", i, tc->yaml, e.msg);
        char *got = dump(docs);
        if (strcmp(got, tc->json) != 0)
            fail_msg("case %zu %s:\n got  %s\n want %s", i, tc->yaml, got, tc->json);
        free(got);
        json_decref(docs);
    }
}

typedef struct errcase {
    const char *yaml;
    int code;
    const char *msg; /* substring expected in the message */
} errcase;

static const errcase err_cases[] = {
    /* JSON cannot carry NaN/Infinity */
    {"a: .inf", GR_EPARSE, "t.yaml:1:4: .inf cannot be represented in JSON"},
    {"a: -.Inf", GR_EPARSE, "t.yaml:1:4: -.Inf cannot be represented"},
    {"a:\n  b: .NaN", GR_EPARSE, "t.yaml:2:6: .NaN cannot"},
    {"a: !!float .inf", GR_EPARSE, "cannot be represented"},
    /* integers outside int64 */
    {"a: 9223372036854775808", GR_EPARSE,
     "t.yaml:1:4: integer 9223372036854775808 is out of range"},
    {"a: -9223372036854775809", GR_EPARSE, "out of range of a 64-bit integer; quote it"},
    {"a: 0x10000000000000000", GR_EPARSE, "out of range"},
    {"a: 1e999", GR_EPARSE, "out of range of a double"},
    /* tags that do not fit */
    {"a: !!int abc", GR_EPARSE, "t.yaml:1:4: value \"abc\" is not a valid !!int"},
    {"a: !!bool yes", GR_EPARSE, "is not a valid !!bool"},
    {"a: !!null 0", GR_EPARSE, "is not a valid !!null"},
    {"a: !!float x", GR_EPARSE, "is not a valid !!float"},
    {"a: !!map 1", GR_EPARSE, "tag !!map cannot be used on a scalar"},
    {"a: !!str [1]", GR_EPARSE, "tag !!str cannot be used on a sequence"},
    /* duplicate keys, also after conversion to JSON keys */
    {"a: 1\nb: 2\na: 3\n", GR_EPARSE, "t.yaml:3:1: duplicate key \"a\""},
    {"1: a\n'1': b\n", GR_EPARSE, "t.yaml:2:1: duplicate key \"1\""},
    {"0x10: a\n16: b\n", GR_EPARSE, "duplicate key \"16\""},
    /* complex keys */
    {"? [a]\n: x\n", GR_EPARSE, "mapping keys must be scalars"},
    {"{a: 1}: x", GR_EPARSE, "mapping keys must be scalars"},
    {"a: &s [1]\n*s : x\n", GR_EPARSE, "mapping keys must be scalars"},
    /* aliases */
    {"a: *nope", GR_EPARSE, "t.yaml:1:4: alias *nope has no anchor &nope before it"},
    {"a: &r [1, *r]", GR_EPARSE, "recursive alias"},
    /* merge keys with a bad value */
    {"a:\n  <<: 1\n", GR_EPARSE, "merge key \"<<\" needs a mapping"},
    {"a:\n  <<: [{x: 1}, 2]\n", GR_EPARSE, "element 1 of the sequence is not a mapping"},
    /* syntax errors carry line:column from libfyaml */
    {"a: b: c", GR_EPARSE, "t.yaml:1:5: "},
    {"a: 1\nb: [1, 2\n", GR_EPARSE, "t.yaml:3:"},
    {"a: 1\n- b\n", GR_EPARSE, "t.yaml:2:"},
    {"\ta: 1\n", GR_EPARSE, "t.yaml:1:"},
    {"a: \"unterminated\n", GR_EPARSE, "t.yaml:"},
    /* JSON that jansson rejects is parsed as YAML, for positioned errors */
    {"{\"a\": 1,\n \"a\": 2}", GR_EPARSE, "t.yaml:2:2: duplicate key \"a\""},
    {"{\"n\": 99999999999999999999}", GR_EPARSE, "integer 99999999999999999999 is out of range"},
    {"{\"a\": 1} x", GR_EPARSE, "t.yaml:1:"},
    /* an odd run of quotes never closes (libfyaml 0.7.12 accepts it) */
    {"k: '''''''''''''''''\n", GR_EPARSE, "single-quoted scalar without closing quote"},
    /* bad UTF-8 */
    {"a: \xff\xfe", GR_EPARSE, "t.yaml:1:4: input is not valid UTF-8 (byte 0xff)"},
    {"a: 1\nb: \xc3", GR_EPARSE, "t.yaml:2:4: input is not valid UTF-8 (byte 0xc3)"},
    {"a: \xc3\xa9\xed\xa0\x80", GR_EPARSE, "t.yaml:1:5: input is not valid UTF-8 (byte 0xed)"},
    {"a: \xc0\xaf", GR_EPARSE, "not valid UTF-8"},
    {"a: \xf4\x90\x80\x80", GR_EPARSE, "not valid UTF-8"},
    {"a: x\xffy", GR_EPARSE, "not valid UTF-8"},
    /* non-printable characters (libfyaml would drop some silently) */
    {"a: x\x7fy", GR_EPARSE, "t.yaml:1:5: input contains the control character U+007F"},
    {"a: 1\nb: \x01", GR_EPARSE, "t.yaml:2:4: input contains the control character U+0001"},
    {"a: \xc2\x80", GR_EPARSE, "control character U+0080"},
    {"a: \xef\xbf\xbe", GR_EPARSE, "control character U+FFFE"},
};

static void test_err_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++) {
        const errcase *tc = &err_cases[i];
        json_t *docs = (json_t *)1;
        gr_err e;
        int rc = gr_yaml_load_all(tc->yaml, strlen(tc->yaml), "t.yaml", &docs, &e);
        if (rc == GR_OK) {
            char *got = dump(docs);
            fail_msg("case %zu %s: expected an error, got %s", i, tc->yaml, got);
        }
        assert_null(docs);
        if (rc != tc->code || !strstr(e.msg, tc->msg))
            fail_msg("case %zu %s: got %s \"%s\", want %s containing \"%s\"", i, tc->yaml,
                     gr_rc_name(rc), e.msg, gr_rc_name(tc->code), tc->msg);
        assert_int_equal(e.code, rc);
    }
}

static void test_billion_laughs_rejected(void **state)
{
    (void)state;
    gr_buf b = GR_BUF_INIT((size_t)64 << 20);
    assert_int_equal(gr_buf_puts(&b, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"),
                     GR_OK);
    for (int i = 1; i < 10; i++) {
        gr_buf_printf(&b, "a%d: &a%d [", i, i);
        for (int j = 0; j < 9; j++)
            gr_buf_printf(&b, "%s*a%d", j ? ", " : "", i - 1);
        gr_buf_puts(&b, "]\n");
    }
    json_t *docs = NULL;
    gr_err e;
    assert_int_equal(gr_yaml_load_all(b.data, b.len, "lol.yaml", &docs, &e), GR_ETOOBIG);
    assert_null(docs);
    assert_non_null(strstr(e.msg, "lol.yaml:"));
    assert_non_null(strstr(e.msg, "alias expansion exceeds 100000 nodes"));
    gr_buf_free(&b);
}

static void test_small_alias_fanout_is_fine(void **state)
{
    (void)state;
    const char *y = "a: &a [1, 2, 3]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n";
    json_t *docs = NULL;
    gr_err e;
    assert_int_equal(gr_yaml_load_all(y, strlen(y), NULL, &docs, &e), GR_OK);
    json_t *c = json_object_get(json_array_get(docs, 0), "c");
    assert_int_equal(json_array_size(c), 3);
    assert_int_equal(json_integer_value(json_array_get(json_array_get(json_array_get(c, 2), 2), 2)),
                     3);
    /* aliases are copies, not shared values: mutating one leaves the others */
    json_array_clear(json_array_get(c, 0));
    assert_int_equal(json_array_size(json_array_get(c, 1)), 3);
    json_decref(docs);
}

static void test_depth_cap(void **state)
{
    (void)state;
    gr_buf b = GR_BUF_INIT((size_t)64 << 20);
    for (int i = 0; i < GR_YAML_MAX_DEPTH + 5; i++)
        gr_buf_putc(&b, '[');
    for (int i = 0; i < GR_YAML_MAX_DEPTH + 5; i++)
        gr_buf_putc(&b, ']');
    json_t *docs = NULL;
    gr_err e;
    assert_int_equal(gr_yaml_load_all(b.data, b.len, "deep", &docs, &e), GR_ETOOBIG);
    assert_non_null(strstr(e.msg, "nesting deeper than 256 levels"));
    gr_buf_reset(&b);
    for (int i = 0; i < GR_YAML_MAX_DEPTH - 1; i++)
        gr_buf_putc(&b, '[');
    for (int i = 0; i < GR_YAML_MAX_DEPTH - 1; i++)
        gr_buf_putc(&b, ']');
    assert_int_equal(gr_yaml_load_all(b.data, b.len, "deep", &docs, &e), GR_OK);
    json_decref(docs);
    /* the same through the JSON path: balanced, too deep for us (257) and
     * too deep for jansson (3000); never retried as YAML */
    int depths[] = {GR_YAML_MAX_DEPTH, GR_YAML_MAX_DEPTH + 1, 3000};
    for (size_t d = 0; d < 3; d++) {
        gr_buf_reset(&b);
        for (int i = 0; i < depths[d]; i++)
            gr_buf_putc(&b, '[');
        for (int i = 0; i < depths[d]; i++)
            gr_buf_putc(&b, ']');
        int rc = gr_yaml_load_all(b.data, b.len, "deepjson", &docs, &e);
        if (d == 0) {
            assert_int_equal(rc, GR_OK);
            json_decref(docs);
        } else {
            assert_int_equal(rc, GR_ETOOBIG);
            assert_string_equal(e.msg, "deepjson: nesting deeper than 256 levels");
        }
    }
    gr_buf_free(&b);
}

static void test_load_one(void **state)
{
    (void)state;
    json_t *v = NULL;
    gr_err e;
    assert_int_equal(gr_yaml_load_one("a: [1]\n", 7, "one", &v, &e), GR_OK);
    char *s = dump(v);
    assert_string_equal(s, "{\"a\":[1]}");
    free(s);
    json_decref(v);

    assert_int_equal(gr_yaml_load_one("---\n# x\n", 8, "one", &v, &e), GR_OK);
    assert_true(json_is_null(v));
    json_decref(v);

    assert_int_equal(gr_yaml_load_one("a: 1\n---\nb: 2\n", 14, "two.yaml", &v, &e), GR_EPARSE);
    assert_null(v);
    assert_non_null(strstr(e.msg, "two.yaml: expected one YAML document, found 2"));

    /* not NUL-terminated: only len bytes are read */
    const char buf[] = {'a', ':', ' ', '1', 'X'};
    assert_int_equal(gr_yaml_load_one(buf, 4, NULL, &v, &e), GR_OK);
    assert_int_equal(json_integer_value(json_object_get(v, "a")), 1);
    json_decref(v);

    assert_int_equal(gr_yaml_load_one("a: *x", 5, NULL, &v, &e), GR_EPARSE);
    if (!strstr(e.msg, "<input>:1:4:"))
        fail_msg("%s", e.msg);
}

static void test_load_file(void **state)
{
    (void)state;
    json_t *docs = NULL;
    gr_err e;
    assert_int_equal(gr_yaml_load_file("data/multi.yaml", 0, &docs, &e), GR_OK);
    assert_int_equal(json_array_size(docs), 3);
    json_t *cm = json_array_get(docs, 0);
    assert_string_equal(json_string_value(json_object_get(cm, "kind")), "ConfigMap");
    json_t *data = json_object_get(cm, "data");
    /* block scalar kept verbatim, numbers-looking quoted values stay strings */
    assert_string_equal(json_string_value(json_object_get(data, "config.yaml")),
                        "gpus: 8\nenabled: true\n");
    assert_string_equal(json_string_value(json_object_get(data, "replicas")), "3");
    json_t *dep = json_array_get(docs, 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(dep, "spec"), "replicas")),
                     2);
    /* merge key pulled the shared labels in */
    json_t *labels = json_object_get(json_object_get(dep, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, "app")), "demo");
    assert_string_equal(json_string_value(json_object_get(labels, "tier")), "gpu");
    json_t *ns = json_array_get(docs, 2);
    assert_string_equal(json_string_value(json_object_get(ns, "kind")), "Namespace");
    json_decref(docs);

    /* size cap */
    assert_int_equal(gr_yaml_load_file("data/multi.yaml", 16, &docs, &e), GR_ETOOBIG);
    assert_null(docs);
    assert_non_null(strstr(e.msg, "data/multi.yaml: file is larger than the 16-byte limit"));

    /* missing file */
    assert_int_equal(gr_yaml_load_file("data/does-not-exist.yaml", 0, &docs, &e), GR_EIO);
    assert_non_null(strstr(e.msg, "data/does-not-exist.yaml: cannot open"));

    /* errors name the file */
    assert_int_equal(gr_yaml_load_file("data/bad.yaml", 0, &docs, &e), GR_EPARSE);
    assert_non_null(strstr(e.msg, "data/bad.yaml:5:3:"));
    assert_non_null(strstr(e.msg, "duplicate key \"name\""));
}

static void test_bad_arguments(void **state)
{
    (void)state;
    gr_err e;
    json_t *v;
    assert_int_equal(gr_yaml_load_all(NULL, 3, "x", &v, &e), GR_EINVAL);
    assert_int_equal(gr_yaml_load_all("a", 1, "x", NULL, &e), GR_EINVAL);
    assert_int_equal(gr_yaml_load_all(NULL, 0, "x", &v, NULL), GR_OK);
    assert_int_equal(json_array_size(v), 0);
    json_decref(v);
    /* NUL bytes are not YAML text (libfyaml would stop there silently) */
    assert_int_equal(gr_yaml_load_all("a: 1\nb\0: 2", 10, "nul", &v, &e), GR_EPARSE);
    assert_string_equal(e.msg, "nul:2:2: input contains a NUL byte (YAML text cannot)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok_cases),
        cmocka_unit_test(test_err_cases),
        cmocka_unit_test(test_billion_laughs_rejected),
        cmocka_unit_test(test_small_alias_fanout_is_fine),
        cmocka_unit_test(test_depth_cap),
        cmocka_unit_test(test_load_one),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
