/* fuzz_checks_text.c — the text parsers of the checks: MESSAGE_SIZES, one
 * size, NCCL_REDUCE_OP and the DCGM error-code mapping table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_checks.h"
#include "gr_checks_dcgm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    uint64_t sizes[GR_CHECKS_MAX_SIZES];
    size_t n;
    if (gr_checks_parse_sizes(s, sizes, &n, NULL) == GR_OK) {
        if (n == 0 || n > GR_CHECKS_MAX_SIZES)
            abort();
        for (size_t i = 0; i < n; i++)
            if (sizes[i] == 0 || sizes[i] > ((uint64_t)1 << 40))
                abort();
    }
    int op;
    (void)gr_checks_parse_reduce_op(s, &op, NULL);
    static gr_checks_dcgm_map map;
    (void)gr_checks_dcgm_map_parse((const char *)data, size, &map, NULL);
    char camel[64];
    gr_checks_dcgm_camel(s, camel, sizeof camel);
    free(s);
    return 0;
}
