/*
 * gr_health.c — the publisher: token, idempotency key, retries, gRPC call.
 * See gr_health.h. The retry decisions are in gr_health_retry.c (pure).
 */
#include "gr_health.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "gr_file.h"
#include "gr_log.h"

#define MODULE "health"
/* Poll interval while waiting for the socket file to appear. */
#define SOCKET_POLL_NS (100 * 1000000LL)

struct gr_health_publisher {
    gr_health_config cfg;
    gr_health_retry retry;
    gr_health_hooks hooks;
    gr_grpc_endpoint ep;
    uint64_t rng; /* xorshift state for jitter */
};

/* --- default hooks ------------------------------------------------------ */

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * GR_HEALTH_NS_PER_S + ts.tv_nsec;
}

static int64_t real_now(void *ctx)
{
    (void)ctx;
    return clock_ns(CLOCK_MONOTONIC);
}

static int64_t real_wall(void *ctx)
{
    (void)ctx;
    return clock_ns(CLOCK_REALTIME);
}

static void real_sleep(void *ctx, int64_t ns)
{
    (void)ctx;
    if (ns <= 0)
        return;
    struct timespec ts = {(time_t)(ns / GR_HEALTH_NS_PER_S), (long)(ns % GR_HEALTH_NS_PER_S)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int real_ready(void *ctx, const gr_grpc_endpoint *ep)
{
    (void)ctx;
    return gr_grpc_transport_for(ep->kind)->ready(ep);
}

static int real_call(void *ctx, const gr_grpc_call *call, gr_grpc_result *res, gr_err *err)
{
    (void)ctx;
    return gr_grpc_unary(call, res, err);
}

static void fill_random(void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            /* No entropy source: fall back to time-derived bytes. Keys only
             * need to be unique per event, not secret. */
            uint64_t x = (uint64_t)clock_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                p[i] = (uint8_t)x;
            }
            return;
        }
        p += got;
        n -= (size_t)got;
    }
}

static uint32_t next_random(gr_health_publisher *p)
{
    if (p->hooks.random)
        return p->hooks.random(p->hooks.ctx);
    p->rng ^= p->rng << 13;
    p->rng ^= p->rng >> 7;
    p->rng ^= p->rng << 17;
    return (uint32_t)(p->rng >> 32);
}

/* --- publisher ---------------------------------------------------------- */

int gr_health_publisher_new(const gr_health_config *cfg, const gr_health_hooks *hooks,
                            gr_health_publisher **out, gr_err *err)
{
    *out = NULL;
    int rc = gr_health_config_validate(cfg, err);
    if (rc != GR_OK)
        return rc;
    gr_health_publisher *p = calloc(1, sizeof *p);
    if (!p)
        return gr_err_set(err, GR_ENOMEM, "health publisher: out of memory");
    p->cfg = *cfg;
    gr_health_retry_init(&p->retry,
                         cfg->mode == GR_HEALTH_MODE_DIRECT ? GR_HEALTH_RETRY_DIRECT
                                                            : GR_HEALTH_RETRY_SOCKET,
                         cfg->retry_window_ns);
    p->retry.attempt_max_ns = cfg->attempt_max_ns;
    if (hooks)
        p->hooks = *hooks;
    if (!p->hooks.now_ns)
        p->hooks.now_ns = real_now;
    if (!p->hooks.wall_ns)
        p->hooks.wall_ns = real_wall;
    if (!p->hooks.sleep_ns)
        p->hooks.sleep_ns = real_sleep;
    if (!p->hooks.ready)
        p->hooks.ready = real_ready;
    if (!p->hooks.call)
        p->hooks.call = real_call;
    fill_random(&p->rng, sizeof p->rng);
    p->rng |= 1;
    /* The endpoint borrows from p->cfg, which lives as long as p. */
    if (cfg->mode == GR_HEALTH_MODE_SOCKET) {
        p->ep.kind = GR_GRPC_UNIX;
        p->ep.socket_path = p->cfg.socket_path;
    } else {
        p->ep.kind = GR_GRPC_TCP;
        p->ep.host = p->cfg.host;
        p->ep.port = p->cfg.port;
        /* The CA file wins over insecure. */
        p->ep.plaintext = !p->cfg.ca_file[0] && p->cfg.insecure;
        p->ep.ca_file = p->cfg.ca_file[0] ? p->cfg.ca_file : NULL;
        p->ep.server_name = p->cfg.server_name[0] ? p->cfg.server_name : NULL;
    }
    rc = gr_grpc_global_init(err);
    if (rc != GR_OK) {
        free(p);
        return rc;
    }
    *out = p;
    return GR_OK;
}

int gr_health_publisher_from_env(gr_health_publisher **out, gr_err *err)
{
    gr_health_config cfg;
    *out = NULL;
    int rc = gr_health_config_from_env(&cfg, err);
    if (rc != GR_OK)
        return rc;
    return gr_health_publisher_new(&cfg, NULL, out, err);
}

void gr_health_publisher_free(gr_health_publisher *p)
{
    free(p);
}

const gr_health_config *gr_health_publisher_config(const gr_health_publisher *p)
{
    return &p->cfg;
}

const gr_health_retry *gr_health_publisher_retry(const gr_health_publisher *p)
{
    return &p->retry;
}

/* Read the token file into `tok`: trailing whitespace trimmed, must be
 * non-empty printable ASCII without spaces (it becomes a header value). */
static int read_token(const char *path, gr_buf *tok, gr_err *err)
{
    gr_buf_reset(tok);
    int rc = gr_file_append(path, tok, err);
    if (rc == GR_ETOOBIG)
        return gr_err_set(err, GR_EIO, "token file %s is larger than %zu bytes", path, tok->max);
    if (rc != GR_OK) {
        char why[GR_ERR_MSG_MAX];
        snprintf(why, sizeof why, "%.*s", (int)sizeof why - 1, err ? err->msg : path);
        return gr_err_set(err, rc == GR_ENOMEM ? GR_ENOMEM : GR_EIO, "cannot read token file %s",
                          why);
    }
    while (tok->len > 0 && (tok->data[tok->len - 1] == '\n' || tok->data[tok->len - 1] == '\r' ||
                            tok->data[tok->len - 1] == ' ' || tok->data[tok->len - 1] == '\t'))
        tok->data[--tok->len] = '\0';
    if (tok->len == 0)
        return gr_err_set(err, GR_EIO, "token file %s is empty", path);
    for (size_t i = 0; i < tok->len; i++) {
        unsigned char c = (unsigned char)tok->data[i];
        if (c <= 0x20 || c >= 0x7f)
            return gr_err_set(err, GR_EIO,
                              "token file %s holds a character that cannot be sent in a header "
                              "(byte %zu)",
                              path, i);
    }
    return GR_OK;
}

static int valid_key(const char *k)
{
    size_t n = strlen(k);
    if (n < 1 || n > 128)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-'))
            return 0;
    }
    return 1;
}

static void new_key(char out[33])
{
    uint8_t b[16];
    fill_random(b, sizeof b);
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void report_init(gr_health_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->grpc_code = -1;
    rep->outcome = GR_HEALTH_LOCAL_ERROR;
}

int gr_health_publish(gr_health_publisher *p, const gr_health_event *ev, gr_health_report *rep,
                      gr_err *err)
{
    gr_health_report local;
    if (!rep)
        rep = &local;
    report_init(rep);
    const gr_health_hooks *h = &p->hooks;

    if (ev->idempotency_key) {
        if (!valid_key(ev->idempotency_key))
            return gr_err_set(err, GR_EINVAL,
                              "health event: idempotency key must match [A-Za-z0-9._:-]{1,128}");
        snprintf(rep->idempotency_key, sizeof rep->idempotency_key, "%s", ev->idempotency_key);
    } else {
        new_key(rep->idempotency_key);
    }

    gr_buf msg = GR_BUF_INIT((size_t)1 << 20);
    int rc = gr_health_event_encode(ev, h->wall_ns(h->ctx), &msg, err);
    if (rc != GR_OK) {
        gr_buf_free(&msg);
        return rc;
    }

    gr_buf tok = GR_BUF_INIT(GR_HEALTH_TOKEN_MAX);
    gr_buf auth = GR_BUF_INIT(GR_HEALTH_TOKEN_MAX + 64);
    char keyhdr[160];
    snprintf(keyhdr, sizeof keyhdr, "idempotency-key: %s", rep->idempotency_key);

    gr_health_retry_event re;
    int64_t start = h->now_ns(h->ctx);
    gr_health_retry_event_begin(&p->retry, &re, start);
    int socket_waited = 0;
    int delivered = 0;
    rc = GR_EAGAIN;

    for (;;) {
        int64_t now = h->now_ns(h->ctx);
        gr_grpc_result res;
        memset(&res, 0, sizeof res);

        if (!h->ready(h->ctx, &p->ep) && !socket_waited) {
            /* The socket may appear late (connector starting): wait once. */
            socket_waited = 1;
            int64_t until = now + p->cfg.socket_wait_ns;
            gr_log(GR_LOG_INFO, MODULE, "waiting for the platform connector socket",
                   GR_KV_STR("socket", p->cfg.socket_path),
                   GR_KV_INT("timeoutMs", p->cfg.socket_wait_ns / 1000000), GR_KV_END);
            while (!h->ready(h->ctx, &p->ep) && h->now_ns(h->ctx) < until)
                h->sleep_ns(h->ctx, SOCKET_POLL_NS);
            now = h->now_ns(h->ctx);
        }

        int64_t timeout;
        if (!gr_health_retry_next(&p->retry, &re, now, &timeout))
            break; /* budget spent */

        if (!h->ready(h->ctx, &p->ep)) {
            res.status.code = GR_GRPC_UNAVAILABLE;
            res.transport_error = 1;
            snprintf(res.status.message, sizeof res.status.message,
                     "platform connector socket %s does not exist", p->cfg.socket_path);
        } else {
            const char *md[3] = {keyhdr, NULL, NULL};
            if (p->cfg.token_path[0]) {
                /* Re-read every attempt: the projected token rotates. */
                rc = read_token(p->cfg.token_path, &tok, err);
                if (rc != GR_OK) {
                    rep->outcome = GR_HEALTH_LOCAL_ERROR;
                    goto done;
                }
                gr_buf_reset(&auth);
                if (gr_buf_printf(&auth, "authorization: Bearer %s", gr_buf_cstr(&tok)) != GR_OK) {
                    rc = gr_err_set(err, GR_ENOMEM, "health event: out of memory");
                    goto done;
                }
                md[0] = gr_buf_cstr(&auth);
                md[1] = keyhdr;
            }
            gr_grpc_call call = {
                .ep = &p->ep,
                .path = GR_HEALTH_METHOD_PATH,
                .request = msg.data,
                .request_len = msg.len,
                .metadata = md,
                .timeout_ns = timeout,
                .max_response = 64 * 1024,
            };
            gr_err cerr;
            gr_err_clear(&cerr);
            int crc = h->call(h->ctx, &call, &res, &cerr);
            free(res.response);
            res.response = NULL;
            if (crc == GR_ENOMEM) {
                rc = gr_err_set(err, GR_ENOMEM, "%s", cerr.msg);
                goto done;
            }
        }
        rep->attempts++;
        rep->grpc_code = res.status.code;
        snprintf(rep->grpc_message, sizeof rep->grpc_message, "%s", res.status.message);

        int64_t delay = 0;
        now = h->now_ns(h->ctx);
        gr_health_retry_decision d =
            gr_health_retry_after(&p->retry, &re, res.status.code, now, next_random(p), &delay);
        if (d == GR_HEALTH_RETRY_DONE) {
            delivered = 1;
            break;
        }
        gr_log(GR_LOG_WARN, MODULE, "health event not delivered",
               GR_KV_STR("checkName", ev->check_name), GR_KV_INT("attempt", rep->attempts),
               GR_KV_STR("code", gr_grpc_code_name(res.status.code)),
               GR_KV_STR("error", res.status.message),
               GR_KV_STR("idempotencyKey", rep->idempotency_key),
               GR_KV_INT("retryInMs", d == GR_HEALTH_RETRY_AGAIN ? delay / 1000000 : -1),
               GR_KV_END);
        if (d == GR_HEALTH_RETRY_GIVE_UP)
            break;
        h->sleep_ns(h->ctx, delay);
    }

    if (delivered) {
        rep->outcome = GR_HEALTH_DELIVERED;
        rc = GR_OK;
    } else {
        rep->outcome = re.permanent ? GR_HEALTH_REJECTED : GR_HEALTH_UNDELIVERED;
        if (rep->attempts == 0) {
            rc = gr_err_set(err, GR_ETIMEDOUT,
                            "health event not delivered: the retry budget is spent");
        } else {
            rc = gr_grpc_code_to_rc(rep->grpc_code);
            if (rc == GR_EINVAL) /* keep GR_EINVAL for events we refused ourselves */
                rc = GR_EIO;
            gr_err_set(err, rc, "health event not delivered after %d attempt(s): %s: %s",
                       rep->attempts, gr_grpc_code_name(rep->grpc_code), rep->grpc_message);
        }
    }
done : {
    int64_t end = h->now_ns(h->ctx);
    rep->elapsed_ns = end - start;
    gr_health_retry_event_end(&p->retry, &re, end, delivered);
}
    if (delivered)
        gr_log(GR_LOG_DEBUG, MODULE, "health event delivered",
               GR_KV_STR("checkName", ev->check_name), GR_KV_INT("attempts", rep->attempts),
               GR_KV_STR("idempotencyKey", rep->idempotency_key), GR_KV_END);
    gr_buf_free(&msg);
    gr_buf_free(&tok);
    gr_buf_free(&auth);
    return rc;
}
