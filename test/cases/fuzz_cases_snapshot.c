/* libFuzzer target: what the runner reads from servers — /metrics text
 * (gr_cases_metrics_filter) and API objects (gr_cases_sanitize,
 * gr_cases_wait_met). The first byte selects the parser. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "gr_cases.h"
#include "gr_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    gr_err err;
    if (data[0] & 1) {
        static const char *const pfx[] = {"nvcre_", "gr_"};
        gr_cases_metrics m = {true, 2, (const char **)(uintptr_t)pfx};
        json_t *out = NULL;
        if (gr_cases_metrics_filter(text, len, &m, "ns1", &out, &err) == GR_OK)
            json_decref(out);
        return 0;
    }
    json_t *obj = NULL;
    if (gr_json_parse(text, len, 0, "fuzz", &obj, &err) != GR_OK)
        return 0;
    gr_cases_wait w = {.set = true,
                       .condition = "Ready",
                       .reason = "R",
                       .restart_count = 1,
                       .failed_node_count = 1};
    (void)gr_cases_wait_met(&w, obj);
    if (json_is_object(obj)) {
        (void)gr_cases_sanitize(obj, "ns1", "abcdef", &err);
        char *k = gr_cases_obj_key(obj);
        free(k);
    }
    json_decref(obj);
    return 0;
}
