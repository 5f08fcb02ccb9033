/* Tests for gr_hash: SHA-256 (FIPS 180-2 test vectors) and FNV-1/FNV-1a 32
 * (the golden values of Go's hash/fnv tests). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_hash.h"

static void test_sha256_vectors(void **state)
{
    (void)state;
    const struct {
        const char *in, *hex;
    } t[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"The quick brown fox jumps over the lazy dog",
         "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"},
    };
    char hex[GR_HASH_SHA256_HEX_MAX];
    gr_err err;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        assert_int_equal(gr_hash_sha256_hex(t[i].in, strlen(t[i].in), hex, &err), GR_OK);
        assert_string_equal(hex, t[i].hex);
        assert_int_equal(gr_hash_sha256_hex_str(t[i].in, hex, &err), GR_OK);
        assert_string_equal(hex, t[i].hex);
    }
    /* one million 'a' */
    char *m = malloc(1000000);
    assert_non_null(m);
    memset(m, 'a', 1000000);
    assert_int_equal(gr_hash_sha256_hex(m, 1000000, hex, &err), GR_OK);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(m);
    /* raw digest agrees with the hex */
    uint8_t md[GR_HASH_SHA256_LEN];
    assert_int_equal(gr_hash_sha256("abc", 3, md, &err), GR_OK);
    assert_int_equal(md[0], 0xba);
    assert_int_equal(md[31], 0xad);
    /* embedded NULs are hashed */
    char h1[GR_HASH_SHA256_HEX_MAX], h2[GR_HASH_SHA256_HEX_MAX];
    assert_int_equal(gr_hash_sha256_hex("a\0b", 3, h1, &err), GR_OK);
    assert_int_equal(gr_hash_sha256_hex("a", 1, h2, &err), GR_OK);
    assert_string_not_equal(h1, h2);
}

static void test_sha256_null(void **state)
{
    (void)state;
    char hex[GR_HASH_SHA256_HEX_MAX];
    gr_err err;
    assert_int_equal(gr_hash_sha256_hex(NULL, 0, hex, &err), GR_OK);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_int_equal(gr_hash_sha256_hex(NULL, 3, hex, &err), GR_EINVAL);
    assert_string_equal(hex, "");
    assert_int_equal(gr_hash_sha256_hex_str(NULL, hex, &err), GR_EINVAL);
}

static void test_fnv_golden(void **state)
{
    (void)state;
    const struct {
        const char *in;
        uint32_t fnv1, fnv1a;
    } t[] = {
        {"", 0x811c9dc5, 0x811c9dc5},       {"a", 0x050c5d7e, 0xe40c292c},
        {"ab", 0x70772d38, 0x4d2505ca},     {"abc", 0x439c2f4b, 0x1a47e90b},
        {"foobar", 0x31f0b262, 0xbf9cf968},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t n = strlen(t[i].in);
        assert_int_equal(gr_hash_fnv1_32(t[i].in, n), t[i].fnv1);
        assert_int_equal(gr_hash_fnv1a32(t[i].in, n), t[i].fnv1a);
        char hex[GR_HASH_FNV32_HEX_MAX], want[16];
        snprintf(want, sizeof want, "%08x", (unsigned)t[i].fnv1a);
        assert_string_equal(gr_hash_fnv1a32_hex(t[i].in, n, hex), want);
        /* incremental update agrees */
        uint32_t h = GR_HASH_FNV32_OFFSET;
        for (size_t k = 0; k < n; k++)
            h = gr_hash_fnv1a32_update(h, t[i].in + k, 1);
        assert_int_equal(h, t[i].fnv1a);
    }
    assert_int_equal(gr_hash_fnv1a32(NULL, 0), 0x811c9dc5);
}

static void test_fnv_hex_is_padded(void **state)
{
    (void)state;
    /* find inputs whose hash has a leading zero nibble: the hex keeps 8 digits */
    int found = 0;
    char in[32], hex[GR_HASH_FNV32_HEX_MAX], want[16];
    for (int i = 0; i < 100000 && found < 3; i++) {
        int n = snprintf(in, sizeof in, "gang-%d", i);
        uint32_t h = gr_hash_fnv1a32(in, (size_t)n);
        gr_hash_fnv1a32_hex(in, (size_t)n, hex);
        snprintf(want, sizeof want, "%08x", (unsigned)h);
        assert_string_equal(hex, want);
        assert_int_equal(strlen(hex), 8);
        if (h < 0x10000000u)
            found++;
    }
    assert_int_equal(found, 3);
}

static void test_hex(void **state)
{
    (void)state;
    uint8_t b[] = {0x00, 0x0f, 0xa5, 0xff};
    char out[9];
    assert_string_equal(gr_hash_hex(b, sizeof b, out), "000fa5ff");
    assert_string_equal(gr_hash_hex(b, 0, out), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_sha256_null),
        cmocka_unit_test(test_fnv_golden),
        cmocka_unit_test(test_fnv_hex_is_padded),
        cmocka_unit_test(test_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
