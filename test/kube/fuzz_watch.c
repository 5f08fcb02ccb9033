/* libFuzzer target: the watch-stream decoder. The input is split into
 * chunks at positions taken from its first byte, so chunk boundaries are
 * fuzzed too. Invariants: no crash, no leak, bounded memory (4 KiB cap). */
#include <stdint.h>
#include <stdlib.h>

#include "gr_kube_watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t step = (size_t)(data[0] % 64) + 1; /* bit 6: allow protobuf */
    data++;
    size--;
    gr_kube_watch_decoder *d;
    if (gr_kube_watch_decoder_new(4096, &d, NULL) != GR_OK)
        return 0;
    if (data[-1] & 64)
        gr_kube_watch_decoder_allow_protobuf(d); /* JSON or protobuf frames */
    for (size_t off = 0; off < size; off += step) {
        size_t n = size - off < step ? size - off : step;
        if (gr_kube_watch_decoder_feed(d, (const char *)data + off, n, NULL) != GR_OK)
            break;
        gr_kube_watch_event ev;
        int r;
        while ((r = gr_kube_watch_decoder_next(d, &ev, NULL)) == 1) {
            if (!json_is_object(ev.object))
                abort();
            gr_kube_watch_event_clear(&ev);
        }
        if (r < 0)
            break;
    }
    gr_kube_watch_decoder_free(d);
    return 0;
}
