/* Validators reproduce the API server's (apimachinery v0.36) grammar and
 * messages byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_kube_validate.h"

#define RX_KEY                                                                                  \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "      \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

static void test_dns1123_label(void **state)
{
    (void)state;
    gr_kube_msgs m;
    assert_int_equal(gr_kube_is_dns1123_label("a", &m), 0);
    assert_int_equal(gr_kube_is_dns1123_label("my-name-123", &m), 0);
    assert_int_equal(gr_kube_is_dns1123_label("a.b", &m), 1);
    assert_string_equal(m.msg[0], "must not contain dots");
    assert_int_equal(gr_kube_is_dns1123_label("-a", &m), 1);
    assert_string_equal(
        m.msg[0], "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                  "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',"
                  "  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    assert_int_equal(gr_kube_is_dns1123_label("", &m), 1);
    char l64[65];
    memset(l64, 'a', 64);
    l64[64] = 0;
    assert_int_equal(gr_kube_is_dns1123_label(l64, &m), 1);
    assert_string_equal(m.msg[0], "must be no more than 63 bytes");
    l64[63] = 0;
    assert_int_equal(gr_kube_is_dns1123_label(l64, NULL), 0);
    assert_int_equal(gr_kube_is_dns1123_label("Abc", NULL), 1);
}

static void test_dns1123_subdomain(void **state)
{
    (void)state;
    gr_kube_msgs m;
    assert_int_equal(gr_kube_is_dns1123_subdomain("example.com", &m), 0);
    assert_int_equal(gr_kube_is_dns1123_subdomain("a..b", &m), 1);
    assert_string_equal(
        m.msg[0],
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-"
        "9])?)*')");
    char big[300];
    memset(big, 'a', 254);
    big[254] = 0;
    assert_int_equal(gr_kube_is_dns1123_subdomain(big, &m), 1);
    assert_string_equal(m.msg[0], "must be no more than 253 bytes");
    assert_int_equal(gr_kube_is_dns1123_subdomain("UPPER", NULL), 1);
    assert_int_equal(gr_kube_is_dns1123_subdomain("a.b-c.d", NULL), 0);
}

static void test_qualified_name(void **state)
{
    (void)state;
    gr_kube_msgs m;
    assert_int_equal(gr_kube_is_qualified_name("app", &m), 0);
    assert_int_equal(gr_kube_is_qualified_name("example.com/My_Name.1", &m), 0);
    assert_int_equal(gr_kube_is_qualified_name("a/b/c", &m), 1);
    assert_string_equal(m.msg[0],
                        "a valid label key " RX_KEY " with an optional DNS subdomain prefix and "
                        "'/' (e.g. 'example.com/MyName')");
    /* empty name part: both the empty and the regex message, as upstream */
    assert_int_equal(gr_kube_is_qualified_name("", &m), 2);
    assert_string_equal(m.msg[0], "name part must be non-empty");
    assert_string_equal(m.msg[1], "name part " RX_KEY);
    assert_int_equal(gr_kube_is_qualified_name("/x", &m), 1);
    assert_string_equal(m.msg[0], "prefix part must be non-empty");
    assert_int_equal(gr_kube_is_qualified_name("Bad_Prefix/x", &m), 1);
    assert_true(strncmp(m.msg[0], "prefix part a lowercase RFC 1123 subdomain", 42) == 0);
    char k[80];
    memset(k, 'k', 64);
    k[64] = 0;
    assert_int_equal(gr_kube_is_qualified_name(k, &m), 1);
    assert_string_equal(m.msg[0], "name part must be no more than 63 bytes");
    assert_int_equal(gr_kube_is_qualified_name("-x", &m), 1);
    assert_string_equal(m.msg[0], "name part " RX_KEY);
}

static void test_label_value(void **state)
{
    (void)state;
    gr_kube_msgs m;
    assert_int_equal(gr_kube_is_label_value("", &m), 0);
    assert_int_equal(gr_kube_is_label_value("My_value-1.2", &m), 0);
    assert_int_equal(gr_kube_is_label_value("a b", &m), 1);
    assert_string_equal(
        m.msg[0], "a valid label must be an empty string or consist of alphanumeric characters, "
                  "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                  "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
    char v[80];
    memset(v, 'v', 64);
    v[64] = 0;
    assert_int_equal(gr_kube_is_label_value(v, &m), 1);
    assert_string_equal(m.msg[0], "must be no more than 63 bytes");
}

static void test_field_errors(void **state)
{
    (void)state;
    gr_err err;
    assert_int_equal(gr_kube_validate_name("ok-name", GR_KUBE_NAME_SUBDOMAIN, NULL, &err), GR_OK);
    assert_int_equal(gr_kube_validate_name("Bad", GR_KUBE_NAME_LABEL, NULL, &err), GR_EINVAL);
    assert_true(strncmp(err.msg,
                        "metadata.name: Invalid value: \"Bad\": a lowercase RFC 1123 label",
                        63) == 0);
    assert_int_equal(gr_kube_validate_name("", GR_KUBE_NAME_LABEL, NULL, &err), GR_EINVAL);
    assert_string_equal(err.msg, "metadata.name: Required value: name or generateName is required");
    json_t *labels = json_pack("{s:s}", "app", "a\"b");
    assert_int_equal(gr_kube_validate_labels(labels, NULL, &err), GR_EINVAL);
    assert_true(strncmp(err.msg, "metadata.labels: Invalid value: \"a\\\"b\": a valid label", 53) ==
                0);
    json_decref(labels);
    json_t *ann = json_pack("{s:s}", "Example.COM/Key", "x");
    assert_int_equal(gr_kube_validate_annotations(ann, NULL, &err), GR_OK); /* case-insensitive */
    char *big = malloc(300 * 1024);
    memset(big, 'x', 300 * 1024 - 1);
    big[300 * 1024 - 1] = 0;
    json_object_set_new(ann, "big", json_string(big));
    free(big);
    assert_int_equal(gr_kube_validate_annotations(ann, NULL, &err), GR_EINVAL);
    assert_string_equal(err.msg,
                        "metadata.annotations: Too long: may not be more than 262144 bytes");
    json_decref(ann);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dns1123_label),  cmocka_unit_test(test_dns1123_subdomain),
        cmocka_unit_test(test_qualified_name), cmocka_unit_test(test_label_value),
        cmocka_unit_test(test_field_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
