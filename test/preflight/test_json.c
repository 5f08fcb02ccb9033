/*
 * test_json.c — the admission fast path against the slow reference it
 * replaces: the in-place JSON reader and the compact writer against
 * jansson, the text patch writer against the json_t patch, the compiled
 * globs against gr_glob_match(), and the patch size cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_glob.h"
#include "gr_json.h"
#include "gr_preflight.h"
#include "gr_preflight_internal.h"

/* Parse with both; they must agree on acceptance and on the value. */
static void check_parse(const char *text, size_t len, bool want_ok)
{
    json_t *ref = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    json_t *mine = NULL;
    int rc = gr_pf_json_parse(text, len, &mine);
    if ((ref != NULL) != want_ok || (rc == GR_OK) != want_ok)
        fail_msg("%.80s: jansson %s, gr_pf_json_parse %s, expected %s", text,
                 ref ? "accepts" : "rejects", rc == GR_OK ? "accepts" : "rejects",
                 want_ok ? "accept" : "reject");
    if (ref) {
        assert_true(json_equal(ref, mine));
        char *a = json_dumps(ref, JSON_COMPACT | JSON_ENCODE_ANY);
        char *b = json_dumps(mine, JSON_COMPACT | JSON_ENCODE_ANY);
        assert_string_equal(a, b); /* same member order */
        free(a);
        free(b);
    }
    json_decref(ref);
    json_decref(mine);
}

static void test_parse_matches_jansson(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "{}",
        " [ ] ",
        "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
        "[0,-0,1.5,-2e10,1E+2,1e-2,9223372036854775807,-9223372036854775808]",
        "[1e308,4.9e-324,1e-400]",
        "[\"\\u00e9\\ud83d\\ude00\\n\\t\\\"\\\\\\/\\b\\f\\r\\u001f\"]",
        "{\"k\\u0041\":\"x\",\"kA2\":\"y\"}",
        "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]",
        "{\"\":\"\"}",
    };
    static const char *const bad[] = {
        "",
        "\"scalar\"",
        "1",
        "{} x",
        "{\"a\":1,\"a\":2}",     /* duplicate key */
        "[9223372036854775808]", /* too big integer */
        "[-9223372036854775809]",
        "[1e309]", /* real overflow */
        "[01]",
        "[1.]",
        "[.5]",
        "[1e]",
        "[-]",
        "[+1]",
        "[\"\\u0000\"]", /* NUL without JSON_ALLOW_NUL */
        "[\"\\ud800\"]", /* lone high surrogate */
        "[\"\\udc00\"]", /* lone low surrogate */
        "[\"\\ud800\\u0041\"]",
        "[\"\\x\"]",
        "[\"\\u12g4\"]",
        "[\"a\tb\"]",             /* raw control character */
        "[\"\xc0\xaf\"]",         /* overlong */
        "[\"\xed\xa0\x80\"]",     /* UTF-8 surrogate */
        "[\"\xf4\x90\x80\x80\"]", /* above U+10FFFF */
        "[\"\xe2\x82\"]",         /* truncated */
        "[\"abc",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{a:1}",
        "[tru]",
        "[nul]",
        "[1 2]",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        check_parse(ok[i], strlen(ok[i]), true);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        check_parse(bad[i], strlen(bad[i]), false);
    check_parse("[\"a\0b\"]", 7, false); /* raw NUL byte */
    /* jansson drops one NUL right after a number or literal */
    check_parse("[1\0]", 4, true);
    check_parse("[true\0,-2.5e3\0]", 15, true);
    check_parse("[1\0\0]", 5, false);
    check_parse("[\"a\"\0]", 6, false);
    check_parse("[1]\0", 4, false);

    /* jansson's depth limit counts every value: 2048 nested arrays are
     * fine, a scalar inside them is one too deep */
    size_t d = 2048;
    char *deep = malloc(2 * d + 2);
    assert_non_null(deep);
    memset(deep, '[', d);
    memset(deep + d, ']', d);
    check_parse(deep, 2 * d, true);
    memmove(deep + d + 1, deep + d, d);
    deep[d] = '1';
    check_parse(deep, 2 * d + 1, false);
    free(deep);
}

static void check_dump(const json_t *v)
{
    char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_non_null(want);
    gr_buf b = GR_BUF_INIT((size_t)64 << 20);
    assert_int_equal(gr_pf_json_value(&b, v), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), want);
    gr_buf_free(&b);
    free(want);
}

static void test_writer_matches_json_dumps(void **state)
{
    (void)state;
    /* every ASCII byte alone and inside text */
    for (int c = 1; c < 128; c++) {
        char s[4] = {'a', (char)c, 'z', 0};
        json_t *v = json_string(s);
        assert_non_null(v);
        check_dump(v);
        json_decref(v);
    }
    json_t *v =
        json_pack("{s:[i,I,f,f,f,b,n],s:{s:s,s:s},s:s}", "nums", 7, (json_int_t)INT64_MIN, 0.1,
                  1e300, -2.5, 1, "q\"u/o\\te", "x\x1f", "k\n", "\xe2\x82\xac", "", "", "end");
    assert_non_null(v);
    check_dump(v);
    json_decref(v);
}

static const char k_cfg[] =
    "networkResourceNames: [nvidia.com/mlnxnics]\n"
    "connectorTokenAudience: aud\n"
    "connectorTokenMountPath: /var/run/tok\n"
    "connectorTokenExpirationSeconds: 3600\n"
    "gangCoordination: {enabled: true, ncclTopoConfigMap: topo,\n"
    "  extraVolumeMounts: [{name: data, mountPath: /data2}]}\n"
    "initContainers:\n"
    "  - name: a\n"
    "    image: a:v1\n"
    "    resources: {limits: null, requests: {cpu: 2}, claims: [{name: c1}]}\n"
    "    env: [{name: NCCL_DEBUG, value: INFO}]\n"
    "  - {name: b, image: b:v1, volumeMounts: []}\n";

static const char k_pod[] =
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{"
    "\"resourceClaims\":[{\"name\":\"c1\"},{\"name\":\"c2\"},{\"name\":\"c2\"}],"
    "\"volumes\":[{\"name\":\"data\",\"emptyDir\":{}}],"
    "\"containers\":[{\"name\":\"t\",\"env\":[{\"name\":\"NCCL_IB_HCA\",\"value\":\"m\\u00e9\\n\"},"
    "{\"name\":\"NCCL_DEBUG\",\"value\":\"WARN\"}],"
    "\"volumeMounts\":[{\"name\":\"nccl-x\",\"mountPath\":\"/dev/shm\"}],"
    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":8,\"nvidia.com/mlnxnics\":\"4\"}}}]}}";

static int gang_resolve(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                        gr_err *err)
{
    (void)ud;
    (void)pod;
    (void)ns;
    (void)err;
    ctx->gang_id = strdup("kubernetes-ns-\"g\"");
    ctx->configmap_name = strdup("preflight-kubernetes-ns-g");
    return GR_OK;
}

static void test_text_patch_equals_json_patch(void **state)
{
    (void)state;
    gr_preflight_config *cfg = NULL;
    gr_err err;
    assert_int_equal(gr_preflight_config_parse(k_cfg, strlen(k_cfg), "t", NULL, NULL, &cfg, &err),
                     GR_OK);
    json_t *pod = json_loads(k_pod, 0, NULL);
    assert_non_null(pod);
    gr_preflight_gang_ops ops = {.resolve = gang_resolve};

    gr_preflight_result res;
    assert_int_equal(gr_preflight_inject(cfg, &ops, pod, "ns", &res, &err), GR_OK);
    assert_int_equal(res.outcome, GR_PREFLIGHT_INJECTED);
    char *want = json_dumps(res.patch, JSON_COMPACT);
    gr_preflight_result_clear(&res);

    gr_buf text = GR_BUF_INIT((size_t)64 << 20);
    assert_int_equal(gr_preflight_inject_text(cfg, &ops, pod, "ns", &text, &res, &err), GR_OK);
    assert_int_equal(res.outcome, GR_PREFLIGHT_INJECTED);
    assert_int_equal(res.n_injected, 2);
    assert_null(res.patch);
    assert_string_equal(gr_buf_cstr(&text), want);
    /* the parts the documented rules put there: claims mirrored once each,
     * the template's own claim kept, null limits replaced, the inherited
     * /dev/shm mount wins over dshm, extraVolumeMounts for a pod volume */
    assert_non_null(strstr(want, "\"claims\":[{\"name\":\"c1\"},{\"name\":\"c2\"}]"));
    assert_non_null(strstr(want, "\"limits\":{\"nvidia.com/gpu\":\"8\""));
    assert_null(strstr(want, "\"name\":\"dshm\",\"mountPath\""));
    assert_non_null(strstr(want, "{\"name\":\"data\",\"mountPath\":\"/data2\",\"readOnly\":true}"));
    gr_preflight_result_clear(&res);
    free(want);

    /* the cap: GR_ETOOBIG and the buffer left as it was */
    gr_buf small = GR_BUF_INIT(64);
    assert_int_equal(gr_buf_puts(&small, "keep"), GR_OK);
    assert_int_equal(gr_preflight_inject_text(cfg, &ops, pod, "ns", &small, &res, &err),
                     GR_ETOOBIG);
    assert_string_equal(gr_buf_cstr(&small), "keep");
    assert_null(res.gang.gang_id);
    gr_buf_free(&small);

    gr_buf_free(&text);
    json_decref(pod);
    gr_preflight_config_free(cfg);
}

static void test_compiled_globs_match_gr_glob(void **state)
{
    (void)state;
    static const char *const pats[] = {"NCCL_*", "LD_LIBRARY_PATH", "*", "[A-F]*", "UCX_?", "a\\*",
                                       "x*y"};
    static const char *const names[] = {
        "NCCL_DEBUG", "NCCL_", "NCCL_a/b", "LD_LIBRARY_PATH", "LD_LIBRARY_PATHX",
        "",           "a/b",   "Ba",       "UCX_T",           "a*",
        "xzzy",       "NCC"};
    for (size_t p = 0; p < sizeof pats / sizeof *pats; p++) {
        char *yaml = NULL;
        assert_true(asprintf(&yaml, "ncclEnvPatterns: ['%s']\n", pats[p]) > 0);
        gr_preflight_config *cfg = NULL;
        gr_err err;
        assert_int_equal(gr_preflight_config_parse(yaml, strlen(yaml), "t", NULL, NULL, &cfg, &err),
                         GR_OK);
        free(yaml);
        for (size_t n = 0; n < sizeof names / sizeof *names; n++)
            if (gr_pf_glob_any(cfg->compiled->env_globs, cfg->compiled->n_env_globs, names[n]) !=
                gr_glob_match(pats[p], names[n]))
                fail_msg("pattern %s, name %s", pats[p], names[n]);
        gr_preflight_config_free(cfg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_matches_jansson),
        cmocka_unit_test(test_writer_matches_json_dumps),
        cmocka_unit_test(test_text_patch_equals_json_patch),
        cmocka_unit_test(test_compiled_globs_match_gr_glob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
