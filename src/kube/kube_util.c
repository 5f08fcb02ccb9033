/* kube_util.c — the internal helpers declared in kube_internal.h. */
#include "kube_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- map --------------------------------------------------------------- */

uint32_t gr_kube_map_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

static int map_grow(gr_kube_map *m)
{
    size_t nb = m->nb ? m->nb * 2 : 16;
    gr_kube_map_node **b = calloc(nb, sizeof *b);
    if (!b)
        return GR_ENOMEM;
    for (size_t i = 0; i < m->nb; i++) {
        gr_kube_map_node *n = m->b[i];
        while (n) {
            gr_kube_map_node *next = n->next;
            size_t j = n->hash & (nb - 1);
            n->next = b[j];
            b[j] = n;
            n = next;
        }
    }
    free(m->b);
    m->b = b;
    m->nb = nb;
    return GR_OK;
}

gr_kube_map_node *gr_kube_map_find(const gr_kube_map *m, const char *key)
{
    if (!m->nb)
        return NULL;
    uint32_t h = gr_kube_map_hash(key);
    for (gr_kube_map_node *n = m->b[h & (m->nb - 1)]; n; n = n->next)
        if (n->hash == h && strcmp(n->key, key) == 0)
            return n;
    return NULL;
}

void *gr_kube_map_get(const gr_kube_map *m, const char *key)
{
    gr_kube_map_node *n = gr_kube_map_find(m, key);
    return n ? n->val : NULL;
}

bool gr_kube_map_has(const gr_kube_map *m, const char *key)
{
    return gr_kube_map_find(m, key) != NULL;
}

int gr_kube_map_put(gr_kube_map *m, const char *key, void *val, void **old)
{
    gr_kube_map_node *n = gr_kube_map_find(m, key);
    if (n) {
        if (old)
            *old = n->val;
        n->val = val;
        return GR_OK;
    }
    if (old)
        *old = NULL;
    if (m->n >= m->nb && map_grow(m) != GR_OK)
        return GR_ENOMEM;
    size_t kl = strlen(key);
    n = malloc(sizeof *n + kl + 1);
    if (!n)
        return GR_ENOMEM;
    memcpy(n->key, key, kl + 1);
    n->hash = gr_kube_map_hash(key);
    n->val = val;
    size_t j = n->hash & (m->nb - 1);
    n->next = m->b[j];
    m->b[j] = n;
    m->n++;
    return GR_OK;
}

bool gr_kube_map_del(gr_kube_map *m, const char *key, void **old)
{
    if (!m->nb)
        return false;
    uint32_t h = gr_kube_map_hash(key);
    for (gr_kube_map_node **pp = &m->b[h & (m->nb - 1)]; *pp; pp = &(*pp)->next) {
        gr_kube_map_node *n = *pp;
        if (n->hash == h && strcmp(n->key, key) == 0) {
            *pp = n->next;
            if (old)
                *old = n->val;
            free(n);
            m->n--;
            return true;
        }
    }
    return false;
}

void gr_kube_map_clear(gr_kube_map *m, void (*free_val)(void *))
{
    for (size_t i = 0; i < m->nb; i++) {
        gr_kube_map_node *n = m->b[i];
        while (n) {
            gr_kube_map_node *next = n->next;
            if (free_val)
                free_val(n->val);
            free(n);
            n = next;
        }
    }
    free(m->b);
    m->b = NULL;
    m->nb = 0;
    m->n = 0;
}

gr_kube_map_node *gr_kube_map_next(const gr_kube_map *m, size_t *bucket, gr_kube_map_node **node)
{
    if (*node && (*node)->next) {
        *node = (*node)->next;
        return *node;
    }
    size_t i = *node ? *bucket + 1 : *bucket;
    for (; i < m->nb; i++) {
        if (m->b[i]) {
            *bucket = i;
            *node = m->b[i];
            return *node;
        }
    }
    *bucket = m->nb;
    *node = NULL;
    return NULL;
}

/* ---- clocks ------------------------------------------------------------ */

int64_t gr_kube_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t gr_kube_real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int gr_kube_sleep_ns(int64_t ns, const atomic_int *stop)
{
    const int64_t slice = 50 * 1000000LL;
    while (ns > 0) {
        if (stop && atomic_load(stop))
            return GR_ECANCELED;
        int64_t d = ns < slice ? ns : slice;
        struct timespec ts = {(time_t)(d / 1000000000LL), (long)(d % 1000000000LL)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        ns -= d;
    }
    return (stop && atomic_load(stop)) ? GR_ECANCELED : GR_OK;
}

void gr_kube_fmt_time(int64_t unix_ns, bool micro, char out[32])
{
    time_t s = (time_t)(unix_ns / 1000000000LL);
    long us = (long)((unix_ns % 1000000000LL) / 1000);
    if (us < 0) {
        us += 1000000;
        s--;
    }
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro)
        snprintf(out + n, 32 - n, ".%06ldZ", us);
    else
        snprintf(out + n, 32 - n, "Z");
}

const char *gr_kube_meta_str(const json_t *obj, const char *field)
{
    json_t *md = json_object_get(obj, "metadata");
    return json_string_value(json_object_get(md, field));
}

int gr_kube_url_escape(gr_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int rc;
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            rc = gr_buf_putc(b, (char)*p);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rc = gr_buf_append(b, e, 3);
        }
        if (rc != GR_OK)
            return rc;
    }
    return GR_OK;
}

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int gr_kube_base64_decode(const char *in, size_t len, char **out, size_t *out_len)
{
    char *o = malloc(len / 4 * 3 + 4);
    if (!o)
        return GR_ENOMEM;
    size_t n = 0, q = 0, pad = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            acc <<= 6;
            q++;
        } else {
            int v = b64val(c);
            if (v < 0 || pad) {
                free(o);
                return GR_EPARSE;
            }
            acc = (acc << 6) | (uint32_t)v;
            q++;
        }
        if (q == 4) {
            if (pad > 2) {
                free(o);
                return GR_EPARSE;
            }
            o[n++] = (char)(acc >> 16);
            if (pad < 2)
                o[n++] = (char)(acc >> 8);
            if (pad < 1)
                o[n++] = (char)acc;
            q = 0;
            acc = 0;
        }
    }
    if (q != 0) {
        free(o);
        return GR_EPARSE;
    }
    o[n] = '\0';
    *out = o;
    *out_len = n;
    return GR_OK;
}

int gr_kube_read_file(const char *path, size_t max, char **out, size_t *len, gr_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return gr_err_set(err, GR_EIO, "%s: cannot open: %s", path, strerror(errno));
    gr_buf b = GR_BUF_INIT(max);
    char chunk[8192];
    size_t n;
    int rc = GR_OK;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        rc = gr_buf_append(&b, chunk, n);
        if (rc != GR_OK)
            break;
    }
    if (rc == GR_OK && ferror(f))
        rc = GR_EIO;
    fclose(f);
    if (rc != GR_OK) {
        gr_buf_free(&b);
        if (rc == GR_ETOOBIG)
            return gr_err_set(err, rc, "%s: larger than the %zu-byte limit", path, max);
        return gr_err_set(err, rc, "%s: read failed", path);
    }
    if (!b.data && gr_buf_putc(&b, '\0') == GR_OK) /* empty file: give "" */
        b.len = 0;
    size_t l = 0;
    *out = gr_buf_steal(&b, &l);
    if (!*out)
        return gr_err_set(err, GR_ENOMEM, "%s: out of memory", path);
    if (len)
        *len = l;
    return GR_OK;
}
