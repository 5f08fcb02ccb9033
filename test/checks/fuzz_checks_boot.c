/* fuzz_checks_boot.c — the bootstrap frame decoder (gr_checks_boot_decode):
 * never crashes, never reads past the input, and a decoded frame re-encodes
 * to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_checks_boot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    size_t off = 0;
    while (off < size) {
        gr_checks_boot_msg m;
        size_t used = 0;
        if (gr_checks_boot_decode(copy + off, size - off, &m, &used, NULL) != GR_OK)
            break;
        unsigned char out[GR_CHECKS_BOOT_HEADER + GR_CHECKS_BOOT_MAX_PAYLOAD];
        size_t len = 0;
        if (gr_checks_boot_encode(&m, out, sizeof out, &len, NULL) != GR_OK || len != used ||
            memcmp(out, copy + off, len) != 0)
            abort();
        off += used;
    }
    free(copy);
    return 0;
}
