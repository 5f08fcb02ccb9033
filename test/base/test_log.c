#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "gr_log.h"

/* Capture one log line through a pipe and parse it as JSON. */
static json_t *capture(void (*emit)(void))
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    gr_log_set_fd(fds[1]);
    emit();
    gr_log_set_fd(-1);
    close(fds[1]);
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    assert_int_equal(buf[n - 1], '\n');
    assert_null(strchr(buf, '\n') + 1 == buf + n ? NULL : buf); /* exactly one line */
    json_error_t je;
    json_t *o = json_loads(buf, 0, &je);
    assert_non_null(o);
    return o;
}

static void emit_info(void)
{
    gr_log(GR_LOG_INFO, "webhook", "injected", GR_KV_STR("pod", "train-0"), GR_KV_INT("count", 3),
           GR_KV_BOOL("gang", 1), GR_KV_DOUBLE("ms", 0.5), GR_KV_STR("quote", "a\"b\n"), GR_KV_END);
}

static void emit_debug(void)
{
    gr_log(GR_LOG_DEBUG, "x", "hidden", GR_KV_END);
}

static void test_line_shape(void **state)
{
    (void)state;
    gr_log_set_level(GR_LOG_INFO);
    json_t *o = capture(emit_info);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "level")), "INFO");
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "injected");
    assert_string_equal(json_string_value(json_object_get(o, "module")), "webhook");
    assert_string_equal(json_string_value(json_object_get(o, "version")), GR_VERSION);
    assert_string_equal(json_string_value(json_object_get(o, "pod")), "train-0");
    assert_int_equal(json_integer_value(json_object_get(o, "count")), 3);
    assert_true(json_is_true(json_object_get(o, "gang")));
    assert_string_equal(json_string_value(json_object_get(o, "quote")), "a\"b\n");
    const char *t = json_string_value(json_object_get(o, "time"));
    assert_non_null(t);
    assert_int_equal(strlen(t), 24); /* 2026-11-30T17:07:32.123Z */
    assert_int_equal(t[23], 'Z');
    json_decref(o);
}

static void emit_fatal(void)
{
    gr_log(GR_LOG_ERROR, "preflight", "Fatal error", GR_KV_STR("error", "boom"), GR_KV_END);
}

/* PF-11: the fatal line reads `"level":"ERROR","msg":"Fatal error","error":...`
 * as one run of text, in slog's order. Checked on the raw bytes. */
static void test_slog_order(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    gr_log_set_fd(fds[1]);
    emit_fatal();
    gr_log_set_fd(-1);
    close(fds[1]);
    char buf[1024];
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "\"level\":\"ERROR\",\"msg\":\"Fatal error\",\"error\":\"boom\""));
    assert_non_null(strstr(buf, "\"module\":\"preflight\""));
}

static void emit_bad_utf8(void)
{
    gr_log(GR_LOG_INFO, "x", "m",
           GR_KV_STR("v", "a\xff\xfe"
                          "b"),
           GR_KV_END);
}

/* A value that is not UTF-8 still yields a line; bad bytes become U+FFFD. */
static void test_invalid_utf8_value(void **state)
{
    (void)state;
    gr_log_set_level(GR_LOG_INFO);
    json_t *o = capture(emit_bad_utf8);
    assert_non_null(o);
    const char *v = json_string_value(json_object_get(o, "v"));
    assert_non_null(v);
    assert_non_null(strstr(v, "\xef\xbf\xbd"));
    assert_int_equal(v[0], 'a');
    assert_int_equal(v[strlen(v) - 1], 'b');
    json_decref(o);
}

static void emit_collisions(void)
{
    gr_log(GR_LOG_WARN, "dcgm", "diagnostic finished", GR_KV_INT("events", 2),
           GR_KV_INT("level", 1), GR_KV_STR("time", "t"), GR_KV_STR("msg", "m"),
           GR_KV_STR("module", "other"), GR_KV_STR("version", "9"), GR_KV_BOOL("levels", 1),
           GR_KV_END);
}

/* Attribute keys that name an envelope member ("level" was the DCGM diag level
 * in preflight-dcgm-diag's "diagnostic finished" line) are written as
 * "fields.<key>"; the envelope keeps the real level, message, module and
 * version, and no key appears twice. Checked on the raw bytes for order. */
static void test_envelope_collision(void **state)
{
    (void)state;
    gr_log_set_level(GR_LOG_INFO);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    gr_log_set_fd(fds[1]);
    emit_collisions();
    gr_log_set_fd(-1);
    close(fds[1]);
    char buf[1024];
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    assert_true(n > 0);
    buf[n] = '\0';
    json_error_t je;
    json_t *o = json_loads(buf, JSON_REJECT_DUPLICATES, &je);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "level")), "WARN");
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "diagnostic finished");
    assert_string_equal(json_string_value(json_object_get(o, "module")), "dcgm");
    assert_string_equal(json_string_value(json_object_get(o, "version")), GR_VERSION);
    assert_int_equal(strlen(json_string_value(json_object_get(o, "time"))), 24);
    assert_int_equal(json_integer_value(json_object_get(o, "fields.level")), 1);
    assert_string_equal(json_string_value(json_object_get(o, "fields.time")), "t");
    assert_string_equal(json_string_value(json_object_get(o, "fields.msg")), "m");
    assert_string_equal(json_string_value(json_object_get(o, "fields.module")), "other");
    assert_string_equal(json_string_value(json_object_get(o, "fields.version")), "9");
    assert_true(json_is_true(json_object_get(o, "levels"))); /* only exact names are renamed */
    assert_null(json_object_get(o, "fields.levels"));
    assert_null(json_object_get(o, "fields.events"));
    json_decref(o);
    /* The renamed attributes stay in call order among the others, after msg. */
    assert_non_null(
        strstr(buf, "\"msg\":\"diagnostic finished\",\"events\":2,\"fields.level\":1,"
                    "\"fields.time\":\"t\",\"fields.msg\":\"m\",\"fields.module\":"
                    "\"other\",\"fields.version\":\"9\",\"levels\":true,\"module\":\"dcgm\""));
    assert_null(strstr(buf, "\"level\":1"));
}

static void test_level_filter(void **state)
{
    (void)state;
    gr_log_set_level(GR_LOG_INFO);
    assert_null(capture(emit_debug));
    gr_log_set_level(GR_LOG_DEBUG);
    json_t *o = capture(emit_debug);
    assert_non_null(o);
    json_decref(o);
    gr_log_set_level(GR_LOG_INFO);
}

static void test_env_level(void **state)
{
    (void)state;
    gr_err e;
    setenv("LOG_LEVEL", "WARN", 1);
    assert_int_equal(gr_log_init(NULL, &e), GR_OK);
    assert_int_equal(gr_log_get_level(), GR_LOG_WARN);
    setenv("LOG_LEVEL", "verbose", 1);
    assert_int_equal(gr_log_init(NULL, &e), GR_EINVAL);
    assert_non_null(strstr(e.msg, "LOG_LEVEL"));
    assert_non_null(strstr(e.msg, "debug, info, warn or error"));
    unsetenv("LOG_LEVEL");
    gr_log_set_level(GR_LOG_INFO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_shape),         cmocka_unit_test(test_slog_order),
        cmocka_unit_test(test_invalid_utf8_value), cmocka_unit_test(test_level_filter),
        cmocka_unit_test(test_env_level),          cmocka_unit_test(test_envelope_collision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
