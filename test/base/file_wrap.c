/*
 * file_wrap.c — gr_file with read(2) wrapped (test base_file_wrap, see
 * file_wrap.cmake): a file that ends early (fewer bytes than fstat() said:
 * truncated while read) is GR_EIO "short read", never a shorter file; a
 * read error is GR_EIO naming the file; EINTR is retried.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gr_file.h"

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);

typedef enum { PASS, SHORT, FAIL, INTR } mode;
static mode g_mode = PASS;
static size_t g_served;   /* bytes handed out since arming */
static size_t g_limit;    /* SHORT: EOF after this many bytes */
static int g_interrupted; /* INTR: EINTRs returned */

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
    switch (g_mode) {
    case SHORT:
        if (g_served >= g_limit)
            return 0;
        if (n > g_limit - g_served)
            n = g_limit - g_served;
        break;
    case FAIL:
        if (g_served > 0) {
            errno = EIO;
            return -1;
        }
        if (n > 3)
            n = 3;
        break;
    case INTR:
        if (g_interrupted < 3) {
            g_interrupted++;
            errno = EINTR;
            return -1;
        }
        break;
    case PASS:
        break;
    }
    ssize_t r = __real_read(fd, buf, n);
    if (r > 0)
        g_served += (size_t)r;
    return r;
}

static char g_path[] = "/tmp/gr-file-wrap-XXXXXX";

static void arm(mode m, size_t limit)
{
    g_mode = m;
    g_limit = limit;
    g_served = 0;
    g_interrupted = 0;
}

static void test_short_read(void **state)
{
    (void)state;
    arm(SHORT, 4);
    char *s = (char *)1;
    gr_err err;
    assert_int_equal(gr_file_read(g_path, 100, &s, NULL, &err), GR_EIO);
    arm(PASS, 0);
    assert_null(s);
    assert_non_null(strstr(err.msg, ": short read: got 4 of 10 bytes"));
    assert_non_null(strstr(err.msg, g_path));
    /* appending: the buffer is left as it was */
    gr_buf b = GR_BUF_INIT(100);
    assert_int_equal(gr_buf_puts(&b, "keep"), GR_OK);
    arm(SHORT, 9);
    assert_int_equal(gr_file_append(g_path, &b, &err), GR_EIO);
    arm(PASS, 0);
    assert_string_equal(gr_buf_cstr(&b), "keep");
    assert_int_equal(gr_file_append(g_path, &b, &err), GR_OK); /* and whole when whole */
    assert_string_equal(gr_buf_cstr(&b), "keep0123456789");
    gr_buf_free(&b);
}

static void test_read_error(void **state)
{
    (void)state;
    arm(FAIL, 0);
    char *s = (char *)1;
    gr_err err;
    assert_int_equal(gr_file_read(g_path, 100, &s, NULL, &err), GR_EIO);
    arm(PASS, 0);
    assert_null(s);
    assert_non_null(strstr(err.msg, ": read failed: "));
}

static void test_eintr_retried(void **state)
{
    (void)state;
    arm(INTR, 0);
    char *s = NULL;
    size_t n = 0;
    assert_int_equal(gr_file_read(g_path, 100, &s, &n, NULL), GR_OK);
    assert_int_equal(g_interrupted, 3);
    arm(PASS, 0);
    assert_int_equal(n, 10);
    assert_string_equal(s, "0123456789");
    free(s);
}

static int setup(void **state)
{
    (void)state;
    int fd = mkstemp(g_path);
    if (fd < 0)
        return -1;
    int ok = write(fd, "0123456789", 10) == 10;
    close(fd);
    return ok ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return unlink(g_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_read),
        cmocka_unit_test(test_read_error),
        cmocka_unit_test(test_eintr_retried),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
