/* it_common.h — shared setup for gr_kube's integration tests: find the
 * cluster started by scripts/cluster (GR_CLUSTER_DIR; layout documented in
 * scripts/cluster: kubeconfig, kubeconfig-lowpriv), build clients, create
 * and delete throw-away namespaces. Header-only, test code only. */
#ifndef GR_KUBE_IT_COMMON_H
#define GR_KUBE_IT_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../harness/gr_test_scale.h" /* waits scaled to load (GR_TEST_TIMEOUT_SCALE) */
#include "gr_kube_config.h"
#include "gr_kube_rest.h"

static inline const char *it_cluster_dir(void)
{
    const char *d = getenv("GR_CLUSTER_DIR");
    return d && *d ? d : NULL;
}

/* Exit 77 (skipped) with a reason when integration tests cannot run. */
static inline int it_skip(void)
{
    const char *s = getenv("GR_SKIP_INTEGRATION");
    if (s && (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes"))) {
        printf("SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION\n");
        return 77;
    }
    if (!it_cluster_dir()) {
        printf("SKIPPED: GR_CLUSTER_DIR is not set (run through ctest's gr_cluster fixture or "
               "scripts/cluster up)\n");
        return 77;
    }
    return 0;
}

/* which: "kubeconfig" or "kubeconfig-lowpriv". qps < 0: unlimited. */
static inline gr_kube_client *it_client(const char *which, double qps)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", it_cluster_dir(), which);
    gr_kube_config cfg;
    gr_err err;
    if (gr_kube_config_load_file(path, NULL, &cfg, &err) != GR_OK) {
        fprintf(stderr, "it: %s\n", err.msg);
        return NULL;
    }
    cfg.qps = qps;
    cfg.burst = 100;
    gr_kube_client *c = NULL;
    if (gr_kube_client_new(&cfg, &c, &err) != GR_OK)
        fprintf(stderr, "it: %s\n", err.msg);
    gr_kube_config_free(&cfg);
    return c;
}

static inline int it_ns_create(gr_kube_client *c, const char *prefix, char *out, size_t outsz)
{
    static int seq;
    snprintf(out, outsz, "%s-%d-%d", prefix, (int)getpid(), ++seq);
    json_t *ns = json_pack("{s:s,s:s,s:{s:s,s:{s:s}}}", "apiVersion", "v1", "kind", "Namespace",
                           "metadata", "name", out, "labels", "gpuready.test/harness", "true");
    gr_err err;
    gr_kube_status st;
    int rc = gr_kube_create(c, &GR_KUBE_NAMESPACES, NULL, ns, NULL, NULL, &st, &err);
    json_decref(ns);
    if (rc != GR_OK)
        fprintf(stderr, "it: create namespace: %s\n", err.msg);
    return rc;
}

static inline void it_ns_delete(gr_kube_client *c, const char *ns)
{
    gr_err err;
    gr_kube_status st;
    gr_kube_delete(c, &GR_KUBE_NAMESPACES, NULL, ns, NULL, NULL, &st, &err);
}

static inline void it_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline double it_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
