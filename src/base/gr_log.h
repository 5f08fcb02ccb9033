/*
 * gr_log.h — structured logging: one JSON object per line on stderr.
 *
 *   {"time":"2026-11-30T17:07:32.123Z","level":"INFO","msg":"injected",
 *    "pod":"train-0","count":3,"module":"webhook","version":"0.1.0"}
 *
 * The shape is Go log/slog's JSON handler, as upstream writes it: upper-case
 * level names, attributes in call order right after "msg" (the contract quotes
 * `"level":"ERROR","msg":"Fatal error","error":"..."` as one run of text),
 * then "module" and "version".
 *
 * Level from LOG_LEVEL (debug|info|warn|error; default info) via
 * gr_log_init(). Key/value pairs are typed and end with GR_KV_END:
 *
 *   gr_log(GR_LOG_INFO, "webhook", "injected",
 *          GR_KV_STR("pod", name), GR_KV_INT("count", n), GR_KV_END);
 *
 * Attribute keys never replace the envelope. A key equal to one of the
 * envelope keys "time", "level", "msg", "module" or "version" is written with
 * the prefix "fields." ("level" -> "fields.level", logrus' rule), in its place
 * among the attributes, so consumers that filter on the envelope see the real
 * level. Callers should still pick clear keys ("diag_level"); the rename is
 * the safety net. Any other repeated key: the last value wins, in the
 * position of the first.
 *
 * Each line is written with a single write(2) so lines from concurrent threads
 * or processes do not interleave. Thread-safe. Never fails the caller: a line
 * that cannot be built is dropped. Keys and string values are copied; nothing
 * passed in is retained.
 */
#ifndef GR_LOG_H
#define GR_LOG_H

#include <stdint.h>

#include "gr_err.h"

typedef enum gr_log_level {
    GR_LOG_DEBUG = 0,
    GR_LOG_INFO = 1,
    GR_LOG_WARN = 2,
    GR_LOG_ERROR = 3,
} gr_log_level;

enum gr_kv_type {
    GR_KVT_END = 0,
    GR_KVT_STR,    /* const char * (NULL logs null) */
    GR_KVT_INT,    /* long long */
    GR_KVT_DOUBLE, /* double */
    GR_KVT_BOOL,   /* int */
};

#define GR_KV_STR(k, v)    GR_KVT_STR, (const char *)(k), (const char *)(v)
#define GR_KV_INT(k, v)    GR_KVT_INT, (const char *)(k), (long long)(v)
#define GR_KV_DOUBLE(k, v) GR_KVT_DOUBLE, (const char *)(k), (double)(v)
#define GR_KV_BOOL(k, v)   GR_KVT_BOOL, (const char *)(k), (int)(!!(v))
#define GR_KV_END          GR_KVT_END

/* Read LOG_LEVEL and remember `version` (static string) for every line.
 * Returns GR_EINVAL (and keeps "info") when LOG_LEVEL is set but unknown; the
 * message in err names the accepted values. */
int gr_log_init(const char *version, gr_err *err);

/* Parse "debug"|"info"|"warn"|"warning"|"error" (case-insensitive), as LOG_LEVEL. */
int gr_log_parse_level(const char *s, gr_log_level *out);
void gr_log_set_level(gr_log_level level);
gr_log_level gr_log_get_level(void);
int gr_log_enabled(gr_log_level level);

/* Redirect output to another file descriptor (tests); -1 restores stderr. */
void gr_log_set_fd(int fd);

/* The prefix gr_log() puts before an attribute key that names an envelope
 * member (see above). */
#define GR_LOG_COLLISION_PREFIX "fields."

void gr_log(gr_log_level level, const char *module, const char *msg, ...);

#endif
