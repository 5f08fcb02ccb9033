/*
 * gr_health_config.c — publishing configuration from the environment.
 * See gr_health.h. Every error here is a configuration error (GR_EINVAL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gr_health.h"

/* Messages spelled out by the contract (fact sheet §7.4). */
#define MSG_NEED_CA                                                                    \
    "HEALTH_PUBLISH_TLS_CA_FILE is required when HEALTH_PUBLISH_TARGET is set unless " \
    "HEALTH_PUBLISH_INSECURE=true"
#define MSG_NEED_TOKEN  "HEALTH_PUBLISH_TOKEN_PATH is required when HEALTH_PUBLISH_TARGET is set"
#define MSG_NEED_SOCKET "PLATFORM_CONNECTOR_SOCKET is required"

void gr_health_config_init(gr_health_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mode = GR_HEALTH_MODE_SOCKET;
    cfg->retry_window_ns = GR_HEALTH_DEFAULT_WINDOW_NS;
    cfg->attempt_max_ns = GR_HEALTH_ATTEMPT_MAX_NS;
    cfg->socket_wait_ns = GR_HEALTH_SOCKET_WAIT_NS;
}

/* Copy `s` (len n) into dst[size]; GR_EINVAL naming `what` if it does not fit. */
static int copy_field(char *dst, size_t size, const char *s, size_t n, const char *what,
                      gr_err *err)
{
    if (n >= size)
        return gr_err_set(err, GR_EINVAL, "%s is too long (%zu bytes, at most %zu)", what, n,
                          size - 1);
    memcpy(dst, s, n);
    dst[n] = '\0';
    return GR_OK;
}

/* Trimmed view of an env value: NULL or all-blank counts as unset. */
static const char *env_trim(const char *name, size_t *len)
{
    const char *v = getenv(name);
    if (!v)
        return NULL;
    while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')
        v++;
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\n' || v[n - 1] == '\r'))
        n--;
    if (n == 0)
        return NULL;
    *len = n;
    return v;
}

int gr_health_parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"1", "t", "true"}, *const no[] = {"0", "f", "false"};
    for (size_t i = 0; s && i < 3; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return GR_OK;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return GR_OK;
        }
    }
    return GR_EINVAL;
}

int gr_health_parse_window(const char *s, const char *what, int64_t *ns, gr_err *err)
{
    /* ^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$ */
    const char *p = s;
    long double total = 0;
    if (!s || !*s)
        return gr_err_set(err, GR_EINVAL, "invalid %s \"\": want a duration like 5m or 90s", what);
    while (*p) {
        long double v = 0, scale = 1;
        if (*p < '0' || *p > '9')
            goto bad;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p - '0');
            p++;
        }
        if (*p == '.') {
            p++;
            if (*p < '0' || *p > '9')
                goto bad;
            while (*p >= '0' && *p <= '9') {
                scale /= 10;
                v += (*p - '0') * scale;
                p++;
            }
        }
        long double unit;
        if (p[0] == 'm' && p[1] == 's') {
            unit = 1e6L;
            p += 2;
        } else if (*p == 's') {
            unit = 1e9L;
            p++;
        } else if (*p == 'm') {
            unit = 60e9L;
            p++;
        } else if (*p == 'h') {
            unit = 3600e9L;
            p++;
        } else {
            goto bad;
        }
        total += v * unit;
        if (total > 9.2e18L)
            return gr_err_set(err, GR_EINVAL, "invalid %s \"%s\": duration too large", what, s);
    }
    if (total < 1)
        return gr_err_set(err, GR_EINVAL, "invalid %s \"%s\": must be greater than zero", what, s);
    *ns = (int64_t)total;
    return GR_OK;
bad:
    return gr_err_set(err, GR_EINVAL,
                      "invalid %s \"%s\": want a Go duration with units ms, s, m or h "
                      "(e.g. 5m, 90s, 1m30s)",
                      what, s);
}

int gr_health_config_set_socket(gr_health_config *cfg, const char *value, gr_err *err)
{
    const char *p = value ? value : "";
    if (strncmp(p, "unix://", 7) == 0)
        p += 7;
    else if (strncmp(p, "unix:", 5) == 0)
        p += 5;
    if (!*p)
        return gr_err_set(err, GR_EINVAL, "%s", MSG_NEED_SOCKET);
    if (copy_field(cfg->socket_path, sizeof cfg->socket_path, p, strlen(p),
                   "PLATFORM_CONNECTOR_SOCKET path", err) != GR_OK)
        return GR_EINVAL;
    cfg->mode = GR_HEALTH_MODE_SOCKET;
    return GR_OK;
}

static int valid_host(const char *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_' || c == ':' || c == '%'))
            return 0;
    }
    return n > 0;
}

int gr_health_config_set_target(gr_health_config *cfg, const char *value, gr_err *err)
{
    const char *v = value ? value : "";
    const char *host, *port = NULL;
    size_t hlen;
    if (strncmp(v, "dns:///", 7) == 0)
        v += 7;
    if (*v == '[') {
        const char *close = strchr(v, ']');
        if (!close)
            goto bad;
        host = v + 1;
        hlen = (size_t)(close - host);
        if (close[1] == ':')
            port = close + 2;
        else if (close[1] != '\0')
            goto bad;
    } else {
        const char *colon = strchr(v, ':');
        if (colon && strchr(colon + 1, ':'))
            goto bad; /* bare IPv6 needs brackets */
        host = v;
        hlen = colon ? (size_t)(colon - v) : strlen(v);
        if (colon)
            port = colon + 1;
    }
    if (!valid_host(host, hlen))
        goto bad;
    int portnum = 443;
    if (port) {
        char *end;
        long pn = strtol(port, &end, 10);
        if (!*port || *end || pn < 1 || pn > 65535 || *port == '+' || *port == '-')
            goto bad;
        portnum = (int)pn;
    }
    if (copy_field(cfg->host, sizeof cfg->host, host, hlen, "HEALTH_PUBLISH_TARGET host", err) !=
        GR_OK)
        return GR_EINVAL;
    cfg->port = portnum;
    cfg->mode = GR_HEALTH_MODE_DIRECT;
    return GR_OK;
bad:
    return gr_err_set(err, GR_EINVAL,
                      "invalid HEALTH_PUBLISH_TARGET \"%s\": want host:port (e.g. "
                      "platform-connector-deployment.nvsentinel.svc.cluster.local:50051)",
                      value ? value : "");
}

int gr_health_config_validate(const gr_health_config *cfg, gr_err *err)
{
    if (cfg->mode == GR_HEALTH_MODE_SOCKET) {
        if (!cfg->socket_path[0])
            return gr_err_set(err, GR_EINVAL, "%s", MSG_NEED_SOCKET);
    } else if (cfg->mode == GR_HEALTH_MODE_DIRECT) {
        if (!cfg->host[0] || cfg->port < 1 || cfg->port > 65535)
            return gr_err_set(err, GR_EINVAL, "HEALTH_PUBLISH_TARGET: host and port are required");
        if (!cfg->token_path[0])
            return gr_err_set(err, GR_EINVAL, "%s", MSG_NEED_TOKEN); /* PF-183 */
        if (!cfg->ca_file[0] && !cfg->insecure)
            return gr_err_set(err, GR_EINVAL, "%s", MSG_NEED_CA); /* PF-184 */
        if (cfg->retry_window_ns <= 0)
            return gr_err_set(err, GR_EINVAL,
                              "invalid HEALTH_PUBLISH_RETRY_WINDOW: must be greater than zero");
    } else {
        return gr_err_set(err, GR_EINVAL, "unknown publishing mode %d", (int)cfg->mode);
    }
    if (cfg->attempt_max_ns <= 0 || cfg->socket_wait_ns < 0)
        return gr_err_set(err, GR_EINVAL, "attempt timeout must be > 0 and socket wait >= 0");
    return GR_OK;
}

int gr_health_config_from_env(gr_health_config *cfg, gr_err *err)
{
    gr_health_config_init(cfg);
    size_t n = 0;
    const char *v;
    int rc;

    if ((v = env_trim("HEALTH_PUBLISH_TARGET", &n)) != NULL) {
        /* Direct mode; the socket env is ignored (PF-170). */
        char tmp[GR_HEALTH_HOST_MAX + 16];
        if (copy_field(tmp, sizeof tmp, v, n, "HEALTH_PUBLISH_TARGET", err) != GR_OK)
            return GR_EINVAL;
        if ((rc = gr_health_config_set_target(cfg, tmp, err)) != GR_OK)
            return rc;
        if ((v = env_trim("HEALTH_PUBLISH_TOKEN_PATH", &n)) != NULL &&
            copy_field(cfg->token_path, sizeof cfg->token_path, v, n, "HEALTH_PUBLISH_TOKEN_PATH",
                       err) != GR_OK)
            return GR_EINVAL;
        if ((v = env_trim("HEALTH_PUBLISH_TLS_CA_FILE", &n)) != NULL &&
            copy_field(cfg->ca_file, sizeof cfg->ca_file, v, n, "HEALTH_PUBLISH_TLS_CA_FILE",
                       err) != GR_OK)
            return GR_EINVAL;
        if ((v = env_trim("HEALTH_PUBLISH_TLS_SERVER_NAME", &n)) != NULL &&
            copy_field(cfg->server_name, sizeof cfg->server_name, v, n,
                       "HEALTH_PUBLISH_TLS_SERVER_NAME", err) != GR_OK)
            return GR_EINVAL;
        if ((v = env_trim("HEALTH_PUBLISH_INSECURE", &n)) != NULL) {
            char tmp2[16];
            if (n >= sizeof tmp2 || (memcpy(tmp2, v, n), tmp2[n] = '\0',
                                     gr_health_parse_bool(tmp2, &cfg->insecure)) != GR_OK)
                return gr_err_set(err, GR_EINVAL,
                                  "invalid HEALTH_PUBLISH_INSECURE \"%s\": want true or false",
                                  getenv("HEALTH_PUBLISH_INSECURE"));
        }
        if ((v = getenv("HEALTH_PUBLISH_RETRY_WINDOW")) != NULL && *v) {
            if ((rc = gr_health_parse_window(v, "HEALTH_PUBLISH_RETRY_WINDOW",
                                             &cfg->retry_window_ns, err)) != GR_OK)
                return rc; /* PF-185 */
        }
    } else {
        v = getenv("PLATFORM_CONNECTOR_SOCKET");
        if (!v || !*v)
            return gr_err_set(err, GR_EINVAL, "%s", MSG_NEED_SOCKET);
        if ((rc = gr_health_config_set_socket(cfg, v, err)) != GR_OK)
            return rc;
        /* Optional; empty means unset. */
        if ((v = env_trim("PLATFORM_CONNECTOR_TOKEN_PATH", &n)) != NULL &&
            copy_field(cfg->token_path, sizeof cfg->token_path, v, n,
                       "PLATFORM_CONNECTOR_TOKEN_PATH", err) != GR_OK)
            return GR_EINVAL;
    }
    return gr_health_config_validate(cfg, err);
}
