/* gr_checks_gang.c — pure parsing of the gang ConfigMap (see gr_checks_gang.h). */
#include "gr_checks_gang.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_checks.h"

void gr_checks_gang_files_free(gr_checks_gang_files *f)
{
    if (!f)
        return;
    free(f->expected_count);
    free(f->peers);
    free(f->master_addr);
    free(f->master_port);
    free(f->gang_id);
    memset(f, 0, sizeof *f);
}

void gr_checks_gang_free(gr_checks_gang *g)
{
    if (!g)
        return;
    free(g->peers);
    memset(g, 0, sizeof *g);
}

/* Copy s[0..n) trimmed into dst (cap len); returns 0 if it did not fit. */
static int copy_trim(char *dst, size_t len, const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= len)
        return 0;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "b, a,,c" → "a,b,c". Returns 0 if it does not fit. */
static int normalize_checks(const char *s, size_t n, char *out, size_t len)
{
    char buf[512];
    if (!copy_trim(buf, sizeof buf, s, n))
        return 0;
    char *items[64];
    size_t k = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*t))
            t++;
        size_t tl = strlen(t);
        while (tl > 0 && isspace((unsigned char)t[tl - 1]))
            t[--tl] = '\0';
        if (!*t)
            continue;
        if (k == sizeof items / sizeof items[0])
            return 0;
        items[k++] = t;
    }
    qsort(items, k, sizeof items[0], cmp_str);
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        int w = snprintf(out + o, len - o, "%s%s", i ? "," : "", items[i]);
        if (w < 0 || (size_t)w >= len - o)
            return 0;
        o += (size_t)w;
    }
    return 1;
}

static int parse_peer_line(const char *line, size_t n, gr_checks_gang_peer *p)
{
    const char *f[4];
    size_t fl[4];
    size_t nf = 0;
    const char *start = line;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || line[i] == ';') {
            if (nf < 4) {
                f[nf] = start;
                fl[nf] = (size_t)(line + i - start);
            }
            nf++;
            start = line + i + 1;
        }
    }
    if (nf < 2 || nf > 4)
        return 0;
    memset(p, 0, sizeof *p);
    if (!copy_trim(p->name, sizeof p->name, f[0], fl[0]) || !p->name[0])
        return 0;
    if (!copy_trim(p->ip, sizeof p->ip, f[1], fl[1]))
        return 0;
    p->rank = -1;
    if (nf >= 3) {
        char r[32];
        long v;
        if (copy_trim(r, sizeof r, f[2], fl[2]) && gr_checks_parse_long(r, 0, 1000000, &v) == GR_OK)
            p->rank = (int)v;
    }
    if (nf == 4) {
        p->has_checks = 1;
        if (!normalize_checks(f[3], fl[3], p->checks, sizeof p->checks))
            return 0;
    }
    return 1;
}

int gr_checks_gang_parse(const gr_checks_gang_files *f, gr_checks_gang *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    out->master_port = GR_CHECKS_GANG_DEFAULT_PORT;
    long v;
    if (f->expected_count) {
        if (gr_checks_parse_long(f->expected_count, 0, GR_CHECKS_GANG_MAX_PEERS, &v) == GR_OK)
            out->expected_count = v;
        else
            out->expected_invalid = 1;
    }
    if (f->gang_id)
        copy_trim(out->gang_id, sizeof out->gang_id, f->gang_id, strlen(f->gang_id));
    if (f->master_addr && !copy_trim(out->master_addr, sizeof out->master_addr, f->master_addr,
                                     strlen(f->master_addr)))
        return gr_err_set(err, GR_EINVAL, "gang ConfigMap key master_addr is too long");
    if (f->master_port) {
        char buf[32];
        if (!copy_trim(buf, sizeof buf, f->master_port, strlen(f->master_port)))
            return gr_err_set(err, GR_EINVAL, "gang ConfigMap key master_port is not a port");
        if (buf[0]) {
            if (gr_checks_parse_long(buf, 1, 65535, &v) != GR_OK)
                return gr_err_set(err, GR_EINVAL,
                                  "gang ConfigMap key master_port \"%s\" is not a port "
                                  "(1-65535)",
                                  buf);
            out->master_port = (int)v;
        }
    }
    if (!f->peers)
        return GR_OK;
    size_t cap = 0;
    const char *p = f->peers;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        int blank = 1;
        for (size_t i = 0; i < n; i++)
            if (!isspace((unsigned char)p[i]))
                blank = 0;
        if (!blank) {
            if (out->n_peers == GR_CHECKS_GANG_MAX_PEERS) {
                gr_checks_gang_free(out);
                return gr_err_set(err, GR_ETOOBIG, "gang peers: more than %d peers",
                                  GR_CHECKS_GANG_MAX_PEERS);
            }
            if (out->n_peers == cap) {
                size_t nc = cap ? cap * 2 : 8;
                gr_checks_gang_peer *np = realloc(out->peers, nc * sizeof *np);
                if (!np) {
                    gr_checks_gang_free(out);
                    return gr_err_set(err, GR_ENOMEM, "out of memory reading gang peers");
                }
                out->peers = np;
                cap = nc;
            }
            if (parse_peer_line(p, n, &out->peers[out->n_peers]))
                out->n_peers++;
            else
                out->skipped_lines++;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    return GR_OK;
}

int gr_checks_gang_complete(const gr_checks_gang *g)
{
    return g->expected_count > 0 && g->n_peers >= (size_t)g->expected_count;
}

long gr_checks_gang_find(const gr_checks_gang *g, const char *pod)
{
    for (size_t i = 0; i < g->n_peers; i++)
        if (strcmp(g->peers[i].name, pod) == 0)
            return (long)i;
    return -1;
}

int gr_checks_gang_checks_mismatch(const gr_checks_gang *g, char *detail, size_t len)
{
    int any = 0, mismatch = 0;
    for (size_t i = 0; i < g->n_peers; i++)
        any |= g->peers[i].has_checks;
    if (!any || g->n_peers == 0)
        return 0;
    for (size_t i = 1; i < g->n_peers; i++)
        if (strcmp(g->peers[i].checks, g->peers[0].checks) != 0)
            mismatch = 1;
    if (!mismatch)
        return 0;
    size_t o = 0;
    if (len)
        detail[0] = '\0';
    for (size_t i = 0; i < g->n_peers && o < len; i++) {
        int w = snprintf(detail + o, len - o, "%s%s=[%s]", i ? "; " : "", g->peers[i].name,
                         g->peers[i].checks);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return 1;
}
