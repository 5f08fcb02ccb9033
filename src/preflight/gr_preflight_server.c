/*
 * gr_preflight_server.c — libmicrohttpd + GnuTLS front of the webhook.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "gr_file.h"
#include "gr_log.h"
#include "gr_preflight_server.h"

/* Largest /metrics page (a few kB in practice). */
#define METRICS_MAX ((size_t)1024 * 1024)

#define MOD           "preflight"
#define CERT_FILE_MAX ((size_t)1024 * 1024)
#define MAX_CHAIN     16
/* Retired certificate pairs stay allocated this long: GnuTLS only borrows
 * what the callback returns, so a handshake in flight keeps using it. */
#define RETIRE_NS (INT64_C(300) * 1000000000)

static const double k_buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                   0.1,    0.25,  0.5,    1,     2.5,  5,     10};
#define NBUCKETS (sizeof k_buckets / sizeof *k_buckets)

/* ------------------------------------------------------- certificates */

typedef struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} file_id;

typedef struct cert_gen {
    gnutls_pcert_st pcerts[MAX_CHAIN];
    unsigned npcerts;
    gnutls_privkey_t key;
    file_id crt_id, key_id;
    int64_t retired_ns;
    struct cert_gen *next; /* retired list */
} cert_gen;

/* One store per process (the GnuTLS callback has no user pointer). */
static struct {
    pthread_mutex_t mu;
    int users;
    char dir[4096];
    cert_gen *current;
    cert_gen *retired;
    atomic_uint_fast64_t reloads;
    atomic_uint_fast64_t reload_errors;
} g_certs = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void cert_gen_free(cert_gen *g)
{
    if (!g)
        return;
    for (unsigned i = 0; i < g->npcerts; i++)
        gnutls_pcert_deinit(&g->pcerts[i]);
    if (g->key)
        gnutls_privkey_deinit(g->key);
    free(g);
}

static int stat_id(const char *path, file_id *id)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->size = st.st_size;
    id->mtime = st.st_mtim;
    return 0;
}

static bool same_id(const file_id *a, const file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static int pubkey_der(gnutls_pubkey_t pk, gnutls_datum_t *out)
{
    return gnutls_pubkey_export2(pk, GNUTLS_X509_FMT_DER, out);
}

/* Load dir/tls.crt + dir/tls.key into a new generation. */
static int cert_load(const char *dir, cert_gen **out, gr_err *err)
{
    char crt[4200], key[4200];
    snprintf(crt, sizeof crt, "%s/tls.crt", dir);
    snprintf(key, sizeof key, "%s/tls.key", dir);
    cert_gen *g = calloc(1, sizeof *g);
    if (!g)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    gr_buf cb = GR_BUF_INIT(CERT_FILE_MAX), kb = GR_BUF_INIT(CERT_FILE_MAX);
    int rc = GR_OK;
    /* ids first: if a file changes while we read, the next check reloads */
    if (stat_id(crt, &g->crt_id) != 0 || stat_id(key, &g->key_id) != 0) {
        rc = gr_err_set(err, GR_EIO, "%s: cannot stat tls.crt/tls.key: %s", dir, strerror(errno));
        goto out;
    }
    if ((rc = gr_file_append(crt, &cb, err)) != GR_OK ||
        (rc = gr_file_append(key, &kb, err)) != GR_OK)
        goto out;
    gnutls_datum_t cd = {(unsigned char *)cb.data, (unsigned)cb.len};
    gnutls_datum_t kd = {(unsigned char *)kb.data, (unsigned)kb.len};
    g->npcerts = MAX_CHAIN;
    int grc = cb.len ? gnutls_pcert_list_import_x509_raw(g->pcerts, &g->npcerts, &cd,
                                                         GNUTLS_X509_FMT_PEM, 0)
                     : GNUTLS_E_NO_CERTIFICATE_FOUND;
    if (grc < 0) {
        g->npcerts = 0;
        rc = gr_err_set(err, GR_EIO, "%s: %s", crt, gnutls_strerror(grc));
        goto out;
    }
    if (g->npcerts == 0) {
        rc = gr_err_set(err, GR_EIO, "%s: no certificate found", crt);
        goto out;
    }
    if ((grc = gnutls_privkey_init(&g->key)) < 0 ||
        (grc = gnutls_privkey_import_x509_raw(g->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        rc = gr_err_set(err, GR_EIO, "%s: %s", key, gnutls_strerror(grc));
        goto out;
    }
    /* the key must match the leaf certificate (a half-rotated pair must
     * not be served) */
    gnutls_pubkey_t kp = NULL;
    gnutls_datum_t a = {0}, b = {0};
    bool match = gnutls_pubkey_init(&kp) >= 0 &&
                 gnutls_pubkey_import_privkey(kp, g->key, 0, 0) >= 0 && pubkey_der(kp, &a) >= 0 &&
                 pubkey_der(g->pcerts[0].pubkey, &b) >= 0 && a.size == b.size &&
                 memcmp(a.data, b.data, a.size) == 0;
    gnutls_free(a.data);
    gnutls_free(b.data);
    if (kp)
        gnutls_pubkey_deinit(kp);
    if (!match)
        rc = gr_err_set(err, GR_EIO, "%s: the private key does not match the certificate in %s",
                        key, crt);
out:
    gr_buf_free(&cb);
    gr_buf_free(&kb);
    if (rc != GR_OK) {
        cert_gen_free(g);
        return rc;
    }
    *out = g;
    return GR_OK;
}

static int cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                         const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                         gnutls_pcert_st **pcert, unsigned int *pcert_length,
                         gnutls_privkey_t *pkey)
{
    (void)session;
    (void)req_ca_dn;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    pthread_mutex_lock(&g_certs.mu);
    cert_gen *g = g_certs.current;
    if (g) {
        *pcert = g->pcerts;
        *pcert_length = g->npcerts;
        *pkey = g->key;
    }
    pthread_mutex_unlock(&g_certs.mu);
    return g ? 0 : -1;
}

static int certs_check(gr_err *err)
{
    char crt[4200], key[4200];
    pthread_mutex_lock(&g_certs.mu);
    snprintf(crt, sizeof crt, "%s/tls.crt", g_certs.dir);
    snprintf(key, sizeof key, "%s/tls.key", g_certs.dir);
    file_id ci, ki;
    bool changed = !g_certs.current || stat_id(crt, &ci) != 0 || stat_id(key, &ki) != 0 ||
                   !same_id(&ci, &g_certs.current->crt_id) ||
                   !same_id(&ki, &g_certs.current->key_id);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", g_certs.dir);
    pthread_mutex_unlock(&g_certs.mu);
    if (!changed)
        return 0;
    cert_gen *g = NULL;
    int rc = cert_load(dir, &g, err);
    if (rc != GR_OK) {
        atomic_fetch_add(&g_certs.reload_errors, 1);
        return rc;
    }
    int64_t now = mono_ns();
    pthread_mutex_lock(&g_certs.mu);
    cert_gen *old = g_certs.current;
    g_certs.current = g;
    if (old) {
        old->retired_ns = now;
        old->next = g_certs.retired;
        g_certs.retired = old;
    }
    /* free generations retired long ago */
    cert_gen **pp = &g_certs.retired;
    while (*pp) {
        if (now - (*pp)->retired_ns > RETIRE_NS) {
            cert_gen *dead = *pp;
            *pp = dead->next;
            cert_gen_free(dead);
        } else {
            pp = &(*pp)->next;
        }
    }
    pthread_mutex_unlock(&g_certs.mu);
    atomic_fetch_add(&g_certs.reloads, 1);
    return 1;
}

/* ------------------------------------------------------------ server */

struct gr_preflight_server {
    struct MHD_Daemon *d;
    gr_preflight_server_opts o;
    const gr_preflight_config *cfg;
    const gr_preflight_gang_ops *gang;
    uint16_t port;
    atomic_bool draining;
    atomic_int inflight;
    atomic_uint_fast64_t results[GR_PREFLIGHT_ADMIT__COUNT];
    atomic_uint_fast64_t too_big;
    atomic_uint_fast64_t buckets[NBUCKETS];
    atomic_uint_fast64_t lat_count;
    atomic_uint_fast64_t lat_sum_ns;
    char *static_body;
    size_t static_len;
    double start_time;
};

typedef struct req_ctx {
    gr_buf body;
    int64_t t0;
    bool too_big;
    bool counted;
} req_ctx;

static enum MHD_Result send_buf(struct MHD_Connection *c, gr_preflight_server *s, unsigned status,
                                char *body, size_t len, const char *ctype)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (atomic_load(&s->draining))
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *c, gr_preflight_server *s, unsigned status,
                                 const char *text)
{
    char *b = strdup(text);
    if (!b)
        return MHD_NO;
    return send_buf(c, s, status, b, strlen(b), "text/plain; charset=utf-8");
}

static void observe(gr_preflight_server *s, int64_t ns)
{
    double sec = (double)ns / 1e9;
    for (size_t i = 0; i < NBUCKETS; i++)
        if (sec <= k_buckets[i])
            atomic_fetch_add(&s->buckets[i], 1);
    atomic_fetch_add(&s->lat_count, 1);
    atomic_fetch_add(&s->lat_sum_ns, (uint_fast64_t)(ns > 0 ? ns : 0));
}

static enum MHD_Result handle_mutate(struct MHD_Connection *c, gr_preflight_server *s, req_ctx *rq)
{
    if (rq->too_big) {
        atomic_fetch_add(&s->too_big, 1);
        atomic_fetch_add(&s->results[GR_PREFLIGHT_ADMIT_ERROR], 1);
        char msg[96];
        snprintf(msg, sizeof msg, "request body larger than %zu bytes\n", s->o.max_body);
        return send_text(c, s, MHD_HTTP_CONTENT_TOO_LARGE, msg);
    }
    if (s->o.static_response) {
        char *b = malloc(s->static_len);
        if (!b)
            return MHD_NO;
        memcpy(b, s->static_body, s->static_len);
        atomic_fetch_add(&s->results[GR_PREFLIGHT_ADMIT_SKIPPED], 1);
        enum MHD_Result r = send_buf(c, s, 200, b, s->static_len, "application/json");
        observe(s, mono_ns() - rq->t0);
        return r;
    }
    gr_preflight_admission a;
    if (gr_preflight_admit(s->cfg, s->gang, gr_buf_cstr(&rq->body), rq->body.len, &a) != GR_OK) {
        gr_preflight_admission_clear(&a);
        atomic_fetch_add(&s->results[GR_PREFLIGHT_ADMIT_ERROR], 1);
        return send_text(c, s, 500, "out of memory\n");
    }
    atomic_fetch_add(&s->results[a.result], 1);
    switch (a.result) {
    case GR_PREFLIGHT_ADMIT_INJECTED:
        gr_log(GR_LOG_INFO, MOD, "injected preflight checks", GR_KV_STR("namespace", a.ns),
               GR_KV_STR("pod", a.pod_name), GR_KV_INT("count", (long long)a.n_injected),
               GR_KV_END);
        break;
    case GR_PREFLIGHT_ADMIT_SKIPPED:
        if (gr_log_enabled(GR_LOG_DEBUG))
            gr_log(GR_LOG_DEBUG, MOD, "pod not eligible, no checks injected",
                   GR_KV_STR("namespace", a.ns), GR_KV_STR("pod", a.pod_name), GR_KV_END);
        break;
    case GR_PREFLIGHT_ADMIT_DENIED:
        gr_log(GR_LOG_WARN, MOD, "admission denied", GR_KV_STR("namespace", a.ns),
               GR_KV_STR("pod", a.pod_name), GR_KV_STR("error", a.msg), GR_KV_END);
        break;
    default:
        gr_log(GR_LOG_WARN, MOD, "bad admission request", GR_KV_STR("error", a.msg), GR_KV_END);
        break;
    }
    char *body = a.body;
    a.body = NULL;
    enum MHD_Result r = send_buf(c, s, (unsigned)a.http_status, body, a.body_len, a.content_type);
    gr_preflight_admission_clear(&a);
    observe(s, mono_ns() - rq->t0);
    return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    gr_preflight_server *s = cls;
    req_ctx *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        gr_buf_init(&rq->body, s->o.max_body);
        rq->t0 = mono_ns();
        rq->counted = true;
        atomic_fetch_add(&s->inflight, 1);
        *con_cls = rq;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > s->o.max_body)
            rq->too_big = true;
        if (rq->too_big && strcmp(url, "/mutate") == 0 && strcmp(method, "POST") == 0)
            return handle_mutate(c, s, rq); /* answer now, do not read the body */
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!rq->too_big && gr_buf_append(&rq->body, upload_data, *upload_data_size) != GR_OK) {
            rq->too_big = true;
            gr_buf_free(&rq->body);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/mutate") == 0) {
        if (strcmp(method, "POST") != 0)
            return send_text(c, s, MHD_HTTP_METHOD_NOT_ALLOWED, "use POST\n");
        return handle_mutate(c, s, rq);
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return send_text(c, s, MHD_HTTP_METHOD_NOT_ALLOWED, "use GET\n");
    /* The chart's readiness probe keeps the contract's path (/healthz on the
     * webhook port, PF-219) and asks for readiness with a header. */
    const char *probe = MHD_lookup_connection_value(c, MHD_HEADER_KIND, GR_PREFLIGHT_PROBE_HEADER);
    bool readiness = probe && strcmp(probe, "readiness") == 0;
    if (strcmp(url, "/healthz") == 0 && !readiness)
        return send_text(c, s, 200, "ok");
    if (strcmp(url, "/readyz") == 0 || strcmp(url, "/healthz") == 0) {
        if (atomic_load(&s->draining))
            return send_text(c, s, MHD_HTTP_SERVICE_UNAVAILABLE, "shutting down");
        char why[256] = "not ready";
        if (s->o.ready && !s->o.ready(s->o.ready_ctx, why, sizeof why - 1)) {
            strcat(why, "\n");
            return send_text(c, s, MHD_HTTP_SERVICE_UNAVAILABLE, why);
        }
        return send_text(c, s, 200, "ok");
    }
    if (strcmp(url, "/metrics") == 0) {
        gr_buf m = GR_BUF_INIT(METRICS_MAX);
        if (gr_preflight_server_metrics(s, &m) != GR_OK) {
            gr_buf_free(&m);
            return send_text(c, s, 500, "out of memory\n");
        }
        size_t len;
        char *b = gr_buf_steal(&m, &len);
        if (!b)
            return MHD_NO;
        return send_buf(c, s, 200, b, len, "text/plain; version=0.0.4; charset=utf-8");
    }
    return send_text(c, s, MHD_HTTP_NOT_FOUND, "not found\n");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    gr_preflight_server *s = cls;
    req_ctx *rq = *con_cls;
    if (!rq)
        return;
    if (rq->counted)
        atomic_fetch_sub(&s->inflight, 1);
    gr_buf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
}

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = 0;
    gr_log(GR_LOG_DEBUG, MOD, "http", GR_KV_STR("detail", msg), GR_KV_END);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int gr_preflight_server_start(const gr_preflight_server_opts *opts, const gr_preflight_config *cfg,
                              const gr_preflight_gang_ops *gang, gr_preflight_server **out,
                              gr_err *err)
{
    *out = NULL;
    gr_preflight_server *s = calloc(1, sizeof *s);
    if (!s)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    s->o = *opts;
    if (!s->o.max_body)
        s->o.max_body = GR_PREFLIGHT_DEFAULT_MAX_BODY;
    if (!s->o.threads)
        s->o.threads = 2;
    if (!s->o.timeout_s)
        s->o.timeout_s = GR_PREFLIGHT_DEFAULT_TIMEOUT_S;
    s->cfg = cfg;
    s->gang = gang;
    s->start_time = wall_now();
    if (s->o.static_response) {
        static const char body[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
                                   "\"AdmissionReview\",\"response\":{\"uid\":\"\",\"allowed\":"
                                   "true}}";
        s->static_len = opts->static_body ? opts->static_body_len : sizeof body - 1;
        s->static_body = malloc(s->static_len + 1);
        if (s->static_body) {
            memcpy(s->static_body, opts->static_body ? opts->static_body : body, s->static_len);
            s->static_body[s->static_len] = 0;
        }
        if (!s->static_body) {
            free(s);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }

    /* certificate store */
    pthread_mutex_lock(&g_certs.mu);
    if (g_certs.users > 0 && strcmp(g_certs.dir, opts->cert_dir) != 0) {
        pthread_mutex_unlock(&g_certs.mu);
        free(s->static_body);
        free(s);
        return gr_err_set(err, GR_EUNSUPPORTED,
                          "one certificate directory per process (%s is in use)", g_certs.dir);
    }
    g_certs.users++;
    snprintf(g_certs.dir, sizeof g_certs.dir, "%s", opts->cert_dir);
    pthread_mutex_unlock(&g_certs.mu);
    int rc = certs_check(err);
    if (rc < 0) {
        gr_err_prefix(err, "--cert-dir: ");
        gr_preflight_server_stop(s);
        return rc;
    }

    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(opts->port);
    sin.sin_addr.s_addr = htonl(opts->loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
    unsigned flags = MHD_USE_TLS | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG;
    s->d =
        MHD_start_daemon(flags, opts->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, &sin,
                         MHD_OPTION_HTTPS_CERT_CALLBACK, cert_callback, MHD_OPTION_HTTPS_PRIORITIES,
                         "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2", MHD_OPTION_THREAD_POOL_SIZE,
                         (unsigned)s->o.threads, MHD_OPTION_CONNECTION_TIMEOUT,
                         (unsigned)s->o.timeout_s, MHD_OPTION_CONNECTION_LIMIT, 1024u,
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_EXTERNAL_LOGGER,
                         mhd_log, NULL, MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u, MHD_OPTION_END);
    if (!s->d) {
        gr_err_set(err, GR_EIO, "cannot listen on port %u (in use, or TLS setup failed)",
                   (unsigned)opts->port);
        gr_preflight_server_stop(s);
        return GR_EIO;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : opts->port;
    *out = s;
    return GR_OK;
}

uint16_t gr_preflight_server_port(const gr_preflight_server *s)
{
    return s->port;
}

int gr_preflight_server_reload_certs(gr_preflight_server *s, gr_err *err)
{
    (void)s;
    return certs_check(err);
}

/* Connections the daemon holds (in use or kept alive). */
static unsigned open_connections(gr_preflight_server *s)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return di ? di->num_connections : 0;
}

void gr_preflight_server_drain(gr_preflight_server *s, int64_t timeout_ms)
{
    if (!s || !s->d)
        return;
    atomic_store(&s->draining, true);
    MHD_socket fd = MHD_quiesce_daemon(s->d);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    int64_t deadline = mono_ns() + timeout_ms * 1000000;
    while ((atomic_load(&s->inflight) > 0 || open_connections(s) > 0) && mono_ns() < deadline) {
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
}

void gr_preflight_server_stop(gr_preflight_server *s)
{
    if (!s)
        return;
    if (s->d)
        MHD_stop_daemon(s->d);
    pthread_mutex_lock(&g_certs.mu);
    if (--g_certs.users == 0) {
        cert_gen_free(g_certs.current);
        g_certs.current = NULL;
        while (g_certs.retired) {
            cert_gen *n = g_certs.retired->next;
            cert_gen_free(g_certs.retired);
            g_certs.retired = n;
        }
    }
    pthread_mutex_unlock(&g_certs.mu);
    free(s->static_body);
    free(s);
}

/* ------------------------------------------------------------ metrics */

static void proc_stats(double *cpu, double *rss, double *vsz)
{
    *cpu = *rss = *vsz = 0;
    char *buf = NULL;
    if (gr_file_read("/proc/self/stat", 4096, &buf, NULL, NULL) != GR_OK)
        return;
    char *p = strrchr(buf, ')');
    if (!p) {
        free(buf);
        return;
    }
    /* fields after ")": state(3) ... utime(14) stime(15) ... vsize(23) rss(24) */
    unsigned long long utime = 0, stime = 0, vsize = 0, rssp = 0;
    int field = 2;
    char *save = NULL;
    for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        field++;
        if (field == 14)
            utime = strtoull(tok, NULL, 10);
        else if (field == 15)
            stime = strtoull(tok, NULL, 10);
        else if (field == 23)
            vsize = strtoull(tok, NULL, 10);
        else if (field == 24) {
            rssp = strtoull(tok, NULL, 10);
            break;
        }
    }
    free(buf);
    long hz = sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    *cpu = (double)(utime + stime) / (double)(hz > 0 ? hz : 100);
    *vsz = (double)vsize;
    *rss = (double)rssp * (double)(page > 0 ? page : 4096);
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n > 0 ? n - 1 : 0; /* minus the directory's own descriptor */
}

int gr_preflight_server_metrics(gr_preflight_server *s, gr_buf *o)
{
    int rc = GR_OK;
    rc |= gr_buf_puts(o, "# HELP preflight_injection_total Admission requests handled by the "
                         "preflight webhook, by result.\n"
                         "# TYPE preflight_injection_total counter\n");
    for (int r = 0; r < GR_PREFLIGHT_ADMIT__COUNT; r++)
        rc |= gr_buf_printf(o, "preflight_injection_total{result=\"%s\"} %" PRIuFAST64 "\n",
                            gr_preflight_admit_result_name((gr_preflight_admit_result)r),
                            atomic_load(&s->results[r]));
    rc |= gr_buf_puts(o, "# HELP preflight_webhook_latency_seconds Time to answer one "
                         "AdmissionReview on /mutate.\n"
                         "# TYPE preflight_webhook_latency_seconds histogram\n");
    for (size_t i = 0; i < NBUCKETS; i++)
        rc |= gr_buf_printf(o,
                            "preflight_webhook_latency_seconds_bucket{le=\"%g\"} %" PRIuFAST64 "\n",
                            k_buckets[i], atomic_load(&s->buckets[i]));
    uint_fast64_t cnt = atomic_load(&s->lat_count);
    rc |= gr_buf_printf(o,
                        "preflight_webhook_latency_seconds_bucket{le=\"+Inf\"} %" PRIuFAST64 "\n"
                        "preflight_webhook_latency_seconds_sum %.9f\n"
                        "preflight_webhook_latency_seconds_count %" PRIuFAST64 "\n",
                        cnt, (double)atomic_load(&s->lat_sum_ns) / 1e9, cnt);
    rc |= gr_buf_printf(o,
                        "# HELP preflight_certificate_reloads_total Serving certificate pairs "
                        "loaded after startup changes.\n"
                        "# TYPE preflight_certificate_reloads_total counter\n"
                        "preflight_certificate_reloads_total{result=\"success\"} %" PRIuFAST64 "\n"
                        "preflight_certificate_reloads_total{result=\"error\"} %" PRIuFAST64 "\n",
                        atomic_load(&g_certs.reloads), atomic_load(&g_certs.reload_errors));
    double cpu, rss, vsz;
    proc_stats(&cpu, &rss, &vsz);
    struct rlimit rl;
    double maxfds = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (double)rl.rlim_cur : 0;
    rc |= gr_buf_printf(o,
                        "# HELP process_cpu_seconds_total Total user and system CPU time spent "
                        "in seconds.\n"
                        "# TYPE process_cpu_seconds_total counter\n"
                        "process_cpu_seconds_total %.2f\n"
                        "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                        "# TYPE process_resident_memory_bytes gauge\n"
                        "process_resident_memory_bytes %.0f\n"
                        "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
                        "# TYPE process_virtual_memory_bytes gauge\n"
                        "process_virtual_memory_bytes %.0f\n"
                        "# HELP process_open_fds Number of open file descriptors.\n"
                        "# TYPE process_open_fds gauge\n"
                        "process_open_fds %d\n"
                        "# HELP process_max_fds Maximum number of open file descriptors.\n"
                        "# TYPE process_max_fds gauge\n"
                        "process_max_fds %.0f\n"
                        "# HELP process_start_time_seconds Start time of the process since unix "
                        "epoch in seconds.\n"
                        "# TYPE process_start_time_seconds gauge\n"
                        "process_start_time_seconds %.2f\n",
                        cpu, rss, vsz, count_fds(), maxfds, s->start_time);
    if (!rc && s->o.metrics && s->o.metrics(s->o.metrics_ctx, o) != GR_OK)
        return GR_ENOMEM;
    return rc ? GR_ENOMEM : GR_OK;
}
