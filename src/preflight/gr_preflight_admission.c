/*
 * gr_preflight_admission.c — AdmissionReview (admission.k8s.io/v1) in,
 * response out (facts §2.2). Pure: no I/O besides the gang hook.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_buf.h"
#include "gr_json.h"
#include "gr_preflight.h"
#include "gr_preflight_internal.h"

/* Largest AdmissionReview body parsed (the server caps earlier). */
#define REVIEW_MAX ((size_t)16 * 1024 * 1024)

static const char *const k_result_names[GR_PREFLIGHT_ADMIT__COUNT] = {
    "injected",
    "skipped",
    "denied",
    "error",
};

const char *gr_preflight_admit_result_name(gr_preflight_admit_result r)
{
    return (unsigned)r < GR_PREFLIGHT_ADMIT__COUNT ? k_result_names[r] : "error";
}

void gr_preflight_admission_clear(gr_preflight_admission *a)
{
    if (!a)
        return;
    free(a->body);
    free(a->pod_name);
    free(a->ns);
    memset(a, 0, sizeof *a);
}

static int base64(const char *in, size_t n, gr_buf *out)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (gr_buf_reserve(out, (n + 2) / 3 * 4 + 1) != GR_OK)
        return GR_ENOMEM;
    const unsigned char *p = (const unsigned char *)in;
    char *d = out->data + out->len;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        *d++ = tbl[v >> 18];
        *d++ = tbl[(v >> 12) & 63];
        *d++ = tbl[(v >> 6) & 63];
        *d++ = tbl[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0);
        *d++ = tbl[v >> 18];
        *d++ = tbl[(v >> 12) & 63];
        *d++ = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
        *d++ = '=';
    }
    out->len = (size_t)(d - out->data);
    *d = 0;
    return GR_OK;
}

static int text_error(gr_preflight_admission *out, const char *msg)
{
    out->http_status = 400;
    out->result = GR_PREFLIGHT_ADMIT_ERROR;
    out->content_type = "text/plain; charset=utf-8";
    snprintf(out->msg, sizeof out->msg, "%s", msg);
    if (asprintf(&out->body, "%s\n", msg) < 0) {
        out->body = NULL;
        return GR_ENOMEM;
    }
    out->body_len = strlen(out->body);
    return GR_OK;
}

/* Build the response review. `patch` (borrowed) may be NULL; `denial` NULL
 * means allowed. */
static int respond(gr_preflight_admission *out, const char *uid, const json_t *patch,
                   const char *denial)
{
    out->http_status = 200;
    out->content_type = "application/json";
    json_t *resp = json_pack("{s:s,s:b}", "uid", uid ? uid : "", "allowed", denial == NULL);
    if (!resp)
        return GR_ENOMEM;
    int rc = GR_OK;
    if (denial && json_object_set_new(resp, "status", json_pack("{s:s}", "message", denial)))
        rc = GR_ENOMEM;
    if (rc == GR_OK && patch) {
        gr_buf pj = GR_BUF_INIT(REVIEW_MAX), b64 = GR_BUF_INIT(0);
        rc = gr_json_dump_buf(patch, JSON_COMPACT, &pj);
        if (rc == GR_OK)
            rc = base64(pj.data, pj.len, &b64);
        if (rc == GR_OK &&
            (json_object_set_new(resp, "patchType", json_string("JSONPatch")) ||
             json_object_set_new(resp, "patch", json_stringn(gr_buf_cstr(&b64), b64.len))))
            rc = GR_ENOMEM;
        gr_buf_free(&pj);
        gr_buf_free(&b64);
    }
    json_t *review = rc == GR_OK ? json_pack("{s:s,s:s,s:o}", "apiVersion", "admission.k8s.io/v1",
                                             "kind", "AdmissionReview", "response", resp)
                                 : NULL;
    if (!review) {
        if (rc == GR_OK)
            rc = GR_ENOMEM;
        else
            json_decref(resp);
        return rc;
    }
    gr_buf body = GR_BUF_INIT(0);
    rc = gr_json_dump_buf(review, JSON_COMPACT, &body);
    json_decref(review);
    if (rc != GR_OK) {
        gr_buf_free(&body);
        return rc;
    }
    out->body = gr_buf_steal(&body, &out->body_len);
    return out->body ? GR_OK : GR_ENOMEM;
}

int gr_preflight_admit(const gr_preflight_config *cfg, const gr_preflight_gang_ops *gang,
                       const char *body, size_t len, gr_preflight_admission *out)
{
    memset(out, 0, sizeof *out);
    json_t *doc = NULL;
    gr_err e;
    if (gr_json_parse(body, len, REVIEW_MAX, "admission review", &doc, &e) != GR_OK) {
        if (e.code == GR_ENOMEM)
            return GR_ENOMEM;
        return text_error(out, "failed to unmarshal admission review");
    }
    const json_t *req = json_object_get(doc, "request");
    if (!json_is_object(doc) || (req && !json_is_null(req) && !json_is_object(req))) {
        json_decref(doc);
        return text_error(out, "failed to unmarshal admission review");
    }
    if (!req || json_is_null(req)) { /* nothing to review: allow */
        out->result = GR_PREFLIGHT_ADMIT_SKIPPED;
        json_decref(doc);
        return respond(out, "", NULL, NULL);
    }
    const json_t *uidv = json_object_get(req, "uid");
    if (uidv && !json_is_null(uidv) && !json_is_string(uidv)) {
        json_decref(doc);
        return text_error(out, "failed to unmarshal admission review");
    }
    const char *uid = json_string_value(uidv);
    const json_t *pod = json_object_get(req, "object");
    const char *req_ns = json_string_value(json_object_get(req, "namespace"));
    bool dry_run = json_is_true(json_object_get(req, "dryRun"));
    int rc;
    char denial[GR_ERR_MSG_MAX + 64];
    if (!pod || json_is_null(pod)) {
        gr_err_set(&e, GR_EINVAL, "request.object is missing");
        goto unmarshal_fail;
    }
    if (gr_preflight_pod_check(pod, &e) != GR_OK)
        goto unmarshal_fail;

    const json_t *md = json_object_get(pod, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    if (!name || !*name)
        name = json_string_value(json_object_get(md, "generateName"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    if (!ns || !*ns)
        ns = req_ns;
    out->pod_name = name ? strdup(name) : NULL;
    out->ns = ns ? strdup(ns) : NULL;

    gr_preflight_result res;
    rc = gr_preflight_inject(cfg, gang, pod, ns, &res, &e);
    if (rc == GR_ENOMEM) {
        json_decref(doc);
        return GR_ENOMEM;
    }
    if (rc != GR_OK) {
        snprintf(denial, sizeof denial, "failed to inject init containers: %s", e.msg);
        snprintf(out->msg, sizeof out->msg, "%s", denial);
        out->result = GR_PREFLIGHT_ADMIT_DENIED;
        rc = respond(out, uid, NULL, denial);
        json_decref(doc);
        return rc;
    }
    if (res.outcome != GR_PREFLIGHT_INJECTED) {
        out->result = GR_PREFLIGHT_ADMIT_SKIPPED;
        rc = respond(out, uid, NULL, NULL);
        gr_preflight_result_clear(&res);
        json_decref(doc);
        return rc;
    }
    out->result = GR_PREFLIGHT_ADMIT_INJECTED;
    out->n_injected = res.n_injected;
    rc = respond(out, uid, res.patch, NULL);
    /* gang registration (facts §2.11): only with a patch and a gang, never
     * for dry-run requests (sideEffects: None). */
    if (rc == GR_OK && res.gang.gang_id && gang && gang->admitted && !dry_run)
        gang->admitted(gang->ud, pod, ns ? ns : "", name ? name : "", &res.gang);
    gr_preflight_result_clear(&res);
    json_decref(doc);
    return rc;

unmarshal_fail:
    snprintf(denial, sizeof denial, "failed to unmarshal pod: %s", e.msg);
    snprintf(out->msg, sizeof out->msg, "%s", denial);
    out->result = GR_PREFLIGHT_ADMIT_DENIED;
    rc = respond(out, uid, NULL, denial);
    json_decref(doc);
    return rc;
}
