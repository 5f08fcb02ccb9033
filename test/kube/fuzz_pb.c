/* libFuzzer target: the Kubernetes protobuf decoder (gr_kube_pb). The
 * first byte picks the entry point: a response body (k8s\0 envelope) or a
 * watch frame stream (4-byte lengths + WatchEvent). Invariants: no crash,
 * no leak, an object (or list) on success, bounded memory (1 MiB cap). */
#include <stdint.h>
#include <stdlib.h>

#include "gr_kube_pb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int mode = data[0] & 1;
    data++;
    size--;
    gr_err err;
    json_t *o = NULL;
    if (mode == 0) {
        if (gr_kube_pb_decode(data, size, 1 << 20, &o, &err) == GR_OK) {
            if (!json_is_object(o))
                abort();
            json_decref(o);
        }
        return 0;
    }
    size_t off = 0, n;
    while (gr_kube_pb_frame(data + off, size - off, 1 << 20, &n, &err) == 1) {
        if (gr_kube_pb_decode_watch_event(data + off + 4, n, 1 << 20, &o, &err) == GR_OK) {
            if (!json_is_object(json_object_get(o, "object")))
                abort();
            json_decref(o);
        }
        off += 4 + n;
    }
    return 0;
}
