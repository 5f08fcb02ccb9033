/* gr_harness — integration-test harness: talk to the real control plane that
 * scripts/cluster started (etcd + kube-apiserver [+ kube-controller-manager]).
 *
 * Everything goes through the cluster's own kubectl binary, with an explicit
 * --kubeconfig, so tests never depend on the caller's ~/.kube.
 *
 * Typical cmocka test:
 *
 *     static void test_x(void **state) {
 *         gr_harness_ctx *t = *state;
 *         const char *crds = "test/fixtures/crds/grove.yaml";
 *         assert_int_equal(gr_harness_apply_file(&t->cluster, NULL, crds), 0);
 *         ...
 *         gr_harness_passed(t); // otherwise teardown dumps cluster state
 *     }
 *     int main(void) {
 *         int skip = gr_harness_skip_if_disabled(); // GR_SKIP_INTEGRATION=1: prints, 77
 *         if (skip) return skip;
 *         const struct CMUnitTest tests[] = {
 *             cmocka_unit_test_setup_teardown(test_x, gr_harness_setup, gr_harness_teardown),
 *         };
 *         return cmocka_run_group_tests(tests, NULL, NULL);
 *     }
 *
 * Environment (set by the CTest fixture / `scripts/cluster env`):
 *   GR_CLUSTER_DIR       cluster directory (default ${TMPDIR:-/tmp}/gpuready-cluster-<uid>)
 *   GR_SKIP_INTEGRATION  1/true/yes: integration tests print SKIPPED and exit 77
 *   GR_SOURCE_DIR        repository root; relative fixture paths resolve against it
 *   GR_HARNESS_KEEP_NS   1: do not delete test namespaces (debugging)
 *   GR_HARNESS_VERBOSE   1: echo every kubectl command line to stderr
 *   GR_TEST_TIMEOUT_SCALE  multiplier for every wait and kubectl timeout, on
 *                        top of the load factor (gr_test_scale.h)
 */
#ifndef GR_HARNESS_H
#define GR_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "gr_test_scale.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit status CTest treats as "skipped" (SKIP_RETURN_CODE). */
#define GR_HARNESS_SKIP 77

/* Default timeout for one kubectl invocation, seconds. */
#define GR_HARNESS_CMD_TIMEOUT 60

#define GR_HARNESS_PATH_MAX 4096

typedef struct gr_harness_cluster {
    char dir[GR_HARNESS_PATH_MAX];
    char kubeconfig[GR_HARNESS_PATH_MAX];         /* admin, system:masters */
    char kubeconfig_lowpriv[GR_HARNESS_PATH_MAX]; /* user gr-lowpriv, no bindings */
    char kubectl[GR_HARNESS_PATH_MAX];
    char cache_dir[GR_HARNESS_PATH_MAX]; /* KUBECACHEDIR, inside dir */
    char apiserver_url[256];
    char apiserver_log[GR_HARNESS_PATH_MAX];
    char ca_cert[GR_HARNESS_PATH_MAX]; /* cluster CA (PEM); also signs webhook certs */
    char ca_key[GR_HARNESS_PATH_MAX];
    char admin_cert[GR_HARNESS_PATH_MAX]; /* client cert/key PEM files, for libcurl */
    char admin_key[GR_HARNESS_PATH_MAX];
    char lowpriv_cert[GR_HARNESS_PATH_MAX];
    char lowpriv_key[GR_HARNESS_PATH_MAX];
    bool controller_manager; /* kube-controller-manager runs (GC, namespaces, SAs) */
} gr_harness_cluster;

typedef struct gr_harness_result {
    int status;     /* exit status; -1 when killed by a signal or on timeout */
    bool timed_out; /* the command ran past its timeout and was killed */
    char *out;      /* stdout, NUL-terminated, never NULL after a run */
    size_t out_len;
    char *err; /* stderr, NUL-terminated, never NULL after a run */
    size_t err_len;
} gr_harness_result;

/* If GR_SKIP_INTEGRATION is 1/true/yes: print
 * "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION" and return
 * GR_HARNESS_SKIP; else return 0. Call first thing in main(). */
int gr_harness_skip_if_disabled(void);

/* Find the running cluster (GR_CLUSTER_DIR/cluster.env) and check /readyz.
 * Returns 0, or -1 after printing why to stderr (never skips silently). */
int gr_harness_open(gr_harness_cluster *c);

/* 0 when GET /readyz answers "ok". */
int gr_harness_ready(const gr_harness_cluster *c);

/* Run kubectl with argv (NULL-terminated, without "kubectl") against the
 * cluster as the identity in kubeconfig (NULL: admin). stdin_data may be NULL.
 * timeout_s <= 0 means GR_HARNESS_CMD_TIMEOUT. Returns 0 when the command ran
 * and exited 0, 1 when it ran and failed (see r->status, r->err), -1 when it
 * could not run or timed out. r must be freed with gr_harness_result_free(). */
int gr_harness_kubectl_argv(const gr_harness_cluster *c, const char *kubeconfig,
                            const char *stdin_data, int timeout_s, const char *const argv[],
                            gr_harness_result *r);

/* Variadic forms: arguments are const char *, terminated by NULL. */
int gr_harness_kubectl(const gr_harness_cluster *c, gr_harness_result *r, ...);
int gr_harness_kubectl_lowpriv(const gr_harness_cluster *c, gr_harness_result *r, ...);
/* Same, feeding stdin_data to kubectl (e.g. "apply", "-f", "-"). */
int gr_harness_kubectl_stdin(const gr_harness_cluster *c, const char *stdin_data,
                             gr_harness_result *r, ...);

void gr_harness_result_free(gr_harness_result *r);

/* Create a fresh namespace "<prefix>-<unique>" (prefix sanitized to DNS-1123,
 * labelled gpuready.test/harness=true) and, when the controller manager runs,
 * wait for its default service account. Writes the name to name. */
int gr_harness_ns_create(const gr_harness_cluster *c, const char *prefix, char *name,
                         size_t namesz);

/* Delete a namespace without waiting (no-op when GR_HARNESS_KEEP_NS=1). */
int gr_harness_ns_delete(const gr_harness_cluster *c, const char *name);

/* Server-side apply a multi-document YAML file (path relative to
 * GR_SOURCE_DIR unless absolute) or string. ns may be NULL. Every CRD in it
 * is waited for until Established; objects of kinds defined by CRDs in the
 * same file are retried once those are established. 0 or -1 (printed). */
int gr_harness_apply_file(const gr_harness_cluster *c, const char *ns, const char *path);
int gr_harness_apply_yaml(const gr_harness_cluster *c, const char *ns, const char *yaml);

/* kubectl wait --for=<for_expr> resource [-n ns] --timeout=<timeout_s>s.
 * Every timeout_s of the harness (and kubectl's default) is multiplied by
 * gr_test_timeout_scale() (gr_test_scale.h).
 * for_expr: "condition=Ready", "jsonpath={.status.phase}=Running", "delete",
 * "create". On failure prints the object and returns -1. */
int gr_harness_wait(const gr_harness_cluster *c, const char *ns, const char *resource,
                    const char *for_expr, int timeout_s);

/* Poll `kubectl get resource -o jsonpath=<jsonpath>` until it prints want
 * (exactly, after trimming whitespace) or timeout_s passes. 0 or -1. */
int gr_harness_wait_jsonpath(const gr_harness_cluster *c, const char *ns, const char *resource,
                             const char *jsonpath, const char *want, int timeout_s);

/* `kubectl get resource -o jsonpath=...`; *out is malloc'd and trimmed. */
int gr_harness_get_jsonpath(const gr_harness_cluster *c, const char *ns, const char *resource,
                            const char *jsonpath, char **out);

/* Print namespace contents (every listable namespaced resource), its events,
 * and the tails of the control-plane logs to stderr. ns may be NULL. */
void gr_harness_dump_state(const gr_harness_cluster *c, const char *ns);

/* Resolve a repository-relative path against GR_SOURCE_DIR. */
int gr_harness_source_path(const char *rel, char *out, size_t outsz);

/* ---- cmocka helpers ---------------------------------------------------- */

typedef struct gr_harness_ctx {
    gr_harness_cluster cluster;
    char ns[64];
    bool passed;
} gr_harness_ctx;

/* cmocka setup: open the cluster, create a namespace named after the test
 * binary; *state = gr_harness_ctx *. Returns 0 or -1. */
int gr_harness_setup(void **state);
/* cmocka teardown: dump state unless gr_harness_passed() was called, delete the
 * namespace, free. */
int gr_harness_teardown(void **state);
static inline void gr_harness_passed(gr_harness_ctx *t)
{
    t->passed = true;
}

/* True when haystack contains needle (NULL-safe). */
bool gr_harness_contains(const char *haystack, const char *needle);

#ifdef __cplusplus
}
#endif

#endif /* GR_HARNESS_H */
