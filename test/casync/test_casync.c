/* Unit tests of the pure half of src/casync (PF-171..PF-174). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gr_casync.h"

static void test_desired_object(void **state)
{
    (void)state;
    json_t *cm = gr_casync_desired("team-a", "-----BEGIN CERTIFICATE-----\nx\n");
    assert_non_null(cm);
    /* PF-171: the ConfigMap name, key and labels of the contract / facts §2.12 */
    const json_t *md = json_object_get(cm, "metadata");
    assert_string_equal(json_string_value(json_object_get(md, "name")),
                        "nvsentinel-platform-connector-ca");
    assert_string_equal(json_string_value(json_object_get(md, "namespace")), "team-a");
    const json_t *l = json_object_get(md, "labels");
    assert_string_equal(json_string_value(json_object_get(l, "nvsentinel.nvidia.com/managed-by")),
                        "preflight");
    assert_string_equal(
        json_string_value(json_object_get(l, "nvsentinel.nvidia.com/platform-connector-ca")),
        "true");
    assert_string_equal(json_string_value(json_object_get(json_object_get(cm, "data"), "ca.crt")),
                        "-----BEGIN CERTIFICATE-----\nx\n");
    assert_false(gr_casync_needs_update(cm, "-----BEGIN CERTIFICATE-----\nx\n"));
    assert_true(gr_casync_needs_update(cm, "other"));
    json_decref(cm);
}

static void test_needs_update_and_restore(void **state)
{
    (void)state;
    const char *ca = "PEM";
    json_t *cm = gr_casync_desired("n", ca);
    /* a user-modified copy: extra key, changed label, binaryData */
    json_object_set_new(json_object_get(cm, "data"), "extra", json_string("x"));
    assert_true(gr_casync_needs_update(cm, ca));
    json_object_del(json_object_get(cm, "data"), "extra");
    assert_false(gr_casync_needs_update(cm, ca));
    json_t *labels = json_object_get(json_object_get(cm, "metadata"), "labels");
    json_object_set_new(labels, "nvsentinel.nvidia.com/managed-by", json_string("me"));
    assert_true(gr_casync_needs_update(cm, ca));
    json_object_del(labels, "nvsentinel.nvidia.com/managed-by");
    assert_true(gr_casync_needs_update(cm, ca));
    json_object_set_new(labels, "app", json_string("keep"));
    json_object_set_new(cm, "binaryData", json_pack("{s:s}", "b", "AA=="));
    json_object_set_new(json_object_get(cm, "metadata"), "resourceVersion", json_string("42"));
    gr_err err;
    assert_int_equal(gr_casync_make_desired(cm, "NEW", &err), GR_OK);
    assert_false(gr_casync_needs_update(cm, "NEW")); /* restored (PF-174) */
    assert_null(json_object_get(cm, "binaryData"));
    assert_string_equal(json_string_value(json_object_get(labels, "app")), "keep");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(cm, "metadata"), "resourceVersion")),
        "42");
    json_decref(cm);

    /* no data, wrong types */
    json_t *bare = json_pack("{s:{s:s}}", "metadata", "name", "x");
    assert_true(gr_casync_needs_update(bare, ca));
    assert_int_equal(gr_casync_make_desired(bare, ca, &err), GR_OK);
    assert_false(gr_casync_needs_update(bare, ca));
    json_decref(bare);
    json_t *notobj = json_string("x");
    assert_int_equal(gr_casync_make_desired(notobj, ca, &err), GR_EINVAL);
    json_decref(notobj);
}

static void test_validate_ca(void **state)
{
    (void)state;
    gr_err err;
    /* PF-174: an empty or whitespace-only CA file is an error */
    assert_int_equal(gr_casync_validate_ca("", 0, "/x/ca.crt", &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "/x/ca.crt: CA file is empty"));
    assert_int_equal(gr_casync_validate_ca(" \n\t\r\n", 5, NULL, &err), GR_EINVAL);
    assert_int_equal(gr_casync_validate_ca("a\0b", 3, NULL, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "NUL"));
    assert_int_equal(gr_casync_validate_ca("\xff\xfe", 2, NULL, &err), GR_EINVAL);
    assert_int_equal(gr_casync_validate_ca("\xc0\x80", 2, NULL, &err), GR_EINVAL); /* overlong */
    assert_int_equal(gr_casync_validate_ca("\xe2\x82", 2, NULL, &err), GR_EINVAL); /* cut */
    assert_int_equal(gr_casync_validate_ca("caf\xc3\xa9 \xe2\x82\xac", 9, NULL, &err), GR_OK);
    assert_int_equal(gr_casync_validate_ca("-----BEGIN CERTIFICATE-----\n", 28, NULL, &err), GR_OK);
    static char big[GR_CASYNC_CA_MAX + 1];
    memset(big, 'a', sizeof big);
    assert_int_equal(gr_casync_validate_ca(big, sizeof big, NULL, &err), GR_ETOOBIG);
    assert_int_equal(gr_casync_validate_ca(big, sizeof big - 1, NULL, &err), GR_OK);
}

static void sel(const char *json, int want_rc, const char *want)
{
    json_error_t je;
    json_t *v = json_loads(json, JSON_DECODE_ANY, &je);
    assert_non_null(v);
    gr_buf b = GR_BUF_INIT(4096);
    gr_err err;
    int rc = gr_casync_selector_string(v, "namespaceSelector", &b, &err);
    if (rc != want_rc)
        fail_msg("%s: rc %d (%s), want %d", json, rc, err.msg, want_rc);
    if (rc == GR_OK)
        assert_string_equal(gr_buf_cstr(&b), want);
    else
        assert_non_null(strstr(err.msg, want));
    gr_buf_free(&b);
    json_decref(v);
}

static void test_selector_string(void **state)
{
    (void)state;
    /* PF-173: "labelled namespaces" are the webhook's namespaceSelector */
    sel("{\"matchLabels\":{\"nvsentinel.nvidia.com/preflight\":\"enabled\"}}", GR_OK,
        "nvsentinel.nvidia.com/preflight=enabled");
    sel("{}", GR_OK, "");
    sel("null", GR_OK, "");
    sel("{\"matchLabels\":{\"a\":\"b\"},\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"In\","
        "\"values\":[\"x\",\"y\"]},{\"key\":\"u\",\"operator\":\"NotIn\",\"values\":[\"z\"]},"
        "{\"key\":\"e\",\"operator\":\"Exists\"},{\"key\":\"d\",\"operator\":\"DoesNotExist\"}]}",
        GR_OK, "a=b,t in (x,y),u notin (z),e,!d");
    sel("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
        GR_EINVAL, "namespaceSelector.matchExpressions[0].operator: must be In, NotIn");
    sel("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"In\"}]}", GR_EINVAL,
        "matchExpressions[0].values: must be a non-empty list");
    sel("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Exists\",\"values\":[\"a\"]}]}",
        GR_EINVAL, "must be empty for Exists");
    sel("{\"matchExpressions\":[{\"operator\":\"Exists\"}]}", GR_EINVAL, "key: must be set");
    sel("{\"matchLabels\":{\"a\":1}}", GR_EINVAL, "namespaceSelector.matchLabels.a");
    sel("{\"matchLabels\":[]}", GR_EINVAL, "matchLabels: must be a map");
    sel("[]", GR_EINVAL, "must be a label selector");
}

static void test_next_tick(void **state)
{
    (void)state;
    assert_int_equal(gr_casync_next_tick(5, 0), 5 + GR_CASYNC_DEFAULT_TICK_NS);
    assert_int_equal(GR_CASYNC_DEFAULT_TICK_NS, 10LL * 1000000000); /* facts §2.12: 10 s */
    assert_int_equal(gr_casync_next_tick(100, 7), 107);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_desired_object), cmocka_unit_test(test_needs_update_and_restore),
        cmocka_unit_test(test_validate_ca),    cmocka_unit_test(test_selector_string),
        cmocka_unit_test(test_next_tick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
