/* libFuzzer target for gr_time_parse(): memory safety plus format/parse
 * round trips of every accepted timestamp. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_time.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct timespec t, back;
    gr_err err;
    char buf[GR_TIME_STR_MAX];
    if (gr_time_parse_n((const char *)data, size, &t, &err) != GR_OK)
        return 0;
    if (t.tv_nsec < 0 || t.tv_nsec >= 1000000000)
        abort();
    /* offsets can move a time just outside 0000..9999; that is the only
     * reason formatting may refuse */
    if (gr_time_format_nano(&t, buf) == GR_OK) {
        if (gr_time_parse(buf, &back, &err) != GR_OK || back.tv_sec != t.tv_sec ||
            back.tv_nsec != t.tv_nsec)
            abort();
    }
    return 0;
}
