/*
 * fuzz_nvcre_labels.c — the workload-label checks of gr_nvcre_api on
 * arbitrary bytes. The input is "key\0value"; the checks must never crash,
 * and the single-key checks must agree with the JSON-object check.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_nvcre_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nul = memchr(s, '\0', size);
    size_t klen = nul ? (size_t)(nul - s) : size;
    const char *v = nul ? nul + 1 : "";
    size_t vlen = nul ? size - klen - 1 : 0;

    int key_ok = gr_nvcre_label_key_check(s, klen, NULL) == GR_OK;
    int val_ok = gr_nvcre_label_value_check(v, vlen, NULL) == GR_OK;
    int reserved = gr_nvcre_label_key_reserved(s, klen);

    /* jansson keys and strings must be NUL-free UTF-8; only then compare. */
    if (!memchr(s, '\0', klen) && !memchr(v, '\0', vlen)) {
        json_t *labels = json_object();
        json_t *jv = json_stringn(v, vlen); /* NULL for invalid UTF-8 */
        /* json_object_setn_new() takes jv even when it fails (bad UTF-8 key). */
        if (labels && jv && json_object_setn_new(labels, s, klen, jv) == 0) {
            gr_err err;
            int all_ok = gr_nvcre_workload_labels_check(labels, "labels", &err) == GR_OK;
            if (all_ok != (key_ok && val_ok && !reserved)) {
                abort();
            }
        } else if (!labels) {
            json_decref(jv);
        }
        json_decref(labels);
    }
    char *q = malloc(klen + 1);
    if (q) {
        memcpy(q, s, klen);
        q[klen] = '\0';
        (void)gr_nvcre_queue_label_key_check(q, NULL);
        (void)gr_nvcre_queue_check(q, NULL);
        free(q);
    }
    return 0;
}
