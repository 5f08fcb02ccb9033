/* libFuzzer target: input_config.yaml of a reconcile case (outside input). */
#include <stddef.h>
#include <stdint.h>

#include "gr_cases.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gr_cases_config cfg;
    gr_err err;
    if (gr_cases_config_parse((const char *)data, size, "fuzz", &cfg, &err) == GR_OK)
        gr_cases_config_free(&cfg);
    return 0;
}
