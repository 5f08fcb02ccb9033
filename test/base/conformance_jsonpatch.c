/*
 * conformance_jsonpatch.c — runs the third-party JSON Patch (RFC 6902) suite
 * (json-patch-tests: tests.json and spec_tests.json) against gr_json_patch_*.
 *
 * Data: $GR_SOURCE_DIR/../shared/conformance/json-patch, falling back to the
 * npm copy in $GR_SOURCE_DIR/test/node/node_modules/json-patch-test-suite; a
 * directory given as argv[1] wins. Rules (see that README): records with
 * "disabled": true are skipped, and so is spec_tests.json A.13 (disabled
 * upstream: duplicate "op" members that jansson cannot see). "expected" must
 * match structurally; "error" must fail and leave the document unchanged;
 * neither means the patch must apply.
 *
 * Prints "json-patch conformance: N passed, F failed, M disabled" and exits 1
 * when anything failed (or nothing ran), 77 when the data is missing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gr_json.h"

typedef struct counts {
    int passed, failed, disabled;
} counts;

static char *describe(const json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    return s ? s : strdup("?");
}

static void report_failure(const char *file, size_t i, const char *comment, const char *why,
                           const json_t *got)
{
    char *g = got ? describe(got) : NULL;
    printf("FAIL %s[%zu] %s: %s%s%s\n", file, i, comment ? comment : "(no comment)", why,
           g ? " got " : "", g ? g : "");
    free(g);
}

static void run_case(const char *file, size_t i, const json_t *rec, counts *c)
{
    const char *comment = json_string_value(json_object_get(rec, "comment"));
    if (json_is_true(json_object_get(rec, "disabled"))) {
        c->disabled++;
        return;
    }
    /* README: A.13 (two "op" members) is disabled upstream; a parser that
     * keeps one duplicate cannot test it. */
    if (strcmp(file, "spec_tests.json") == 0 && comment && strncmp(comment, "A.13", 4) == 0) {
        c->disabled++;
        return;
    }
    const json_t *doc = json_object_get(rec, "doc");
    const json_t *patch = json_object_get(rec, "patch");
    if (!doc && !patch)
        return; /* comment-only record */
    if (!doc || !patch) {
        report_failure(file, i, comment, "record lacks doc or patch", NULL);
        c->failed++;
        return;
    }
    const json_t *expected = json_object_get(rec, "expected");
    const json_t *error = json_object_get(rec, "error");

    json_t *work = json_deep_copy(doc);
    json_t *orig = work;
    gr_err err;
    int rc = gr_json_patch_apply(&work, patch, &err);
    bool ok;
    if (error) {
        ok = rc != GR_OK && work == orig && gr_json_equal(work, doc);
        if (!ok)
            report_failure(file, i, comment,
                           rc == GR_OK ? "patch applied but must fail"
                                       : "failed patch changed the document",
                           work);
    } else if (expected) {
        ok = rc == GR_OK && gr_json_equal(work, expected);
        if (rc != GR_OK)
            report_failure(file, i, comment, err.msg, NULL);
        else if (!ok)
            report_failure(file, i, comment, "wrong result", work);
    } else {
        ok = rc == GR_OK;
        if (!ok)
            report_failure(file, i, comment, err.msg, NULL);
    }
    if (ok && rc != GR_OK && getenv("GR_VERBOSE"))
        printf("ok   %s[%zu] rejected: %s\n", file, i, err.msg);
    json_decref(work);
    if (ok)
        c->passed++;
    else
        c->failed++;
}

static int run_file(const char *dir, const char *file, counts *c)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    json_error_t je;
    /* no JSON_REJECT_DUPLICATES: A.13 repeats "op" (and is skipped) */
    json_t *cases = json_load_file(path, JSON_DECODE_ANY, &je);
    if (!json_is_array(cases)) {
        printf("FAIL %s: cannot load: %s (line %d)\n", path, je.text, je.line);
        json_decref(cases);
        c->failed++;
        return -1;
    }
    size_t i;
    json_t *rec;
    json_array_foreach(cases, i, rec)
    {
        run_case(file, i, rec, c);
    }
    json_decref(cases);
    return 0;
}

static bool has_suite(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/tests.json", dir);
    return access(p, R_OK) == 0;
}

int main(int argc, char **argv)
{
    char dir[4096] = "";
    const char *src = getenv("GR_SOURCE_DIR");
    if (argc > 1) {
        snprintf(dir, sizeof dir, "%s", argv[1]);
    } else if (src) {
        snprintf(dir, sizeof dir, "%s/../shared/conformance/json-patch", src);
        if (!has_suite(dir))
            snprintf(dir, sizeof dir, "%s/test/node/node_modules/json-patch-test-suite", src);
    }
    if (!dir[0] || !has_suite(dir)) {
        printf("json-patch conformance: SKIPPED, suite not found (set GR_SOURCE_DIR to the repo "
               "root with ../shared/conformance/json-patch beside it, or run scripts/install-deps "
               "for test/node/node_modules/json-patch-test-suite)\n");
        return 77;
    }
    printf("json-patch conformance: suite in %s\n", dir);
    counts c = {0, 0, 0};
    run_file(dir, "tests.json", &c);
    run_file(dir, "spec_tests.json", &c);
    printf("json-patch conformance: %d passed, %d failed, %d disabled\n", c.passed, c.failed,
           c.disabled);
    return (c.failed == 0 && c.passed > 0) ? 0 : 1;
}
