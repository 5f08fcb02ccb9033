/* libFuzzer target: the store's compact form (kube_cval.c). The input is
 * JSON text: whatever jansson accepts must survive encode → decode unchanged
 * (same values, same key order). The raw input is also decoded as if it were
 * a compact form (a corrupted store entry): NULL or a value, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gr_kube_keydict *d;
    if (gr_kube_keydict_new(&d) != GR_OK)
        return 0;
    json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (v) {
        gr_buf b = GR_BUF_INIT(1 << 24);
        if (gr_kube_cval_encode(d, v, &b) == GR_OK) {
            json_t *back = gr_kube_cval_decode(d, b.data, b.len);
            if (!back || !json_equal(v, back))
                abort();
            /* key order is kept too */
            char *t1 = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            char *t2 = json_dumps(back, JSON_ENCODE_ANY | JSON_COMPACT);
            if ((t1 == NULL) != (t2 == NULL) || (t1 && strcmp(t1, t2) != 0))
                abort();
            free(t1);
            free(t2);
            json_decref(back);
        }
        gr_buf_free(&b);
        json_decref(v);
    }
    json_decref(gr_kube_cval_decode(d, data, size));
    gr_kube_keydict_free(d);
    return 0;
}
