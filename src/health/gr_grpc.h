/*
 * gr_grpc.h — a minimal gRPC unary client over libcurl HTTP/2.
 *
 * One request message, one response message, no streaming, no compression.
 * Each call uses a fresh connection (a new TLS handshake in TLS mode), which
 * is what a publisher that sends a handful of events wants and means a
 * rotated CA file or a replaced socket is picked up by the next attempt.
 *
 * Transports sit behind one small function table (gr_grpc_transport):
 *   - unix:  h2c (HTTP/2 prior knowledge) over a Unix domain socket;
 *   - tcp:   HTTP/2 over TLS to host:port (CA file, optional server-name
 *            override), or h2c when `plaintext` is set.
 *
 * The wire format (framing, headers, trailers, status) lives in the pure
 * gr_grpc_wire.h; this file only moves bytes.
 *
 * Errors: gr_grpc_unary() always fills `status`. Transport failures become
 * gRPC codes the way gRPC clients report them (cannot connect / TLS failure /
 * reset → UNAVAILABLE, deadline → DEADLINE_EXCEEDED, protocol trouble →
 * INTERNAL), so a caller's retry logic only looks at status->code. The
 * return value is GR_OK when status->code is OK, else GR_EAGAIN
 * (UNAVAILABLE), GR_ETIMEDOUT (DEADLINE_EXCEEDED), GR_EPERM
 * (UNAUTHENTICATED, PERMISSION_DENIED), GR_EUNSUPPORTED (UNIMPLEMENTED),
 * GR_EINVAL (INVALID_ARGUMENT, or a bad call argument), GR_ENOMEM, or GR_EIO.
 *
 * Thread-safety: calls are independent; curl_global_init() must have run
 * (gr_grpc_global_init() does it once, not thread-safe itself).
 */
#ifndef GR_GRPC_H
#define GR_GRPC_H

#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"
#include "gr_grpc_wire.h"

typedef enum gr_grpc_kind {
    GR_GRPC_UNIX = 0, /* h2c over a Unix domain socket */
    GR_GRPC_TCP = 1,  /* TLS (or h2c if plaintext) over TCP */
} gr_grpc_kind;

/* Where to connect. All strings are borrowed for the duration of a call. */
typedef struct gr_grpc_endpoint {
    gr_grpc_kind kind;
    const char *socket_path; /* GR_GRPC_UNIX: filesystem path (no unix:// prefix) */
    const char *host;        /* GR_GRPC_TCP: host name or IP literal (no brackets) */
    int port;                /* GR_GRPC_TCP: 1..65535 */
    int plaintext;           /* GR_GRPC_TCP: 1 = h2c, no TLS */
    const char *ca_file;     /* TLS: PEM bundle to verify the server; NULL = system store */
    const char *server_name; /* TLS: name to verify and send as SNI; NULL = host */
} gr_grpc_endpoint;

/* The transport table: how to reach an endpoint of one kind. */
typedef struct gr_grpc_transport {
    const char *name;
    /* 1 if an attempt can be made now (unix: the socket file exists), else 0. */
    int (*ready)(const gr_grpc_endpoint *ep);
    /* Set the request URL for `path` ("/pkg.Service/Method") and the
     * connection options on the curl easy handle (void * to keep curl out of
     * this header). GR_EINVAL / GR_ENOMEM with a message. */
    int (*setup)(void *curl, const gr_grpc_endpoint *ep, const char *path, gr_err *err);
} gr_grpc_transport;

/* The table entry for ep->kind; never NULL for a valid kind. */
const gr_grpc_transport *gr_grpc_transport_for(gr_grpc_kind kind);

/* curl_global_init once per process; GR_EIO on failure. */
int gr_grpc_global_init(gr_err *err);

typedef struct gr_grpc_call {
    const gr_grpc_endpoint *ep;
    const char *path;    /* "/datamodels.PlatformConnector/HealthEventOccurredV1" */
    const void *request; /* serialized request message (not framed) */
    size_t request_len;
    const char *const *metadata; /* NULL-terminated "name: value" strings, or NULL.
                                    Values must be printable ASCII (checked). */
    int64_t timeout_ns;          /* whole call, sent as grpc-timeout; > 0 */
    size_t max_response;         /* cap on the response message; 0 = 4 MiB */
} gr_grpc_call;

typedef struct gr_grpc_result {
    gr_grpc_status status; /* final gRPC status and message */
    int transport_error;   /* 1 when the status was made up locally (no
                              server status: connect/TLS/timeout/protocol) */
    char *response;        /* response message bytes (caller frees with free());
                              NULL unless status OK */
    size_t response_len;
} gr_grpc_result;

/* Make one unary call. See the error notes above. res->response is owned by
 * the caller after the call (free()); it is set only on success. */
int gr_grpc_unary(const gr_grpc_call *call, gr_grpc_result *res, gr_err *err);

/* gr_err code for a gRPC status code (GR_OK for OK); see above. */
int gr_grpc_code_to_rc(int code);

#endif
