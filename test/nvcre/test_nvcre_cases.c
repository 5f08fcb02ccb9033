/*
 * test_nvcre_cases.c — data-driven admission tests of the NVCRE CRDs on the
 * real control plane (label integration).
 *
 * Installs the CRDs in deploy/crds/, then runs every directory under
 * test/nvcre/cases/ (sorted) as one cmocka test. A case directory holds:
 *
 *   ids            the checklist IDs it covers (WF-nn / JOB-nn), whitespace
 *                  separated; required, printed with the result
 *   create.yaml    the object to create (metadata.name/namespace are set by
 *                  the runner: one name per case, one namespace per run)
 *   update.yaml    optional: the full object to PUT over the created one
 *                  (the runner copies name, namespace and resourceVersion)
 *   status.yaml    optional: {"status": {...}} written through the status
 *                  subresource after create/update (status schema checks)
 *   expected.json  {"create": OUTCOME, "update": OUTCOME, "statusUpdate": OUTCOME}
 *
 *   OUTCOME = {"accepted": true|false,
 *              "causes": [{"field": "...", "message": "..."}, ...],
 *              "status": {"reason": "BadRequest", "messageContains": "..."},
 *              "object": [{"pointer": "/spec/...", "equals": <json>}, ...]}
 *
 * A top-level "fieldValidation": "Strict" (what kubectl sends by default)
 * makes the apiserver reject unknown fields instead of dropping them.
 *
 * "causes" (only with accepted false) must equal the apiserver's
 * status.details.causes as a multiset: each expected cause matches one
 * actual cause with the same field and the same message byte for byte
 * ("messageContains" instead of "message" matches a substring; "reason" is
 * compared when given), and no actual cause is left over — except the
 * apiserver's informational "some validation rules were not checked" cause
 * (field "<nil>"), which depends on the apiserver version and is ignored
 * unless a case lists it. "object" checks
 * values (JSON Pointer into the object the apiserver returned; "absent": true
 * instead of "equals" checks the pointer resolves to nothing), e.g. defaults.
 *
 * Requests go to the apiserver directly (libcurl, admin credentials from the
 * cluster kubeconfig) so that the full Status object, with its causes, is
 * compared — kubectl only prints a summary.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "gr_base64.h"
#include "gr_buf.h"
#include "gr_harness.h"
#include "gr_yaml.h"

#define MAX_BODY  ((size_t)8 * 1024 * 1024)
#define MAX_CASES 1024
#define MAX_PEM   ((size_t)64 * 1024)
/* 404 right after a CRD is established: retry 10 s (scaled to load) */
#define CREATE_TRIES gr_test_scaled_tries(10, 200)

typedef struct blob {
    unsigned char *data;
    size_t len;
} blob;

typedef struct api {
    char url[256];
    blob ca, cert, key;
} api;

typedef struct run_ctx {
    gr_harness_cluster cluster;
    api api;
    char ns[64];
    char source_dir[GR_HARNESS_PATH_MAX];
} run_ctx;

typedef struct case_ctx {
    char name[256];
    char dir[GR_HARNESS_PATH_MAX];
} case_ctx;

static run_ctx RUN;

/* ---------------------------------------------------------- helpers */

static void blob_free(blob *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

static int b64_decode(const char *in, blob *out)
{
    gr_buf b = GR_BUF_INIT(MAX_PEM);
    if (!*in || gr_base64_decode(in, strlen(in), &b, NULL) != GR_OK) {
        gr_buf_free(&b);
        return -1;
    }
    out->data = (unsigned char *)gr_buf_steal(&b, &out->len);
    return out->data ? 0 : -1;
}

static const char *jstr(json_t *root, const char *path)
{
    /* path: '.'-separated keys, digits index arrays. */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = root;
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && cur;
         tok = strtok_r(NULL, ".", &save)) {
        cur = json_is_array(cur) ? json_array_get(cur, strtoul(tok, NULL, 10))
                                 : json_object_get(cur, tok);
    }
    return json_string_value(cur);
}

/* Admin credentials from the cluster's kubeconfig (first cluster / user). */
static int api_open(const gr_harness_cluster *c, api *a)
{
    json_t *docs = NULL;
    gr_err err;
    if (gr_yaml_load_file(c->kubeconfig, 0, &docs, &err) != GR_OK) {
        fprintf(stderr, "cannot read %s: %s\n", c->kubeconfig, err.msg);
        return -1;
    }
    json_t *kc = json_array_get(docs, 0);
    const char *server = jstr(kc, "clusters.0.cluster.server");
    const char *ca = jstr(kc, "clusters.0.cluster.certificate-authority-data");
    const char *cert = jstr(kc, "users.0.user.client-certificate-data");
    const char *key = jstr(kc, "users.0.user.client-key-data");
    int rc = -1;
    if (!server || !ca || !cert || !key) {
        fprintf(stderr,
                "%s: expected server, certificate-authority-data, "
                "client-certificate-data and client-key-data\n",
                c->kubeconfig);
    } else if (b64_decode(ca, &a->ca) || b64_decode(cert, &a->cert) || b64_decode(key, &a->key)) {
        fprintf(stderr, "%s: bad base64 credentials\n", c->kubeconfig);
    } else {
        snprintf(a->url, sizeof a->url, "%s", server);
        rc = 0;
    }
    json_decref(docs);
    return rc;
}

static void api_close(api *a)
{
    blob_free(&a->ca);
    blob_free(&a->cert);
    blob_free(&a->key);
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    gr_buf *b = ud;
    return gr_buf_append(b, p, size * n) == GR_OK ? size * n : 0;
}

/* One request; *out receives the parsed JSON response (caller decrefs).
 * Returns the HTTP status, or -1 when the request could not be made. */
static long api_call(const api *a, const char *method, const char *path, json_t *body, json_t **out)
{
    *out = NULL;
    CURL *h = curl_easy_init();
    if (!h) {
        return -1;
    }
    char url[1024];
    snprintf(url, sizeof url, "%s%s", a->url, path);
    struct curl_blob ca = {a->ca.data, a->ca.len, CURL_BLOB_NOCOPY};
    struct curl_blob cert = {a->cert.data, a->cert.len, CURL_BLOB_NOCOPY};
    struct curl_blob key = {a->key.data, a->key.len, CURL_BLOB_NOCOPY};
    gr_buf resp = GR_BUF_INIT(MAX_BODY);
    char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
    if (payload) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
    }
    long code = -1;
    CURLcode cc = curl_easy_perform(h);
    if (cc != CURLE_OK) {
        fprintf(stderr, "%s %s: %s\n", method, url, curl_easy_strerror(cc));
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        json_error_t jerr;
        *out = json_loadb(gr_buf_cstr(&resp), resp.len, 0, &jerr);
        if (!*out) {
            fprintf(stderr, "%s %s: HTTP %ld, body is not JSON: %.300s\n", method, url, code,
                    gr_buf_cstr(&resp));
        }
    }
    curl_slist_free_all(hdrs);
    free(payload);
    gr_buf_free(&resp);
    curl_easy_cleanup(h);
    return code;
}

static const char *plural_of(const char *kind)
{
    static const char *const map[][2] = {
        {"Job", "jobs"},
        {"Workflow", "workflows"},
        {"Certification", "certifications"},
        {"WorkloadRun", "workloadruns"},
        {"GoodputMeasurement", "goodputmeasurements"},
        {"BandwidthMeasurement", "bandwidthmeasurements"},
        {"LogProfile", "logprofiles"},
    };
    for (size_t i = 0; kind && i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(map[i][0], kind) == 0) {
            return map[i][1];
        }
    }
    return NULL;
}

static int path_join(char *out, size_t n, const char *a, const char *b)
{
    int w = snprintf(out, n, "%s/%s", a, b);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    gr_buf b = GR_BUF_INIT(1024 * 1024);
    char chunk[4096];
    size_t n;
    int ok = 1;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (gr_buf_append(&b, chunk, n) != GR_OK) {
            ok = 0;
            break;
        }
    }
    fclose(f);
    if (!ok) {
        gr_buf_free(&b);
        return NULL;
    }
    char *s = gr_buf_steal(&b, NULL);
    return s ? s : strdup("");
}

/* The single object of a YAML file (new reference) or NULL (printed). */
static json_t *load_object(const char *path)
{
    json_t *docs = NULL;
    gr_err err;
    if (gr_yaml_load_file(path, 0, &docs, &err) != GR_OK) {
        print_error("%s: %s\n", path, err.msg);
        return NULL;
    }
    if (json_array_size(docs) != 1 || !json_is_object(json_array_get(docs, 0))) {
        print_error("%s: expected exactly one YAML document holding an object\n", path);
        json_decref(docs);
        return NULL;
    }
    json_t *obj = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return obj;
}

static void object_name_for(const char *case_name, char *out, size_t n)
{
    size_t j = 0;
    for (size_t i = 0; case_name[i] && j + 1 < n && j < 63; i++) {
        char ch = case_name[i];
        if (ch >= 'A' && ch <= 'Z') {
            ch = (char)(ch - 'A' + 'a');
        }
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))) {
            ch = '-';
        }
        out[j++] = ch;
    }
    while (j > 0 && out[j - 1] == '-') {
        j--;
    }
    out[j] = '\0';
}

/* Cluster-scoped kinds: no namespace in the URL or metadata; the object name
 * carries the run's namespace as a suffix and the case deletes it after. */
static int cluster_scoped(const char *kind)
{
    return kind && strcmp(kind, "LogProfile") == 0;
}

static int set_meta(json_t *obj, const char *name, const char *ns, const char *rv)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    json_object_set_new(meta, "name", json_string(name));
    if (ns) {
        json_object_set_new(meta, "namespace", json_string(ns));
    }
    if (rv) {
        json_object_set_new(meta, "resourceVersion", json_string(rv));
    }
    return 0;
}

/* ---------------------------------------------------------- checking */

static int cause_matches(json_t *want, json_t *got)
{
    const char *wf = json_string_value(json_object_get(want, "field"));
    const char *gf = json_string_value(json_object_get(got, "field"));
    const char *gm = json_string_value(json_object_get(got, "message"));
    const char *wm = json_string_value(json_object_get(want, "message"));
    const char *wc = json_string_value(json_object_get(want, "messageContains"));
    const char *wr = json_string_value(json_object_get(want, "reason"));
    const char *gr = json_string_value(json_object_get(got, "reason"));
    if (!wf || !gf || strcmp(wf, gf) != 0 || !gm) {
        return 0;
    }
    if (wm && strcmp(wm, gm) != 0) {
        return 0;
    }
    if (wc && !strstr(gm, wc)) {
        return 0;
    }
    if (wr && (!gr || strcmp(wr, gr) != 0)) {
        return 0;
    }
    return wm || wc;
}

static json_t *pointer_get(json_t *root, const char *ptr)
{
    if (!ptr || ptr[0] != '/') {
        return NULL;
    }
    json_t *cur = root;
    const char *p = ptr + 1;
    char tok[512];
    for (;;) {
        size_t j = 0;
        while (*p && *p != '/' && j + 1 < sizeof tok) {
            if (p[0] == '~' && p[1] == '1') {
                tok[j++] = '/';
                p += 2;
            } else if (p[0] == '~' && p[1] == '0') {
                tok[j++] = '~';
                p += 2;
            } else {
                tok[j++] = *p++;
            }
        }
        tok[j] = '\0';
        cur = json_is_array(cur) ? json_array_get(cur, strtoul(tok, NULL, 10))
                                 : json_object_get(cur, tok);
        if (!cur || *p != '/') {
            return cur;
        }
        p++;
    }
}

/* Compare one outcome; returns the number of failures (printed). */
static int check_outcome(const char *cname, const char *step, json_t *want, long code, json_t *resp)
{
    int fails = 0;
    int want_ok = json_is_true(json_object_get(want, "accepted"));
    int got_ok = code >= 200 && code < 300;
    char *dump = resp ? json_dumps(resp, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
    if (want_ok != got_ok) {
        print_error("%s: %s: expected %s, got HTTP %ld: %s\n", cname, step,
                    want_ok ? "accepted" : "rejected", code, dump ? dump : "(no body)");
        free(dump);
        return 1;
    }
    if (!got_ok) {
        json_t *causes = json_object_get(json_object_get(resp, "details"), "causes");
        json_t *wcauses = json_object_get(want, "causes");
        size_t ng = json_array_size(causes), nw = json_array_size(wcauses);
        json_t *wstatus = json_object_get(want, "status");
        if (nw == 0 && !wstatus) {
            print_error("%s: %s: expected.json must list the causes of a rejection\n", cname, step);
            fails++;
        }
        if (wstatus) {
            const char *wr = json_string_value(json_object_get(wstatus, "reason"));
            const char *wc = json_string_value(json_object_get(wstatus, "messageContains"));
            const char *gr = json_string_value(json_object_get(resp, "reason"));
            const char *gm = json_string_value(json_object_get(resp, "message"));
            if (!wr || !wc || !gr || !gm || strcmp(wr, gr) != 0 || !strstr(gm, wc)) {
                print_error("%s: %s: status reason/message do not match %s / %s\n", cname, step,
                            wr ? wr : "(no reason)", wc ? wc : "(no messageContains)");
                fails++;
            }
        }
        unsigned char used[256] = {0};
        if (ng > sizeof used) {
            ng = sizeof used;
        }
        for (size_t i = 0; i < nw; i++) {
            json_t *w = json_array_get(wcauses, i);
            int found = 0;
            for (size_t k = 0; k < ng && !found; k++) {
                if (!used[k] && cause_matches(w, json_array_get(causes, k))) {
                    used[k] = 1;
                    found = 1;
                }
            }
            if (!found) {
                char *ws = json_dumps(w, JSON_COMPACT);
                print_error("%s: %s: expected cause not reported: %s\n", cname, step, ws);
                free(ws);
                fails++;
            }
        }
        for (size_t k = 0; k < ng; k++) {
            json_t *gc = json_array_get(causes, k);
            const char *gm = json_string_value(json_object_get(gc, "message"));
            const char *gf = json_string_value(json_object_get(gc, "field"));
            if (!used[k] && gf && strcmp(gf, "<nil>") == 0 && gm &&
                strstr(gm, "some validation rules were not checked")) {
                continue;
            }
            if (!used[k]) {
                char *gs = json_dumps(json_array_get(causes, k), JSON_COMPACT);
                print_error("%s: %s: unexpected cause: %s\n", cname, step, gs);
                free(gs);
                fails++;
            }
        }
    }
    json_t *checks = json_object_get(want, "object");
    for (size_t i = 0; i < json_array_size(checks); i++) {
        json_t *c = json_array_get(checks, i);
        const char *ptr = json_string_value(json_object_get(c, "pointer"));
        json_t *got = pointer_get(resp, ptr);
        json_t *eq = json_object_get(c, "equals");
        int absent = json_is_true(json_object_get(c, "absent"));
        if ((absent && got) || (!absent && (!eq || !got || !json_equal(eq, got)))) {
            char *gs = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
            char *es = eq ? json_dumps(eq, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
            print_error("%s: %s: %s is %s, expected %s\n", cname, step, ptr ? ptr : "(no pointer)",
                        gs ? gs : "absent", absent ? "absent" : (es ? es : "(no equals)"));
            free(gs);
            free(es);
            fails++;
        }
    }
    if (fails && dump) {
        print_error("%s: %s: response was:\n%s\n", cname, step, dump);
    }
    free(dump);
    return fails;
}

/* ---------------------------------------------------------- one case */

static void run_case(void **state)
{
    const case_ctx *cc = *state;
    char path[GR_HARNESS_PATH_MAX], name[64], url[512];

    assert_int_equal(path_join(path, sizeof path, cc->dir, "ids"), 0);
    char *ids = read_text(path);
    if (!ids || !strstr(ids, "-")) {
        fail_msg("%s: missing or empty ids file (name the WF-nn / JOB-nn it covers)", cc->name);
    }
    ids[strcspn(ids, "\n")] = '\0';
    printf("# %s covers %s\n", cc->name, ids);
    free(ids);

    assert_int_equal(path_join(path, sizeof path, cc->dir, "expected.json"), 0);
    json_error_t jerr;
    json_t *expected = json_load_file(path, 0, &jerr);
    if (!expected) {
        fail_msg("%s: %s:%d: %s", path, jerr.source, jerr.line, jerr.text);
    }
    assert_int_equal(path_join(path, sizeof path, cc->dir, "create.yaml"), 0);
    json_t *obj = load_object(path);
    assert_non_null(obj);
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *plural = plural_of(kind);
    if (!plural) {
        fail_msg("%s: unknown kind %s", cc->name, kind ? kind : "(none)");
    }
    object_name_for(cc->name, name, sizeof name);
    const int cluster = cluster_scoped(kind);
    const char *ns = cluster ? NULL : RUN.ns;
    if (cluster) {
        char scoped[160];
        snprintf(scoped, sizeof scoped, "%.30s-%.32s", name, RUN.ns);
        memcpy(name, scoped, sizeof name - 1);
        name[sizeof name - 1] = '\0';
        snprintf(url, sizeof url, "/apis/nvcre.nvidia.com/v1alpha1/%s", plural);
    } else {
        snprintf(url, sizeof url, "/apis/nvcre.nvidia.com/v1alpha1/namespaces/%s/%s", RUN.ns,
                 plural);
    }
    set_meta(obj, name, ns, NULL);
    const char *fv = json_string_value(json_object_get(expected, "fieldValidation"));
    char query[64] = "";
    if (fv) {
        snprintf(query, sizeof query, "?fieldValidation=%s", fv);
    }
    char post[640];
    snprintf(post, sizeof post, "%s%s", url, query);

    json_t *resp = NULL;
    long code = -1;
    int tries = CREATE_TRIES;
    for (int i = 0; i < tries; i++) {
        json_decref(resp);
        code = api_call(&RUN.api, "POST", post, obj, &resp);
        if (code != 404) {
            break;
        }
        usleep(200 * 1000);
    }
    int fails = check_outcome(cc->name, "create", json_object_get(expected, "create"), code, resp);
    json_decref(resp);
    json_decref(obj);

    assert_int_equal(path_join(path, sizeof path, cc->dir, "update.yaml"), 0);
    if (access(path, F_OK) == 0) {
        json_t *want = json_object_get(expected, "update");
        if (!want) {
            fail_msg("%s: update.yaml without an \"update\" outcome", cc->name);
        }
        json_t *upd = load_object(path);
        assert_non_null(upd);
        char item[640];
        snprintf(item, sizeof item, "%s/%s", url, name);
        json_t *cur = NULL;
        code = api_call(&RUN.api, "GET", item, NULL, &cur);
        const char *rv = jstr(cur, "metadata.resourceVersion");
        if (code != 200 || !rv) {
            fail_msg("%s: cannot read back the created object (HTTP %ld)", cc->name, code);
        }
        set_meta(upd, name, ns, rv);
        json_decref(cur);
        char put[720];
        snprintf(put, sizeof put, "%s%s", item, query);
        code = api_call(&RUN.api, "PUT", put, upd, &resp);
        fails += check_outcome(cc->name, "update", want, code, resp);
        json_decref(resp);
        json_decref(upd);
    } else if (json_object_get(expected, "update")) {
        fail_msg("%s: expected.json has an \"update\" outcome but there is no update.yaml",
                 cc->name);
    }
    assert_int_equal(path_join(path, sizeof path, cc->dir, "status.yaml"), 0);
    if (access(path, F_OK) == 0) {
        json_t *want = json_object_get(expected, "statusUpdate");
        if (!want) {
            fail_msg("%s: status.yaml without a \"statusUpdate\" outcome", cc->name);
        }
        json_t *st = load_object(path);
        assert_non_null(st);
        char item[640];
        snprintf(item, sizeof item, "%s/%s", url, name);
        json_t *cur = NULL;
        code = api_call(&RUN.api, "GET", item, NULL, &cur);
        if (code != 200 || !json_is_object(cur)) {
            fail_msg("%s: cannot read back the object (HTTP %ld)", cc->name, code);
        }
        json_object_set(cur, "status", json_object_get(st, "status"));
        char put[720];
        snprintf(put, sizeof put, "%s/status%s", item, query);
        code = api_call(&RUN.api, "PUT", put, cur, &resp);
        fails += check_outcome(cc->name, "statusUpdate", want, code, resp);
        json_decref(resp);
        json_decref(cur);
        json_decref(st);
    }
    json_decref(expected);
    if (cluster) { /* the namespace's deletion does not remove it */
        char item[640];
        snprintf(item, sizeof item, "%s/%s", url, name);
        json_t *del = NULL;
        api_call(&RUN.api, "DELETE", item, NULL, &del);
        json_decref(del);
    }
    if (fails) {
        fail_msg("%s: %d mismatch(es); see above", cc->name, fails);
    }
}

/* ---------------------------------------------------------- main */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(((const case_ctx *)a)->name, ((const case_ctx *)b)->name);
}

static int install_crds(const gr_harness_cluster *c)
{
    static const char *const crds[] = {
        "deploy/crds/nvcre.nvidia.com_jobs.yaml",
        "deploy/crds/nvcre.nvidia.com_workflows.yaml",
        "deploy/crds/nvcre.nvidia.com_certifications.yaml",
        "deploy/crds/nvcre.nvidia.com_workloadruns.yaml",
        "deploy/crds/nvcre.nvidia.com_goodputmeasurements.yaml",
        "deploy/crds/nvcre.nvidia.com_bandwidthmeasurements.yaml",
        "deploy/crds/nvcre.nvidia.com_logprofiles.yaml",
    };
    for (size_t i = 0; i < sizeof crds / sizeof crds[0]; i++) {
        if (gr_harness_apply_file(c, NULL, crds[i]) != 0) {
            fprintf(stderr, "the apiserver did not accept %s\n", crds[i]);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int skip = gr_harness_skip_if_disabled();
    if (skip) {
        return skip;
    }
    const char *filter = argc > 1 ? argv[1] : NULL; /* optional substring */
    if (gr_harness_source_path("test/nvcre/cases", RUN.source_dir, sizeof RUN.source_dir) != 0) {
        return 1;
    }
    if (gr_harness_open(&RUN.cluster) != 0) {
        return 1;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || api_open(&RUN.cluster, &RUN.api)) {
        return 1;
    }
    if (install_crds(&RUN.cluster) != 0) {
        return 1;
    }
    if (gr_harness_ns_create(&RUN.cluster, "nvcre-crd", RUN.ns, sizeof RUN.ns) != 0) {
        return 1;
    }

    DIR *d = opendir(RUN.source_dir);
    if (!d) {
        perror(RUN.source_dir);
        return 1;
    }
    case_ctx *cases = calloc(MAX_CASES, sizeof *cases);
    size_t n = 0;
    struct dirent *e;
    while (cases && (e = readdir(d)) != NULL && n < MAX_CASES) {
        if (e->d_name[0] == '.' || (filter && !strstr(e->d_name, filter))) {
            continue;
        }
        snprintf(cases[n].name, sizeof cases[n].name, "%s", e->d_name);
        if (path_join(cases[n].dir, sizeof cases[n].dir, RUN.source_dir, e->d_name) == 0) {
            n++;
        }
    }
    closedir(d);
    if (!cases || n == 0) {
        fprintf(stderr, "no cases under %s\n", RUN.source_dir);
        free(cases);
        return 1;
    }
    qsort(cases, n, sizeof *cases, cmp_names);
    struct CMUnitTest *tests = calloc(n, sizeof *tests);
    if (!tests) {
        free(cases);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        tests[i].name = cases[i].name;
        tests[i].test_func = run_case;
        tests[i].initial_state = &cases[i];
    }
    int rc = _cmocka_run_group_tests("nvcre_crd_cases", tests, n, NULL, NULL);
    gr_harness_ns_delete(&RUN.cluster, RUN.ns);
    free(tests);
    free(cases);
    api_close(&RUN.api);
    curl_global_cleanup();
    return rc;
}
