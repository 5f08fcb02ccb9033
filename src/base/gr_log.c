#include "gr_log.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static atomic_int log_level = GR_LOG_INFO;
static atomic_int log_fd = STDERR_FILENO;
static const char *log_version = GR_VERSION;

/* Go log/slog names, so our lines read like upstream's ("level":"ERROR"). */
static const char *const level_names[] = {"DEBUG", "INFO", "WARN", "ERROR"};

int gr_log_parse_level(const char *s, gr_log_level *out)
{
    if (!s)
        return GR_EINVAL;
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, level_names[i]) == 0) {
            *out = (gr_log_level)i;
            return GR_OK;
        }
    }
    if (strcasecmp(s, "warning") == 0) {
        *out = GR_LOG_WARN;
        return GR_OK;
    }
    return GR_EINVAL;
}

int gr_log_init(const char *version, gr_err *err)
{
    if (version)
        log_version = version;
    const char *env = getenv("LOG_LEVEL");
    if (!env || !*env)
        return GR_OK;
    gr_log_level lvl;
    if (gr_log_parse_level(env, &lvl) != GR_OK)
        return gr_err_set(err, GR_EINVAL,
                          "LOG_LEVEL: unknown level \"%s\"; use debug, info, warn or error", env);
    gr_log_set_level(lvl);
    return GR_OK;
}

void gr_log_set_level(gr_log_level level)
{
    atomic_store(&log_level, (int)level);
}

gr_log_level gr_log_get_level(void)
{
    return (gr_log_level)atomic_load(&log_level);
}

int gr_log_enabled(gr_log_level level)
{
    return (int)level >= atomic_load(&log_level);
}

void gr_log_set_fd(int fd)
{
    atomic_store(&log_fd, fd < 0 ? STDERR_FILENO : fd);
}

static void format_time(char *out, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, n, "%s.%03ldZ", base, ts.tv_nsec / 1000000L);
}

/* `s` with every byte that is not part of valid UTF-8 replaced by U+FFFD, as
 * Go's slog writes it. json_stringn_nocheck() used to keep the raw bytes, but
 * json_dumps() then refuses the whole object and the line was lost (found
 * by test/base/oom_base.c). NULL on ENOMEM. */
static json_t *utf8_lossy(const char *s)
{
    size_t n = strlen(s);
    if (n > SIZE_MAX / 3 - 1)
        return NULL;
    char *o = malloc(n * 3 + 1);
    if (!o)
        return NULL;
    size_t j = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        unsigned char b = u[i];
        unsigned lo = 0x80, hi = 0xBF;
        if (b < 0x80)
            k = 1;
        else if (b >= 0xC2 && b <= 0xDF)
            k = 2;
        else if (b >= 0xE0 && b <= 0xEF) {
            k = 3;
            lo = b == 0xE0 ? 0xA0 : 0x80;
            hi = b == 0xED ? 0x9F : 0xBF;
        } else if (b >= 0xF0 && b <= 0xF4) {
            k = 4;
            lo = b == 0xF0 ? 0x90 : 0x80;
            hi = b == 0xF4 ? 0x8F : 0xBF;
        }
        bool ok = k > 0 && i + k <= n && (k == 1 || (u[i + 1] >= lo && u[i + 1] <= hi));
        for (size_t x = 2; ok && x < k; x++)
            ok = (u[i + x] & 0xC0) == 0x80;
        if (ok) {
            memcpy(o + j, s + i, k);
            j += k;
            i += k;
        } else {
            memcpy(o + j, "\xef\xbf\xbd", 3);
            j += 3;
            i++;
        }
    }
    json_t *v = json_stringn(o, j);
    free(o);
    return v;
}

/* The members gr_log() writes itself; attributes never replace them. */
static const char *const envelope_keys[] = {"time", "level", "msg", "module", "version"};

/* `k`, or GR_LOG_COLLISION_PREFIX + k (in `buf`) when k names an envelope
 * member. Envelope keys are short, so `buf` always fits. */
static const char *attr_key(const char *k, char *buf, size_t n)
{
    for (size_t i = 0; i < sizeof envelope_keys / sizeof envelope_keys[0]; i++) {
        if (strcmp(k, envelope_keys[i]) == 0) {
            snprintf(buf, n, "%s%s", GR_LOG_COLLISION_PREFIX, k);
            return buf;
        }
    }
    return k;
}

void gr_log(gr_log_level level, const char *module, const char *msg, ...)
{
    if (!gr_log_enabled(level))
        return;
    int saved_errno = errno;
    json_t *o = json_object();
    if (!o)
        return;
    char tbuf[48];
    format_time(tbuf, sizeof tbuf);
    /* Any member that cannot be added (ENOMEM) drops the whole line: a line
     * lacking "level" or an attribute would mislead (found by
     * test/base/oom_base.c). json_object_set_new() releases v on failure. */
    bool ok = json_object_set_new(o, "time", json_string(tbuf)) == 0;
    ok = ok && json_object_set_new(o, "level", json_string(level_names[level & 3])) == 0;
    ok = ok && json_object_set_new(o, "msg", msg ? json_string(msg) : json_null()) == 0;
    va_list ap;
    va_start(ap, msg);
    for (;;) {
        int t = va_arg(ap, int);
        if (t == GR_KVT_END)
            break;
        const char *k = va_arg(ap, const char *);
        json_t *v = NULL;
        switch (t) {
        case GR_KVT_STR: {
            const char *s = va_arg(ap, const char *);
            v = s ? json_string(s) : json_null();
            if (s && !v) /* not UTF-8 (or ENOMEM): keep the bytes readable */
                v = utf8_lossy(s);
            break;
        }
        case GR_KVT_INT:
            v = json_integer(va_arg(ap, long long));
            break;
        case GR_KVT_DOUBLE:
            v = json_real(va_arg(ap, double));
            break;
        case GR_KVT_BOOL:
            v = json_boolean(va_arg(ap, int));
            break;
        default:
            goto done; /* unknown tag: stop reading varargs safely */
        }
        if (!v)
            ok = false; /* ENOMEM; keep reading so va_arg stays in step */
        else if (!k)
            json_decref(v);
        else {
            char kbuf[32];
            if (json_object_set_new(o, attr_key(k, kbuf, sizeof kbuf), v) != 0)
                ok = false;
        }
    }
done:
    va_end(ap);
    /* Attributes come right after msg, as slog writes them; then ours. */
    ok = ok && json_object_set_new(o, "module", json_string(module ? module : "")) == 0;
    ok = ok && json_object_set_new(o, "version", json_string(log_version)) == 0;
    char *line = ok ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (line) {
        size_t len = strlen(line);
        line[len] = '\n'; /* replace the terminator: json_dumps allocates len+1 */
        ssize_t w = write(atomic_load(&log_fd), line, len + 1);
        (void)w;
        free(line);
    }
    errno = saved_errno;
}
