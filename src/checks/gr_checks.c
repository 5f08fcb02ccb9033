/* gr_checks.c — see gr_checks.h. Pure: no I/O, no clock. */
#include "gr_checks.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gr_gpu.h"

const char *gr_checks_process_env(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name);
}

static const char *env_get(gr_checks_getenv env, void *ctx, const char *name)
{
    const char *v = env(ctx, name);
    return v;
}

/* Set and not only whitespace. */
static int is_set(const char *v)
{
    if (!v)
        return 0;
    for (; *v; v++)
        if (!isspace((unsigned char)*v))
            return 1;
    return 0;
}

int gr_checks_parse_go_bool(const char *s, int *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    if (!s)
        return GR_EINVAL;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strcmp(s, t[i]) == 0) {
            *out = 1;
            return GR_OK;
        }
        if (strcmp(s, f[i]) == 0) {
            *out = 0;
            return GR_OK;
        }
    }
    return GR_EINVAL;
}

int gr_checks_parse_loose_bool(const char *s)
{
    if (!s)
        return 0;
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    return (n == 4 && strncasecmp(s, "true", 4) == 0) || (n == 1 && s[0] == '1') ||
           (n == 3 && strncasecmp(s, "yes", 3) == 0);
}

int gr_checks_parse_long(const char *s, long min, long max, long *out)
{
    if (!s)
        return GR_EINVAL;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return GR_EINVAL;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s)
        return GR_EINVAL;
    while (isspace((unsigned char)*end))
        end++;
    if (*end || v < min || v > max)
        return GR_EINVAL;
    *out = v;
    return GR_OK;
}

int gr_checks_parse_positive(const char *s, int allow_zero, double *out)
{
    if (!s)
        return GR_EINVAL;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return GR_EINVAL;
    /* Decimal only: no hex, inf or nan from strtod. */
    for (const char *p = s; *p && !isspace((unsigned char)*p); p++)
        if (!isdigit((unsigned char)*p) && *p != '.' && *p != 'e' && *p != 'E' && *p != '+' &&
            *p != '-')
            return GR_EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s)
        return GR_EINVAL;
    while (isspace((unsigned char)*end))
        end++;
    if (*end || !isfinite(v) || v < 0 || (!allow_zero && v <= 0))
        return GR_EINVAL;
    *out = v;
    return GR_OK;
}

#define SIZE_CAP ((uint64_t)1 << 40) /* 1 TiB per message: far beyond any GPU */

int gr_checks_parse_size(const char *s, uint64_t *bytes, gr_err *err)
{
    char buf[64];
    const char *orig = s ? s : "";
    size_t n = strlen(orig);
    /* Trim and upper-case into buf. */
    size_t a = 0;
    while (a < n && isspace((unsigned char)orig[a]))
        a++;
    while (n > a && isspace((unsigned char)orig[n - 1]))
        n--;
    if (n - a == 0 || n - a >= sizeof buf)
        return gr_err_set(err, GR_EINVAL, GR_CHECKS_MSG_BAD_SIZE, orig);
    for (size_t i = a; i < n; i++)
        buf[i - a] = (char)toupper((unsigned char)orig[i]);
    size_t len = n - a;
    buf[len] = '\0';
    uint64_t mult;
    if (len > 2 && strcmp(buf + len - 2, "GB") == 0) {
        mult = (uint64_t)1 << 30;
        len -= 2;
    } else if (len > 2 && strcmp(buf + len - 2, "MB") == 0) {
        mult = (uint64_t)1 << 20;
        len -= 2;
    } else if (len > 1 && buf[len - 1] == 'G') {
        mult = (uint64_t)1 << 30;
        len -= 1;
    } else if (len > 1 && buf[len - 1] == 'M') {
        mult = (uint64_t)1 << 20;
        len -= 1;
    } else {
        return gr_err_set(err, GR_EINVAL, GR_CHECKS_MSG_BAD_SIZE, orig);
    }
    buf[len] = '\0';
    /* digits with at most one '.' */
    int dots = 0, digits = 0;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '.')
            dots++;
        else if (isdigit((unsigned char)buf[i]))
            digits++;
        else
            return gr_err_set(err, GR_EINVAL, GR_CHECKS_MSG_BAD_SIZE, orig);
    }
    if (dots > 1 || digits == 0)
        return gr_err_set(err, GR_EINVAL, GR_CHECKS_MSG_BAD_SIZE, orig);
    double v = strtod(buf, NULL);
    double total = v * (double)mult;
    if (!(total >= 1.0) || total > (double)SIZE_CAP)
        return gr_err_set(err, GR_EINVAL, GR_CHECKS_MSG_BAD_SIZE, orig);
    *bytes = (uint64_t)total;
    return GR_OK;
}

int gr_checks_parse_sizes(const char *list, uint64_t *out, size_t *n, gr_err *err)
{
    *n = 0;
    if (!list)
        list = "";
    const char *p = list;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char item[64];
        if (len >= sizeof item)
            return gr_err_set(err, GR_EINVAL, GR_CHECKS_MSG_BAD_SIZE, "(item too long)");
        memcpy(item, p, len);
        item[len] = '\0';
        if (is_set(item)) {
            if (*n == GR_CHECKS_MAX_SIZES)
                return gr_err_set(err, GR_EINVAL, "MESSAGE_SIZES: at most %d sizes",
                                  GR_CHECKS_MAX_SIZES);
            int rc = gr_checks_parse_size(item, &out[*n], err);
            if (rc != GR_OK)
                return rc;
            (*n)++;
        }
        if (!c)
            break;
        p = c + 1;
    }
    if (*n == 0)
        return gr_err_set(err, GR_EINVAL, "MESSAGE_SIZES is empty: give sizes like 4G,8G");
    return GR_OK;
}

static const struct {
    const char *name;
    int op;
} reduce_ops[] = {{"sum", GR_NCCL_SUM},
                  {"prod", GR_NCCL_PROD},
                  {"min", GR_NCCL_MIN},
                  {"max", GR_NCCL_MAX},
                  {"avg", GR_NCCL_AVG}};

int gr_checks_parse_reduce_op(const char *s, int *op, gr_err *err)
{
    char buf[16];
    size_t n = s ? strlen(s) : 0;
    if (s && n < sizeof buf) {
        size_t a = 0;
        while (a < n && isspace((unsigned char)s[a]))
            a++;
        while (n > a && isspace((unsigned char)s[n - 1]))
            n--;
        memcpy(buf, s + a, n - a);
        buf[n - a] = '\0';
        for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++)
            if (strcasecmp(buf, reduce_ops[i].name) == 0) {
                *op = reduce_ops[i].op;
                return GR_OK;
            }
    }
    return gr_err_set(err, GR_EINVAL,
                      "invalid NCCL_REDUCE_OP \"%s\": want one of sum, prod, min, max, avg",
                      s ? s : "");
}

const char *gr_checks_reduce_op_name(int op)
{
    for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++)
        if (reduce_ops[i].op == op)
            return reduce_ops[i].name;
    return "unknown";
}

double gr_checks_algbw(uint64_t bytes, int64_t ns_per_iter)
{
    if (ns_per_iter <= 0)
        return 0.0;
    return (double)bytes / ((double)ns_per_iter / 1e9) / 1e9;
}

double gr_checks_busbw(double algbw, int nranks)
{
    if (nranks <= 1)
        return 0.0;
    return algbw * (2.0 * (double)(nranks - 1) / (double)nranks);
}

void gr_checks_event_set(gr_checks_event *ev, const char *check_name, int healthy, int fatal,
                         gr_health_action action, const char *error_code, const char *fmt, ...)
{
    memset(ev, 0, sizeof *ev);
    snprintf(ev->check_name, sizeof ev->check_name, "%s", check_name);
    ev->is_healthy = healthy;
    ev->is_fatal = fatal;
    ev->action = action;
    snprintf(ev->error_code, sizeof ev->error_code, "%s", error_code ? error_code : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ev->message, sizeof ev->message, fmt, ap);
    va_end(ap);
}

void gr_checks_event_view(const gr_checks_event *ev, const char *agent, const char *component_class,
                          const char *node, gr_health_strategy strategy, const char **code_slot,
                          gr_health_entity *entity_slot, gr_health_event *out)
{
    gr_health_event_init(out);
    out->agent = agent;
    out->component_class = component_class;
    out->check_name = ev->check_name;
    out->is_fatal = ev->is_fatal;
    out->is_healthy = ev->is_healthy;
    out->message = ev->message;
    out->recommended_action = ev->action;
    if (ev->error_code[0]) {
        *code_slot = ev->error_code;
        out->error_codes = code_slot;
        out->n_error_codes = 1;
    }
    if (ev->entity_uuid[0]) {
        entity_slot->type = "GPU_UUID";
        entity_slot->value = ev->entity_uuid;
        out->entities = entity_slot;
        out->n_entities = 1;
    }
    out->node_name = node;
    out->processing_strategy = strategy;
}

int gr_checks_store_only_gate(int code, gr_health_strategy strategy)
{
    if (code != 0 && strategy == GR_HEALTH_STRATEGY_STORE_ONLY)
        return 0;
    return code;
}

/* Common: NODE_NAME and PROCESSING_STRATEGY. */
static int parse_common(gr_checks_getenv env, void *ctx, char *node, size_t node_len,
                        gr_health_strategy *strategy, gr_err *err)
{
    const char *v = env_get(env, ctx, "NODE_NAME");
    if (!is_set(v))
        return gr_err_set(err, GR_EINVAL, "NODE_NAME is required");
    if (strlen(v) >= node_len)
        return gr_err_set(err, GR_EINVAL, "NODE_NAME is longer than %zu bytes", node_len - 1);
    snprintf(node, node_len, "%s", v);
    return gr_health_strategy_parse(env_get(env, ctx, "PROCESSING_STRATEGY"), strategy, err);
}

int gr_checks_loopback_config_parse(gr_checks_getenv env, void *ctx, gr_checks_loopback_config *cfg,
                                    gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->threshold_gbps = 150.0;
    cfg->size_bytes = (uint64_t)256 << 20;
    cfg->warmup_iters = 5;
    cfg->iters = 20;
    const char *v = env_get(env, ctx, "BW_THRESHOLD_GBPS");
    if (is_set(v) && gr_checks_parse_positive(v, 0, &cfg->threshold_gbps) != GR_OK)
        return gr_err_set(err, GR_EINVAL,
                          "invalid BW_THRESHOLD_GBPS \"%s\": want a number greater than 0", v);
    v = env_get(env, ctx, "SKIP_BANDWIDTH_CHECK");
    if (is_set(v) && gr_checks_parse_go_bool(v, &cfg->skip_bw_check) != GR_OK) {
        cfg->skip_bw_check = 0;
        cfg->skip_invalid = 1;
    }
    v = env_get(env, ctx, "TEST_SIZE_MB");
    if (is_set(v)) {
        long mb;
        if (gr_checks_parse_long(v, 1, 1L << 20, &mb) != GR_OK)
            return gr_err_set(err, GR_EINVAL,
                              "invalid TEST_SIZE_MB \"%s\": want a whole number of MiB, 1 to "
                              "1048576",
                              v);
        cfg->size_bytes = (uint64_t)mb << 20;
    }
    return parse_common(env, ctx, cfg->node_name, sizeof cfg->node_name, &cfg->strategy, err);
}

int gr_checks_loopback_verdict(const gr_checks_loopback_config *cfg, const gr_checks_bw *bw,
                               const char *error, gr_checks_event *ev)
{
    if (error) {
        gr_checks_event_set(ev, GR_CHECKS_CHECK_LOOPBACK, 0, 1, GR_HEALTH_ACTION_CONTACT_SUPPORT,
                            "NCCL_TEST_ERROR", GR_CHECKS_MSG_LOOPBACK_ERROR, error);
        return GR_CHECKS_EXIT_FAIL;
    }
    if (cfg->skip_bw_check) {
        gr_checks_event_set(ev, GR_CHECKS_CHECK_LOOPBACK, 1, 0, GR_HEALTH_ACTION_NONE, NULL,
                            GR_CHECKS_MSG_LOOPBACK_SKIP, bw->busbw);
        return GR_CHECKS_EXIT_OK;
    }
    if (bw->busbw < cfg->threshold_gbps) {
        gr_checks_event_set(ev, GR_CHECKS_CHECK_LOOPBACK, 0, 1, GR_HEALTH_ACTION_CONTACT_SUPPORT,
                            "NCCL_BW_DEGRADED", GR_CHECKS_MSG_BW_BELOW, bw->busbw,
                            cfg->threshold_gbps);
        return GR_CHECKS_EXIT_FAIL;
    }
    gr_checks_event_set(ev, GR_CHECKS_CHECK_LOOPBACK, 1, 0, GR_HEALTH_ACTION_NONE, NULL,
                        GR_CHECKS_MSG_BW_MEETS, bw->busbw, cfg->threshold_gbps);
    return GR_CHECKS_EXIT_OK;
}

int gr_checks_allreduce_config_parse(gr_checks_getenv env, void *ctx,
                                     gr_checks_allreduce_config *cfg, int *gang_error, gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    *gang_error = 0;
    cfg->threshold_gbps = 100.0;
    cfg->iters = 20;
    cfg->warmup_iters = 5;
    cfg->op = GR_NCCL_SUM;
    cfg->gang_timeout_s = 600;
    cfg->bootstrap_timeout_s = 300;
    snprintf(cfg->gang_dir, sizeof cfg->gang_dir, "/etc/preflight");

    const char *v = env_get(env, ctx, "POD_NAME");
    if (!is_set(v)) {
        *gang_error = 1;
        return gr_err_set(err, GR_EINVAL,
                          "POD_NAME is required (the webhook injects it with gang coordination "
                          "on)");
    }
    if (strlen(v) >= sizeof cfg->pod_name)
        return gr_err_set(err, GR_EINVAL, "POD_NAME is too long");
    snprintf(cfg->pod_name, sizeof cfg->pod_name, "%s", v);
    v = env_get(env, ctx, "GANG_CONFIG_DIR");
    if (is_set(v)) {
        if (strlen(v) >= sizeof cfg->gang_dir - 64) {
            *gang_error = 1;
            return gr_err_set(err, GR_EINVAL, "GANG_CONFIG_DIR is too long");
        }
        snprintf(cfg->gang_dir, sizeof cfg->gang_dir, "%s", v);
    }
    long l;
    v = env_get(env, ctx, "GANG_TIMEOUT_SECONDS");
    if (is_set(v)) {
        if (gr_checks_parse_long(v, 1, 86400, &l) != GR_OK) {
            *gang_error = 1;
            return gr_err_set(err, GR_EINVAL,
                              "invalid GANG_TIMEOUT_SECONDS \"%s\": want whole seconds, 1 to "
                              "86400",
                              v);
        }
        cfg->gang_timeout_s = (int)l;
    }
    v = env_get(env, ctx, "BW_THRESHOLD_GBPS");
    if (is_set(v) && gr_checks_parse_positive(v, 0, &cfg->threshold_gbps) != GR_OK)
        return gr_err_set(err, GR_EINVAL,
                          "invalid BW_THRESHOLD_GBPS \"%s\": want a number greater than 0", v);
    cfg->skip_bw_check = gr_checks_parse_loose_bool(env_get(env, ctx, "SKIP_BANDWIDTH_CHECK"));
    v = env_get(env, ctx, "MESSAGE_SIZES");
    if (gr_checks_parse_sizes(is_set(v) ? v : "4G,8G", cfg->sizes, &cfg->n_sizes, err) != GR_OK)
        return gr_err_prefix(err, "MESSAGE_SIZES: ");
    v = env_get(env, ctx, "BENCHMARK_ITERS");
    if (is_set(v)) {
        if (gr_checks_parse_long(v, 1, 100000, &l) != GR_OK)
            return gr_err_set(err, GR_EINVAL,
                              "invalid BENCHMARK_ITERS \"%s\": want a whole number >= 1", v);
        cfg->iters = (int)l;
    }
    v = env_get(env, ctx, "WARMUP_ITERS");
    if (is_set(v)) {
        if (gr_checks_parse_long(v, 0, 100000, &l) != GR_OK)
            return gr_err_set(err, GR_EINVAL,
                              "invalid WARMUP_ITERS \"%s\": want a whole number >= 0", v);
        cfg->warmup_iters = (int)l;
    }
    v = env_get(env, ctx, "NCCL_REDUCE_OP");
    if (is_set(v) && gr_checks_parse_reduce_op(v, &cfg->op, err) != GR_OK)
        return GR_EINVAL;
    v = env_get(env, ctx, "NPROCS_PER_NODE");
    if (is_set(v)) {
        if (gr_checks_parse_long(v, 1, 64, &l) != GR_OK)
            return gr_err_set(err, GR_EINVAL,
                              "invalid NPROCS_PER_NODE \"%s\": want GPUs per node, 1 to 64", v);
        cfg->gpus_per_node = (int)l;
    }
    v = env_get(env, ctx, "BOOTSTRAP_TIMEOUT_SECONDS");
    if (is_set(v)) {
        if (gr_checks_parse_long(v, 1, 86400, &l) != GR_OK)
            return gr_err_set(err, GR_EINVAL,
                              "invalid BOOTSTRAP_TIMEOUT_SECONDS \"%s\": want whole seconds", v);
        cfg->bootstrap_timeout_s = (int)l;
    }
    return parse_common(env, ctx, cfg->node_name, sizeof cfg->node_name, &cfg->strategy, err);
}

int gr_checks_allreduce_verdict(const gr_checks_allreduce_config *cfg, const gr_checks_bw *bw,
                                size_t n, gr_checks_event *ev)
{
    double minbw = 0.0;
    int pass = 1;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || bw[i].busbw < minbw)
            minbw = bw[i].busbw;
        if (bw[i].busbw < cfg->threshold_gbps)
            pass = 0;
    }
    if (n == 0)
        pass = 0;
    if (pass) {
        gr_checks_event_set(ev, GR_CHECKS_CHECK_ALLREDUCE, 1, 0, GR_HEALTH_ACTION_NONE, NULL,
                            GR_CHECKS_MSG_BW_MEETS, minbw, cfg->threshold_gbps);
        return GR_CHECKS_EXIT_OK;
    }
    if (cfg->skip_bw_check && n > 0) {
        /* Not "meets threshold" when it does not: say the check was skipped. */
        gr_checks_event_set(ev, GR_CHECKS_CHECK_ALLREDUCE, 1, 0, GR_HEALTH_ACTION_NONE, NULL,
                            GR_CHECKS_MSG_LOOPBACK_SKIP, minbw);
        return GR_CHECKS_EXIT_OK;
    }
    gr_checks_event_set(ev, GR_CHECKS_CHECK_ALLREDUCE, 0, 1, GR_HEALTH_ACTION_CONTACT_SUPPORT,
                        "NCCL_ALLREDUCE_BW_DEGRADED", GR_CHECKS_MSG_BW_BELOW, minbw,
                        cfg->threshold_gbps);
    return GR_CHECKS_EXIT_FAIL;
}
