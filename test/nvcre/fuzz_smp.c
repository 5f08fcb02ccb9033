/*
 * fuzz_smp.c — gr_smp_apply() on arbitrary input. The input is a JSON
 * array [root, doc, patch] (root a string naming a schema root, or null).
 * It must never crash, leak or hang; on success the result is an object,
 * and applying the same patch to the same document again gives the same
 * result (the patch and the document are never modified).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "gr_json.h"
#include "gr_smp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *in = NULL;
    if (gr_json_parse((const char *)data, size, 1 << 20, "fuzz", &in, NULL) != GR_OK)
        return 0;
    const char *root = json_string_value(json_array_get(in, 0));
    json_t *doc = json_array_get(in, 1), *patch = json_array_get(in, 2);
    if (json_is_object(doc) && json_is_object(patch)) {
        json_t *a = json_deep_copy(doc), *b = json_deep_copy(doc);
        json_t *pcopy = json_deep_copy(patch);
        int ra = gr_smp_apply(&a, patch, NULL, root, NULL);
        int rb = gr_smp_apply(&b, patch, NULL, root, NULL);
        if (ra != rb || !gr_json_equal(patch, pcopy))
            abort();
        if (ra == GR_OK && (!json_is_object(a) || !gr_json_equal(a, b)))
            abort();
        json_decref(a);
        json_decref(b);
        json_decref(pcopy);
    }
    json_decref(in);
    return 0;
}
