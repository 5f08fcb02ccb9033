/*
 * gr_grpc_wire.h — the gRPC-over-HTTP/2 wire format, without any I/O.
 *
 * Pure functions and small state machines fed with buffers, so they can be
 * unit-tested and fuzzed alone (test/health/fuzz_grpc_wire.c). gr_grpc.c
 * plugs them into libcurl.
 *
 *  - Length-prefixed messages: 1 byte compressed flag, 4 bytes big-endian
 *    length, then the message (gr_grpc_frame_encode, gr_grpc_reader_*).
 *  - Response header lines as libcurl delivers them ("HTTP/2 200\r\n",
 *    "name: value\r\n", "\r\n"; HTTP/2 trailers arrive the same way after the
 *    body): gr_grpc_meta_line() picks out :status, content-type, grpc-status
 *    and the percent-encoded grpc-message, from the headers (trailers-only
 *    responses) or from the trailers.
 *  - gr_grpc_resolve() turns what was seen into one final gRPC status, the
 *    way gRPC clients do: a missing grpc-status is an error, a non-200 HTTP
 *    status maps per the gRPC HTTP-to-status table, a non-gRPC content type
 *    or a broken message stream is INTERNAL.
 *
 * Ownership: gr_grpc_reader owns the payload of the first message
 * (r->first); gr_grpc_reader_free() releases it. Nothing else allocates.
 * Caps: one message at most `max_msg` bytes (GR_ETOOBIG past it); grpc-message
 * is truncated at GR_GRPC_MSG_MAX - 1 bytes after decoding.
 */
#ifndef GR_GRPC_WIRE_H
#define GR_GRPC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "gr_buf.h"
#include "gr_err.h"

/* gRPC status codes (grpc/doc/statuscodes.md). */
enum {
    GR_GRPC_OK = 0,
    GR_GRPC_CANCELLED = 1,
    GR_GRPC_UNKNOWN = 2,
    GR_GRPC_INVALID_ARGUMENT = 3,
    GR_GRPC_DEADLINE_EXCEEDED = 4,
    GR_GRPC_NOT_FOUND = 5,
    GR_GRPC_ALREADY_EXISTS = 6,
    GR_GRPC_PERMISSION_DENIED = 7,
    GR_GRPC_RESOURCE_EXHAUSTED = 8,
    GR_GRPC_FAILED_PRECONDITION = 9,
    GR_GRPC_ABORTED = 10,
    GR_GRPC_OUT_OF_RANGE = 11,
    GR_GRPC_UNIMPLEMENTED = 12,
    GR_GRPC_INTERNAL = 13,
    GR_GRPC_UNAVAILABLE = 14,
    GR_GRPC_DATA_LOSS = 15,
    GR_GRPC_UNAUTHENTICATED = 16,
};

/* Bytes kept of a decoded grpc-message, terminator included. */
#define GR_GRPC_MSG_MAX 512
/* Default cap on one received message (gRPC's default receive limit). */
#define GR_GRPC_DEFAULT_MAX_MSG ((size_t)4 * 1024 * 1024)

/* "UNAVAILABLE" etc.; "CODE_<n>" style "UNKNOWN_CODE" for values outside 0..16. */
const char *gr_grpc_code_name(int code);

/* Append one length-prefixed, uncompressed message to `out`.
 * GR_ETOOBIG when len does not fit 32 bits or out->max; GR_ENOMEM. */
int gr_grpc_frame_encode(gr_buf *out, const void *msg, size_t len, gr_err *err);

/* grpc-timeout value for a timeout in nanoseconds: at most 8 digits and the
 * finest unit that fits ("500m", "30S", "99999999n"), rounded up so the server
 * never sees a shorter deadline than ours. ns <= 0 gives "1n". `out` needs
 * 10 bytes. Returns GR_OK. */
int gr_grpc_timeout_format(int64_t ns, char out[10]);

/* Percent-decode a grpc-message value into out (outsz > 0, always
 * NUL-terminated, truncated to fit). Malformed escapes are kept literally, as
 * the gRPC spec asks (never drop the message). Returns the decoded length. */
size_t gr_grpc_percent_decode(const char *in, size_t len, char *out, size_t outsz);

/* --- response message stream ------------------------------------------- */

typedef struct gr_grpc_reader {
    uint8_t hdr[5];  /* prefix of the message being read */
    size_t hdr_len;  /* bytes of hdr filled */
    uint32_t need;   /* payload bytes still expected for the current message */
    int in_payload;  /* 1 while reading a payload */
    size_t nmsgs;    /* complete messages seen */
    size_t max_msg;  /* cap per message */
    gr_buf first;    /* payload of the first message (owned) */
    size_t skip_len; /* bytes of later messages skipped (not kept) */
} gr_grpc_reader;

/* max_msg == 0 selects GR_GRPC_DEFAULT_MAX_MSG. */
void gr_grpc_reader_init(gr_grpc_reader *r, size_t max_msg);
void gr_grpc_reader_free(gr_grpc_reader *r);
/* Feed body bytes in any split. GR_EPARSE for a compressed message (we never
 * offer an encoding) or a flag byte other than 0/1, GR_ETOOBIG past max_msg.
 * After an error the reader must not be fed again. */
int gr_grpc_reader_feed(gr_grpc_reader *r, const void *data, size_t n, gr_err *err);
/* End of body: GR_EPARSE when a message was cut off. */
int gr_grpc_reader_finish(const gr_grpc_reader *r, gr_err *err);

/* --- response headers and trailers ------------------------------------- */

typedef struct gr_grpc_meta {
    int http_status;               /* from the status line or :status; 0 = none yet */
    int blocks;                    /* header blocks completed (blank lines seen) */
    int content_type_seen;         /* a content-type header arrived */
    int content_type_grpc;         /* it was application/grpc[+proto|;…] */
    int have_status;               /* grpc-status seen and valid */
    int bad_status;                /* grpc-status seen but not a number 0..99 */
    int status;                    /* grpc-status value */
    char message[GR_GRPC_MSG_MAX]; /* decoded grpc-message ("" if none) */
} gr_grpc_meta;

void gr_grpc_meta_init(gr_grpc_meta *m);
/* Feed one header or trailer line, with or without its CRLF. Lines that are
 * not "name: value" and not a status line are ignored (libcurl may report
 * "HTTP/2 200" or "HTTP/1.1 200 OK"); names are case-insensitive. Never
 * fails: what it cannot use it ignores, and gr_grpc_resolve() decides. */
void gr_grpc_meta_line(gr_grpc_meta *m, const char *line, size_t len);

typedef struct gr_grpc_status {
    int code;                      /* gRPC status code */
    char message[GR_GRPC_MSG_MAX]; /* server's grpc-message or our reason */
} gr_grpc_status;

/* The call's outcome from the headers/trailers and the body reader.
 * `body_rc` is the first error from gr_grpc_reader_feed/finish (GR_OK if
 * none) and `body_err` its message (may be NULL). Order of precedence:
 *   non-200 HTTP status without grpc-status → mapped code (401
 *   UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 UNIMPLEMENTED,
 *   429/502/503/504 UNAVAILABLE, else UNKNOWN); missing grpc-status →
 *   INTERNAL (or UNKNOWN); unusable grpc-status → INTERNAL; content type not
 *   gRPC → UNKNOWN; a status other than OK → that status; OK with a broken
 *   body or a number of messages other than `want_msgs` → INTERNAL.
 * Always fills `out`. */
void gr_grpc_resolve(const gr_grpc_meta *m, const gr_grpc_reader *r, int body_rc,
                     const char *body_err, size_t want_msgs, gr_grpc_status *out);

#endif
