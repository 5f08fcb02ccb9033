/*
 * gr_kube_validate.h — Kubernetes name, label and annotation validation with
 * the API server's grammar and messages (k8s.io/apimachinery v0.36, the
 * version our control plane runs), so a client can reject bad input before
 * sending it and tell the user exactly what the API server would have said.
 *
 *   DNS-1123 label      [a-z0-9]([-a-z0-9]*[a-z0-9])?          max 63 bytes
 *   DNS-1123 subdomain  label(\.label)*                         max 253 bytes
 *   qualified name      [prefix/]name, prefix a DNS subdomain,
 *   (= label key)       name ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], max 63
 *   label value         empty or a qualified-name "name part", max 63
 *
 * Each gr_kube_is_*() fills `out` with the API server's messages, one per
 * problem, in the server's order (e.g. "name part must be no more than 63
 * bytes"), and returns how many there are (0 = valid). Messages are copied
 * into the caller's gr_kube_msgs; nothing is allocated.
 *
 * gr_kube_validate_*() are the object-level checks and produce complete field
 * errors exactly as the API server renders them:
 *   metadata.labels: Invalid value: "a b": name part must consist of ...
 */
#ifndef GR_KUBE_VALIDATE_H
#define GR_KUBE_VALIDATE_H

#include <stddef.h>

#include <jansson.h>

#include "gr_err.h"

#define GR_KUBE_MSGS_MAX              8
#define GR_KUBE_MSG_LEN               512
#define GR_KUBE_DNS1123_LABEL_MAX     63
#define GR_KUBE_DNS1123_SUBDOMAIN_MAX 253
#define GR_KUBE_LABEL_VALUE_MAX       63
#define GR_KUBE_QUALIFIED_NAME_MAX    63
#define GR_KUBE_ANNOTATIONS_MAX_BYTES (256 * 1024)

typedef struct gr_kube_msgs {
    size_t n;                                    /* messages in use */
    char msg[GR_KUBE_MSGS_MAX][GR_KUBE_MSG_LEN]; /* NUL-terminated */
} gr_kube_msgs;

/* All take a NUL-terminated string; `out` may be NULL when only the count
 * matters. Return the number of problems (0 = valid). */
size_t gr_kube_is_dns1123_label(const char *value, gr_kube_msgs *out);
size_t gr_kube_is_dns1123_subdomain(const char *value, gr_kube_msgs *out);
size_t gr_kube_is_qualified_name(const char *value, gr_kube_msgs *out);
size_t gr_kube_is_label_value(const char *value, gr_kube_msgs *out);

/* Object names: most kinds (and CRDs) require a DNS-1123 subdomain;
 * namespaces and some kinds require a DNS-1123 label. */
typedef enum gr_kube_name_rule {
    GR_KUBE_NAME_SUBDOMAIN = 0,
    GR_KUBE_NAME_LABEL = 1,
} gr_kube_name_rule;

/* Field-level checks that render "<field>: Invalid value: \"<v>\": <msg>"
 * (Go's %q quoting of the value) for the first problem into err and return
 * GR_EINVAL; GR_OK when valid. `field` names the path ("metadata.name"). */
int gr_kube_validate_name(const char *name, gr_kube_name_rule rule, const char *field, gr_err *err);
/* labels: a JSON object of string values (NULL/absent = valid). */
int gr_kube_validate_labels(const json_t *labels, const char *field, gr_err *err);
/* annotations: keys are qualified names (case-insensitive); total size of
 * keys and values at most 256 KiB ("Too long: may not be more than 262144
 * bytes"). */
int gr_kube_validate_annotations(const json_t *annotations, const char *field, gr_err *err);

#endif
