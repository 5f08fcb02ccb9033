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
