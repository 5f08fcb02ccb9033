/* gr_kube_pb — Kubernetes protobuf (application/vnd.kubernetes.protobuf)
 * decoding for built-in types, to the same JSON the JSON API serves.
 *
 * The messages come from Kubernetes' own generated.proto files (k8s.io/api
 * and k8s.io/apimachinery, the versions tools/k8s/go.mod pins), compiled with
 * protoc-c at build time (scripts/fetch-k8s-protos puts them in a cache
 * outside the tree; CMake option GR_KUBE_PROTOBUF=AUTO|ON|OFF). The JSON
 * form is driven by the protobuf-c descriptors plus the Go struct tags of
 * the same types (JSON name, inline, omitempty, pointer), extracted from the
 * same module at fetch time: proto field names are the JSON names except
 * for inline members, whose fields are written into the parent. Special
 * types: metav1.Time (RFC 3339, seconds; empty = null), metav1.MicroTime
 * (RFC 3339 with microseconds), resource.Quantity (its string form),
 * intstr.IntOrString (number or string), metav1.FieldsV1 and
 * runtime.RawExtension (embedded JSON, or an embedded k8s\0 envelope),
 * []byte (base64), maps (JSON objects).
 *
 * Supported kinds (gr_kube_pb_supports): core/v1 Pod, Node, ConfigMap,
 * Event, Namespace, Secret (and their lists), coordination.k8s.io/v1 Lease
 * (and LeaseList), meta Status; watch frames carry any of these.
 *
 * Built without the protos, gr_kube_pb_enabled() is false and every decode
 * returns GR_EUNSUPPORTED; callers keep using JSON.
 *
 * Pure: no I/O, no clock. Thread-safe (the descriptor tables are built once).
 * Ownership: every json_t returned is a new reference owned by the caller.
 * Errors: GR_EPARSE (malformed protobuf, envelope or embedded JSON; the
 * message says which), GR_ETOOBIG (a size cap), GR_EUNSUPPORTED (a kind the
 * decoder does not know, or no protos at build time), GR_ENOMEM. */
#ifndef GR_KUBE_PB_H
#define GR_KUBE_PB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"

/* The Accept header value for types the decoder supports. */
#define GR_KUBE_PB_ACCEPT       "application/vnd.kubernetes.protobuf, application/json"
#define GR_KUBE_PB_CONTENT_TYPE "application/vnd.kubernetes.protobuf"
/* The watch stream's content type. */
#define GR_KUBE_PB_WATCH_CONTENT_TYPE "application/vnd.kubernetes.protobuf;stream=watch"
/* Nesting cap for envelopes embedded in RawExtension. */
#define GR_KUBE_PB_MAX_DEPTH 4

/* True when built with the Kubernetes protos. */
bool gr_kube_pb_enabled(void);

/* True when the decoder handles objects of `resource` (the plural, e.g.
 * "pods", "leases") in `api_version` ("v1", "coordination.k8s.io/v1") and
 * the build has the protos. */
bool gr_kube_pb_supports(const char *api_version, const char *resource);

/* Decode one response body: the "k8s\0" magic, then runtime.Unknown whose
 * typeMeta names the kind and whose raw is the message. *out: the object (or
 * list) as the JSON API writes it, with apiVersion and kind. Bodies larger
 * than `cap` bytes are GR_ETOOBIG. */
int gr_kube_pb_decode(const void *buf, size_t len, size_t cap, json_t **out, gr_err *err);

/* Decode one watch frame's payload (without its 4-byte length): a
 * metav1.WatchEvent, with or without the k8s\0 envelope. *out is the event
 * as the JSON watch stream writes it: {"type": ..., "object": {...}}. */
int gr_kube_pb_decode_watch_event(const void *buf, size_t len, size_t cap, json_t **out,
                                  gr_err *err);

/* A cache of embedded JSON values (managedFields[].fieldsV1, RawExtension):
 * the same raw bytes decode to one tree, shared by reference (json_incref)
 * between the objects that hold it — so objects decoded through a cache are
 * read-only. Managers write the same fieldsV1 into every object they touch,
 * and parsing it was a third of a protobuf watch event's CPU. At most
 * GR_KUBE_PB_CACHE_SLOTS values of at most GR_KUBE_PB_CACHE_MAX_RAW bytes
 * (direct-mapped by hash). Not thread-safe: one per decoder. */
#define GR_KUBE_PB_CACHE_SLOTS   64
#define GR_KUBE_PB_CACHE_MAX_RAW 8192
typedef struct gr_kube_pb_cache gr_kube_pb_cache;
gr_kube_pb_cache *gr_kube_pb_cache_new(void); /* NULL: out of memory */
void gr_kube_pb_cache_free(gr_kube_pb_cache *pc);
/* gr_kube_pb_decode_watch_event through a cache (NULL: none). */
int gr_kube_pb_decode_watch_event_cached(const void *buf, size_t len, size_t cap,
                                         gr_kube_pb_cache *pc, json_t **out, gr_err *err);

/* Watch stream framing: each frame is a 4-byte big-endian length and that
 * many bytes. Given `avail` buffered bytes, returns 1 and sets *payload_len
 * when a whole frame is buffered (the payload starts at byte 4), 0 when more bytes are
 * needed, GR_ETOOBIG when the announced length exceeds `cap`. */
int gr_kube_pb_frame(const void *buf, size_t avail, size_t cap, size_t *payload_len, gr_err *err);

#endif
