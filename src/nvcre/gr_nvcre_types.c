/*
 * gr_nvcre_types.c — pure checks over the NVCRE API constants. See the header.
 */
#include "gr_nvcre_types.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gr_hash.h"

/* ------------------------------------------------------- conditions */

int gr_nvcre_condition_is_exclusive(const char *type)
{
    if (!type) {
        return 0;
    }
    return strcmp(type, GR_NVCRE_COND_IN_PROGRESS) == 0 ||
           strcmp(type, GR_NVCRE_COND_SUCCEEDED) == 0 || strcmp(type, GR_NVCRE_COND_FAILED) == 0;
}

enum {
    K_JOB = 1 << GR_NVCRE_JOB,
    K_WF = 1 << GR_NVCRE_WORKFLOW,
    K_CERT = 1 << GR_NVCRE_CERTIFICATION,
    K_RUN = 1 << GR_NVCRE_WORKLOAD_RUN,
};

typedef struct reason_row {
    unsigned kinds;
    const char *type;
    const char *status; /* "True" or "False" */
    const char *reason;
} reason_row;

#define T "True"
#define F "False"

/* Every documented (kind, condition, status, reason). Inactive exclusive
 * conditions (NotApplicable / Superseded) are handled in code. */
static const reason_row REASONS[] = {
    /* Job */
    {K_JOB, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKLOAD_CREATED},
    {K_JOB, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKLOAD_ADOPTED},
    {K_JOB, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKLOAD_PENDING},
    {K_JOB, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKLOAD_RUNNING},
    {K_JOB, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKLOAD_SCHEDULING_BLOCKED},
    {K_JOB, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKLOAD_CREATION_REJECTED},
    {K_JOB, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKLOAD_RESTARTING},
    {K_JOB, GR_NVCRE_COND_SUCCEEDED, T, GR_NVCRE_REASON_WORKLOAD_COMPLETED},
    {K_JOB, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_WORKLOAD_FAILED},
    {K_JOB, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_WORKLOAD_STALLED},
    {K_JOB, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_WORKLOAD_CREATION_ERROR},
    {K_JOB, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_JOB_TIMED_OUT},
    {K_JOB, GR_NVCRE_COND_HARDWARE_FAILED, T, GR_NVCRE_REASON_HARDWARE_FAILURE_DETECTED},
    {K_JOB, GR_NVCRE_COND_VALIDATION_FAILED, T, GR_NVCRE_REASON_THRESHOLD_VIOLATED},
    {K_JOB, GR_NVCRE_COND_VALIDATION_FAILED, T, GR_NVCRE_REASON_UNKNOWN_THRESHOLD_KEY},
    {K_JOB, GR_NVCRE_COND_VALIDATION_FAILED, T, GR_NVCRE_REASON_INVALID_THRESHOLD_EXPRESSION},
    {K_JOB, GR_NVCRE_COND_VALIDATION_FAILED, T, GR_NVCRE_REASON_MEASUREMENT_TIMEOUT},
    {K_JOB, GR_NVCRE_COND_VALIDATION_FAILED, F, GR_NVCRE_REASON_THRESHOLDS_MET},
    /* Workflow */
    {K_WF, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_GROUPS_PARTITIONED},
    {K_WF, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_JOB_CREATED},
    {K_WF, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_JOB_RUNNING},
    {K_WF, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_JOB_SCHEDULING_BLOCKED},
    {K_WF, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_ITERATION_COMPLETED},
    {K_WF, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKLOAD_CREATION_REJECTED},
    {K_WF, GR_NVCRE_COND_SUCCEEDED, T, GR_NVCRE_REASON_JOB_COMPLETED},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_ITERATIONS_FAILED},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_JOB_HARDWARE_FAILED},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_JOB_VALIDATION_FAILED},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_JOB_FAILED},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_NODE_DISCOVERY_ERROR},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_PARTITION_ERROR},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_DEPENDENCY_CREATION_ERROR},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_DEPENDENCY_NAME_COLLISION},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_JOB_NAME_COLLISION},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_JOB_CREATION_ERROR},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_GANG_SCHEDULING_CONFLICT},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_HETEROGENEOUS_PLATFORM},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_OVERRIDE_ERROR},
    {K_WF, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_CHECKPOINT_PVC_MISSING},
    {K_WF, GR_NVCRE_COND_VALIDATION_FAILED, T, GR_NVCRE_REASON_JOB_VALIDATION_FAILED},
    /* Certification */
    {K_CERT, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WAITING_FOR_NODES},
    {K_CERT, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKFLOW_CREATED},
    {K_CERT, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKFLOW_RUNNING},
    {K_CERT, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_CATEGORY_NOT_FOUND},
    {K_CERT, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_WORKFLOW_VALIDATION_FAILED},
    {K_CERT, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_BUILD_FAILED},
    {K_CERT, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_WORKFLOW_NAME_COLLISION},
    {K_CERT, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_WORKFLOW_FAILED},
    {K_CERT, GR_NVCRE_COND_SUCCEEDED, T, GR_NVCRE_REASON_ALL_WORKFLOWS_SUCCEEDED},
    {K_CERT, GR_NVCRE_COND_VALIDATION_FAILED, T, GR_NVCRE_REASON_JOB_VALIDATION_FAILED},
    /* WorkloadRun */
    {K_RUN, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKFLOW_CREATED},
    {K_RUN, GR_NVCRE_COND_IN_PROGRESS, T, GR_NVCRE_REASON_WORKFLOW_RUNNING},
    {K_RUN, GR_NVCRE_COND_SUCCEEDED, T, GR_NVCRE_REASON_WORKFLOW_SUCCEEDED},
    {K_RUN, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_WORKFLOW_DELETED},
    {K_RUN, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_WORKFLOW_FAILED},
    {K_RUN, GR_NVCRE_COND_FAILED, T, GR_NVCRE_REASON_WORKFLOW_VALIDATION_FAILED},
    {K_RUN, GR_NVCRE_COND_VALIDATION_FAILED, T, GR_NVCRE_REASON_THRESHOLD_VIOLATION},
};

#undef T
#undef F

int gr_nvcre_reason_known(gr_nvcre_kind kind, const char *type, const char *status,
                          const char *reason)
{
    if (!type || !status || !reason || (int)kind < 0 || kind > GR_NVCRE_WORKLOAD_RUN) {
        return 0;
    }
    unsigned bit = 1u << kind;
    if (gr_nvcre_condition_is_exclusive(type) && strcmp(status, "False") == 0) {
        const char *inactive = kind == GR_NVCRE_WORKLOAD_RUN ? GR_NVCRE_REASON_SUPERSEDED
                                                             : GR_NVCRE_REASON_NOT_APPLICABLE;
        return strcmp(reason, inactive) == 0;
    }
    for (size_t i = 0; i < sizeof REASONS / sizeof REASONS[0]; i++) {
        const reason_row *r = &REASONS[i];
        if ((r->kinds & bit) && strcmp(r->type, type) == 0 && strcmp(r->status, status) == 0 &&
            strcmp(r->reason, reason) == 0) {
            return 1;
        }
    }
    return 0;
}

int gr_nvcre_failed_node_reason_known(const char *reason)
{
    if (!reason) {
        return 0;
    }
    return strcmp(reason, GR_NVCRE_NODE_REASON_HARDWARE_FAILURE_DETECTED) == 0 ||
           strcmp(reason, GR_NVCRE_NODE_REASON_THRESHOLD_VIOLATION) == 0 ||
           strcmp(reason, GR_NVCRE_NODE_REASON_WORKLOAD_FAILED) == 0;
}

/* ------------------------------------------------------------ labels */

static int is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_alnum(char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* [a-zA-Z0-9]([-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9])? */
static int name_ok(const char *s, size_t n)
{
    if (n == 0 || n > GR_NVCRE_MAX_LABEL_NAME_LEN) {
        return 0;
    }
    if (!is_alnum(s[0]) || !is_alnum(s[n - 1])) {
        return 0;
    }
    for (size_t i = 1; i + 1 < n; i++) {
        char c = s[i];
        if (!is_alnum(c) && c != '-' && c != '_' && c != '.') {
            return 0;
        }
    }
    return 1;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)* — length
 * is checked separately (the CRD does so in its own rule). */
static int subdomain_ok(const char *s, size_t n)
{
    size_t start = 0;
    if (n == 0) {
        return 0;
    }
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            size_t len = i - start;
            if (len == 0 || !is_lower_alnum(s[start]) || !is_lower_alnum(s[i - 1])) {
                return 0;
            }
            for (size_t j = start + 1; j + 1 < i; j++) {
                if (!is_lower_alnum(s[j]) && s[j] != '-') {
                    return 0;
                }
            }
            start = i + 1;
        }
    }
    return 1;
}

int gr_nvcre_label_key_check(const char *key, size_t len, gr_err *err)
{
    if (!key) {
        return gr_err_set(err, GR_EINVAL, "%s", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    }
    const char *slash = memchr(key, '/', len);
    const char *name = key;
    size_t name_len = len;
    size_t prefix_len = 0;
    if (slash) {
        prefix_len = (size_t)(slash - key);
        name = slash + 1;
        name_len = len - prefix_len - 1;
        if (!subdomain_ok(key, prefix_len)) {
            return gr_err_set(err, GR_EINVAL, "%s", GR_NVCRE_MSG_LABEL_KEY_INVALID);
        }
    }
    if (!name_ok(name, name_len)) { /* also rejects a second '/' */
        return gr_err_set(err, GR_EINVAL, "%s", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    }
    if (prefix_len > GR_NVCRE_MAX_LABEL_PREFIX_LEN) {
        return gr_err_set(err, GR_EINVAL, "%s", GR_NVCRE_MSG_LABEL_KEY_PREFIX_TOO_LONG);
    }
    gr_err_clear(err);
    return GR_OK;
}

int gr_nvcre_label_value_check(const char *value, size_t len, gr_err *err)
{
    if (len == 0 || (value && name_ok(value, len))) {
        gr_err_clear(err);
        return GR_OK;
    }
    return gr_err_set(err, GR_EINVAL, "%s", GR_NVCRE_MSG_LABEL_VALUE_INVALID);
}

int gr_nvcre_label_key_reserved(const char *key, size_t len)
{
    static const char managed[] = GR_NVCRE_LABEL_MANAGED_BY;
    static const char prefix[] = GR_NVCRE_RESERVED_PREFIX;
    if (!key) {
        return 0;
    }
    if (len == sizeof managed - 1 && memcmp(key, managed, len) == 0) {
        return 1;
    }
    return len >= sizeof prefix - 1 && memcmp(key, prefix, sizeof prefix - 1) == 0;
}

int gr_nvcre_workload_labels_check(const json_t *labels, const char *path, gr_err *err)
{
    if (!path) {
        path = "labels";
    }
    if (!labels || json_is_null(labels)) {
        gr_err_clear(err);
        return GR_OK;
    }
    if (!json_is_object(labels)) {
        return gr_err_set(err, GR_EINVAL, "%s: must be an object of string keys and values", path);
    }
    size_t n = json_object_size(labels);
    if (n > GR_NVCRE_MAX_WORKLOAD_LABELS) {
        return gr_err_set(err, GR_EINVAL, "%s: " GR_NVCRE_MSG_TOO_MANY_LABELS_FMT, path, n,
                          GR_NVCRE_MAX_WORKLOAD_LABELS);
    }
    const char *key;
    size_t klen;
    json_t *value;
    json_object_keylen_foreach((json_t *)(uintptr_t)labels, key, klen, value)
    {
        if (gr_nvcre_label_key_check(key, klen, err) != GR_OK) {
            return gr_err_prefix(err, "%s[\"%.*s\"]: ", path, (int)(klen > 300 ? 300 : klen), key);
        }
        if (gr_nvcre_label_key_reserved(key, klen)) {
            return gr_err_set(err, GR_EINVAL, "%s[\"%.*s\"]: %s", path, (int)klen, key,
                              GR_NVCRE_MSG_LABELS_RESERVED);
        }
        if (!json_is_string(value)) {
            return gr_err_set(err, GR_EINVAL, "%s[\"%.*s\"]: the value must be a string", path,
                              (int)klen, key);
        }
        if (gr_nvcre_label_value_check(json_string_value(value), json_string_length(value), err) !=
            GR_OK) {
            return gr_err_prefix(err, "%s[\"%.*s\"]: ", path, (int)klen, key);
        }
    }
    gr_err_clear(err);
    return GR_OK;
}

int gr_nvcre_queue_check(const char *queue, gr_err *err)
{
    if (!queue || !*queue) {
        gr_err_clear(err);
        return GR_OK;
    }
    if (gr_nvcre_label_value_check(queue, strlen(queue), err) != GR_OK) {
        return gr_err_prefix(err, "gangScheduler.queue: ");
    }
    return GR_OK;
}

int gr_nvcre_queue_label_key_check(const char *key, gr_err *err)
{
    if (!key || !*key) {
        gr_err_clear(err);
        return GR_OK;
    }
    size_t len = strlen(key);
    if (len > GR_NVCRE_MAX_QUEUE_LABEL_KEY_LEN) {
        return gr_err_set(err, GR_EINVAL,
                          "gangScheduler.queueLabelKey: must be at most %d characters",
                          GR_NVCRE_MAX_QUEUE_LABEL_KEY_LEN);
    }
    if (gr_nvcre_label_key_check(key, len, err) != GR_OK) {
        if (strcmp(err ? err->msg : "", GR_NVCRE_MSG_LABEL_KEY_PREFIX_TOO_LONG) == 0) {
            return gr_err_set(err, GR_EINVAL, "gangScheduler.queueLabelKey: %s",
                              GR_NVCRE_MSG_QUEUE_LABEL_KEY_PREFIX_TOO_LONG);
        }
        return gr_err_prefix(err, "gangScheduler.queueLabelKey: ");
    }
    if (gr_nvcre_label_key_reserved(key, len)) {
        return gr_err_set(err, GR_EINVAL, "gangScheduler.queueLabelKey: %s",
                          GR_NVCRE_MSG_QUEUE_LABEL_KEY_RESERVED);
    }
    return GR_OK;
}

const char *gr_nvcre_effective_queue(const char *v)
{
    return v && *v ? v : GR_NVCRE_DEFAULT_QUEUE;
}

const char *gr_nvcre_effective_queue_label_key(const char *v)
{
    return v && *v ? v : GR_NVCRE_DEFAULT_QUEUE_LABEL_KEY;
}

void gr_nvcre_truncate_name(const char *name, size_t max, char *out, size_t outsz)
{
    if (outsz == 0)
        return;
    size_t len = strlen(name);
    if (len <= max || max < 7) {
        snprintf(out, outsz, "%s", name);
        return;
    }
    size_t keep = max - 6;
    while (keep > 0 && name[keep - 1] == '-')
        keep--;
    char hex[GR_HASH_FNV32_HEX_MAX];
    gr_hash_fnv1a32_hex(name, len, hex);
    snprintf(out, outsz, "%.*s-%.5s", (int)keep, name, hex);
}
