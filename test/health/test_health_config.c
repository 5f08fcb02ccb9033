/*
 * test_health_config.c — publishing configuration from the environment.
 * Checklist: PF-161 (socket mode by default), PF-166/167/168 (direct-mode
 * variables), PF-170 (socket env ignored when the target is set), PF-183,
 * PF-184, PF-185 (configuration errors).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_health.h"

static const char *const vars[] = {
    "PLATFORM_CONNECTOR_SOCKET", "PLATFORM_CONNECTOR_TOKEN_PATH", "HEALTH_PUBLISH_TARGET",
    "HEALTH_PUBLISH_TOKEN_PATH", "HEALTH_PUBLISH_TLS_CA_FILE",    "HEALTH_PUBLISH_TLS_SERVER_NAME",
    "HEALTH_PUBLISH_INSECURE",   "HEALTH_PUBLISH_RETRY_WINDOW",
};

static int clear_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    return 0;
}

#define NS(s) ((int64_t)(s)*GR_HEALTH_NS_PER_S)

static void test_socket_mode(void **state)
{
    (void)state;
    gr_health_config cfg;
    gr_err err;
    /* PF-41 style value; PF-161 socket mode by default. */
    setenv("PLATFORM_CONNECTOR_SOCKET", "unix:///var/run/nvsentinel.sock", 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_OK);
    assert_int_equal(cfg.mode, GR_HEALTH_MODE_SOCKET);
    assert_string_equal(cfg.socket_path, "/var/run/nvsentinel.sock");
    assert_string_equal(cfg.token_path, "");
    assert_int_equal(cfg.attempt_max_ns, NS(30));
    assert_int_equal(cfg.socket_wait_ns, NS(20));

    setenv("PLATFORM_CONNECTOR_TOKEN_PATH", "", 1); /* empty = unset */
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_OK);
    assert_string_equal(cfg.token_path, "");
    setenv("PLATFORM_CONNECTOR_TOKEN_PATH", "/var/run/secrets/pc/token", 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_OK);
    assert_string_equal(cfg.token_path, "/var/run/secrets/pc/token");

    setenv("PLATFORM_CONNECTOR_SOCKET", "/plain/path.sock", 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_OK);
    assert_string_equal(cfg.socket_path, "/plain/path.sock");

    unsetenv("PLATFORM_CONNECTOR_SOCKET");
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_EINVAL);
    assert_string_equal(err.msg, "PLATFORM_CONNECTOR_SOCKET is required");
    setenv("PLATFORM_CONNECTOR_SOCKET", "unix://", 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_EINVAL);

    char longp[200];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    setenv("PLATFORM_CONNECTOR_SOCKET", longp, 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "too long"));
}

static void test_direct_mode(void **state)
{
    (void)state;
    gr_health_config cfg;
    gr_err err;
    /* PF-170: the socket env stays but is ignored. */
    setenv("PLATFORM_CONNECTOR_SOCKET", "unix:///var/run/nvsentinel.sock", 1);
    setenv("HEALTH_PUBLISH_TARGET",
           "platform-connector-deployment.nvsentinel.svc.cluster.local:50051", 1);
    setenv("HEALTH_PUBLISH_TOKEN_PATH", "/var/run/secrets/pc/token", 1);
    setenv("HEALTH_PUBLISH_TLS_CA_FILE", "/etc/nvsentinel/platform-connector-deployment-ca/ca.crt",
           1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_OK);
    assert_int_equal(cfg.mode, GR_HEALTH_MODE_DIRECT);
    assert_string_equal(cfg.host, "platform-connector-deployment.nvsentinel.svc.cluster.local");
    assert_int_equal(cfg.port, 50051);
    assert_string_equal(cfg.token_path, "/var/run/secrets/pc/token");
    assert_string_equal(cfg.ca_file, "/etc/nvsentinel/platform-connector-deployment-ca/ca.crt");
    assert_string_equal(cfg.server_name, "");
    assert_int_equal(cfg.retry_window_ns, NS(300)); /* PF-179 default 5m */

    setenv("HEALTH_PUBLISH_TLS_SERVER_NAME", "pc.nvsentinel", 1);
    setenv("HEALTH_PUBLISH_RETRY_WINDOW", "1m30s", 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_OK);
    assert_string_equal(cfg.server_name, "pc.nvsentinel");
    assert_int_equal(cfg.retry_window_ns, NS(90));

    /* PF-183 */
    unsetenv("HEALTH_PUBLISH_TOKEN_PATH");
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_EINVAL);
    assert_string_equal(err.msg,
                        "HEALTH_PUBLISH_TOKEN_PATH is required when HEALTH_PUBLISH_TARGET is set");
    /* The socket-mode token does not stand in for it. */
    setenv("PLATFORM_CONNECTOR_TOKEN_PATH", "/var/run/secrets/pc/token", 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_EINVAL);
    setenv("HEALTH_PUBLISH_TOKEN_PATH", "/t", 1);

    /* PF-184 */
    unsetenv("HEALTH_PUBLISH_TLS_CA_FILE");
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_EINVAL);
    assert_string_equal(err.msg,
                        "HEALTH_PUBLISH_TLS_CA_FILE is required when "
                        "HEALTH_PUBLISH_TARGET is set unless HEALTH_PUBLISH_INSECURE=true");
    setenv("HEALTH_PUBLISH_INSECURE", "false", 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_EINVAL);
    setenv("HEALTH_PUBLISH_INSECURE", "TRUE", 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_OK);
    assert_int_equal(cfg.insecure, 1);
    setenv("HEALTH_PUBLISH_INSECURE", "yes", 1);
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "HEALTH_PUBLISH_INSECURE"));
    setenv("HEALTH_PUBLISH_INSECURE", "t", 1);

    /* PF-185 */
    const char *bad[] = {"5", "5 m", "-5m", "0s", "1d", "1.m", "m", "5m ", "1e3s", "0.0000000001s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("HEALTH_PUBLISH_RETRY_WINDOW", bad[i], 1);
        assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_EINVAL);
        assert_non_null(strstr(err.msg, "invalid HEALTH_PUBLISH_RETRY_WINDOW"));
    }
    unsetenv("HEALTH_PUBLISH_RETRY_WINDOW");

    setenv("HEALTH_PUBLISH_TARGET", "  ", 1); /* blank = socket mode */
    assert_int_equal(gr_health_config_from_env(&cfg, &err), GR_OK);
    assert_int_equal(cfg.mode, GR_HEALTH_MODE_SOCKET);
}

static void test_window_parse(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t ns;
    } ok[] = {
        {"5m", NS(300)},      {"90s", NS(90)},      {"1h", NS(3600)},
        {"1.5s", 1500000000}, {"250ms", 250000000}, {"1h2m3s4ms", NS(3723) + 4000000},
        {"0.5ms", 500000},    {"2m0s", NS(120)},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t ns = 0;
        assert_int_equal(gr_health_parse_window(ok[i].s, "W", &ns, NULL), GR_OK);
        assert_int_equal(ns, ok[i].ns);
    }
    int64_t ns;
    assert_int_equal(gr_health_parse_window("99999999999h", "W", &ns, NULL), GR_EINVAL);
    assert_int_equal(gr_health_parse_window("", "W", &ns, NULL), GR_EINVAL);
}

static void test_targets(void **state)
{
    (void)state;
    gr_health_config cfg;
    gr_health_config_init(&cfg);
    assert_int_equal(gr_health_config_set_target(&cfg, "[fd00::1]:50051", NULL), GR_OK);
    assert_string_equal(cfg.host, "fd00::1");
    assert_int_equal(cfg.port, 50051);
    assert_int_equal(gr_health_config_set_target(&cfg, "10.0.0.1", NULL), GR_OK);
    assert_int_equal(cfg.port, 443);
    assert_int_equal(gr_health_config_set_target(&cfg, "dns:///pc:1", NULL), GR_OK);
    assert_string_equal(cfg.host, "pc");
    const char *bad[] = {"",          ":50051",   "pc:0",          "pc:65536", "pc:x",
                         "fd00::1:5", "[fd00::1", "pc:50051/path", "pc:+1",    "a b:1"};
    gr_err err;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gr_health_config_set_target(&cfg, bad[i], &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "HEALTH_PUBLISH_TARGET"));
}

static void test_enums(void **state)
{
    (void)state;
    gr_health_strategy s;
    gr_err err;
    assert_int_equal(gr_health_strategy_parse(NULL, &s, &err), GR_OK);
    assert_int_equal(s, GR_HEALTH_STRATEGY_EXECUTE_REMEDIATION);
    assert_int_equal(gr_health_strategy_parse("STORE_ONLY", &s, &err), GR_OK);
    assert_int_equal(s, 2);
    assert_int_equal(gr_health_strategy_parse("STORE_AND_ANALYSE", &s, &err), GR_OK);
    assert_int_equal(s, 3);
    assert_int_equal(gr_health_strategy_parse("store_only", &s, &err), GR_EINVAL);
    assert_string_equal(err.msg, "Invalid PROCESSING_STRATEGY: store_only");

    gr_health_action a;
    static const struct {
        const char *name;
        int value;
    } acts[] = {{"NONE", 0},          {"COMPONENT_RESET", 2}, {"CONTACT_SUPPORT", 5},
                {"RUN_FIELDDIAG", 6}, {"RESTART_VM", 15},     {"RESTART_BM", 24},
                {"REPLACE_VM", 25},   {"RUN_DCGMEUD", 26},    {"CUSTOM", 27},
                {"UNKNOWN", 99}};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        assert_int_equal(gr_health_action_parse(acts[i].name, &a), GR_OK);
        assert_int_equal((int)a, acts[i].value);
        assert_string_equal(gr_health_action_name(a), acts[i].name);
    }
    assert_int_equal(gr_health_action_parse("REBOOT", &a), GR_ENOTFOUND);
    assert_null(gr_health_action_name((gr_health_action)3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_socket_mode, clear_env),
        cmocka_unit_test_setup(test_direct_mode, clear_env),
        cmocka_unit_test(test_window_parse),
        cmocka_unit_test(test_targets),
        cmocka_unit_test(test_enums),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
