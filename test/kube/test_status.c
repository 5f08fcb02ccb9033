/* The API server's error body (metav1.Status) parser on real bodies (the
 * fuzz_kube_status seed corpus, test/kube/corpus_status/) and on hostile
 * ones: oversized, deeply nested, not a Status, too many causes, control
 * characters, truncation inside a UTF-8 sequence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_kube_rest.h"

/* Load corpus_status/<name>: "<code>\n<body>". Returns the mapped code. */
static int from_seed(const char *name, gr_kube_status *st)
{
    char path[256];
    snprintf(path, sizeof path, "corpus_status/%s", name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *nl = strchr(buf, '\n');
    assert_non_null(nl);
    long http = strtol(buf, NULL, 10);
    return gr_kube_status_from_response(http, nl + 1, n - (size_t)(nl + 1 - buf), st);
}

static void test_real_bodies(void **state)
{
    (void)state;
    gr_kube_status st;
    assert_int_equal(from_seed("notfound.txt", &st), GR_ENOTFOUND);
    assert_int_equal(st.reason, GR_KUBE_REASON_NOT_FOUND);
    assert_string_equal(st.message, "configmaps \"missing\" not found");
    assert_string_equal(st.name, "missing");
    assert_string_equal(st.kind, "configmaps");
    assert_int_equal(st.http_code, 404);

    assert_int_equal(from_seed("conflict.txt", &st), GR_ECONFLICT);
    assert_int_equal(st.reason, GR_KUBE_REASON_CONFLICT);
    assert_non_null(strstr(st.message, "the object has been modified"));

    assert_int_equal(from_seed("exists.txt", &st), GR_ECONFLICT);
    assert_int_equal(st.reason, GR_KUBE_REASON_ALREADY_EXISTS);

    assert_int_equal(from_seed("invalid.txt", &st), GR_EINVAL);
    assert_int_equal(st.reason, GR_KUBE_REASON_INVALID);
    assert_int_equal(st.ncauses, 2);
    assert_string_equal(st.causes[0].type, "FieldValueInvalid");
    assert_string_equal(st.causes[0].field, "metadata.name");
    assert_string_equal(st.causes[1].type, "FieldValueRequired");
    assert_string_equal(st.causes[1].field, "spec.containers");
    assert_string_equal(st.causes[1].message, "Required value");
    assert_string_equal(st.kind, "Pod");

    assert_int_equal(from_seed("forbidden.txt", &st), GR_EPERM);
    assert_int_equal(st.reason, GR_KUBE_REASON_FORBIDDEN);
    assert_non_null(strstr(st.message, "cannot list resource \"pods\""));

    assert_int_equal(from_seed("toomany.txt", &st), GR_EAGAIN);
    assert_int_equal(st.reason, GR_KUBE_REASON_TOO_MANY_REQUESTS);
    assert_int_equal(st.retry_after_s, 7);
    assert_int_equal(st.ncauses, 1);
    assert_string_equal(st.causes[0].type, "");

    assert_int_equal(from_seed("expired.txt", &st), GR_ESTATE);
    assert_true(gr_kube_status_is_gone(&st));
    /* a watch ERROR event has no HTTP code of its own: Status.code is used */
    assert_int_equal(from_seed("watch_gone.txt", &st), GR_ESTATE);
    assert_int_equal(st.http_code, 410);
    assert_int_equal(st.reason, GR_KUBE_REASON_GONE);
}

static void test_garbage_bodies(void **state)
{
    (void)state;
    gr_kube_status st;
    /* truncated JSON, HTML, another kind, nesting: reason from the code */
    assert_int_equal(from_seed("truncated.txt", &st), GR_ENOTFOUND);
    assert_string_equal(st.reason_str, "NotFound");
    assert_int_equal(from_seed("html.txt", &st), GR_EIO);
    assert_int_equal(st.reason, GR_KUBE_REASON_UNKNOWN);
    assert_non_null(strstr(st.message, "502 Bad Gateway"));
    assert_int_equal(from_seed("not_status.txt", &st), GR_ENOTFOUND);
    assert_int_equal(st.ncauses, 0);
    assert_int_equal(from_seed("nested.txt", &st), GR_EIO);
    assert_int_equal(st.reason, GR_KUBE_REASON_INTERNAL_ERROR);
    /* a Status with every field of the wrong type */
    assert_int_equal(from_seed("wrong_types.txt", &st), GR_EAGAIN);
    assert_int_equal(st.reason, GR_KUBE_REASON_SERVICE_UNAVAILABLE);
    assert_string_equal(st.message, "");
    assert_int_equal(st.ncauses, 0);
    assert_int_equal(from_seed("empty_body.txt", &st), GR_EAGAIN);
    assert_string_equal(st.message, "the server responded with HTTP 503");
}

static void test_caps(void **state)
{
    (void)state;
    gr_kube_status st;
    /* 13 causes, 3 of them not objects: the 8 first objects are kept */
    assert_int_equal(from_seed("many_causes.txt", &st), GR_EINVAL);
    assert_int_equal(st.ncauses, GR_KUBE_CAUSES_MAX);
    assert_string_equal(st.causes[0].type, "A");
    assert_string_equal(st.causes[GR_KUBE_CAUSES_MAX - 1].type, "H");
    /* control characters become spaces; retryAfterSeconds is clamped */
    assert_int_equal(from_seed("control_chars.txt", &st), GR_EAGAIN);
    assert_string_equal(st.message, "a b c\xc3\xa9");
    assert_int_equal(st.retry_after_s, GR_KUBE_RETRY_AFTER_MAX_S);
    /* deeper than jansson's limit (2048): not a Status, no crash */
    size_t depth = 100000;
    char *deep = malloc(depth * 2 + 64);
    assert_non_null(deep);
    size_t n = (size_t)sprintf(deep, "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"x\":");
    memset(deep + n, '[', depth);
    memset(deep + n + depth, ']', depth);
    n += 2 * depth;
    deep[n++] = '}';
    assert_int_equal(gr_kube_status_from_response(409, deep, n, &st), GR_ECONFLICT);
    assert_int_equal(st.reason, GR_KUBE_REASON_CONFLICT); /* from the code, not the body */
    assert_int_equal(strlen(st.message), sizeof st.message - 1);
    free(deep);
    /* over GR_KUBE_STATUS_MAX_BYTES: not decoded, even if a valid Status */
    size_t big = GR_KUBE_STATUS_MAX_BYTES + 1;
    char *b = malloc(big + 1);
    assert_non_null(b);
    const char *head = "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"message\":\"";
    memcpy(b, head, strlen(head));
    memset(b + strlen(head), 'x', big - strlen(head) - 2);
    memcpy(b + big - 2, "\"}", 2);
    b[big] = '\0';
    assert_int_equal(gr_kube_status_from_response(500, b, big, &st), GR_EIO);
    assert_int_equal(st.reason, GR_KUBE_REASON_INTERNAL_ERROR);
    assert_int_equal(gr_kube_status_from_response(500, b, big - 1 - 1024, &st), GR_EIO);
    /* at the cap it is decoded (after trimming it to a valid document) */
    size_t at = GR_KUBE_STATUS_MAX_BYTES;
    memcpy(b + at - 2, "\"}", 2);
    assert_int_equal(gr_kube_status_from_response(500, b, at, &st), GR_ENOTFOUND);
    assert_int_equal(strlen(st.message), sizeof st.message - 1);
    free(b);
    /* truncation never splits a UTF-8 sequence */
    char msg[1200];
    size_t m =
        (size_t)snprintf(msg, sizeof msg, "{\"kind\":\"Status\",\"code\":404,\"message\":\"");
    memset(msg + m, 'a', sizeof st.message - 2);
    m += sizeof st.message - 2;
    m += (size_t)snprintf(msg + m, sizeof msg - m, "\xc3\xa9\"}");
    assert_int_equal(gr_kube_status_from_response(404, msg, m, &st), GR_ENOTFOUND);
    assert_int_equal(strlen(st.message), sizeof st.message - 2);
    assert_int_equal(st.message[sizeof st.message - 3], 'a');
    /* NULL body with a length is no body */
    assert_int_equal(gr_kube_status_from_response(404, NULL, 10, &st), GR_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_bodies),
        cmocka_unit_test(test_garbage_bodies),
        cmocka_unit_test(test_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
