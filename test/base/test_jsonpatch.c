/* Unit tests for gr_json: strict parse, equality, JSON Pointer (RFC 6901),
 * JSON Patch (RFC 6902) apply/build and JSON Merge Patch (RFC 7386). */
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

static json_t *J(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad test JSON %s: %s", text, je.text);
    return v;
}

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static void assert_json(const json_t *v, const char *want)
{
    json_t *w = J(want);
    char *a = dump(v), *b = dump(w);
    if (strcmp(a, b) != 0)
        fail_msg("got %s, want %s", a, b);
    free(a);
    free(b);
    json_decref(w);
}

/* ------------------------------------------------------------- helpers */

static void test_parse_strict(void **state)
{
    (void)state;
    json_t *v = NULL;
    gr_err e;
    assert_int_equal(gr_json_parse("{\"a\":[1,2]}", 11, 0, "x.json", &v, &e), GR_OK);
    assert_json(v, "{\"a\":[1,2]}");
    json_decref(v);
    assert_int_equal(gr_json_parse("42", 2, 0, NULL, &v, &e), GR_OK);
    assert_int_equal(json_integer_value(v), 42);
    json_decref(v);
    /* duplicates are rejected */
    const char *dup = "{\"a\":1,\n\"a\":2}";
    assert_int_equal(gr_json_parse(dup, strlen(dup), 0, "d.json", &v, &e), GR_EPARSE);
    assert_null(v);
    assert_non_null(strstr(e.msg, "d.json:2:"));
    assert_non_null(strstr(e.msg, "duplicate"));
    /* syntax error position */
    assert_int_equal(gr_json_parse("[1,", 3, 0, "s.json", &v, &e), GR_EPARSE);
    assert_non_null(strstr(e.msg, "s.json:1:"));
    /* size cap */
    assert_int_equal(gr_json_parse("[1,2,3]", 7, 4, "big", &v, &e), GR_ETOOBIG);
    assert_string_equal(e.msg, "big: JSON text is 7 bytes, the limit is 4");
    /* depth cap */
    gr_buf b = GR_BUF_INIT((size_t)64 << 20);
    for (int i = 0; i < GR_JSON_MAX_DEPTH + 1; i++)
        gr_buf_putc(&b, '[');
    for (int i = 0; i < GR_JSON_MAX_DEPTH + 1; i++)
        gr_buf_putc(&b, ']');
    assert_int_equal(gr_json_parse(b.data, b.len, 0, "deep", &v, &e), GR_ETOOBIG);
    gr_buf_consume(&b, 1);
    b.len--;
    b.data[b.len] = 0;
    assert_int_equal(gr_json_parse(b.data, b.len, 0, "deep", &v, &e), GR_OK);
    json_decref(v);
    gr_buf_free(&b);
}

static void test_dump_buf(void **state)
{
    (void)state;
    json_t *v = J("{\"b\":1,\"a\":[true,null]}");
    gr_buf b = GR_BUF_INIT(1000);
    assert_int_equal(gr_buf_puts(&b, "x="), GR_OK);
    assert_int_equal(gr_json_dump_buf(v, JSON_COMPACT | JSON_SORT_KEYS, &b), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "x={\"a\":[true,null],\"b\":1}");
    gr_buf small = GR_BUF_INIT(8);
    assert_int_equal(gr_buf_puts(&small, "ab"), GR_OK);
    assert_int_equal(gr_json_dump_buf(v, JSON_COMPACT, &small), GR_ETOOBIG);
    assert_string_equal(gr_buf_cstr(&small), "ab"); /* unchanged on error */
    json_t *s = json_string("str");
    gr_buf_reset(&b);
    assert_int_equal(gr_json_dump_buf(s, 0, &b), GR_OK); /* non-container top level */
    assert_string_equal(gr_buf_cstr(&b), "\"str\"");
    json_decref(s);
    json_decref(v);
    gr_buf_free(&b);
    gr_buf_free(&small);
}

static void test_object_child(void **state)
{
    (void)state;
    json_t *o = json_loads("{\"a\":{\"x\":1},\"b\":[1],\"c\":null}", 0, NULL);
    assert_non_null(o);
    json_t *a = gr_json_object_child(o, "a"); /* existing object: kept */
    assert_ptr_equal(a, json_object_get(o, "a"));
    assert_int_equal(json_integer_value(json_object_get(a, "x")), 1);
    json_t *b = gr_json_object_child(o, "b"); /* another type: replaced */
    assert_true(json_is_object(b) && json_object_size(b) == 0);
    assert_ptr_equal(b, json_object_get(o, "b"));
    assert_true(json_is_object(gr_json_object_child(o, "c")));
    json_t *d = gr_json_object_child(o, "d"); /* absent: created */
    assert_ptr_equal(d, json_object_get(o, "d"));
    json_t *arr = json_array();
    assert_null(gr_json_object_child(arr, "k")); /* not an object */
    assert_null(gr_json_object_child(NULL, "k"));
    json_t *e = gr_json_array_child(o, "e"); /* absent: created */
    assert_true(json_is_array(e) && json_array_size(e) == 0);
    assert_ptr_equal(gr_json_array_child(o, "e"), e);        /* existing array: kept */
    assert_true(json_is_array(gr_json_array_child(o, "a"))); /* object: replaced */
    assert_null(gr_json_array_child(arr, "k"));
    json_decref(arr);
    json_decref(o);
}

static void test_equal(void **state)
{
    (void)state;
    struct {
        const char *a, *b;
        bool eq;
    } cases[] = {
        {"1", "1.0", true},
        {"1", "1.5", false},
        {"{\"a\":1,\"b\":[1,2]}", "{\"b\":[1,2],\"a\":1}", true},
        {"[1,2]", "[2,1]", false},
        {"\"10\"", "10", false},
        {"null", "false", false},
        {"{}", "[]", false},
        {"{\"a\":null}", "{}", false},
        {"9007199254740993", "9007199254740992.0", false},
        {"-0.0", "0", true},
        {"\"a\\u0000b\"", "\"a\\u0000c\"", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *a = json_loads(cases[i].a, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        json_t *b = json_loads(cases[i].b, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        assert_non_null(a);
        assert_non_null(b);
        if (gr_json_equal(a, b) != cases[i].eq || gr_json_equal(b, a) != cases[i].eq)
            fail_msg("equal(%s, %s) should be %d", cases[i].a, cases[i].b, cases[i].eq);
        json_decref(a);
        json_decref(b);
    }
    assert_true(gr_json_equal(NULL, NULL));
    assert_string_equal(gr_json_type_name(NULL), "missing");
}

/* ------------------------------------------------------------- pointer */

static void test_pointer_escape_and_build(void **state)
{
    (void)state;
    char *s = gr_json_ptr_escape("a/b~c");
    assert_string_equal(s, "a~1b~0c");
    free(s);
    /* The webhook's annotation path (WF-45 style "~1" encoding). */
    s = gr_json_ptr_build("metadata", "annotations", "nvsentinel.nvidia.com/preflight-checks",
                          NULL);
    assert_string_equal(s, "/metadata/annotations/nvsentinel.nvidia.com~1preflight-checks");
    free(s);
    s = gr_json_ptr_build(NULL, NULL); /* no keys: the whole document */
    assert_string_equal(s, "");
    free(s);
    s = gr_json_ptr_build("", NULL);
    assert_string_equal(s, "/");
    free(s);

    gr_buf b = GR_BUF_INIT(64);
    assert_int_equal(gr_json_ptr_append(&b, "spec"), GR_OK);
    assert_int_equal(gr_json_ptr_append(&b, "initContainers"), GR_OK);
    assert_int_equal(gr_json_ptr_append_index(&b, GR_JSON_PTR_END), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "/spec/initContainers/-");
    gr_buf_reset(&b);
    assert_int_equal(gr_json_ptr_append(&b, "containers"), GR_OK);
    assert_int_equal(gr_json_ptr_append_index(&b, 12), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "/containers/12");
    /* cap: the buffer is left as it was */
    gr_buf tiny = GR_BUF_INIT(6);
    assert_int_equal(gr_json_ptr_append(&tiny, "ab"), GR_OK);
    assert_int_equal(gr_json_ptr_append(&tiny, "c/d"), GR_ETOOBIG);
    assert_string_equal(gr_buf_cstr(&tiny), "/ab");
    gr_buf_free(&tiny);
    gr_buf_free(&b);
}

static void test_pointer_parse(void **state)
{
    (void)state;
    char **t;
    size_t n;
    gr_err e;
    assert_int_equal(gr_json_ptr_parse("", &t, &n, &e), GR_OK);
    assert_int_equal(n, 0);
    assert_null(t[0]);
    gr_json_ptr_tokens_free(t);
    assert_int_equal(gr_json_ptr_parse("/", &t, &n, &e), GR_OK);
    assert_int_equal(n, 1);
    assert_string_equal(t[0], "");
    gr_json_ptr_tokens_free(t);
    assert_int_equal(gr_json_ptr_parse("/a~1b/~01//c~0", &t, &n, &e), GR_OK);
    assert_int_equal(n, 4);
    assert_string_equal(t[0], "a/b");
    assert_string_equal(t[1], "~1"); /* ~01 is "~1", not "/" (escape order) */
    assert_string_equal(t[2], "");
    assert_string_equal(t[3], "c~");
    gr_json_ptr_tokens_free(t);
    assert_int_equal(gr_json_ptr_parse("a/b", &t, &n, &e), GR_EINVAL);
    assert_non_null(strstr(e.msg, "must be empty or start with \"/\""));
    assert_int_equal(gr_json_ptr_parse("/a~2", &t, &n, &e), GR_EINVAL);
    assert_non_null(strstr(e.msg, "\"~\" must be followed by 0 or 1"));
    assert_int_equal(gr_json_ptr_parse("/a~", &t, &n, &e), GR_EINVAL);

    size_t idx;
    assert_true(gr_json_ptr_parse_index("0", &idx) && idx == 0);
    assert_true(gr_json_ptr_parse_index("120", &idx) && idx == 120);
    assert_false(gr_json_ptr_parse_index("01", &idx));
    assert_false(gr_json_ptr_parse_index("00", &idx));
    assert_false(gr_json_ptr_parse_index("-", &idx));
    assert_false(gr_json_ptr_parse_index("1e0", &idx));
    assert_false(gr_json_ptr_parse_index("", &idx));
    assert_false(gr_json_ptr_parse_index("-1", &idx));
    assert_false(gr_json_ptr_parse_index("99999999999999999999999", &idx));
}

static void test_pointer_resolve_rfc6901(void **state)
{
    (void)state;
    /* RFC 6901 section 5 */
    json_t *doc = J("{\"foo\":[\"bar\",\"baz\"],\"\":0,\"a/b\":1,\"c%d\":2,\"e^f\":3,\"g|h\":4,"
                    "\"i\\\\j\":5,\"k\\\"l\":6,\" \":7,\"m~n\":8}");
    struct {
        const char *ptr;
        const char *want;
    } cases[] = {
        {"/foo", "[\"bar\",\"baz\"]"},
        {"/foo/0", "\"bar\""},
        {"/", "0"},
        {"/a~1b", "1"},
        {"/c%d", "2"},
        {"/e^f", "3"},
        {"/g|h", "4"},
        {"/i\\j", "5"},
        {"/k\"l", "6"},
        {"/ ", "7"},
        {"/m~0n", "8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = gr_json_ptr_get(doc, cases[i].ptr);
        if (!v)
            fail_msg("%s not found", cases[i].ptr);
        assert_json(v, cases[i].want);
    }
    assert_ptr_equal(gr_json_ptr_get(doc, ""), doc);
    json_t *v;
    gr_err e;
    assert_int_equal(gr_json_ptr_resolve(doc, "/foo/2", &v, &e), GR_ENOTFOUND);
    assert_non_null(strstr(e.msg, "index 2 is out of range (array has 2 elements)"));
    assert_int_equal(gr_json_ptr_resolve(doc, "/foo/01", &v, &e), GR_ENOTFOUND);
    assert_int_equal(gr_json_ptr_resolve(doc, "/foo/-", &v, &e), GR_ENOTFOUND);
    assert_int_equal(gr_json_ptr_resolve(doc, "/nope/x", &v, &e), GR_ENOTFOUND);
    assert_non_null(strstr(e.msg, "no member \"nope\""));
    assert_int_equal(gr_json_ptr_resolve(doc, "/ /x", &v, &e), GR_ENOTFOUND);
    assert_non_null(strstr(e.msg, "cannot look up \"x\" in a number"));
    assert_int_equal(gr_json_ptr_resolve(doc, "foo", &v, &e), GR_EINVAL);
    assert_null(gr_json_ptr_get(doc, "/m~2n"));
    json_decref(doc);
}

/* --------------------------------------------------------------- patch */

typedef struct pcase {
    const char *doc, *patch, *want; /* want NULL: must fail */
    int code;
    const char *msg;
} pcase;

static const pcase patch_cases[] = {
    /* add */
    {"{}", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":{\"b\":[1]}}]", "{\"a\":{\"b\":[1]}}", 0, 0},
    {"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":2}]", "{\"a\":2}", 0, 0},
    {"[1,2]", "[{\"op\":\"add\",\"path\":\"/1\",\"value\":9}]", "[1,9,2]", 0, 0},
    {"[1,2]", "[{\"op\":\"add\",\"path\":\"/2\",\"value\":9}]", "[1,2,9]", 0, 0},
    {"[1,2]", "[{\"op\":\"add\",\"path\":\"/-\",\"value\":9}]", "[1,2,9]", 0, 0},
    {"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"\",\"value\":[1]}]", "[1]", 0, 0},
    {"{\"spec\":{\"initContainers\":[]},\"metadata\":{\"annotations\":{}}}",
     "[{\"op\":\"add\",\"path\":\"/spec/initContainers/-\",\"value\":{\"name\":\"preflight\"}},"
     "{\"op\":\"add\",\"path\":\"/metadata/annotations/nvsentinel.nvidia.com~1preflight-checks\","
     "\"value\":\"dcgm\"}]",
     "{\"spec\":{\"initContainers\":[{\"name\":\"preflight\"}]},\"metadata\":{\"annotations\":"
     "{\"nvsentinel.nvidia.com/preflight-checks\":\"dcgm\"}}}",
     0, 0},
    {"[1,2]", "[{\"op\":\"add\",\"path\":\"/3\",\"value\":9}]", NULL, GR_EINVAL,
     "patch[0] (op \"add\", path \"/3\"): array index 3 is out of range (array has 2 elements"},
    {"[1,2]", "[{\"op\":\"add\",\"path\":\"/01\",\"value\":9}]", NULL, GR_EINVAL,
     "\"01\" is not a valid array index"},
    {"{}", "[{\"op\":\"add\",\"path\":\"/a/b\",\"value\":1}]", NULL, GR_ENOTFOUND,
     "path: member \"a\" does not exist"},
    {"{\"a\":\"s\"}", "[{\"op\":\"add\",\"path\":\"/a/b\",\"value\":1}]", NULL, GR_EINVAL,
     "cannot add \"b\" to a string"},
    {"{}", "[{\"op\":\"add\",\"path\":\"/a\"}]", NULL, GR_EINVAL,
     "patch[0] (op \"add\", path \"/a\"): missing \"value\" member"},
    {"{}", "[{\"op\":\"add\",\"path\":\"a\",\"value\":1}]", NULL, GR_EINVAL,
     "must be empty or start with \"/\""},
    /* remove */
    {"{\"a\":1,\"b\":2}", "[{\"op\":\"remove\",\"path\":\"/a\"}]", "{\"b\":2}", 0, 0},
    {"[1,2,3]", "[{\"op\":\"remove\",\"path\":\"/1\"}]", "[1,3]", 0, 0},
    {"[1]", "[{\"op\":\"remove\",\"path\":\"/1\"}]", NULL, GR_ENOTFOUND, "out of range"},
    {"[1]", "[{\"op\":\"remove\",\"path\":\"/-\"}]", NULL, GR_EINVAL, "not a valid array index"},
    {"{}", "[{\"op\":\"remove\",\"path\":\"/x\"}]", NULL, GR_ENOTFOUND,
     "member \"x\" does not exist"},
    {"{}", "[{\"op\":\"remove\",\"path\":\"\"}]", NULL, GR_EINVAL, "cannot remove the whole"},
    /* replace */
    {"{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":[2]}]", "{\"a\":[2]}", 0, 0},
    {"[1,2]", "[{\"op\":\"replace\",\"path\":\"/0\",\"value\":0}]", "[0,2]", 0, 0},
    {"{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":3}]", "3", 0, 0},
    {"{}", "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":1}]", NULL, GR_ENOTFOUND,
     "use \"add\" to create it"},
    {"[1]", "[{\"op\":\"replace\",\"path\":\"/1\",\"value\":1}]", NULL, GR_ENOTFOUND,
     "out of range"},
    /* move */
    {"{\"a\":{\"b\":1},\"c\":{}}", "[{\"op\":\"move\",\"from\":\"/a/b\",\"path\":\"/c/d\"}]",
     "{\"a\":{},\"c\":{\"d\":1}}", 0, 0},
    {"[1,2,3]", "[{\"op\":\"move\",\"from\":\"/0\",\"path\":\"/-\"}]", "[2,3,1]", 0, 0},
    {"{\"a\":1}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a\"}]", "{\"a\":1}", 0, 0},
    {"{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b/c\"}]", NULL,
     GR_EINVAL, "cannot move \"/a\" into one of its own children"},
    {"{\"a\":1}", "[{\"op\":\"move\",\"from\":\"/x\",\"path\":\"/y\"}]", NULL, GR_ENOTFOUND,
     "from: member \"x\" does not exist"},
    {"{\"a\":1}", "[{\"op\":\"move\",\"path\":\"/y\"}]", NULL, GR_EINVAL,
     "missing \"from\" member"},
    /* copy */
    {"{\"a\":[1]}", "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/b\"}]", "{\"a\":[1],\"b\":[1]}",
     0, 0},
    {"{\"a\":{\"x\":1}}", "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/a/y\"}]",
     "{\"a\":{\"x\":1,\"y\":{\"x\":1}}}", 0, 0},
    /* test */
    {"{\"a\":[1,{\"b\":2}]}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":[1.0,{\"b\":2}]}]",
     "{\"a\":[1,{\"b\":2}]}", 0, 0},
    {"{\"a\":\"10\"}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":10}]", NULL, GR_ECONFLICT,
     "patch[0] (op \"test\", path \"/a\"): test failed"},
    {"{}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":null}]", NULL, GR_ENOTFOUND,
     "does not exist"},
    /* malformed operations */
    {"{}", "[{\"op\":\"spam\",\"path\":\"/a\"}]", NULL, GR_EINVAL,
     "patch[0] (op \"spam\"): unknown operation"},
    {"{}", "[{\"path\":\"/a\"}]", NULL, GR_EINVAL, "patch[0]: missing \"op\" member"},
    {"{}", "[{\"op\":1,\"path\":\"/a\"}]", NULL, GR_EINVAL, "\"op\" must be a string"},
    {"{}", "[{\"op\":\"add\",\"value\":1}]", NULL, GR_EINVAL, "missing \"path\" member"},
    {"{}", "[{\"op\":\"add\",\"path\":5,\"value\":1}]", NULL, GR_EINVAL,
     "\"path\" must be a string"},
    {"{}", "[{\"op\":\"add\",\"path\":\"/a\\u0000b\",\"value\":1}]", NULL, GR_EINVAL,
     "contains a NUL"},
    {"{}", "[1]", NULL, GR_EINVAL, "patch[0]: an operation must be an object, not a number"},
    {"{}", "{}", NULL, GR_EINVAL, "must be an array of operations (got object)"},
    /* the failing index is named */
    {"{}",
     "[{\"op\":\"add\",\"path\":\"/a\",\"value\":1},{\"op\":\"add\",\"path\":\"/b\",\"value\":2},"
     "{\"op\":\"remove\",\"path\":\"/c\"}]",
     NULL, GR_ENOTFOUND, "patch[2] (op \"remove\", path \"/c\")"},
    /* unknown members are ignored */
    {"{}", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":1,\"from\":7,\"x\":[]}]", "{\"a\":1}", 0, 0},
};

static void test_patch_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof patch_cases / sizeof patch_cases[0]; i++) {
        const pcase *tc = &patch_cases[i];
        json_t *doc = J(tc->doc);
        json_t *patch = json_loads(tc->patch, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        assert_non_null(patch);
        json_t *before = json_deep_copy(doc);
        json_t *orig = doc;
        gr_err e;
        int rc = gr_json_patch_apply(&doc, patch, &e);
        if (tc->want) {
            if (rc != GR_OK)
                fail_msg("case %zu: %s", i, e.msg);
            assert_json(doc, tc->want);
        } else {
            if (rc == GR_OK)
                fail_msg("case %zu: expected failure", i);
            if (rc != tc->code || !strstr(e.msg, tc->msg))
                fail_msg("case %zu: got %s \"%s\", want %s \"%s\"", i, gr_rc_name(rc), e.msg,
                         gr_rc_name(tc->code), tc->msg);
            /* atomic: untouched, same object */
            assert_ptr_equal(doc, orig);
            assert_true(gr_json_equal(doc, before));
        }
        json_decref(before);
        json_decref(doc);
        json_decref(patch);
    }
}

static void test_patch_atomic_after_partial_success(void **state)
{
    (void)state;
    json_t *doc = J("{\"a\":[1,2],\"b\":{\"c\":1}}");
    json_t *alias = json_object_get(doc, "a"); /* a reference the caller still holds */
    json_incref(alias);
    json_t *patch = J("[{\"op\":\"add\",\"path\":\"/a/-\",\"value\":3},"
                      "{\"op\":\"remove\",\"path\":\"/b/c\"},"
                      "{\"op\":\"replace\",\"path\":\"\",\"value\":{}},"
                      "{\"op\":\"test\",\"path\":\"/nope\",\"value\":1}]");
    gr_err e;
    assert_int_equal(gr_json_patch_apply(&doc, patch, &e), GR_ENOTFOUND);
    assert_non_null(strstr(e.msg, "patch[3]"));
    assert_json(doc, "{\"a\":[1,2],\"b\":{\"c\":1}}");
    assert_json(alias, "[1,2]");

    /* a successful patch does not modify values reachable from the old doc */
    json_t *ok = J("[{\"op\":\"add\",\"path\":\"/a/-\",\"value\":3}]");
    assert_int_equal(gr_json_patch_apply(&doc, ok, &e), GR_OK);
    assert_json(doc, "{\"a\":[1,2,3],\"b\":{\"c\":1}}");
    assert_json(alias, "[1,2]");

    /* apply_copy leaves the input alone */
    json_t *out = NULL;
    assert_int_equal(gr_json_patch_apply_copy(doc, ok, &out, &e), GR_OK);
    assert_json(out, "{\"a\":[1,2,3,3],\"b\":{\"c\":1}}");
    assert_json(doc, "{\"a\":[1,2,3],\"b\":{\"c\":1}}");
    json_decref(out);
    /* values from the patch are copied, not shared */
    json_t *objpatch = J("[{\"op\":\"add\",\"path\":\"/o\",\"value\":{\"k\":1}}]");
    assert_int_equal(gr_json_patch_apply(&doc, objpatch, &e), GR_OK);
    json_object_set_new(json_object_get(json_array_get(objpatch, 0), "value"), "k",
                        json_integer(2));
    assert_json(json_object_get(doc, "o"), "{\"k\":1}");
    json_decref(objpatch);
    json_decref(ok);
    json_decref(alias);
    json_decref(patch);
    json_decref(doc);
}

static void test_patch_copy_bomb(void **state)
{
    (void)state;
    /* each copy doubles the document: 2^64 nodes unless capped */
    json_t *doc = J("{\"a\":{\"x\":[1,2,3,4,5,6,7,8]}}");
    json_t *patch = json_array();
    for (int i = 0; i < 64; i++) {
        char op[100];
        snprintf(op, sizeof op, "{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/a/y%d\"}", i);
        json_array_append_new(patch, J(op));
    }
    gr_err e;
    assert_int_equal(gr_json_patch_apply(&doc, patch, &e), GR_ETOOBIG);
    assert_non_null(strstr(e.msg, "more than 1000000 nodes"));
    assert_json(doc, "{\"a\":{\"x\":[1,2,3,4,5,6,7,8]}}");
    json_decref(patch);
    json_decref(doc);
}

static void test_patch_builder(void **state)
{
    (void)state;
    json_t *patch = json_array();
    gr_err e;
    char *ann = gr_json_ptr_build("metadata", "annotations",
                                  "nvsentinel.nvidia.com/preflight-checks", NULL);
    assert_int_equal(
        gr_json_patch_add(patch, "/spec/initContainers/-", J("{\"name\":\"preflight-dcgm\"}"), &e),
        GR_OK);
    assert_int_equal(gr_json_patch_add(patch, ann, json_string("dcgm,nccl"), &e), GR_OK);
    assert_int_equal(gr_json_patch_test(patch, "/spec/x", json_integer(1), &e), GR_OK);
    assert_int_equal(gr_json_patch_replace(patch, "/spec/x", json_integer(2), &e), GR_OK);
    assert_int_equal(gr_json_patch_copy(patch, "/spec/x", "/spec/y", &e), GR_OK);
    assert_int_equal(gr_json_patch_move(patch, "/spec/y", "/spec/z", &e), GR_OK);
    assert_int_equal(gr_json_patch_remove(patch, "/spec/z", &e), GR_OK);
    assert_json(patch, "[{\"op\":\"add\",\"path\":\"/spec/initContainers/-\",\"value\":{\"name\":"
                       "\"preflight-dcgm\"}},"
                       "{\"op\":\"add\",\"path\":\"/metadata/annotations/"
                       "nvsentinel.nvidia.com~1preflight-checks\",\"value\":\"dcgm,nccl\"},"
                       "{\"op\":\"test\",\"path\":\"/spec/x\",\"value\":1},"
                       "{\"op\":\"replace\",\"path\":\"/spec/x\",\"value\":2},"
                       "{\"op\":\"copy\",\"from\":\"/spec/x\",\"path\":\"/spec/y\"},"
                       "{\"op\":\"move\",\"from\":\"/spec/y\",\"path\":\"/spec/z\"},"
                       "{\"op\":\"remove\",\"path\":\"/spec/z\"}]");
    /* and it applies */
    json_t *doc = J("{\"metadata\":{\"annotations\":{}},\"spec\":{\"initContainers\":[],\"x\":1}}");
    assert_int_equal(gr_json_patch_apply(&doc, patch, &e), GR_OK);
    assert_json(doc, "{\"metadata\":{\"annotations\":{\"nvsentinel.nvidia.com/preflight-checks\":"
                     "\"dcgm,nccl\"}},\"spec\":{\"initContainers\":[{\"name\":\"preflight-dcgm\"}],"
                     "\"x\":2}}");
    json_decref(doc);

    /* errors: invalid pointers, missing values, not an array; values stolen */
    size_t n = json_array_size(patch);
    assert_int_equal(gr_json_patch_add(patch, "spec", json_integer(1), &e), GR_EINVAL);
    assert_non_null(strstr(e.msg, "add path"));
    assert_int_equal(gr_json_patch_add(patch, "/a", NULL, &e), GR_EINVAL);
    assert_int_equal(gr_json_patch_move(patch, "/a~", "/b", &e), GR_EINVAL);
    assert_non_null(strstr(e.msg, "move from"));
    assert_int_equal(gr_json_patch_copy(patch, NULL, "/b", &e), GR_EINVAL);
    assert_int_equal(json_array_size(patch), n);
    json_t *notarr = json_object();
    assert_int_equal(gr_json_patch_replace(notarr, "/a", json_integer(1), &e), GR_EINVAL);
    json_decref(notarr);
    free(ann);
    json_decref(patch);
}

/* ---------------------------------------------------------- merge patch */

static void test_merge_patch_rfc7386_appendix(void **state)
{
    (void)state;
    /* RFC 7386 Appendix A, every example */
    static const char *const cases[][3] = {
        {"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
        {"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
        {"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
        {"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}"},
        {"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
        {"[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]"},
        {"{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]"},
        {"{\"a\":\"foo\"}", "null", "null"},
        {"{\"a\":\"foo\"}", "\"bar\"", "\"bar\""},
        {"{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}"},
        {"[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}"},
        {"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *t = J(cases[i][0]), *p = J(cases[i][1]);
        json_t *keep = t;
        json_incref(keep);
        gr_err e;
        assert_int_equal(gr_json_merge_patch_apply(&t, p, &e), GR_OK);
        assert_json(t, cases[i][2]);
        /* the original value is not modified in place */
        assert_json(keep, cases[i][0]);
        json_decref(keep);
        json_decref(t);
        json_decref(p);
    }
}

static void test_merge_patch_create(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        {"{\"a\":1,\"b\":{\"c\":1,\"d\":2},\"e\":[1]}", "{\"a\":1,\"b\":{\"c\":3},\"f\":true}",
         "{\"b\":{\"c\":3,\"d\":null},\"e\":null,\"f\":true}"},
        {"{\"a\":{\"b\":1}}", "{\"a\":{\"b\":1}}", "{}"},
        {"{\"a\":[1,2]}", "{\"a\":[1,3]}", "{\"a\":[1,3]}"},
        {"{\"a\":1}", "{\"a\":{\"x\":[null]}}", "{\"a\":{\"x\":[null]}}"},
        {"{\"a\":{\"x\":1}}", "{\"a\":2}", "{\"a\":2}"},
        {"{\"a\":1}", "[1]", "[1]"},
        {"[1]", "{\"a\":1}", "{\"a\":1}"},
        {"3", "3", "3"},
        {"{\"a\":1}", "{\"a\":1.0}", "{}"},
        {"{\"a\":null}", "{\"a\":null}", "{}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *o = J(cases[i][0]), *m = J(cases[i][1]), *p = NULL;
        gr_err e;
        assert_int_equal(gr_json_merge_patch_create(o, m, &p, &e), GR_OK);
        assert_json(p, cases[i][2]);
        /* round trip: apply(orig, create(orig, mod)) == mod */
        assert_int_equal(gr_json_merge_patch_apply(&o, p, &e), GR_OK);
        if (!gr_json_equal(o, m))
            fail_msg("case %zu: round trip failed", i);
        json_decref(o);
        json_decref(m);
        json_decref(p);
    }
    /* null members cannot be expressed */
    json_t *o = J("{\"a\":{\"b\":1}}"), *m = J("{\"a\":{\"b\":null}}"), *p = NULL;
    gr_err e;
    assert_int_equal(gr_json_merge_patch_create(o, m, &p, &e), GR_EINVAL);
    assert_null(p);
    assert_non_null(strstr(e.msg, "cannot set /a/b to null"));
    json_decref(m);
    m = J("{\"a\":{\"b\":1},\"n~/x\":{\"y\":null}}");
    assert_int_equal(gr_json_merge_patch_create(o, m, &p, &e), GR_EINVAL);
    assert_non_null(strstr(e.msg, "cannot set /n~0~1x/y to null"));
    json_decref(m);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_strict),
        cmocka_unit_test(test_dump_buf),
        cmocka_unit_test(test_equal),
        cmocka_unit_test(test_pointer_escape_and_build),
        cmocka_unit_test(test_pointer_parse),
        cmocka_unit_test(test_pointer_resolve_rfc6901),
        cmocka_unit_test(test_patch_cases),
        cmocka_unit_test(test_patch_atomic_after_partial_success),
        cmocka_unit_test(test_patch_copy_bomb),
        cmocka_unit_test(test_patch_builder),
        cmocka_unit_test(test_merge_patch_rfc7386_appendix),
        cmocka_unit_test(test_merge_patch_create),
        cmocka_unit_test(test_object_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
