#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_buf.h"

static void test_append_and_cstr(void **state)
{
    (void)state;
    gr_buf b;
    gr_buf_init(&b, 4096);
    assert_string_equal(gr_buf_cstr(&b), "");
    assert_int_equal(gr_buf_puts(&b, "hello"), GR_OK);
    assert_int_equal(gr_buf_putc(&b, ' '), GR_OK);
    assert_int_equal(gr_buf_printf(&b, "%s %d", "world", 42), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "hello world 42");
    assert_int_equal(b.len, 14);
    gr_buf_free(&b);
}

static void test_cap_is_hard(void **state)
{
    (void)state;
    gr_buf b;
    gr_buf_init(&b, 8);
    assert_int_equal(gr_buf_puts(&b, "12345678"), GR_OK);
    assert_int_equal(gr_buf_putc(&b, '9'), GR_ETOOBIG);
    assert_string_equal(gr_buf_cstr(&b), "12345678"); /* unchanged */
    assert_int_equal(gr_buf_printf(&b, "%d", 1), GR_ETOOBIG);
    assert_true(b.cap <= 9);
    gr_buf_free(&b);
}

static void test_overflowing_size_rejected(void **state)
{
    (void)state;
    gr_buf b;
    gr_buf_init(&b, 16);
    assert_int_equal(gr_buf_putc(&b, 'x'), GR_OK);
    assert_int_equal(gr_buf_reserve(&b, SIZE_MAX), GR_ETOOBIG);
    gr_buf_free(&b);
}

static void test_long_printf(void **state)
{
    (void)state;
    gr_buf b;
    gr_buf_init(&b, 4096);
    char big[1000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(gr_buf_printf(&b, "<%s>", big), GR_OK);
    assert_int_equal(b.len, 1001);
    assert_int_equal(b.data[0], '<');
    assert_int_equal(b.data[1000], '>');
    gr_buf_free(&b);
}

/* No cap, no default: a buffer with max 0 (a zeroed struct, a forgotten
 * cap) refuses every write instead of growing to some hidden limit. */
static void test_cap_zero_is_an_error(void **state)
{
    (void)state;
    gr_buf b;
    gr_buf_init(&b, 0);
    assert_int_equal(gr_buf_putc(&b, 'x'), GR_EINVAL);
    assert_int_equal(gr_buf_puts(&b, "abc"), GR_EINVAL);
    assert_int_equal(gr_buf_printf(&b, "%d", 7), GR_EINVAL);
    assert_int_equal(gr_buf_printf(&b, "%300d", 7), GR_EINVAL); /* the long path */
    assert_int_equal(gr_buf_reserve(&b, 0), GR_EINVAL);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_string_equal(gr_buf_cstr(&b), "");
    gr_buf z = GR_BUF_INIT(0);
    assert_int_equal(gr_buf_append(&z, "a", 1), GR_EINVAL);
    gr_buf_free(&z);
    gr_buf_free(&b);
}

static void test_consume_and_steal(void **state)
{
    (void)state;
    gr_buf b;
    gr_buf_init(&b, 4096);
    gr_buf_puts(&b, "abcdef");
    gr_buf_consume(&b, 2);
    assert_string_equal(gr_buf_cstr(&b), "cdef");
    gr_buf_consume(&b, 100);
    assert_int_equal(b.len, 0);
    gr_buf_puts(&b, "xyz");
    size_t n = 0;
    char *s = gr_buf_steal(&b, &n);
    assert_string_equal(s, "xyz");
    assert_int_equal(n, 3);
    assert_null(b.data);
    free(s);
    s = gr_buf_steal(&b, &n); /* empty buffer still yields a string */
    assert_string_equal(s, "");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_and_cstr),
        cmocka_unit_test(test_cap_is_hard),
        cmocka_unit_test(test_overflowing_size_rejected),
        cmocka_unit_test(test_long_printf),
        cmocka_unit_test(test_consume_and_steal),
        cmocka_unit_test(test_cap_zero_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
