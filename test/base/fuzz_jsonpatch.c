/*
 * fuzz_jsonpatch.c — libFuzzer target for JSON Patch / Merge Patch.
 *
 * Input: <document JSON> NUL <patch JSON>. Without a NUL byte the whole input
 * is the patch and the document is {}.
 *
 * Invariants checked:
 *  - gr_json_patch_apply() is atomic: on failure the document is unchanged;
 *  - it agrees with gr_json_patch_apply_copy();
 *  - merge patch round trip: apply(doc, create(doc, result)) == result
 *    (when create succeeds; it refuses null members by design);
 *  - merge patch apply with the patch itself as a merge patch never fails.
 *
 * Run: build/asan/test/base/fuzz_jsonpatch -max_total_time=60 test/base/corpus/jsonpatch
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *load(const char *s, size_t n)
{
    return json_loadb(s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *sep = memchr(text, 0, size);
    json_t *doc, *patch;
    if (sep) {
        doc = load(text, (size_t)(sep - text));
        patch = load(sep + 1, size - (size_t)(sep - text) - 1);
    } else {
        doc = json_object();
        patch = load(text, size);
    }
    if (!doc || !patch)
        goto out;

    json_t *work = json_deep_copy(doc);
    json_t *orig = work;
    gr_err err;
    int rc = gr_json_patch_apply(&work, patch, &err);
    json_t *copy = NULL;
    gr_err err2;
    int rc2 = gr_json_patch_apply_copy(doc, patch, &copy, &err2);
    if (rc != rc2)
        abort();
    if (rc != GR_OK) {
        if (work != orig || !gr_json_equal(work, doc) || copy != NULL || err.msg[0] == 0)
            abort(); /* not atomic, or no message */
    } else {
        if (!gr_json_equal(work, copy))
            abort();
        json_t *mp = NULL;
        if (gr_json_merge_patch_create(doc, work, &mp, &err) == GR_OK) {
            json_t *t = json_deep_copy(doc);
            if (gr_json_merge_patch_apply(&t, mp, &err) != GR_OK || !gr_json_equal(t, work)) {
                char *a = json_dumps(work, JSON_ENCODE_ANY), *b = json_dumps(t, JSON_ENCODE_ANY);
                fprintf(stderr, "merge patch round trip: want %s got %s\n", a, b);
                abort();
            }
            json_decref(t);
            json_decref(mp);
        }
    }
    json_decref(copy);
    json_decref(work);

    /* the patch text as a merge patch, for coverage of apply */
    json_t *t = json_deep_copy(doc);
    if (gr_json_merge_patch_apply(&t, patch, &err) != GR_OK)
        abort();
    json_decref(t);

    /* pointer lookups with every string in the patch */
    if (json_is_array(patch)) {
        size_t i;
        json_t *op;
        json_array_foreach(patch, i, op)
        {
            const char *p = json_string_value(json_object_get(op, "path"));
            if (p)
                (void)gr_json_ptr_get(doc, p);
        }
    }
out:
    json_decref(doc);
    json_decref(patch);
    return 0;
}
