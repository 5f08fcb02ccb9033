/*
 * test_nvcre_crds.c — unit tests of the CRDs in deploy/crds/ without a cluster:
 * names, scope, versions, status subresources and printer columns; the
 * JobSpec under Workflow .spec.jobTemplate.spec equals the Job's spec
 * (WF-04); shared schemas (GangSchedulerSpec, WorkloadMetadata) are the same
 * everywhere; every x-kubernetes-validations message is a constant of
 * gr_nvcre_types.h and every admission constant is used; and the C label
 * checks accept exactly what the CRD's regexes accept (PCRE2 as the oracle).
 * The admission behaviour itself is tested on a real apiserver by
 * nvcre_crd_cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "gr_nvcre_types.h"
#include "gr_yaml.h"

typedef struct crd_file {
    const char *file;
    const char *kind;
    const char *plural;
    const char *columns; /* printer column names, space separated */
} crd_file;

static const crd_file CRDS[] = {
    {"nvcre.nvidia.com_jobs.yaml", "Job", "jobs", "Status Reason Workload Restarts Age"},
    {"nvcre.nvidia.com_workflows.yaml", "Workflow", "workflows",
     "Status Iteration Iterations Platform GPU Nodes Reason Age"},
    {"nvcre.nvidia.com_certifications.yaml", "Certification", "certifications",
     "Status Reason Age"},
    {"nvcre.nvidia.com_workloadruns.yaml", "WorkloadRun", "workloadruns",
     "Status Nodes Platform GPU Workflow Reason Age"},
};
#define NCRDS (sizeof CRDS / sizeof CRDS[0])

static json_t *LOADED[NCRDS];

static json_t *load_crd(const char *file)
{
    const char *src = getenv("GR_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/deploy/crds/%s", src ? src : GR_NVCRE_SOURCE_DIR, file);
    json_t *docs = NULL;
    gr_err err;
    if (gr_yaml_load_file(path, 0, &docs, &err) != GR_OK) {
        fail_msg("%s: %s", path, err.msg);
    }
    if (json_array_size(docs) != 1) {
        fail_msg("%s: expected one document", path);
    }
    json_t *crd = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return crd;
}

static json_t *at(json_t *root, const char *path)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = root;
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && cur;
         tok = strtok_r(NULL, ".", &save)) {
        cur = json_is_array(cur) ? json_array_get(cur, strtoul(tok, NULL, 10))
                                 : json_object_get(cur, tok);
    }
    return cur;
}

static const char *str_at(json_t *root, const char *path)
{
    return json_string_value(at(root, path));
}

static json_t *schema(size_t i)
{
    return at(LOADED[i], "spec.versions.0.schema.openAPIV3Schema");
}

static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCRDS; i++) {
        LOADED[i] = load_crd(CRDS[i].file);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCRDS; i++) {
        json_decref(LOADED[i]);
    }
    return 0;
}

static void test_names_and_versions(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCRDS; i++) {
        json_t *c = LOADED[i];
        char name[128], singular[64];
        snprintf(name, sizeof name, "%s.%s", CRDS[i].plural, GR_NVCRE_GROUP);
        snprintf(singular, sizeof singular, "%s", CRDS[i].kind);
        for (char *p = singular; *p; p++) {
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        }
        assert_string_equal(str_at(c, "apiVersion"), "apiextensions.k8s.io/v1");
        assert_string_equal(str_at(c, "kind"), "CustomResourceDefinition");
        assert_string_equal(str_at(c, "metadata.name"), name);
        assert_string_equal(str_at(c, "spec.group"), GR_NVCRE_GROUP);
        assert_string_equal(str_at(c, "spec.scope"), "Namespaced");
        assert_string_equal(str_at(c, "spec.names.kind"), CRDS[i].kind);
        assert_string_equal(str_at(c, "spec.names.plural"), CRDS[i].plural);
        assert_string_equal(str_at(c, "spec.names.singular"), singular);
        /* Upstream documents no short names for these kinds. */
        assert_null(at(c, "spec.names.shortNames"));
        assert_string_equal(str_at(c, "spec.names.categories.0"), GR_NVCRE_CATEGORY);
        assert_int_equal(json_array_size(at(c, "spec.versions")), 1);
        assert_string_equal(str_at(c, "spec.versions.0.name"), GR_NVCRE_VERSION);
        assert_true(json_is_true(at(c, "spec.versions.0.served")));
        assert_true(json_is_true(at(c, "spec.versions.0.storage")));
        assert_true(json_is_object(at(c, "spec.versions.0.subresources.status")));
        json_t *s = schema(i);
        assert_string_equal(str_at(s, "required.0"), "spec");
        assert_string_equal(
            str_at(s, "properties.status.properties.conditions.x-kubernetes-list-type"), "map");
    }
}

static void test_printer_columns(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCRDS; i++) {
        json_t *cols = at(LOADED[i], "spec.versions.0.additionalPrinterColumns");
        char names[256] = "";
        for (size_t k = 0; k < json_array_size(cols); k++) {
            json_t *col = json_array_get(cols, k);
            const char *n = str_at(col, "name");
            assert_non_null(n);
            assert_non_null(str_at(col, "jsonPath"));
            assert_non_null(str_at(col, "type"));
            strncat(names, k ? " " : "", sizeof names - strlen(names) - 1);
            strncat(names, n, sizeof names - strlen(names) - 1);
            if (strcmp(n, "Status") == 0) {
                /* The first True condition: the exclusive state (see the header). */
                assert_string_equal(str_at(col, "jsonPath"),
                                    ".status.conditions[?(@.status==\"True\")].type");
                assert_null(at(col, "priority"));
            }
            if (strcmp(n, "Age") == 0) {
                assert_string_equal(str_at(col, "type"), "date");
                assert_string_equal(str_at(col, "jsonPath"), ".metadata.creationTimestamp");
            }
        }
        assert_string_equal(names, CRDS[i].columns);
    }
    /* Workflows show iteration and platform/GPU by default. */
    json_t *wf = at(LOADED[1], "spec.versions.0.additionalPrinterColumns");
    assert_string_equal(str_at(wf, "1.jsonPath"), ".status.orchestration.currentIteration");
    assert_string_equal(str_at(wf, "3.jsonPath"), ".status.orchestration.detectedPlatform");
    assert_string_equal(str_at(wf, "4.jsonPath"), ".status.orchestration.detectedGPUArchitecture");
    assert_null(at(wf, "3.priority"));
    assert_null(at(wf, "4.priority"));
}

static void test_jobspec_shared(void **state)
{
    (void)state;
    /* WF-04: spec.jobTemplate.spec is a plain JobSpec. */
    json_t *job = at(schema(0), "properties.spec");
    json_t *tpl = at(schema(1), "properties.spec.properties.jobTemplate.properties.spec");
    assert_non_null(job);
    assert_non_null(tpl);
    assert_true(json_equal(job, tpl));
    assert_string_equal(str_at(job, "required.0"), GR_NVCRE_F_WORKLOAD);
    assert_int_equal(json_integer_value(at(job, "properties.workload.minProperties")), 1);
    assert_int_equal(json_integer_value(at(job, "properties.workload.maxProperties")), 1);
    assert_int_equal(json_integer_value(at(job, "properties.workloadMetadata.properties.labels."
                                                "maxProperties")),
                     GR_NVCRE_MAX_WORKLOAD_LABELS);
    assert_int_equal(json_integer_value(at(job, "properties.schedulingStallGraceSeconds.default")),
                     GR_NVCRE_DEFAULT_SCHEDULING_STALL_GRACE_SECONDS);
}

static json_t *without(json_t *o, const char *k1, const char *k2)
{
    json_t *c = json_deep_copy(o);
    json_object_del(c, k1);
    if (k2) {
        json_object_del(c, k2);
    }
    return c;
}

static void test_shared_schemas(void **state)
{
    (void)state;
    /* GangSchedulerSpec: same everywhere; only the Workflow's is immutable. */
    json_t *wf = at(schema(1), "properties.spec.properties.gangScheduler");
    json_t *cert = at(schema(2), "properties.spec.properties.gangScheduler");
    json_t *run = at(schema(3), "properties.spec.properties.gangScheduler");
    json_t *a = without(wf, "description", "x-kubernetes-validations");
    json_t *b = without(cert, "description", NULL);
    json_t *c = without(run, "description", NULL);
    assert_true(json_equal(a, b));
    assert_true(json_equal(a, c));
    json_decref(a);
    json_decref(b);
    json_decref(c);
    assert_string_equal(str_at(wf, "x-kubernetes-validations.0.message"),
                        GR_NVCRE_MSG_GANG_SCHEDULER_IMMUTABLE);
    assert_string_equal(str_at(wf, "properties.queue.default"), GR_NVCRE_DEFAULT_QUEUE);
    assert_string_equal(str_at(wf, "properties.queueLabelKey.default"),
                        GR_NVCRE_DEFAULT_QUEUE_LABEL_KEY);
    assert_int_equal(json_integer_value(at(wf, "properties.queueLabelKey.maxLength")),
                     GR_NVCRE_MAX_QUEUE_LABEL_KEY_LEN);

    /* WorkloadMetadata.labels: the Job's rules everywhere it appears. */
    json_t *labels = at(schema(0), "properties.spec.properties.workloadMetadata.properties.labels");
    const char *paths[][2] = {
        {"2", "properties.spec.properties.workloadMetadata.properties.labels"},
        {"2", "properties.spec.properties.categories.items.properties.options.properties."
              "workloadMetadata.properties.labels"},
        {"3", "properties.spec.properties.workloadMetadata.properties.labels"},
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        json_t *l = at(schema(strtoul(paths[i][0], NULL, 10)), paths[i][1]);
        assert_non_null(l);
        assert_true(json_equal(l, labels));
    }
}

/* Collect every x-kubernetes-validations message. */
static void collect_messages(json_t *node, json_t *out)
{
    if (json_is_object(node)) {
        const char *k;
        json_t *v;
        json_object_foreach(node, k, v)
        {
            if (strcmp(k, "x-kubernetes-validations") == 0) {
                size_t i;
                json_t *rule;
                json_array_foreach(v, i, rule)
                {
                    assert_non_null(str_at(rule, "rule"));
                    assert_non_null(str_at(rule, "message"));
                    json_array_append(out, json_object_get(rule, "message"));
                }
            } else {
                collect_messages(v, out);
            }
        }
    } else if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v)
        {
            collect_messages(v, out);
        }
    }
}

static const char *const ADMISSION_MSGS[] = {
    GR_NVCRE_MSG_WORKLOAD_IMMUTABLE,
    GR_NVCRE_MSG_WORKLOAD_METADATA_IMMUTABLE,
    GR_NVCRE_MSG_NODE_HEALTH_MONITOR_IMMUTABLE,
    GR_NVCRE_MSG_GOODPUT_MEASUREMENT_IMMUTABLE,
    GR_NVCRE_MSG_BANDWIDTH_MEASUREMENT_IMMUTABLE,
    GR_NVCRE_MSG_GANG_SCHEDULER_IMMUTABLE,
    GR_NVCRE_MSG_WORKLOAD_METADATA_PRESENCE,
    GR_NVCRE_MSG_NODE_HEALTH_MONITOR_PRESENCE,
    GR_NVCRE_MSG_GOODPUT_MEASUREMENT_PRESENCE,
    GR_NVCRE_MSG_BANDWIDTH_MEASUREMENT_PRESENCE,
    GR_NVCRE_MSG_GANG_SCHEDULER_PRESENCE,
    GR_NVCRE_MSG_SPEC_IMMUTABLE,
    GR_NVCRE_MSG_LABELS_RESERVED,
    GR_NVCRE_MSG_LABEL_KEY_INVALID,
    GR_NVCRE_MSG_LABEL_KEY_PREFIX_TOO_LONG,
    GR_NVCRE_MSG_QUEUE_LABEL_KEY_PREFIX_TOO_LONG,
    GR_NVCRE_MSG_QUEUE_LABEL_KEY_RESERVED,
    GR_NVCRE_MSG_TORCH_SCRIPT_MODULE_EXCLUSIVE,
    GR_NVCRE_MSG_TORCH_SCRIPT_OR_MODULE,
    GR_NVCRE_MSG_CONFIG_EXCLUSIVE,
    GR_NVCRE_MSG_NIC_RESOURCE_NAME_RESERVED,
    GR_NVCRE_MSG_RESOURCES_CPU_REQUEST_LE_LIMIT,
    GR_NVCRE_MSG_RESOURCES_MEMORY_REQUEST_LE_LIMIT,
    GR_NVCRE_MSG_CPU_NON_NEGATIVE,
    GR_NVCRE_MSG_MEMORY_NON_NEGATIVE,
};
#define NMSGS (sizeof ADMISSION_MSGS / sizeof ADMISSION_MSGS[0])

static void test_validation_messages(void **state)
{
    (void)state;
    int used[NMSGS] = {0};
    for (size_t i = 0; i < NCRDS; i++) {
        json_t *msgs = json_array();
        collect_messages(schema(i), msgs);
        size_t k;
        json_t *m;
        json_array_foreach(msgs, k, m)
        {
            int found = 0;
            for (size_t j = 0; j < NMSGS; j++) {
                if (strcmp(json_string_value(m), ADMISSION_MSGS[j]) == 0) {
                    used[j] = found = 1;
                }
            }
            if (!found) {
                fail_msg("%s: message not in gr_nvcre_types.h: %s", CRDS[i].file,
                         json_string_value(m));
            }
        }
        json_decref(msgs);
    }
    for (size_t j = 0; j < NMSGS; j++) {
        if (!used[j]) {
            fail_msg("constant not used by any CRD: %s", ADMISSION_MSGS[j]);
        }
    }
    /* Where the rules sit (JOB-32..44, WF-17..19): presence on the parent
     * struct, value on the field. */
    json_t *js = at(schema(0), "properties.spec");
    assert_string_equal(str_at(js, "x-kubernetes-validations.0.rule"),
                        "has(self.workloadMetadata) == has(oldSelf.workloadMetadata)");
    assert_string_equal(str_at(js, "x-kubernetes-validations.0.message"),
                        GR_NVCRE_MSG_WORKLOAD_METADATA_PRESENCE);
    assert_string_equal(str_at(js, "properties.workload.x-kubernetes-validations.0.rule"),
                        "self == oldSelf");
    json_t *ws = at(schema(1), "properties.spec");
    assert_string_equal(str_at(ws, "x-kubernetes-validations.0.message"),
                        GR_NVCRE_MSG_GANG_SCHEDULER_PRESENCE);
    assert_null(at(ws, "properties.overrides.x-kubernetes-validations")); /* WF-11 */
    for (size_t i = 2; i < 4; i++) {
        assert_string_equal(str_at(schema(i), "properties.spec.x-kubernetes-validations.0.rule"),
                            "self == oldSelf");
        assert_string_equal(str_at(schema(i), "properties.spec.x-kubernetes-validations.0.message"),
                            GR_NVCRE_MSG_SPEC_IMMUTABLE);
    }
}

/* ------------------------------------------- C checks vs CRD regexes */

static pcre2_code *compile(const char *re)
{
    int ec;
    PCRE2_SIZE off;
    pcre2_code *c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &ec, &off, NULL);
    if (!c) {
        fail_msg("cannot compile %s at %zu", re, (size_t)off);
    }
    return c;
}

static int re_match(pcre2_code *re, const char *s, size_t n)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

static void test_label_checks_match_crd_regexes(void **state)
{
    (void)state;
    json_t *labels = at(schema(0), "properties.spec.properties.workloadMetadata.properties.labels");
    const char *vpat = str_at(labels, "additionalProperties.pattern");
    assert_string_equal(vpat, GR_NVCRE_LABEL_VALUE_PATTERN);
    assert_int_equal(json_integer_value(at(labels, "additionalProperties.maxLength")),
                     GR_NVCRE_MAX_LABEL_VALUE_LEN);
    const char *krule = str_at(labels, "x-kubernetes-validations.1.rule");
    assert_non_null(krule);
    const char *start = strstr(krule, "matches('");
    assert_non_null(start);
    start += strlen("matches('");
    const char *end = strstr(start, "')");
    assert_non_null(end);
    char kpat[512];
    snprintf(kpat, sizeof kpat, "%.*s", (int)(end - start), start);
    assert_string_equal(kpat, GR_NVCRE_LABEL_KEY_PATTERN);

    pcre2_code *kre = compile(kpat);
    pcre2_code *vre = compile(vpat);
    static const char alpha[] = "abzAZ09-_./ :x";
    char s[340];
    for (int iter = 0; iter < 200000; iter++) {
        size_t n;
        if (iter % 4 == 0) { /* near the prefix/name length limits */
            size_t plen = 248 + rnd(8), nlen = 60 + rnd(6);
            memset(s, 'a', plen + nlen + 1);
            for (size_t i = 0; i < plen; i += 1 + rnd(70)) {
                if (i > 0 && i + 1 < plen) {
                    s[i] = '.';
                }
            }
            s[plen] = '/';
            n = plen + 1 + nlen;
        } else {
            n = rnd(70);
            for (size_t i = 0; i < n; i++) {
                s[i] = alpha[rnd(sizeof alpha - 1)];
            }
        }
        s[n] = '\0';
        const char *slash = memchr(s, '/', n);
        size_t prefix = slash ? (size_t)(slash - s) : 0;
        int want_key = re_match(kre, s, n) && prefix <= GR_NVCRE_MAX_LABEL_PREFIX_LEN;
        int got_key = gr_nvcre_label_key_check(s, n, NULL) == GR_OK;
        if (want_key != got_key) {
            fail_msg("key \"%s\": CRD says %d, C says %d", s, want_key, got_key);
        }
        int want_val = re_match(vre, s, n) && n <= GR_NVCRE_MAX_LABEL_VALUE_LEN;
        int got_val = gr_nvcre_label_value_check(s, n, NULL) == GR_OK;
        if (want_val != got_val) {
            fail_msg("value \"%s\": CRD says %d, C says %d", s, want_val, got_val);
        }
    }
    pcre2_code_free(kre);
    pcre2_code_free(vre);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_versions),
        cmocka_unit_test(test_printer_columns),
        cmocka_unit_test(test_jobspec_shared),
        cmocka_unit_test(test_shared_schemas),
        cmocka_unit_test(test_validation_messages),
        cmocka_unit_test(test_label_checks_match_crd_regexes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
