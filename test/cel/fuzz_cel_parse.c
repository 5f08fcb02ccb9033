/*
 * fuzz_cel_parse.c — libFuzzer target: compile arbitrary CEL source, both
 * strictly (declared names only) and with undeclared names deferred.
 */
#include <stddef.h>
#include <stdint.h>

#include "gr_cel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const gr_cel_decl decls[] = {{"node", GR_CEL_MAP},
                                        {"podGroup", GR_CEL_MAP},
                                        {"value", GR_CEL_DOUBLE},
                                        {"x", GR_CEL_DYN}};
    gr_cel_options opts = {0};
    for (int mode = 0; mode < 2; mode++) {
        opts.flags = mode ? GR_CEL_ALLOW_UNDECLARED : 0;
        gr_cel_program *p = NULL;
        gr_cel_pos pos = {0, 0, 0};
        gr_err err;
        if (gr_cel_compile((const char *)data, size, decls, 4, &opts, &p, &pos, &err) == GR_OK)
            gr_cel_program_free(p);
        else if (pos.offset > size)
            __builtin_trap();
    }
    return 0;
}
