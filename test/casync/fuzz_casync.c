/*
 * fuzz_casync.c — libFuzzer target for the CA bundle sync's parsers of
 * outside input: CA file validation (the mounted Secret) and the rendering
 * of healthPublish.namespaceSelector (config JSON) into a label selector.
 * A CA that validates must round-trip through the desired ConfigMap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_casync.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (gr_casync_validate_ca((const char *)data, size, "fuzz", NULL) == GR_OK) {
        char *ca = malloc(size + 1);
        if (!ca)
            return 0;
        memcpy(ca, data, size);
        ca[size] = '\0';
        json_t *cm = gr_casync_desired("ns", ca);
        if (cm && gr_casync_needs_update(cm, ca))
            abort(); /* the desired copy never needs an update */
        json_decref(cm);
        free(ca);
    }
    json_t *sel = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (sel) {
        gr_buf b = GR_BUF_INIT(64 * 1024);
        gr_casync_selector_string(sel, "namespaceSelector", &b, NULL);
        gr_buf_free(&b);
        json_decref(sel);
    }
    return 0;
}
