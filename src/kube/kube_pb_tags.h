/* Internal to src/kube: the JSON facts of the Kubernetes protobuf messages,
 * generated at build time from jsontags.tsv (scripts/fetch-k8s-protos,
 * scripts/k8s-jsontags.py) by src/kube/kube_pb_tags.py. Static data. */
#ifndef KUBE_PB_TAGS_H
#define KUBE_PB_TAGS_H

#include <stddef.h>

enum {
    KUBE_PB_INLINE = 1u << 0,
    KUBE_PB_OMITEMPTY = 1u << 1,
    KUBE_PB_PTR = 1u << 2,
    KUBE_PB_SLICE = 1u << 3,
    KUBE_PB_MAP = 1u << 4,
    KUBE_PB_BYTES = 1u << 5,
    KUBE_PB_SKIP = 1u << 6,
};

struct kube_pb_tag {
    const char *message; /* proto full name, e.g. "k8s.io.api.core.v1.Pod" */
    unsigned field;      /* field number */
    const char *json;    /* JSON name */
    unsigned flags;      /* KUBE_PB_* */
};

/* Sorted by (message, field). */
extern const struct kube_pb_tag kube_pb_tags[];
extern const size_t kube_pb_ntags;

#endif
