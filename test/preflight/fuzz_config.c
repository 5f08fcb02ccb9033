/*
 * fuzz_config.c — libFuzzer target for config.yaml parsing and validation.
 * A config that parses must also drive one injection without crashing.
 */
#include <stdint.h>
#include <string.h>

#include "gr_json.h"
#include "gr_preflight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gr_preflight_config *cfg = NULL;
    if (gr_preflight_config_parse((const char *)data, size, "fuzz", NULL, NULL, &cfg, NULL) !=
        GR_OK)
        return 0;
    static const char pod[] =
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"labels\":{\"osmo.group_uuid\":\"g\"}},"
        "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"pg\"},\"containers\":[{\"name\":\"m\","
        "\"env\":[{\"name\":\"NCCL_X\",\"value\":\"1\"}],\"volumeMounts\":[{\"name\":\"dev-shm\","
        "\"mountPath\":\"/dev/shm\"}],\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}}}],"
        "\"volumes\":[{\"name\":\"dev-shm\",\"emptyDir\":{}}],"
        "\"resourceClaims\":[{\"name\":\"c\"}]}}";
    json_t *p = json_loads(pod, 0, NULL);
    gr_preflight_gang_ops ops = gr_preflight_gang_static_ops(cfg);
    gr_preflight_result res;
    if (p && gr_preflight_inject(cfg, &ops, p, "n", &res, NULL) == GR_OK) {
        json_t *out = NULL;
        if (res.patch && gr_json_patch_apply_copy(p, res.patch, &out, NULL) != GR_OK)
            __builtin_trap(); /* our own patch must apply */
        json_decref(out);
        gr_preflight_result_clear(&res);
    }
    json_decref(p);
    gr_preflight_config_free(cfg);
    return 0;
}
