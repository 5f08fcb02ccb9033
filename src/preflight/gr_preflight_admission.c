/*
 * gr_preflight_admission.c — AdmissionReview (admission.k8s.io/v1) in,
 * response out (facts §2.2). Pure: no I/O besides the gang hook.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_base64.h"
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

/* Build the response review by hand, straight into one buffer: the uid
 * and the denial are escaped in place and the patch text (`patch`, may be
 * NULL) is base64-encoded into it. `denial` NULL means allowed. */
static int respond(gr_preflight_admission *out, const char *uid, const gr_buf *patch,
                   const char *denial)
{
    out->http_status = 200;
    out->content_type = "application/json";
    if (!uid)
        uid = "";
    gr_buf body = GR_BUF_INIT(GR_PF_TEXT_MAX);
    int rc = gr_buf_reserve(&body, 192 + strlen(uid) + (denial ? strlen(denial) + 32 : 0) +
                                       (patch ? (patch->len + 2) / 3 * 4 + 4 : 0));
    if (rc == GR_OK)
        rc = gr_buf_puts(&body, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
                                "\"AdmissionReview\",\"response\":{\"uid\":");
    if (rc == GR_OK)
        rc = gr_pf_json_str(&body, uid, strlen(uid));
    if (rc == GR_OK)
        rc = gr_buf_puts(&body, denial ? ",\"allowed\":false" : ",\"allowed\":true");
    if (rc == GR_OK && denial) {
        rc = gr_buf_puts(&body, ",\"status\":{\"message\":");
        if (rc == GR_OK)
            rc = gr_pf_json_str(&body, denial, strlen(denial));
        if (rc == GR_OK)
            rc = gr_buf_putc(&body, '}');
    }
    if (rc == GR_OK && patch) {
        rc = gr_buf_puts(&body, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
        if (rc == GR_OK)
            rc = gr_base64_encode(patch->data, patch->len, &body);
        if (rc == GR_OK)
            rc = gr_buf_putc(&body, '"');
    }
    if (rc == GR_OK)
        rc = gr_buf_puts(&body, "}}");
    if (rc != GR_OK) {
        gr_buf_free(&body);
        return GR_ENOMEM;
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
    /* duplicate keys rejected, no trailing garbage (as json_loadb with
     * JSON_REJECT_DUPLICATES) */
    if (len > REVIEW_MAX)
        return text_error(out, "failed to unmarshal admission review");
    int prc = gr_pf_json_parse(body, len, &doc);
    if (prc == GR_ENOMEM)
        return GR_ENOMEM;
    if (prc != GR_OK)
        return text_error(out, "failed to unmarshal admission review");
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
    gr_buf patch = GR_BUF_INIT(GR_PF_TEXT_MAX);
    rc = gr_preflight_inject_text(cfg, gang, pod, ns, &patch, &res, &e);
    if (rc == GR_ENOMEM) {
        gr_buf_free(&patch);
        json_decref(doc);
        return GR_ENOMEM;
    }
    if (rc != GR_OK) {
        gr_buf_free(&patch);
        snprintf(denial, sizeof denial, "failed to inject init containers: %s", e.msg);
        snprintf(out->msg, sizeof out->msg, "%s", denial);
        out->result = GR_PREFLIGHT_ADMIT_DENIED;
        rc = respond(out, uid, NULL, denial);
        json_decref(doc);
        return rc;
    }
    if (res.outcome != GR_PREFLIGHT_INJECTED) {
        gr_buf_free(&patch);
        out->result = GR_PREFLIGHT_ADMIT_SKIPPED;
        rc = respond(out, uid, NULL, NULL);
        gr_preflight_result_clear(&res);
        json_decref(doc);
        return rc;
    }
    out->result = GR_PREFLIGHT_ADMIT_INJECTED;
    out->n_injected = res.n_injected;
    rc = respond(out, uid, &patch, NULL);
    gr_buf_free(&patch);
    /* injection side effects (the CA bundle copy of publishTo: deployment)
     * and gang registration (facts §2.11): only with a patch (and a gang),
     * never for dry-run requests (sideEffects: None). */
    if (rc == GR_OK && gang && gang->injected && !dry_run)
        gang->injected(gang->ud, pod, ns ? ns : "", name ? name : "");
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
