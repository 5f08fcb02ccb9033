/*
 * fuzz_nvcre_catalog.c — gr_nvcre_catalog_render() with CategoryOptions from
 * arbitrary JSON (the Certification spec is outside input). The first byte
 * picks the entry, platform and architecture; the rest is a JSON object of
 * options laid over the global options. Rendering must succeed or fail with
 * a message, never crash or leak; gr_nvcre_catalog_check_options() on the
 * same request lists unused fields as rows with a field, scope and hint.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "gr_nvcre_catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gr_nvcre_catalog *cat;
    static const char *plats[] = {"aws", "gcp", "azure", "oci", "onprem", "forge", ""};
    static const char *archs[] = {"h100", "gb200", "l40s", "gb300", "unknown", "rtxpro6000"};
    if (!cat && gr_nvcre_catalog_load(&cat, NULL) != GR_OK)
        abort();
    if (size < 1 || size > 64 * 1024)
        return 0;
    unsigned sel = data[0];
    json_t *opts = json_loadb((const char *)data + 1, size - 1, JSON_DECODE_ANY, NULL);
    if (!opts)
        return 0;
    const char *d, *v;
    gr_nvcre_catalog_entry(cat, sel % gr_nvcre_catalog_count(cat), &d, &v, NULL);
    gr_nvcre_catalog_req req = {d,    v,    plats[(sel / 9) % 7],   archs[(sel / 63) % 6],
                                NULL, opts, (sel & 1) ? opts : NULL};
    json_t *spec = NULL, *resolved = NULL;
    gr_err err;
    if (gr_nvcre_catalog_render(cat, &req, &spec, &resolved, &err) == GR_OK && !spec)
        abort();
    json_decref(spec);
    json_decref(resolved);
    json_t *unused = NULL;
    if (gr_nvcre_catalog_check_options(cat, &req, &unused, &err) == GR_OK) {
        size_t i;
        json_t *u;
        json_array_foreach(unused, i, u)
        {
            if (!json_string_value(json_object_get(u, "field")) ||
                !json_string_value(json_object_get(u, "scope")) ||
                !json_string_value(json_object_get(u, "hint")))
                abort();
        }
        json_decref(unused);
    } else if (unused) {
        abort();
    }
    json_decref(opts);
    return 0;
}
