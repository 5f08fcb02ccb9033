/* libFuzzer target for gr_base64_decode(): memory safety, the output cap,
 * the buffer left unchanged on error, and decode(encode(x)) == x for every
 * accepted input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gr_buf d = GR_BUF_INIT(64 * 1024);
    gr_err err;
    if (gr_buf_puts(&d, "p") != GR_OK)
        abort();
    int rc = gr_base64_decode((const char *)data, size, &d, &err);
    if (rc != GR_OK) {
        if (d.len != 1 || d.data[0] != 'p' || d.data[1] != 0 || err.code != rc)
            abort();
        gr_buf_free(&d);
        return 0;
    }
    if (d.len > 1 + size * 3 / 4 || d.data[d.len] != 0)
        abort();
    gr_buf e = GR_BUF_INIT(128 * 1024), back = GR_BUF_INIT(64 * 1024);
    if (gr_base64_encode(d.data + 1, d.len - 1, &e) != GR_OK ||
        gr_base64_decode(e.data ? e.data : "", e.len, &back, &err) != GR_OK ||
        back.len != d.len - 1 || (back.len && memcmp(back.data, d.data + 1, back.len) != 0))
        abort();
    gr_buf_free(&e);
    gr_buf_free(&back);
    gr_buf_free(&d);
    return 0;
}
