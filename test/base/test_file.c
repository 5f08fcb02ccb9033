/* gr_file: whole files under a cap, exactly at the cap, one byte over,
 * empty, missing, a directory, standard input through a pipe. Short reads
 * and read errors are file_wrap.c (base_file_wrap). */
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

static char g_dir[] = "/tmp/gr-file-test-XXXXXX";

static const char *write_file(const char *name, const char *data, size_t n)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    return path;
}

static void test_read_whole(void **state)
{
    (void)state;
    const char *p = write_file("a", "hello\0world", 11);
    char *s = NULL;
    size_t n = 0;
    assert_int_equal(gr_file_read(p, 11, &s, &n, NULL), GR_OK); /* exactly the cap */
    assert_int_equal(n, 11);
    assert_memory_equal(s, "hello\0world", 12); /* NUL-terminated after the data */
    free(s);
}

static void test_cap(void **state)
{
    (void)state;
    const char *p = write_file("b", "0123456789", 10);
    char *s = (char *)1;
    gr_err err;
    assert_int_equal(gr_file_read(p, 9, &s, NULL, &err), GR_ETOOBIG);
    assert_null(s);
    assert_non_null(strstr(err.msg, "larger than the 9-byte limit"));
    assert_non_null(strstr(err.msg, "/b"));
    /* appending: the cap counts what the buffer already holds */
    gr_buf b = GR_BUF_INIT(12);
    assert_int_equal(gr_buf_puts(&b, "abc"), GR_OK);
    assert_int_equal(gr_file_append(p, &b, &err), GR_ETOOBIG);
    assert_string_equal(gr_buf_cstr(&b), "abc"); /* unchanged */
    assert_int_equal(gr_buf_puts(&b, ""), GR_OK);
    b.max = 13;
    assert_int_equal(gr_file_append(p, &b, &err), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "abc0123456789");
    gr_buf_free(&b);
    /* a cap of 0 is an error, not a default */
    assert_int_equal(gr_file_read(p, 0, &s, NULL, &err), GR_EINVAL);
    gr_buf z = GR_BUF_INIT(0);
    assert_int_equal(gr_file_append(p, &z, &err), GR_EINVAL);
}

static void test_empty_missing_dir(void **state)
{
    (void)state;
    const char *p = write_file("empty", "", 0);
    char *s = NULL;
    size_t n = 99;
    assert_int_equal(gr_file_read(p, 1, &s, &n, NULL), GR_OK);
    assert_string_equal(s, "");
    assert_int_equal(n, 0);
    free(s);
    char missing[256];
    snprintf(missing, sizeof missing, "%s/nope", g_dir);
    gr_err err;
    assert_int_equal(gr_file_read(missing, 10, &s, NULL, &err), GR_ENOTFOUND);
    assert_non_null(strstr(err.msg, "/nope: cannot open: "));
    assert_int_equal(gr_file_read(g_dir, 10, &s, NULL, &err), GR_EIO); /* a directory */
    assert_null(s);
}

/* Files without a size (a pipe here, like /proc and standard input) are read
 * to EOF, still under the cap. */
static void test_pipe(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "abcdef", 6), 6);
    close(fds[1]);
    char *s = NULL;
    size_t n = 0;
    assert_int_equal(gr_file_read_fd(fds[0], "pipe", 6, &s, &n, NULL), GR_OK);
    assert_string_equal(s, "abcdef");
    free(s);
    close(fds[0]);
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "abcdefg", 7), 7);
    close(fds[1]);
    gr_err err;
    assert_int_equal(gr_file_read_fd(fds[0], "pipe", 6, &s, &n, &err), GR_ETOOBIG);
    assert_string_equal(err.msg, "pipe: larger than the 6-byte limit");
    close(fds[0]);
}

/* /proc files report size 0 but have content. */
static void test_proc(void **state)
{
    (void)state;
    char *s = NULL;
    assert_int_equal(gr_file_read("/proc/self/stat", 4096, &s, NULL, NULL), GR_OK);
    assert_non_null(strchr(s, ')'));
    free(s);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_whole),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_empty_missing_dir),
        cmocka_unit_test(test_pipe),
        cmocka_unit_test(test_proc),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
