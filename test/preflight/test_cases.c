/*
 * test_cases.c — the generic table-driven runner for preflight fixtures.
 *
 * Every directory test/preflight/cases/<name>/ is one rule of the contract
 * (the PF-nn IDs are named in the comment at the top of its config.yaml):
 *
 *   config.yaml                 the webhook config (required)
 *   pod.yaml                    the Pod being created (not needed for
 *                               expected-config-error.txt cases)
 *   gang.yaml                   optional gang context the resolver returns:
 *                                 {gangID, configMapName?} | {resolver: static}
 *                                 | {error: "..."}
 *   expected.yaml               the Pod after applying the returned patch
 *                               (equal to pod.yaml ⇒ no patch must be sent)
 *   expected-patch.json         optional: the exact JSON Patch
 *   expected-denial.txt         instead of expected.yaml: allowed=false and
 *                               status.message equal to this text
 *   expected-config-error.txt   the config must be rejected with this text
 *
 * Each Pod goes through the whole AdmissionReview path (gr_preflight_admit):
 * the review is built with a fixed uid and the response must echo it.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "gr_json.h"
#include "gr_preflight.h"
#include "gr_yaml.h"

#define UID "7f3c1a52-0d5e-4f7c-9a3e-1b2c3d4e5f60"

static char *read_text(const char *dir, const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0, n;
    do {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, cap);
            assert_non_null(nb);
            buf = nb;
        }
        n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
    } while (n > 0);
    fclose(f);
    buf[len] = 0;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        buf[--len] = 0;
    return buf;
}

static json_t *load_yaml(const char *dir, const char *file)
{
    char *text = read_text(dir, file);
    if (!text)
        return NULL;
    json_t *doc = NULL;
    gr_err err;
    if (gr_yaml_load_one(text, strlen(text), file, &doc, &err) != GR_OK)
        fail_msg("%s/%s: %s", dir, file, err.msg);
    free(text);
    return doc;
}

static json_t *b64_patch(const char *s)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    assert_non_null(out);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n && s[i] != '='; i++) {
        const char *p = strchr(tbl, s[i]);
        assert_non_null(p);
        acc = acc << 6 | (unsigned)(p - tbl);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    json_t *patch = NULL;
    gr_err err;
    if (gr_json_parse(out, o, 0, "patch", &patch, &err) != GR_OK)
        fail_msg("patch is not JSON: %s", err.msg);
    free(out);
    return patch;
}

/* Fixture gang resolver driven by gang.yaml. */
static int fixture_resolve(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                           gr_err *err)
{
    (void)pod;
    (void)ns;
    const json_t *g = ud;
    const char *e = json_string_value(json_object_get(g, "error"));
    if (e)
        return gr_err_set(err, GR_EIO, "%s", e);
    const char *id = json_string_value(json_object_get(g, "gangID"));
    if (!id)
        return GR_ENOTFOUND;
    const char *cm = json_string_value(json_object_get(g, "configMapName"));
    ctx->gang_id = strdup(id);
    ctx->configmap_name = cm ? strdup(cm) : gr_preflight_gang_configmap_name(id);
    return GR_OK;
}

static void dump_diff(const char *what, const json_t *got, const json_t *want)
{
    char *g = json_dumps(got, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    char *w = json_dumps(want, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    print_error("%s mismatch\n--- got:\n%s\n--- want:\n%s\n", what, g ? g : "?", w ? w : "?");
    free(g);
    free(w);
}

static void run_case(void **state)
{
    const char *dir = *state;
    char *cfg_text = read_text(dir, "config.yaml");
    assert_non_null(cfg_text);
    gr_preflight_config *cfg = NULL;
    gr_err err;
    int rc = gr_preflight_config_parse(cfg_text, strlen(cfg_text), "config.yaml", NULL, NULL, &cfg,
                                       &err);
    free(cfg_text);
    char *want_cfg_err = read_text(dir, "expected-config-error.txt");
    if (want_cfg_err) {
        assert_int_not_equal(rc, GR_OK);
        assert_string_equal(err.msg, want_cfg_err);
        free(want_cfg_err);
        return;
    }
    if (rc != GR_OK)
        fail_msg("config.yaml: %s", err.msg);

    json_t *pod = load_yaml(dir, "pod.yaml");
    assert_non_null(pod);
    json_t *gang_doc = load_yaml(dir, "gang.yaml");
    gr_preflight_gang_ops ops = {.resolve = fixture_resolve, .ud = gang_doc};
    const char *resolver = json_string_value(json_object_get(gang_doc, "resolver"));
    if (resolver && strcmp(resolver, "static") == 0)
        ops = gr_preflight_gang_static_ops(cfg);
    const char *req_ns = json_string_value(json_object_get(gang_doc, "requestNamespace"));

    json_t *review = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:O}}", "apiVersion", "admission.k8s.io/v1",
                               "kind", "AdmissionReview", "request", "uid", UID, "operation",
                               "CREATE", "namespace", req_ns ? req_ns : "default", "object", pod);
    assert_non_null(review);
    char *body = json_dumps(review, JSON_COMPACT);
    assert_non_null(body);
    gr_preflight_admission adm;
    assert_int_equal(gr_preflight_admit(cfg, gang_doc ? &ops : NULL, body, strlen(body), &adm),
                     GR_OK);
    free(body);
    json_decref(review);
    assert_int_equal(adm.http_status, 200);
    json_t *resp_doc = NULL;
    assert_int_equal(gr_json_parse(adm.body, adm.body_len, 0, "response", &resp_doc, &err), GR_OK);
    json_t *resp = json_object_get(resp_doc, "response");
    assert_string_equal(json_string_value(json_object_get(resp_doc, "apiVersion")),
                        "admission.k8s.io/v1");
    assert_string_equal(json_string_value(json_object_get(resp_doc, "kind")), "AdmissionReview");
    assert_string_equal(json_string_value(json_object_get(resp, "uid")), UID); /* uid echoed */

    char *want_denial = read_text(dir, "expected-denial.txt");
    if (want_denial) {
        assert_true(json_is_false(json_object_get(resp, "allowed")));
        assert_null(json_object_get(resp, "patch"));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
            want_denial);
        assert_int_equal(adm.result, GR_PREFLIGHT_ADMIT_DENIED);
        free(want_denial);
    } else {
        json_t *want = load_yaml(dir, "expected.yaml");
        if (!want)
            fail_msg("%s: needs expected.yaml, expected-denial.txt or expected-config-error.txt",
                     dir);
        assert_true(json_is_true(json_object_get(resp, "allowed")));
        const char *p64 = json_string_value(json_object_get(resp, "patch"));
        json_t *got = NULL;
        if (gr_json_equal(want, pod)) {
            /* unchanged: no patch at all */
            assert_null(p64);
            assert_int_equal(adm.result, GR_PREFLIGHT_ADMIT_SKIPPED);
        } else {
            assert_non_null(p64);
            assert_string_equal(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
            assert_int_equal(adm.result, GR_PREFLIGHT_ADMIT_INJECTED);
            json_t *patch = b64_patch(p64);
            if (gr_json_patch_apply_copy(pod, patch, &got, &err) != GR_OK)
                fail_msg("patch does not apply: %s", err.msg);
            char *want_patch_text = read_text(dir, "expected-patch.json");
            if (want_patch_text) {
                json_t *want_patch = NULL;
                assert_int_equal(gr_json_parse(want_patch_text, strlen(want_patch_text), 0,
                                               "expected-patch.json", &want_patch, &err),
                                 GR_OK);
                if (!gr_json_equal(patch, want_patch)) {
                    dump_diff("patch", patch, want_patch);
                    fail();
                }
                json_decref(want_patch);
                free(want_patch_text);
            }
            json_decref(patch);
            if (!gr_json_equal(got, want)) {
                dump_diff("pod", got, want);
                fail();
            }
            json_decref(got);
        }
        json_decref(want);
    }
    json_decref(resp_doc);
    gr_preflight_admission_clear(&adm);
    json_decref(gang_doc);
    json_decref(pod);
    gr_preflight_config_free(cfg);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : "cases";
    DIR *d = opendir(root);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", root);
        return 1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char **nn = realloc(names, (n + 1) * sizeof *nn);
        if (!nn)
            return 1;
        names = nn;
        if (asprintf(&names[n], "%s/%s", root, e->d_name) < 0)
            return 1;
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    const char *only = getenv("PREFLIGHT_CASE");
    struct CMUnitTest *tests = calloc(n ? n : 1, sizeof *tests);
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        const char *base = strrchr(names[i], '/') + 1;
        if (only && strcmp(only, base) != 0)
            continue;
        tests[nt].name = base;
        tests[nt].test_func = run_case;
        tests[nt].initial_state = names[i];
        nt++;
    }
    if (nt == 0) {
        fprintf(stderr, "no cases under %s\n", root);
        return 1;
    }
    int rc = _cmocka_run_group_tests("preflight_cases", tests, nt, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(tests);
    return rc;
}
