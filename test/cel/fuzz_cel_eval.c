/*
 * fuzz_cel_eval.c — libFuzzer target: compile and evaluate arbitrary CEL
 * source against a fixed Node / PodGroup document with a small cost budget,
 * then convert and format the result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "gr_cel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char doc[] =
    "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"a\":\"b\",\"nvidia.com/gpu.product\":\"H100\"}},"
    "\"spec\":{\"unschedulable\":false,\"minMember\":4,\"taints\":[{\"key\":\"k\",\"effect\":"
    "\"NoSchedule\"}]},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
    "{\"type\":\"DiskPressure\",\"status\":\"False\"}],\"capacity\":{\"gpu\":\"8\"},"
    "\"ratio\":0.5,\"big\":9223372036854775807,\"list\":[1,2.5,\"s\",null,true,[],{}]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_t *node;
    if (!node)
        node = json_loads(doc, 0, NULL);
    static const gr_cel_decl decls[] = {{"node", GR_CEL_MAP},
                                        {"podGroup", GR_CEL_MAP},
                                        {"value", GR_CEL_DOUBLE},
                                        {"x", GR_CEL_DYN}};
    gr_cel_options opts = {0};
    opts.flags = GR_CEL_ALLOW_UNDECLARED;
    opts.max_cost = 20000;
    gr_cel_program *p = NULL;
    gr_err err;
    if (gr_cel_compile((const char *)data, size, decls, 4, &opts, &p, NULL, &err) != GR_OK)
        return 0;
    json_t *value = json_real(900.5);
    json_t *vars[4] = {node, node, value, node};
    gr_cel_val v;
    if (gr_cel_eval_json(p, vars, &v, NULL, &err) == GR_OK) {
        json_t *j = NULL;
        if (gr_cel_val_to_json(&v, &j, &err) == GR_OK)
            json_decref(j);
        gr_buf b = GR_BUF_INIT(1 << 16);
        gr_cel_val_format(&v, &b);
        gr_buf_free(&b);
        gr_cel_val_release(&v);
    }
    json_decref(value);
    gr_cel_program_free(p);
    return 0;
}
