/*
 * gpuready-publish — send one health event to the platform connector.
 *
 * For operators testing connectivity and auth. It reads the same environment
 * as the preflight checks (see docs/health-events.md); each flag replaces the
 * matching variable. Exit codes: 0 delivered, 1 not delivered, 2 usage or
 * configuration error.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_health.h"
#include "gr_log.h"

#define MAX_LIST 64

static void usage(FILE *f)
{
    fputs("usage: gpuready-publish [options]\n"
          "Send one NVSentinel health event to the platform connector and report whether it\n"
          "was delivered. Connection settings come from the environment the checks use\n"
          "(PLATFORM_CONNECTOR_SOCKET, PLATFORM_CONNECTOR_TOKEN_PATH, HEALTH_PUBLISH_*);\n"
          "flags override them.\n"
          "\n"
          "connection:\n"
          "  --socket unix:///PATH      node-local connector socket (socket mode)\n"
          "  --target HOST:PORT         deployment connector (direct mode)\n"
          "  --token-path PATH          bearer token file\n"
          "  --ca-file PATH             CA bundle to verify the target\n"
          "  --server-name NAME         TLS server name (default: the target host)\n"
          "  --insecure                 plaintext to the target (no TLS)\n"
          "  --retry-window DURATION    direct-mode retry budget (default 5m)\n"
          "  --attempt-timeout DURATION cap on one attempt (default 30s)\n"
          "event (defaults send a healthy test event):\n"
          "  --agent NAME               default gpuready-publish\n"
          "  --component-class NAME     default Node\n"
          "  --check-name NAME          default ConnectivityTest\n"
          "  --unhealthy                isHealthy=false (default true)\n"
          "  --fatal                    isFatal=true\n"
          "  --message TEXT\n"
          "  --action NAME              RecommendedAction, default NONE\n"
          "  --error-code CODE          repeatable\n"
          "  --entity TYPE=VALUE        repeatable, e.g. GPU_UUID=GPU-...\n"
          "  --node NAME                default $NODE_NAME\n"
          "  --strategy NAME            default $PROCESSING_STRATEGY or EXECUTE_REMEDIATION\n"
          "  --idempotency-key KEY      default: random\n"
          "  --help, --version\n"
          "exit: 0 delivered, 1 not delivered, 2 usage or configuration error\n",
          f);
}

static int fail_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail_usage(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gpuready-publish: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n(see gpuready-publish --help)\n", stderr);
    return 2;
}

enum {
    O_SOCKET = 256,
    O_TARGET,
    O_TOKEN,
    O_CA,
    O_SNI,
    O_INSECURE,
    O_WINDOW,
    O_ATTEMPT,
    O_AGENT,
    O_CLASS,
    O_CHECK,
    O_UNHEALTHY,
    O_FATAL,
    O_MESSAGE,
    O_ACTION,
    O_CODE,
    O_ENTITY,
    O_NODE,
    O_STRATEGY,
    O_KEY,
    O_HELP,
    O_VERSION,
};

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, O_SOCKET},
        {"target", required_argument, NULL, O_TARGET},
        {"token-path", required_argument, NULL, O_TOKEN},
        {"ca-file", required_argument, NULL, O_CA},
        {"server-name", required_argument, NULL, O_SNI},
        {"insecure", no_argument, NULL, O_INSECURE},
        {"retry-window", required_argument, NULL, O_WINDOW},
        {"attempt-timeout", required_argument, NULL, O_ATTEMPT},
        {"agent", required_argument, NULL, O_AGENT},
        {"component-class", required_argument, NULL, O_CLASS},
        {"check-name", required_argument, NULL, O_CHECK},
        {"unhealthy", no_argument, NULL, O_UNHEALTHY},
        {"fatal", no_argument, NULL, O_FATAL},
        {"message", required_argument, NULL, O_MESSAGE},
        {"action", required_argument, NULL, O_ACTION},
        {"error-code", required_argument, NULL, O_CODE},
        {"entity", required_argument, NULL, O_ENTITY},
        {"node", required_argument, NULL, O_NODE},
        {"strategy", required_argument, NULL, O_STRATEGY},
        {"idempotency-key", required_argument, NULL, O_KEY},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    gr_err err;
    gr_err_clear(&err);
    if (gr_log_init(GR_VERSION, &err) != GR_OK)
        fprintf(stderr, "gpuready-publish: %s\n", err.msg);

    gr_health_event ev;
    gr_health_event_init(&ev);
    ev.agent = "gpuready-publish";
    ev.component_class = "Node";
    ev.check_name = "ConnectivityTest";
    ev.is_healthy = 1;
    ev.message = "gpuready-publish connectivity test";
    ev.node_name = getenv("NODE_NAME");
    const char *strategy = getenv("PROCESSING_STRATEGY");
    const char *codes[MAX_LIST];
    gr_health_entity ents[MAX_LIST];
    size_t ncodes = 0, nents = 0;
    const char *attempt = NULL;

    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_SOCKET:
            setenv("PLATFORM_CONNECTOR_SOCKET", optarg, 1);
            unsetenv("HEALTH_PUBLISH_TARGET");
            break;
        case O_TARGET:
            setenv("HEALTH_PUBLISH_TARGET", optarg, 1);
            break;
        case O_TOKEN:
            setenv("PLATFORM_CONNECTOR_TOKEN_PATH", optarg, 1);
            setenv("HEALTH_PUBLISH_TOKEN_PATH", optarg, 1);
            break;
        case O_CA:
            setenv("HEALTH_PUBLISH_TLS_CA_FILE", optarg, 1);
            break;
        case O_SNI:
            setenv("HEALTH_PUBLISH_TLS_SERVER_NAME", optarg, 1);
            break;
        case O_INSECURE:
            setenv("HEALTH_PUBLISH_INSECURE", "true", 1);
            break;
        case O_WINDOW:
            setenv("HEALTH_PUBLISH_RETRY_WINDOW", optarg, 1);
            break;
        case O_ATTEMPT:
            attempt = optarg;
            break;
        case O_AGENT:
            ev.agent = optarg;
            break;
        case O_CLASS:
            ev.component_class = optarg;
            break;
        case O_CHECK:
            ev.check_name = optarg;
            break;
        case O_UNHEALTHY:
            ev.is_healthy = 0;
            break;
        case O_FATAL:
            ev.is_fatal = 1;
            break;
        case O_MESSAGE:
            ev.message = optarg;
            break;
        case O_ACTION:
            if (gr_health_action_parse(optarg, &ev.recommended_action) != GR_OK)
                return fail_usage("unknown --action %s (e.g. NONE, CONTACT_SUPPORT, RESTART_VM)",
                                  optarg);
            break;
        case O_CODE:
            if (ncodes == MAX_LIST)
                return fail_usage("%s: too many --error-code flags", "error-code");
            codes[ncodes++] = optarg;
            break;
        case O_ENTITY: {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg)
                return fail_usage("--entity %s: want TYPE=VALUE", optarg);
            if (nents == MAX_LIST)
                return fail_usage("%s: too many --entity flags", "entity");
            *eq = '\0';
            ents[nents].type = optarg;
            ents[nents].value = eq + 1;
            nents++;
            break;
        }
        case O_NODE:
            ev.node_name = optarg;
            break;
        case O_STRATEGY:
            strategy = optarg;
            break;
        case O_KEY:
            ev.idempotency_key = optarg;
            break;
        case O_HELP:
            usage(stdout);
            return 0;
        case O_VERSION:
            printf("gpuready-publish %s\n", GR_VERSION);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc)
        return fail_usage("unexpected argument %s", argv[optind]);
    if (!ev.node_name || !*ev.node_name)
        return fail_usage("%s", "the node name is required: --node NAME or NODE_NAME");
    if (gr_health_strategy_parse(strategy, &ev.processing_strategy, &err) != GR_OK)
        return fail_usage("%s", err.msg);
    ev.error_codes = codes;
    ev.n_error_codes = ncodes;
    ev.entities = ents;
    ev.n_entities = nents;

    gr_health_config cfg;
    if (gr_health_config_from_env(&cfg, &err) != GR_OK) {
        gr_log(GR_LOG_ERROR, "publish", "Configuration error", GR_KV_STR("error", err.msg),
               GR_KV_END);
        return 2;
    }
    if (attempt) {
        if (gr_health_parse_window(attempt, "--attempt-timeout", &cfg.attempt_max_ns, &err) !=
            GR_OK)
            return fail_usage("%s", err.msg);
    }
    gr_health_publisher *pub;
    if (gr_health_publisher_new(&cfg, NULL, &pub, &err) != GR_OK) {
        gr_log(GR_LOG_ERROR, "publish", "Configuration error", GR_KV_STR("error", err.msg),
               GR_KV_END);
        return 2;
    }
    gr_health_report rep;
    int rc = gr_health_publish(pub, &ev, &rep, &err);
    gr_health_publisher_free(pub);
    if (rc != GR_OK) {
        if (rc == GR_EINVAL) {
            fprintf(stderr, "gpuready-publish: %s\n", err.msg);
            return 2;
        }
        gr_log(GR_LOG_ERROR, "publish", "health event not delivered", GR_KV_STR("error", err.msg),
               GR_KV_INT("attempts", rep.attempts),
               GR_KV_STR("idempotencyKey", rep.idempotency_key), GR_KV_END);
        return 1;
    }
    printf("delivered to %s after %d attempt(s) in %.3f s, idempotency-key %s\n",
           cfg.mode == GR_HEALTH_MODE_SOCKET ? cfg.socket_path : cfg.host, rep.attempts,
           (double)rep.elapsed_ns / 1e9, rep.idempotency_key);
    return 0;
}
