/* libFuzzer target for gr_quantity_parse(): besides memory safety it checks
 * that every accepted quantity round-trips through both string forms and
 * that comparison and arithmetic are consistent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gr_quantity q, back, r;
    gr_err err;
    char buf[GR_QUANTITY_STR_MAX];
    if (gr_quantity_parse_n((const char *)data, size, &q, &err) != GR_OK) {
        if (err.code == GR_OK || err.msg[0] == '\0')
            abort(); /* every failure explains itself */
        return 0;
    }
    if (gr_quantity_parse(gr_quantity_canonical(&q, buf), &back, &err) != GR_OK ||
        gr_quantity_cmp(&q, &back) != 0)
        abort();
    if (gr_quantity_parse(gr_quantity_string(&q, buf), &back, &err) != GR_OK ||
        gr_quantity_cmp(&q, &back) != 0)
        abort();
    if (gr_quantity_cmp(&q, &q) != 0)
        abort();
    int64_t v = gr_quantity_value(&q), m = gr_quantity_milli_value(&q);
    if (gr_quantity_sign(&q) > 0 && (v <= 0 || m <= 0))
        abort();
    if (gr_quantity_sign(&q) < 0 && (v >= 0 || m >= 0))
        abort();
    (void)gr_quantity_approx_float64(&q);
    /* q - q == 0 and (q + q) - q == q */
    if (gr_quantity_sub(&r, &q, &q, &err) != GR_OK || !gr_quantity_is_zero(&r))
        abort();
    if (gr_quantity_add(&r, &q, &q, &err) == GR_OK) {
        if (gr_quantity_sub(&r, &r, &q, &err) != GR_OK || gr_quantity_cmp(&r, &q) != 0)
            abort();
    }
    return 0;
}
