/* The informer store's compact form (kube_cval.c): every JSON value
 * round-trips with its key order; keys beyond the dictionary's cap are stored
 * inline; malformed compact data decodes to NULL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube_internal.h"

static json_t *round_trip(gr_kube_keydict *d, const json_t *v, size_t *len)
{
    gr_buf b = GR_BUF_INIT(1 << 24);
    assert_int_equal(gr_kube_cval_encode(d, v, &b), GR_OK);
    if (len)
        *len = b.len;
    json_t *back = gr_kube_cval_decode(d, b.data, b.len);
    gr_buf_free(&b);
    return back;
}

static void test_round_trip(void **state)
{
    (void)state;
    gr_kube_keydict *d;
    assert_int_equal(gr_kube_keydict_new(&d), GR_OK);
    const char *docs[] = {
        "{\"z\":1,\"a\":2,\"m\":{\"b\":[],\"a\":{}}}",
        "[0,-1,1,-9223372036854775808,9223372036854775807,1.5,-0.25,1e300]",
        "{\"s\":\"\\u0000nul inside\",\"u\":\"gr\\u00fc\\u00dfe \\ud83d\\ude80\",\"e\":\"\"}",
        "{\"t\":true,\"f\":false,\"n\":null}",
        "\"just a string\"",
        "42",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        json_error_t je;
        json_t *v = json_loads(docs[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
        if (!v)
            fail_msg("%s: %s", docs[i], je.text);
        json_t *back = round_trip(d, v, NULL);
        assert_non_null(back);
        assert_true(json_equal(v, back));
        char *t1 = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        char *t2 = json_dumps(back, JSON_ENCODE_ANY | JSON_COMPACT);
        assert_string_equal(t1, t2); /* key order kept */
        free(t1);
        free(t2);
        json_decref(back);
        json_decref(v);
    }
    /* a key with a NUL (the parser refuses them; objects built in code may
     * have one) is stored inline */
    json_t *v = json_object();
    json_object_setn_new(v, "k\0ey", 4, json_string("inline"));
    json_t *back = round_trip(d, v, NULL);
    assert_non_null(back);
    assert_int_equal(json_object_size(back), 1); /* (json_equal cannot compare NUL keys) */
    assert_string_equal(json_string_value(json_object_getn(back, "k\0ey", 4)), "inline");
    json_decref(back);
    json_decref(v);
    gr_kube_keydict_free(d);
}

static void test_keys_shared_and_capped(void **state)
{
    (void)state;
    gr_kube_keydict *d;
    assert_int_equal(gr_kube_keydict_new(&d), GR_OK);
    /* the same keys cost a number each after the first object */
    json_t *v = json_pack("{s:s,s:s}", "resourceVersion", "1", "creationTimestamp", "x");
    size_t first, second;
    json_decref(round_trip(d, v, &first));
    json_decref(round_trip(d, v, &second));
    assert_int_equal(first, second);
    assert_true(first < strlen("resourceVersioncreationTimestamp")); /* keys are numbers */
    assert_int_equal(gr_kube_keydict_len(d), 2);
    json_decref(v);
    /* a long key is never shared */
    char longkey[200];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    v = json_pack("{s:i}", longkey, 1);
    json_t *back = round_trip(d, v, NULL);
    assert_true(json_equal(v, back));
    assert_int_equal(gr_kube_keydict_len(d), 2);
    json_decref(back);
    json_decref(v);
    /* endless distinct keys: the dictionary stops at its cap, the rest is
     * inline and still round-trips */
    for (int i = 0; i < GR_KUBE_KEYDICT_MAX + 100; i++) {
        char k[32];
        snprintf(k, sizeof k, "key-%d", i);
        v = json_pack("{s:i}", k, i);
        back = round_trip(d, v, NULL);
        if (!json_equal(v, back))
            fail_msg("key %s did not round-trip", k);
        json_decref(back);
        json_decref(v);
    }
    assert_int_equal(gr_kube_keydict_len(d), GR_KUBE_KEYDICT_MAX);
    gr_kube_keydict_free(d);
}

/* decode_like: the same value as decode, taking the parts equal to `like`
 * from it by reference and decoding the rest. */
static void test_decode_like(void **state)
{
    (void)state;
    gr_kube_keydict *d;
    assert_int_equal(gr_kube_keydict_new(&d), GR_OK);
    json_t *old = json_loads("{\"metadata\":{\"name\":\"a\",\"labels\":{\"r\":\"1\"},"
                             "\"rv\":\"7\"},\"spec\":{\"c\":[{\"n\":1},{\"n\":2.5}],"
                             "\"x\":null,\"t\":true},\"l\":[1,2]}",
                             0, NULL);
    json_t *now = json_loads("{\"metadata\":{\"name\":\"a\",\"labels\":{\"r\":\"2\"},"
                             "\"rv\":\"8\"},\"spec\":{\"c\":[{\"n\":1},{\"n\":2.5}],"
                             "\"x\":null,\"t\":true},\"l\":[1,3],\"new\":1}",
                             0, NULL);
    assert_non_null(old);
    assert_non_null(now);
    gr_buf b = GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_kube_cval_encode(d, old, &b), GR_OK);
    json_t *got = gr_kube_cval_decode_like(d, b.data, b.len, now);
    assert_non_null(got);
    assert_true(json_equal(got, old));
    /* unchanged parts are now's */
    assert_ptr_equal(json_object_get(got, "spec"), json_object_get(now, "spec"));
    assert_ptr_equal(json_object_get(json_object_get(got, "metadata"), "name"),
                     json_object_get(json_object_get(now, "metadata"), "name"));
    assert_ptr_equal(json_array_get(json_object_get(got, "l"), 0),
                     json_array_get(json_object_get(now, "l"), 0));
    /* changed ones are not */
    assert_ptr_not_equal(json_object_get(got, "metadata"), json_object_get(now, "metadata"));
    assert_ptr_not_equal(json_object_get(got, "l"), json_object_get(now, "l"));
    json_decref(now); /* got keeps what it shares */
    assert_true(json_equal(got, old));
    json_decref(got);
    /* like of another type, or NULL: a plain decode */
    json_t *s = json_string("x");
    got = gr_kube_cval_decode_like(d, b.data, b.len, s);
    assert_true(json_equal(got, old));
    json_decref(got);
    got = gr_kube_cval_decode_like(d, b.data, b.len, NULL);
    assert_true(json_equal(got, old));
    json_decref(got);
    /* malformed data: NULL */
    assert_null(gr_kube_cval_decode_like(d, b.data, b.len - 1, old));
    json_decref(s);
    json_decref(old);
    gr_buf_free(&b);
    gr_kube_keydict_free(d);
}

static void test_malformed(void **state)
{
    (void)state;
    gr_kube_keydict *d;
    assert_int_equal(gr_kube_keydict_new(&d), GR_OK);
    static const uint8_t bad[][8] = {
        {9},               /* unknown tag */
        {5, 10, 'a'},      /* string longer than the data */
        {7, 1, 2 << 1, 0}, /* key number 2: not in the dictionary */
        {6, 3, 0, 0},      /* array of 3 with 2 values */
        {3, 0x80, 0x80},   /* unterminated varint */
        {4, 1, 2, 3},      /* short double */
        {0, 0},            /* trailing bytes */
    };
    static const size_t len[] = {1, 3, 4, 4, 3, 4, 2};
    for (size_t i = 0; i < sizeof len / sizeof len[0]; i++)
        assert_null(gr_kube_cval_decode(d, bad[i], len[i]));
    assert_null(gr_kube_cval_decode(d, "", 0));
    gr_kube_keydict_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_keys_shared_and_capped),
        cmocka_unit_test(test_decode_like),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
