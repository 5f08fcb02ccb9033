/* Fuzz target: the fault spec parser (YAML from the user). */
#include <stddef.h>
#include <stdint.h>

#include "gr_sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gr_sim_spec s;
    gr_err err;
    if (gr_sim_spec_parse((const char *)data, size, "fuzz", &s, &err) == GR_OK)
        gr_sim_spec_free(&s);
    return 0;
}
