/*
 * fuzz_json.c — differential libFuzzer target for the admission path's
 * JSON reader and writer (gr_preflight_json.c, gr_preflight_compile.c):
 *   - gr_pf_json_parse() must accept exactly what
 *     json_loadb(JSON_REJECT_DUPLICATES) accepts and build an equal value
 *     with the same member order;
 *   - gr_pf_json_value() must write exactly the bytes of
 *     json_dumps(JSON_COMPACT | JSON_ENCODE_ANY).
 * Any difference aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_preflight_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void differ(const char *what)
{
    fprintf(stderr, "fuzz_json: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *ref = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    json_t *mine = NULL;
    int rc = gr_pf_json_parse((const char *)data, size, &mine);
    if (rc == GR_ENOMEM) {
        json_decref(ref);
        return 0;
    }
    if ((rc == GR_OK) != (ref != NULL))
        differ(ref ? "jansson accepts, gr_pf_json_parse rejects"
                   : "gr_pf_json_parse accepts, jansson rejects");
    if (ref) {
        if (!json_equal(ref, mine))
            differ("values differ");
        char *a = json_dumps(ref, JSON_COMPACT | JSON_ENCODE_ANY);
        char *b = json_dumps(mine, JSON_COMPACT | JSON_ENCODE_ANY);
        gr_buf w = GR_BUF_INIT((size_t)64 << 20);
        if (a && b && gr_pf_json_value(&w, mine) == GR_OK) {
            if (strcmp(a, b) != 0)
                differ("member order differs");
            if (strcmp(a, gr_buf_cstr(&w)) != 0)
                differ("gr_pf_json_value differs from json_dumps");
        }
        gr_buf_free(&w);
        free(a);
        free(b);
    }
    json_decref(ref);
    json_decref(mine);
    return 0;
}
