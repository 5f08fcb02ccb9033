/* gr_kube_rest.c — the HTTP client (libcurl) and the REST verbs. */
#include "gr_kube_rest.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/ssl.h>

#include "gr_json.h"
#include "gr_kube_pb.h"
#include "gr_log.h"
#include "kube_internal.h"

/* The pool of easy handles is the connection cache: libcurl keeps a
 * connection in the easy handle that used it (CURLOPT_MAXCONNECTS 1 per
 * handle), so an idle handle in the pool is an idle connection and the pool
 * bounds them (GR_KUBE_MAX_IDLE_CONNS). The connection cache is deliberately
 * not in the CURLSH: libcurl does not support sharing connections between
 * concurrent threads (CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT), and its
 * shared cache counts connections in use (every open watch) against
 * CURLOPT_MAXCONNECTS, so with more watches than that limit each finished
 * request closed its connection and the next one paid a new TLS handshake
 * (most of gpuready-manager's CPU, issue 19). Handles are taken LIFO: the
 * most recently used connection is reused first. */
#define POOL_MAX GR_KUBE_MAX_IDLE_CONNS

struct gr_kube_client {
    gr_kube_config cfg; /* deep copy */
    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    pthread_mutex_t mu; /* pool + bucket */
    CURL *pool[POOL_MAX];
    size_t npool;
    gr_kube_bucket bucket;
    char *url_base;   /* scheme://host:port as used in URLs */
    char *connect_to; /* CURLOPT_CONNECT_TO entry for tls-server-name */
    char user_agent[128];
    atomic_uint_fast64_t nreq;
    atomic_uint_fast64_t nconn; /* connections opened (on_sockopt) */
    const gr_kube_backend *be;  /* NULL = libcurl */
    void *bctx;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static bool curl_openssl; /* libcurl's TLS backend is OpenSSL (on_ssl_ctx) */

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    curl_openssl = v && v->ssl_version && strncmp(v->ssl_version, "OpenSSL/", 8) == 0;
}

/* libcurl sets SSL_MODE_RELEASE_BUFFERS on every OpenSSL context: each
 * SSL_read then allocates a fresh 16 KiB record buffer and frees it when the
 * record is consumed. On a watch, with one small event per read, that large
 * allocation makes glibc consolidate the fast bins the event's decode just
 * freed, every event (≈ 15 % of an informer's update CPU, measured with
 * perf). A connection keeps its two record buffers instead (≈ 34 KiB), as Go's
 * TLS does. */
static CURLcode on_ssl_ctx(CURL *h, void *ssl_ctx, void *u)
{
    (void)h;
    (void)u;
    SSL_CTX_clear_mode((SSL_CTX *)ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
    return CURLE_OK;
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *u)
{
    (void)h;
    (void)access;
    gr_kube_client *c = u;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *u)
{
    (void)h;
    gr_kube_client *c = u;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_unlock(&c->share_locks[data]);
}

static char *dupmem(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int copy_config(gr_kube_config *d, const gr_kube_config *s)
{
    memset(d, 0, sizeof *d);
    *d = *s; /* scalars */
#define DUP(f)                              \
    do {                                    \
        d->f = NULL;                        \
        if (s->f && !(d->f = strdup(s->f))) \
            return GR_ENOMEM;               \
    } while (0)
#define DUPN(f, n)                                \
    do {                                          \
        d->f = NULL;                              \
        if (s->f && !(d->f = dupmem(s->f, s->n))) \
            return GR_ENOMEM;                     \
    } while (0)
    d->server = d->ca_file = d->cert_file = d->key_file = d->token = d->token_file = NULL;
    d->tls_server_name = d->namespace_ = d->context = d->user_agent = NULL;
    d->ca_pem = d->cert_pem = d->key_pem = NULL;
    DUP(server);
    DUP(ca_file);
    DUP(cert_file);
    DUP(key_file);
    DUP(token);
    DUP(token_file);
    DUP(tls_server_name);
    DUP(namespace_);
    DUP(context);
    DUP(user_agent);
    DUPN(ca_pem, ca_pem_len);
    DUPN(cert_pem, cert_pem_len);
    DUPN(key_pem, key_pem_len);
#undef DUP
#undef DUPN
    return GR_OK;
}

int gr_kube_client_new(const gr_kube_config *cfg, gr_kube_client **out, gr_err *err)
{
    *out = NULL;
    if (!cfg || !cfg->server || !*cfg->server)
        return gr_err_set(err, GR_EINVAL, "kube config: server is required");
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return gr_err_set(err, GR_EIO, "libcurl initialisation failed: %s",
                          curl_easy_strerror(curl_init_rc));
    gr_kube_client *c = calloc(1, sizeof *c);
    if (!c)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->share_locks[i], NULL);
    pthread_mutex_init(&c->mu, NULL);
    if (copy_config(&c->cfg, cfg) != GR_OK) {
        gr_kube_client_free(c);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    if (c->cfg.qps == 0)
        c->cfg.qps = GR_KUBE_DEFAULT_QPS;
    if (c->cfg.burst <= 0)
        c->cfg.burst = GR_KUBE_DEFAULT_BURST;
    if (c->cfg.timeout_ms <= 0)
        c->cfg.timeout_ms = GR_KUBE_DEFAULT_TIMEOUT_MS;
    gr_kube_bucket_init(&c->bucket, c->cfg.qps, c->cfg.burst);
    snprintf(c->user_agent, sizeof c->user_agent, "%s",
             c->cfg.user_agent ? c->cfg.user_agent : "gpuready/" GR_VERSION);
    c->share = curl_share_init();
    if (!c->share) {
        gr_kube_client_free(c);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    /* not CURL_LOCK_DATA_CONNECT: see POOL_MAX */

    /* tls-server-name: address the URL by that name and connect to the real
     * host, so SNI and certificate verification use the override. */
    const char *srv = c->cfg.server;
    if (c->cfg.tls_server_name && *c->cfg.tls_server_name) {
        const char *hp = strstr(srv, "://");
        hp = hp ? hp + 3 : srv;
        char host[256] = "", port[16] = "443";
        const char *colon = hp[0] == '[' ? strstr(hp, "]:") : strrchr(hp, ':');
        size_t hl = colon ? (size_t)(colon - hp) + (hp[0] == '[') : strlen(hp);
        if (hl >= sizeof host)
            hl = sizeof host - 1;
        memcpy(host, hp, hl);
        host[hl] = '\0';
        if (colon)
            snprintf(port, sizeof port, "%s", colon + 1 + (hp[0] == '['));
        size_t n = strlen(c->cfg.tls_server_name) + strlen(port) + 16;
        c->url_base = malloc(n);
        size_t m = strlen(c->cfg.tls_server_name) * 2 + strlen(host) + strlen(port) * 2 + 8;
        c->connect_to = malloc(m);
        if (!c->url_base || !c->connect_to) {
            gr_kube_client_free(c);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        snprintf(c->url_base, n, "https://%s:%s", c->cfg.tls_server_name, port);
        snprintf(c->connect_to, m, "%s:%s:%s:%s", c->cfg.tls_server_name, port, host, port);
    } else {
        c->url_base = strdup(srv);
        if (!c->url_base) {
            gr_kube_client_free(c);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }
    *out = c;
    return GR_OK;
}

int gr_kube_client_new_backend(const gr_kube_config *cfg, const gr_kube_backend *be, void *bctx,
                               gr_kube_client **out, gr_err *err)
{
    *out = NULL;
    if (!be || !be->request || !be->request_stream)
        return gr_err_set(err, GR_EINVAL, "kube backend: request and request_stream are required");
    gr_kube_client *c = calloc(1, sizeof *c);
    if (!c)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->share_locks[i], NULL);
    pthread_mutex_init(&c->mu, NULL);
    char server[96];
    snprintf(server, sizeof server, "backend:%s", be->name ? be->name : "custom");
    gr_kube_config ph = {0};
    if (cfg)
        ph = *cfg;
    if (!ph.server)
        ph.server = server;
    if (!cfg)
        ph.qps = -1; /* a placeholder config: no client-side rate limit */
    if (copy_config(&c->cfg, &ph) != GR_OK) {
        gr_kube_client_free(c);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    if (c->cfg.qps == 0)
        c->cfg.qps = GR_KUBE_DEFAULT_QPS;
    if (c->cfg.burst <= 0)
        c->cfg.burst = GR_KUBE_DEFAULT_BURST;
    if (c->cfg.timeout_ms <= 0)
        c->cfg.timeout_ms = GR_KUBE_DEFAULT_TIMEOUT_MS;
    gr_kube_bucket_init(&c->bucket, c->cfg.qps, c->cfg.burst);
    snprintf(c->user_agent, sizeof c->user_agent, "%s",
             c->cfg.user_agent ? c->cfg.user_agent : "gpuready/" GR_VERSION);
    c->be = be;
    c->bctx = bctx;
    *out = c;
    return GR_OK;
}

const char *gr_kube_client_backend(const gr_kube_client *c)
{
    return c->be ? (c->be->name ? c->be->name : "custom") : "curl";
}

void gr_kube_client_free(gr_kube_client *c)
{
    if (!c)
        return;
    if (c->be && c->be->free)
        c->be->free(c->bctx);
    for (size_t i = 0; i < c->npool; i++)
        curl_easy_cleanup(c->pool[i]);
    if (c->share)
        curl_share_cleanup(c->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->share_locks[i]);
    pthread_mutex_destroy(&c->mu);
    gr_kube_config_free(&c->cfg);
    free(c->url_base);
    free(c->connect_to);
    free(c);
}

const gr_kube_config *gr_kube_client_config(const gr_kube_client *c)
{
    return &c->cfg;
}

uint64_t gr_kube_client_requests(const gr_kube_client *c)
{
    return atomic_load(&c->nreq);
}

int gr_kube_client_wait_burst(gr_kube_client *c, int n, const atomic_int *cancel)
{
    pthread_mutex_lock(&c->mu);
    int64_t wait = gr_kube_bucket_wait_for(&c->bucket, n, gr_kube_mono_ns());
    pthread_mutex_unlock(&c->mu);
    return wait > 0 ? gr_kube_sleep_ns(wait, cancel) : GR_OK;
}

uint64_t gr_kube_client_connections(const gr_kube_client *c)
{
    return atomic_load(&c->nconn);
}

static CURL *handle_get(gr_kube_client *c)
{
    CURL *h = NULL;
    pthread_mutex_lock(&c->mu);
    if (c->npool)
        h = c->pool[--c->npool];
    pthread_mutex_unlock(&c->mu);
    if (h)
        curl_easy_reset(h);
    else
        h = curl_easy_init();
    return h;
}

static void handle_put(gr_kube_client *c, CURL *h)
{
    pthread_mutex_lock(&c->mu);
    if (c->npool < POOL_MAX) {
        c->pool[c->npool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    if (h)
        curl_easy_cleanup(h);
}

static int throttle(gr_kube_client *c, const gr_kube_opts *o)
{
    pthread_mutex_lock(&c->mu);
    int64_t wait = gr_kube_bucket_reserve(&c->bucket, gr_kube_mono_ns());
    pthread_mutex_unlock(&c->mu);
    if (wait > 0)
        return gr_kube_sleep_ns(wait, o ? o->cancel : NULL);
    return GR_OK;
}

/* ---- one transfer ------------------------------------------------------ */

typedef struct xfer {
    gr_buf *body;            /* buffered mode */
    gr_kube_data_fn on_data; /* streaming mode */
    void *ctx;
    int cb_rc; /* why a callback stopped the transfer */
    long retry_after;
    const atomic_int *cancel;
    long http;
} xfer;

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *u)
{
    xfer *x = u;
    size_t n = size * nmemb;
    if (x->on_data && x->http >= 200 && x->http < 300) {
        int rc = x->on_data(x->ctx, ptr, n);
        if (rc != 0) {
            x->cb_rc = rc < 0 ? rc : GR_ECANCELED;
            return 0;
        }
        return n;
    }
    int rc = gr_buf_append(x->body, ptr, n);
    if (rc != GR_OK) {
        x->cb_rc = rc;
        return 0;
    }
    return n;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *u)
{
    xfer *x = u;
    size_t n = size * nmemb;
    if (n > 5 && strncmp(ptr, "HTTP/", 5) == 0) {
        const char *sp = memchr(ptr, ' ', n);
        if (sp)
            x->http = strtol(sp + 1, NULL, 10);
    } else if (n > 12 && strncasecmp(ptr, "Retry-After:", 12) == 0) {
        char tmp[32];
        size_t l = n - 12 < sizeof tmp - 1 ? n - 12 : sizeof tmp - 1;
        memcpy(tmp, ptr + 12, l);
        tmp[l] = '\0';
        x->retry_after = strtol(tmp, NULL, 10);
    }
    return n;
}

static int on_progress(void *u, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    xfer *x = u;
    if (x->cancel && atomic_load(x->cancel)) {
        x->cb_rc = GR_ECANCELED;
        return 1;
    }
    return 0;
}

/* Called for every socket libcurl connects: counts new connections. */
static int on_sockopt(void *u, curl_socket_t fd, curlsocktype purpose)
{
    (void)fd;
    gr_kube_client *c = u;
    if (purpose == CURLSOCKTYPE_IPCXN)
        atomic_fetch_add(&c->nconn, 1);
    return CURL_SOCKOPT_OK;
}

static int perform(gr_kube_client *c, const char *method, const char *path,
                   const char *content_type, const char *body, size_t body_len,
                   const gr_kube_opts *o, long idle_s, xfer *x, gr_err *err)
{
    int rc = throttle(c, o);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "%s %s: canceled", method, path);
    char *token = NULL;
    if ((rc = gr_kube_config_bearer(&c->cfg, &token, err)) != GR_OK)
        return rc;
    CURL *h = handle_get(c);
    if (!h) {
        free(token);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    gr_buf url = GR_BUF_INIT(64 * 1024);
    struct curl_slist *hdr = NULL;
    char line[256];
    if (gr_buf_printf(&url, "%s%s", c->url_base, path) != GR_OK) {
        handle_put(c, h);
        free(token);
        return gr_err_set(err, GR_ETOOBIG, "%s: request URL too long", path);
    }
    snprintf(line, sizeof line, "Accept: %s", o && o->accept ? o->accept : "application/json");
    hdr = curl_slist_append(hdr, line);
    if (content_type) {
        snprintf(line, sizeof line, "Content-Type: %s", content_type);
        hdr = curl_slist_append(hdr, line);
    }
    if (token) {
        gr_buf ah = GR_BUF_INIT(GR_KUBE_TOKEN_MAX_BYTES + 64);
        gr_buf_printf(&ah, "Authorization: Bearer %s", token);
        hdr = curl_slist_append(hdr, gr_buf_cstr(&ah));
        memset(ah.data, 0, ah.len);
        gr_buf_free(&ah);
        memset(token, 0, strlen(token));
        free(token);
    }
    hdr = curl_slist_append(hdr, "Expect:");
    curl_easy_setopt(h, CURLOPT_URL, gr_buf_cstr(&url));
    curl_easy_setopt(h, CURLOPT_SHARE, c->share);
    curl_easy_setopt(h, CURLOPT_MAXCONNECTS, 1L); /* this handle's own connection */
    curl_easy_setopt(h, CURLOPT_MAXAGE_CONN, (long)GR_KUBE_IDLE_CONN_MAX_AGE_S);
    curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, on_sockopt);
    curl_easy_setopt(h, CURLOPT_SOCKOPTDATA, c);
    if (curl_openssl)
        curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION,
                     c->cfg.http2 ? (long)CURL_HTTP_VERSION_2TLS : (long)CURL_HTTP_VERSION_1_1);
    struct curl_slist *ct = NULL;
    if (c->connect_to) {
        ct = curl_slist_append(NULL, c->connect_to);
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, ct);
    }
    if (c->cfg.insecure_skip_tls_verify) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (c->cfg.ca_pem) {
        struct curl_blob b = {c->cfg.ca_pem, c->cfg.ca_pem_len, CURL_BLOB_NOCOPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
    }
    if (c->cfg.cert_pem && c->cfg.key_pem) {
        struct curl_blob cb = {c->cfg.cert_pem, c->cfg.cert_pem_len, CURL_BLOB_NOCOPY};
        struct curl_blob kb = {c->cfg.key_pem, c->cfg.key_pem_len, CURL_BLOB_NOCOPY};
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cb);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &kb);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (strcmp(method, "GET") != 0)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    int64_t tmo = o && o->timeout_ms > 0 ? o->timeout_ms : c->cfg.timeout_ms;
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)tmo);
    if (idle_s > 0) {
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, idle_s);
    }
    x->cancel = o ? o->cancel : NULL;
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);

    atomic_fetch_add(&c->nreq, 1);
    CURLcode cc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (code)
        x->http = code;
    curl_slist_free_all(hdr);
    curl_slist_free_all(ct);
    rc = GR_OK;
    if (cc != CURLE_OK) {
        if (x->cb_rc == GR_ETOOBIG)
            rc = gr_err_set(err, GR_ETOOBIG, "%s %s: response larger than the %zu-byte limit",
                            method, path, x->body ? x->body->max : 0);
        else if (x->cb_rc)
            rc = gr_err_set(err, x->cb_rc, "%s %s: stopped (%s)", method, path,
                            gr_rc_name(x->cb_rc));
        else if (cc == CURLE_OPERATION_TIMEDOUT)
            rc = gr_err_set(err, GR_ETIMEDOUT, "%s %s: %s", method, path, curl_easy_strerror(cc));
        else
            rc = gr_err_set(err, GR_EIO, "%s %s%s: %s", method, c->url_base, path,
                            curl_easy_strerror(cc));
        /* a broken connection does not stay in the handle: libcurl closes
         * a connection whose transfer failed or was aborted. */
    }
    handle_put(c, h);
    gr_buf_free(&url);
    return rc;
}

static int finish(const char *method, const char *path, long http, const gr_buf *body,
                  gr_kube_status *st, gr_err *err)
{
    gr_kube_status local;
    if (!st)
        st = &local;
    int rc = gr_kube_status_from_response(http, body ? body->data : NULL, body ? body->len : 0, st);
    if (rc != GR_OK)
        gr_err_set(err, rc, "%s %s: %ld %s: %s", method, path, http, st->reason_str, st->message);
    return rc;
}

static bool should_retry(long http, long retry_after)
{
    return http == 429 || (http >= 500 && retry_after > 0);
}

int gr_kube_request(gr_kube_client *c, const char *method, const char *path,
                    const char *content_type, const char *body, size_t body_len,
                    const gr_kube_opts *o, gr_buf *resp, long *http, gr_kube_status *st,
                    gr_err *err)
{
    gr_kube_status_clear(st);
    if (http)
        *http = 0;
    for (int attempt = 0;; attempt++) {
        gr_buf_reset(resp);
        xfer x = {0};
        x.body = resp;
        int rc;
        if (c->be) {
            rc = throttle(c, o);
            if (rc != GR_OK)
                return gr_err_set(err, rc, "%s %s: canceled", method, path);
            atomic_fetch_add(&c->nreq, 1);
            rc = c->be->request(c->bctx, method, path, content_type, body, body_len, o, resp,
                                &x.http, &x.retry_after, err);
        } else {
            rc = perform(c, method, path, content_type, body, body_len, o, 0, &x, err);
        }
        if (http)
            *http = x.http;
        if (rc != GR_OK) {
            if (st)
                st->http_code = x.http;
            return rc;
        }
        if (should_retry(x.http, x.retry_after) && attempt < GR_KUBE_MAX_RETRIES) {
            long s = x.retry_after > 0 ? x.retry_after : 1;
            if (s > 10)
                s = 10;
            gr_log(GR_LOG_DEBUG, "kube", "retrying after server asked to wait",
                   GR_KV_STR("path", path), GR_KV_INT("code", x.http), GR_KV_INT("seconds", s),
                   GR_KV_END);
            if (gr_kube_sleep_ns(s * 1000000000LL, o ? o->cancel : NULL) != GR_OK)
                return gr_err_set(err, GR_ECANCELED, "%s %s: canceled", method, path);
            continue;
        }
        rc = finish(method, path, x.http, resp, st, err);
        if (st && x.retry_after > 0 && st->retry_after_s == 0)
            st->retry_after_s = x.retry_after;
        return rc;
    }
}

int gr_kube_request_stream(gr_kube_client *c, const char *method, const char *path,
                           const gr_kube_opts *o, long idle_s, gr_kube_data_fn on_data, void *ctx,
                           long *http, gr_kube_status *st, gr_err *err)
{
    gr_kube_status_clear(st);
    gr_buf errbody = GR_BUF_INIT(256 * 1024);
    xfer x = {0};
    x.body = &errbody;
    x.on_data = on_data;
    x.ctx = ctx;
    int rc;
    if (c->be) {
        rc = throttle(c, o);
        if (rc != GR_OK) {
            gr_buf_free(&errbody);
            return gr_err_set(err, rc, "%s %s: canceled", method, path);
        }
        atomic_fetch_add(&c->nreq, 1);
        rc = c->be->request_stream(c->bctx, method, path, o, idle_s, on_data, ctx, &x.http,
                                   &errbody, err);
    } else {
        rc = perform(c, method, path, NULL, NULL, 0, o, idle_s, &x, err);
    }
    if (http)
        *http = x.http;
    if (rc == GR_OK && (x.http < 200 || x.http >= 300))
        rc = finish(method, path, x.http, &errbody, st, err);
    else if (st && st->http_code == 0) /* keep a Status the stream carried */
        st->http_code = x.http;
    gr_buf_free(&errbody);
    return rc;
}

/* ---- verbs ------------------------------------------------------------- */

static size_t cap_of(const gr_kube_opts *o)
{
    return o && o->max_response ? o->max_response : GR_KUBE_MAX_RESPONSE;
}

static int do_json(gr_kube_client *c, const char *method, const gr_buf *path, const char *ctype,
                   const json_t *in, const gr_kube_opts *o, json_t **out, gr_kube_status *st,
                   gr_err *err)
{
    if (out)
        *out = NULL;
    char *body = NULL;
    size_t blen = 0;
    if (in) {
        body = json_dumps(in, JSON_COMPACT);
        if (!body)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        blen = strlen(body);
    }
    gr_buf resp = GR_BUF_INIT(cap_of(o));
    int rc =
        gr_kube_request(c, method, gr_buf_cstr(path), ctype, body, blen, o, &resp, NULL, st, err);
    free(body);
    if (rc == GR_OK && out && resp.len >= 4 && memcmp(resp.data, "k8s\0", 4) == 0) {
        /* protobuf (only ever asked for with GR_KUBE_PB_ACCEPT) */
        rc = gr_kube_pb_decode(resp.data, resp.len, resp.max, out, err);
        if (rc != GR_OK)
            gr_err_prefix(err, "%s %s: ", method, gr_buf_cstr(path));
    } else if (rc == GR_OK && out) {
        rc = gr_json_parse(resp.data ? resp.data : "", resp.len, 0, gr_buf_cstr(path), out, err);
        if (rc != GR_OK)
            gr_err_prefix(err, "%s: malformed response: ", method);
    }
    gr_buf_free(&resp);
    return rc;
}

/* Options for a read of gvr: protobuf for the built-in types gr_kube_pb
 * decodes (unless the caller chose an Accept), JSON for everything else. */
static const gr_kube_opts *read_opts(const gr_kube_gvr *gvr, const char *subresource,
                                     const gr_kube_opts *o, gr_kube_opts *buf)
{
    if ((o && o->accept) || (subresource && strcmp(subresource, "status") != 0) ||
        !gr_kube_pb_enabled())
        return o;
    char av[256];
    snprintf(av, sizeof av, "%s%s%s", gvr->group && *gvr->group ? gvr->group : "",
             gvr->group && *gvr->group ? "/" : "", gvr->version ? gvr->version : "");
    if (!gr_kube_pb_supports(av, gvr->resource))
        return o;
    *buf = o ? *o : (gr_kube_opts){0};
    buf->accept = GR_KUBE_PB_ACCEPT;
    return buf;
}

int gr_kube_get(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const char *name,
                const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err)
{
    gr_kube_opts ro;
    *out = NULL;
    if (!name || !*name)
        return gr_err_set(err, GR_EINVAL, "get: name is required");
    gr_buf p = GR_BUF_INIT(16 * 1024);
    gr_kube_opts q = {0};
    if (o) {
        q.resource_version = o->resource_version;
        q.timeout_ms = o->timeout_ms;
        q.max_response = o->max_response;
        q.cancel = o->cancel;
    }
    int rc = gr_kube_build_path(&p, gvr, ns, name, o ? o->subresource : NULL, &q, false, err);
    if (rc == GR_OK)
        rc = do_json(c, "GET", &p, NULL, NULL, read_opts(gvr, o ? o->subresource : NULL, o, &ro),
                     out, st, err);
    gr_buf_free(&p);
    return rc;
}

int gr_kube_list(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const gr_kube_opts *o,
                 json_t **out, gr_kube_status *st, gr_err *err)
{
    *out = NULL;
    gr_buf p = GR_BUF_INIT(16 * 1024);
    gr_kube_opts q = {0};
    if (o) {
        q.label_selector = o->label_selector;
        q.field_selector = o->field_selector;
        q.limit = o->limit;
        q.continue_token = o->continue_token;
        q.resource_version = o->resource_version;
        q.resource_version_match = o->resource_version_match;
    }
    int rc = gr_kube_build_path(&p, gvr, ns, NULL, NULL, &q, false, err);
    gr_kube_opts ro;
    if (rc == GR_OK)
        rc = do_json(c, "GET", &p, NULL, NULL, read_opts(gvr, NULL, o, &ro), out, st, err);
    if (rc == GR_OK && !json_is_array(json_object_get(*out, "items"))) {
        json_decref(*out);
        *out = NULL;
        rc = gr_err_set(err, GR_EPARSE, "GET %s: response is not a List (no items array)",
                        gr_buf_cstr(&p));
    }
    gr_buf_free(&p);
    return rc;
}

int gr_kube_list_all(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                     const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err)
{
    *out = NULL;
    gr_kube_opts q = o ? *o : (gr_kube_opts){0};
    if (q.limit <= 0)
        q.limit = GR_KUBE_LIST_PAGE;
    q.continue_token = NULL;
    json_t *all = NULL;
    char *cont = NULL;
    bool fell_back = false;
    for (;;) {
        json_t *page = NULL;
        q.continue_token = cont;
        int rc = gr_kube_list(c, gvr, ns, &q, &page, st, err);
        if (rc == GR_ESTATE && cont && !fell_back && gr_kube_status_is_gone(st)) {
            /* continue token expired: fall back to one full list (client-go
             * pager does the same) */
            json_decref(all);
            all = NULL;
            free(cont);
            cont = NULL;
            q.limit = 0;
            fell_back = true;
            continue;
        }
        if (rc != GR_OK) {
            json_decref(all);
            free(cont);
            return rc;
        }
        free(cont);
        cont = NULL;
        const char *next = gr_kube_list_continue(page);
        if (next && !(cont = strdup(next))) {
            json_decref(page);
            json_decref(all);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        if (!all) {
            all = page;
        } else {
            json_array_extend(json_object_get(all, "items"), json_object_get(page, "items"));
            json_decref(page);
        }
        if (!cont)
            break;
    }
    json_t *md = json_object_get(all, "metadata");
    if (json_is_object(md)) {
        json_object_del(md, "continue");
        json_object_del(md, "remainingItemCount");
    }
    *out = all;
    return GR_OK;
}

static int write_path(gr_buf *p, const gr_kube_gvr *gvr, const char *ns, const char *name,
                      const char *sub, const gr_kube_opts *o, gr_err *err)
{
    gr_kube_opts q = {0};
    if (o) {
        q.field_manager = o->field_manager;
        q.force = o->force;
        q.dry_run = o->dry_run;
    }
    return gr_kube_build_path(p, gvr, ns, name, sub, &q, false, err);
}

int gr_kube_create(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const json_t *obj,
                   const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err)
{
    if (out)
        *out = NULL;
    if (!json_is_object(obj))
        return gr_err_set(err, GR_EINVAL, "create: object must be a JSON object");
    gr_buf p = GR_BUF_INIT(16 * 1024);
    int rc = write_path(&p, gvr, ns, NULL, NULL, o, err);
    if (rc == GR_OK)
        rc = do_json(c, "POST", &p, "application/json", obj, o, out, st, err);
    gr_buf_free(&p);
    return rc;
}

int gr_kube_update(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const json_t *obj,
                   const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err)
{
    if (out)
        *out = NULL;
    const char *name = gr_kube_meta_str(obj, "name");
    if (!name || !*name)
        return gr_err_set(err, GR_EINVAL, "update: metadata.name is required");
    gr_buf p = GR_BUF_INIT(16 * 1024);
    int rc = write_path(&p, gvr, ns, name, o ? o->subresource : NULL, o, err);
    if (rc == GR_OK)
        rc = do_json(c, "PUT", &p, "application/json", obj, o, out, st, err);
    gr_buf_free(&p);
    return rc;
}

int gr_kube_update_status(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                          const json_t *obj, const gr_kube_opts *o, json_t **out,
                          gr_kube_status *st, gr_err *err)
{
    gr_kube_opts q = o ? *o : (gr_kube_opts){0};
    q.subresource = "status";
    return gr_kube_update(c, gvr, ns, obj, &q, out, st, err);
}

static const char *patch_ctype(gr_kube_patch_type t)
{
    switch (t) {
    case GR_KUBE_PATCH_JSON:
        return "application/json-patch+json";
    case GR_KUBE_PATCH_MERGE:
        return "application/merge-patch+json";
    case GR_KUBE_PATCH_STRATEGIC:
        return "application/strategic-merge-patch+json";
    case GR_KUBE_PATCH_APPLY:
        return "application/apply-patch+yaml"; /* JSON is valid YAML */
    }
    return NULL;
}

int gr_kube_patch(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const char *name,
                  gr_kube_patch_type type, const json_t *patch, const gr_kube_opts *o, json_t **out,
                  gr_kube_status *st, gr_err *err)
{
    if (out)
        *out = NULL;
    const char *ct = patch_ctype(type);
    if (!ct)
        return gr_err_set(err, GR_EINVAL, "patch: unknown patch type %d", (int)type);
    if (!name || !*name)
        return gr_err_set(err, GR_EINVAL, "patch: name is required");
    if (type == GR_KUBE_PATCH_JSON ? !json_is_array(patch) : !json_is_object(patch))
        return gr_err_set(err, GR_EINVAL, "patch: a %s patch must be a JSON %s", ct,
                          type == GR_KUBE_PATCH_JSON ? "array" : "object");
    if (type == GR_KUBE_PATCH_APPLY && (!o || !o->field_manager || !*o->field_manager))
        return gr_err_set(err, GR_EINVAL,
                          "apply: fieldManager is required for server-side apply; set "
                          "opts.field_manager");
    gr_buf p = GR_BUF_INIT(16 * 1024);
    gr_kube_opts q = o ? *o : (gr_kube_opts){0};
    if (type != GR_KUBE_PATCH_APPLY)
        q.force = false; /* force is only valid for apply */
    int rc = write_path(&p, gvr, ns, name, q.subresource, &q, err);
    if (rc == GR_OK)
        rc = do_json(c, "PATCH", &p, ct, patch, o, out, st, err);
    gr_buf_free(&p);
    return rc;
}

int gr_kube_apply(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const json_t *obj,
                  const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err)
{
    const char *name = gr_kube_meta_str(obj, "name");
    return gr_kube_patch(c, gvr, ns, name, GR_KUBE_PATCH_APPLY, obj, o, out, st, err);
}

int gr_kube_delete(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const char *name,
                   const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err)
{
    if (out)
        *out = NULL;
    if (!name || !*name)
        return gr_err_set(err, GR_EINVAL, "delete: name is required");
    json_t *body = json_pack("{s:s,s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
    if (!body)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    if (o && o->propagation && *o->propagation)
        json_object_set_new(body, "propagationPolicy", json_string(o->propagation));
    if (o && ((o->precondition_uid && *o->precondition_uid) ||
              (o->precondition_rv && *o->precondition_rv))) {
        json_t *pre = json_object();
        if (o->precondition_uid && *o->precondition_uid)
            json_object_set_new(pre, "uid", json_string(o->precondition_uid));
        if (o->precondition_rv && *o->precondition_rv)
            json_object_set_new(pre, "resourceVersion", json_string(o->precondition_rv));
        json_object_set_new(body, "preconditions", pre);
    }
    if (o && o->has_grace_period)
        json_object_set_new(body, "gracePeriodSeconds", json_integer(o->grace_period_seconds));
    if (o && o->dry_run)
        json_object_set_new(body, "dryRun", json_pack("[s]", "All"));
    gr_buf p = GR_BUF_INIT(16 * 1024);
    int rc = gr_kube_build_path(&p, gvr, ns, name, NULL, NULL, false, err);
    json_t *res = NULL;
    if (rc == GR_OK)
        rc = do_json(c, "DELETE", &p, "application/json", body, o, &res, st, err);
    json_decref(body);
    gr_buf_free(&p);
    if (out)
        *out = res;
    else
        json_decref(res);
    return rc;
}

int gr_kube_update_retry(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                         const char *name, const gr_kube_opts *o, gr_kube_mutate_fn mutate,
                         void *ctx, json_t **out, int *attempts, gr_kube_status *st, gr_err *err)
{
    if (out)
        *out = NULL;
    if (attempts)
        *attempts = 0;
    unsigned seed = (unsigned)gr_kube_mono_ns();
    for (int i = 0; i < 5; i++) {
        json_t *obj = NULL;
        int rc = gr_kube_get(c, gvr, ns, name, o, &obj, st, err);
        if (rc != GR_OK)
            return rc;
        rc = mutate(obj, ctx, err);
        if (rc == GR_ECANCELED) {
            if (out)
                *out = obj;
            else
                json_decref(obj);
            return GR_OK;
        }
        if (rc != GR_OK) {
            json_decref(obj);
            return rc;
        }
        if (attempts)
            (*attempts)++;
        rc = gr_kube_update(c, gvr, ns, obj, o, out, st, err);
        json_decref(obj);
        if (rc != GR_ECONFLICT || !st || st->reason != GR_KUBE_REASON_CONFLICT)
            return rc;
        if (i < 4) {
            /* 10 ms, jitter 0.1 (client-go retry.DefaultRetry) */
            int64_t d = 10000000LL + (int64_t)(rand_r(&seed) % 1000000);
            gr_kube_sleep_ns(d, o ? o->cancel : NULL);
        }
    }
    return err ? err->code : GR_ECONFLICT;
}

int gr_kube_pod_logs(gr_kube_client *c, const char *ns, const char *name,
                     const gr_kube_log_opts *lo, gr_buf *out, gr_kube_status *st, gr_err *err)
{
    gr_buf p = GR_BUF_INIT(16 * 1024);
    int rc = gr_kube_build_path(&p, &GR_KUBE_PODS, ns, name, "log", NULL, false, err);
    char sep = '?';
    if (rc == GR_OK && lo) {
        if (lo->container && *lo->container) {
            gr_buf_printf(&p, "%ccontainer=", sep);
            gr_kube_url_escape(&p, lo->container);
            sep = '&';
        }
        if (lo->tail_lines > 0) {
            gr_buf_printf(&p, "%ctailLines=%ld", sep, lo->tail_lines);
            sep = '&';
        }
        if (lo->limit_bytes > 0) {
            gr_buf_printf(&p, "%climitBytes=%ld", sep, lo->limit_bytes);
            sep = '&';
        }
        if (lo->since_time && *lo->since_time) {
            gr_buf_printf(&p, "%csinceTime=", sep);
            gr_kube_url_escape(&p, lo->since_time);
            sep = '&';
        }
        if (lo->timestamps) {
            gr_buf_printf(&p, "%ctimestamps=true", sep);
            sep = '&';
        }
        if (lo->previous)
            gr_buf_printf(&p, "%cprevious=true", sep);
    }
    if (rc == GR_OK)
        rc = gr_kube_request(c, "GET", gr_buf_cstr(&p), NULL, NULL, 0, NULL, out, NULL, st, err);
    gr_buf_free(&p);
    return rc;
}
