/* libFuzzer target for gr_duration_parse(): memory safety plus
 * format(parse(s)) parsing back to the same value and the API-pattern
 * validators agreeing with the parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_duration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t ns = 0, back = 0;
    gr_err err;
    char buf[GR_DURATION_STR_MAX];
    int rc = gr_duration_parse_n((const char *)data, size, &ns, &err);
    if (rc == GR_OK) {
        if (gr_duration_parse(gr_duration_format(ns, buf), &back, &err) != GR_OK || back != ns)
            abort();
    } else if (rc != GR_EINVAL || strncmp(err.msg, "time: ", 6) != 0) {
        abort();
    }
    /* the validators work on C strings: give them one */
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (strlen(s) == size && gr_duration_is_api_pattern(s)) {
        /* anything the CRD pattern admits is a Go duration (or overflows) */
        if (!gr_duration_is_decimal_pattern(s))
            abort();
        int prc = gr_duration_parse(s, &back, &err);
        if (prc != GR_OK && strstr(err.msg, "time: invalid duration") == NULL)
            abort();
        if (prc == GR_OK && back < 0)
            abort();
    }
    free(s);
    return 0;
}
