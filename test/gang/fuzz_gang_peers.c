/*
 * fuzz_gang_peers.c — libFuzzer target for the parsers of data read back
 * from gang ConfigMaps: the `peers` value (gr_gang_peers_parse, then a
 * format/parse round trip must be stable) and the gang-anchor annotation
 * (gr_gang_anchor_from_json).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_gang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    gr_gang_peers p;
    if (gr_gang_peers_parse(s, &p, NULL) == GR_OK) {
        gr_gang_peers_assign_ranks(&p);
        gr_buf b = GR_BUF_INIT((size_t)64 << 20);
        if (gr_gang_peers_format(&p, &b) == GR_OK) {
            gr_gang_peers q;
            if (gr_gang_peers_parse(gr_buf_cstr(&b), &q, NULL) == GR_OK) {
                if (q.n > p.n)
                    abort();
                gr_gang_peers_free(&q);
            }
        }
        gr_buf_free(&b);
        gr_gang_peers_free(&p);
    }
    json_t *j = json_loadb(s, size, 0, NULL);
    if (j) {
        gr_gang_anchor a;
        if (gr_gang_anchor_from_json(j, &a, NULL) == GR_OK)
            gr_gang_anchor_clear(&a);
        json_decref(j);
    }
    char *cm = gr_preflight_gang_configmap_name(s);
    if (cm && strlen(cm) > GR_PREFLIGHT_GANG_NAME_MAX)
        abort();
    free(cm);
    free(s);
    return 0;
}
