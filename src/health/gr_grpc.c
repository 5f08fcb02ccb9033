/*
 * gr_grpc.c — gRPC unary calls over libcurl HTTP/2. See gr_grpc.h.
 */
#include "gr_grpc.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gr_buf.h"

#define USER_AGENT "grpc-c-gpuready/" GR_VERSION

/* Cap on a request frame: the platform connector's messages are tiny. */
#define MAX_REQUEST ((size_t)4 * 1024 * 1024)
/* Cap on one metadata line. */
#define MAX_META_LINE 16384

/* --- transports --------------------------------------------------------- */

static int unix_ready(const gr_grpc_endpoint *ep)
{
    struct stat st;
    return ep->socket_path && stat(ep->socket_path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static int set_url(CURL *h, gr_buf *url, gr_err *err)
{
    if (curl_easy_setopt(h, CURLOPT_URL, gr_buf_cstr(url)) != CURLE_OK)
        return gr_err_set(err, GR_EINVAL, "gRPC target URL %s is not valid", gr_buf_cstr(url));
    return GR_OK;
}

static int unix_setup(void *curl, const gr_grpc_endpoint *ep, const char *path, gr_err *err)
{
    CURL *h = curl;
    if (!ep->socket_path || !*ep->socket_path)
        return gr_err_set(err, GR_EINVAL, "gRPC unix transport: no socket path");
    gr_buf url = GR_BUF_INIT(8192);
    int rc = gr_buf_printf(&url, "http://localhost%s", path);
    if (rc == GR_OK)
        rc = set_url(h, &url, err);
    else
        gr_err_set(err, rc, "gRPC unix transport: method path too long");
    gr_buf_free(&url);
    if (rc != GR_OK)
        return rc;
    if (curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, ep->socket_path) != CURLE_OK)
        return gr_err_set(err, GR_EINVAL, "socket path %s is not usable", ep->socket_path);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    return GR_OK;
}

static int tcp_ready(const gr_grpc_endpoint *ep)
{
    (void)ep;
    return 1;
}

/* "host" or "[v6]" for URLs and CONNECT_TO. */
static int put_host(gr_buf *b, const char *host)
{
    if (strchr(host, ':'))
        return gr_buf_printf(b, "[%s]", host);
    return gr_buf_puts(b, host);
}

static int tcp_setup(void *curl, const gr_grpc_endpoint *ep, const char *path, gr_err *err)
{
    CURL *h = curl;
    if (!ep->host || !*ep->host || ep->port < 1 || ep->port > 65535)
        return gr_err_set(err, GR_EINVAL, "gRPC tcp transport: host and port 1-65535 are required");
    const char *name = ep->server_name && *ep->server_name ? ep->server_name : ep->host;
    if (ep->plaintext)
        name = ep->host;
    gr_buf url = GR_BUF_INIT(8192), to = GR_BUF_INIT(2048);
    int rc = gr_buf_puts(&url, ep->plaintext ? "http://" : "https://");
    if (rc == GR_OK)
        rc = put_host(&url, name);
    if (rc == GR_OK)
        rc = gr_buf_printf(&url, ":%d%s", ep->port, path);
    if (rc != GR_OK) {
        gr_buf_free(&url);
        return gr_err_set(err, rc, "gRPC tcp transport: target too long");
    }
    rc = set_url(h, &url, err);
    gr_buf_free(&url);
    if (rc != GR_OK)
        return rc;
    struct curl_slist *connect_to = NULL;
    if (name != ep->host && strcmp(name, ep->host) != 0) {
        /* Verify and send SNI for `name`, but connect to host:port. */
        rc = put_host(&to, name);
        if (rc == GR_OK)
            rc = gr_buf_printf(&to, ":%d:", ep->port);
        if (rc == GR_OK)
            rc = put_host(&to, ep->host);
        if (rc == GR_OK)
            rc = gr_buf_printf(&to, ":%d", ep->port);
        if (rc != GR_OK) {
            gr_buf_free(&to);
            return gr_err_set(err, rc, "gRPC tcp transport: server name too long");
        }
        connect_to = curl_slist_append(NULL, gr_buf_cstr(&to));
        gr_buf_free(&to);
        if (!connect_to)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to);
        /* The list must outlive the transfer; gr_grpc_unary frees it via
         * CURLOPT_PRIVATE. */
        curl_easy_setopt(h, CURLOPT_PRIVATE, connect_to);
    }
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    if (!ep->plaintext) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
        curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
        if (ep->ca_file && *ep->ca_file) {
            if (curl_easy_setopt(h, CURLOPT_CAINFO, ep->ca_file) != CURLE_OK)
                return gr_err_set(err, GR_EINVAL, "CA file %s is not usable", ep->ca_file);
            /* Trust only the given bundle, not the system directory too. */
            curl_easy_setopt(h, CURLOPT_CAPATH, (char *)NULL);
        }
    }
    return GR_OK;
}

static const gr_grpc_transport transports[] = {
    [GR_GRPC_UNIX] = {"unix", unix_ready, unix_setup},
    [GR_GRPC_TCP] = {"tcp", tcp_ready, tcp_setup},
};

const gr_grpc_transport *gr_grpc_transport_for(gr_grpc_kind kind)
{
    if ((unsigned)kind >= sizeof transports / sizeof transports[0])
        return NULL;
    return &transports[kind];
}

int gr_grpc_global_init(gr_err *err)
{
    static int done;
    if (done)
        return GR_OK;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return gr_err_set(err, GR_EIO, "curl_global_init failed");
    done = 1;
    return GR_OK;
}

int gr_grpc_code_to_rc(int code)
{
    switch (code) {
    case GR_GRPC_OK:
        return GR_OK;
    case GR_GRPC_UNAVAILABLE:
        return GR_EAGAIN;
    case GR_GRPC_DEADLINE_EXCEEDED:
        return GR_ETIMEDOUT;
    case GR_GRPC_UNAUTHENTICATED:
    case GR_GRPC_PERMISSION_DENIED:
        return GR_EPERM;
    case GR_GRPC_UNIMPLEMENTED:
        return GR_EUNSUPPORTED;
    case GR_GRPC_INVALID_ARGUMENT:
        return GR_EINVAL;
    default:
        return GR_EIO;
    }
}

/* --- the call ----------------------------------------------------------- */

typedef struct call_state {
    gr_grpc_meta meta;
    gr_grpc_reader reader;
    int body_rc;
    gr_err body_err;
} call_state;

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    call_state *st = ud;
    size_t n = size * nmemb;
    gr_grpc_meta_line(&st->meta, data, n);
    return n;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    call_state *st = ud;
    size_t n = size * nmemb;
    if (st->body_rc != GR_OK)
        return 0;
    st->body_rc = gr_grpc_reader_feed(&st->reader, data, n, &st->body_err);
    return st->body_rc == GR_OK ? n : 0;
}

static int valid_meta_line(const char *s)
{
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || strlen(s) > MAX_META_LINE)
        return 0;
    for (const char *p = s; p < colon; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
              *p == '.'))
            return 0;
    }
    for (const char *p = colon + 1; *p; p++) {
        if (*p < 0x20 || *p > 0x7e)
            return 0;
    }
    return 1;
}

static int transport_code(CURLcode cc)
{
    switch (cc) {
    case CURLE_OPERATION_TIMEDOUT:
        return GR_GRPC_DEADLINE_EXCEEDED;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_PARTIAL_FILE:
        return GR_GRPC_UNAVAILABLE;
    default:
        return GR_GRPC_INTERNAL;
    }
}

static void local_status(gr_grpc_result *res, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void local_status(gr_grpc_result *res, int code, const char *fmt, ...)
{
    va_list ap;
    res->status.code = code;
    res->transport_error = 1;
    va_start(ap, fmt);
    vsnprintf(res->status.message, sizeof res->status.message, fmt, ap);
    va_end(ap);
}

int gr_grpc_unary(const gr_grpc_call *call, gr_grpc_result *res, gr_err *err)
{
    memset(res, 0, sizeof *res);
    res->status.code = GR_GRPC_INTERNAL;
    if (!call || !call->ep || !call->path || call->path[0] != '/' || call->timeout_ns <= 0 ||
        (!call->request && call->request_len)) {
        local_status(res, GR_GRPC_INTERNAL, "invalid call arguments");
        return gr_err_set(err, GR_EINVAL,
                          "gr_grpc_unary: ep, path (/pkg.Service/Method), "
                          "and a positive timeout are required");
    }
    const gr_grpc_transport *tp = gr_grpc_transport_for(call->ep->kind);
    if (!tp) {
        local_status(res, GR_GRPC_INTERNAL, "unknown transport");
        return gr_err_set(err, GR_EINVAL, "gr_grpc_unary: unknown transport kind %d",
                          (int)call->ep->kind);
    }
    for (const char *const *m = call->metadata; m && *m; m++) {
        if (!valid_meta_line(*m)) {
            local_status(res, GR_GRPC_INTERNAL, "invalid metadata");
            return gr_err_set(err, GR_EINVAL,
                              "gRPC metadata entry %td is not \"name: value\" with a lower-case "
                              "name and printable ASCII value",
                              m - call->metadata);
        }
    }

    int rc = gr_grpc_global_init(err);
    if (rc != GR_OK) {
        local_status(res, GR_GRPC_INTERNAL, "%s", "curl init failed");
        return rc;
    }

    gr_buf body = GR_BUF_INIT(MAX_REQUEST);
    call_state st;
    gr_grpc_meta_init(&st.meta);
    gr_grpc_reader_init(&st.reader, call->max_response);
    st.body_rc = GR_OK;
    gr_err_clear(&st.body_err);
    struct curl_slist *hdrs = NULL;
    CURL *h = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";

    rc = gr_grpc_frame_encode(&body, call->request, call->request_len, err);
    if (rc != GR_OK) {
        local_status(res, GR_GRPC_INTERNAL, "request too large");
        goto out;
    }

    char tmo[10], tmo_hdr[32];
    gr_grpc_timeout_format(call->timeout_ns, tmo);
    snprintf(tmo_hdr, sizeof tmo_hdr, "grpc-timeout: %s", tmo);
    const char *fixed[] = {"content-type: application/grpc", "te: trailers", tmo_hdr,
                           "user-agent: " USER_AGENT,        "Accept:",      "Expect:"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        struct curl_slist *n = curl_slist_append(hdrs, fixed[i]);
        if (!n)
            goto nomem;
        hdrs = n;
    }
    for (const char *const *m = call->metadata; m && *m; m++) {
        struct curl_slist *n = curl_slist_append(hdrs, *m);
        if (!n)
            goto nomem;
        hdrs = n;
    }

    h = curl_easy_init();
    if (!h)
        goto nomem;
    rc = tp->setup(h, call->ep, call->path, err);
    if (rc != GR_OK) {
        local_status(res, GR_GRPC_INTERNAL, "%s", err ? err->msg : "transport setup failed");
        goto out;
    }
    long ms = (long)((call->timeout_ns + 999999) / 1000000);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &st);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &st);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);

    CURLcode cc = curl_easy_perform(h);
    if (cc == CURLE_OK) {
        long ver = 0;
        curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &ver);
        if (ver != CURL_HTTP_VERSION_2_0) {
            local_status(res, GR_GRPC_UNAVAILABLE, "server did not speak HTTP/2");
        } else {
            if (st.body_rc == GR_OK)
                st.body_rc = gr_grpc_reader_finish(&st.reader, &st.body_err);
            gr_grpc_resolve(&st.meta, &st.reader, st.body_rc, st.body_err.msg, 1, &res->status);
        }
    } else if (cc == CURLE_WRITE_ERROR && st.body_rc != GR_OK) {
        local_status(res, GR_GRPC_INTERNAL, "%s", st.body_err.msg);
    } else if (st.meta.have_status && st.meta.status != GR_GRPC_OK) {
        /* The server's verdict arrived before the stream broke: keep it. */
        gr_grpc_resolve(&st.meta, &st.reader, GR_OK, NULL, 1, &res->status);
    } else {
        local_status(res, transport_code(cc), "%s%s%s", curl_easy_strerror(cc), *errbuf ? ": " : "",
                     errbuf);
    }
    if (res->status.code == GR_GRPC_OK) {
        res->response = gr_buf_steal(&st.reader.first, &res->response_len);
        if (!res->response) {
            /* An empty message: hand back an empty string, not NULL. */
            res->response = calloc(1, 1);
            res->response_len = 0;
            if (!res->response)
                goto nomem;
        }
    }
    rc = gr_grpc_code_to_rc(res->status.code);
    if (rc != GR_OK)
        gr_err_set(err, rc, "gRPC %s %s: %s", call->path, gr_grpc_code_name(res->status.code),
                   res->status.message);
    goto out;

nomem:
    local_status(res, GR_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    rc = gr_err_set(err, GR_ENOMEM, "gRPC call: out of memory");
out:
    if (h) {
        char *priv = NULL;
        curl_easy_getinfo(h, CURLINFO_PRIVATE, &priv);
        curl_slist_free_all((struct curl_slist *)(void *)priv);
        curl_easy_cleanup(h);
    }
    curl_slist_free_all(hdrs);
    gr_buf_free(&body);
    gr_grpc_reader_free(&st.reader);
    return rc;
}
