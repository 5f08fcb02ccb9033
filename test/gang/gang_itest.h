/*
 * gang_itest.h — helpers shared by the gang integration tests: an in-process
 * gang service on the test cluster, admission as the webhook does it, member
 * pods, status patches and ConfigMap polling. Header-only (static functions)
 * so each test binary stays one file plus this.
 */
#ifndef GANG_ITEST_H
#define GANG_ITEST_H

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

#include "gr_gang.h"
#include "gr_gang_ctl.h"
#include "gr_kube_mgr.h"
#include "gr_harness.h"
#include "gr_kube_config.h"
#include "gr_kube_rest.h"
#include "gr_preflight.h"

typedef struct genv {
    gr_kube_mgr *m;     /* the controller runtime the service runs on */
    gr_kube_client *kc; /* the manager's (borrowed) */
    gr_preflight_config *cfg;
    gr_gang_service *svc;
    gr_kube_mapper *mapper; /* optional, owned */
} genv;

static json_t *ij(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *ij(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        fail_msg("out of memory");
    json_error_t e;
    json_t *v = json_loads(s, 0, &e);
    if (!v)
        fail_msg("bad JSON %s: %s", e.text, s);
    free(s);
    return v;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static const char *g_kubeconfig; /* NULL: admin */

static gr_kube_client *client_for(const gr_harness_ctx *t)
{
    gr_kube_config kcfg;
    memset(&kcfg, 0, sizeof kcfg);
    gr_err err;
    if (gr_kube_config_load_file(g_kubeconfig ? g_kubeconfig : t->cluster.kubeconfig, NULL, &kcfg,
                                 &err) != GR_OK)
        fail_msg("kubeconfig: %s", err.msg);
    kcfg.qps = -1; /* no client-side rate limit in tests */
    gr_kube_client *kc = NULL;
    if (gr_kube_client_new(&kcfg, &kc, &err) != GR_OK)
        fail_msg("client: %s", err.msg);
    gr_kube_config_free(&kcfg);
    return kc;
}

/* Start a service with config YAML text on its own manager (no leader
 * election, no probe server), wait until it reports ready. mapper may be
 * NULL (discovery). */
static void genv_start(genv *g, const gr_harness_ctx *t, const char *yaml, gr_kube_mapper *mapper)
{
    memset(g, 0, sizeof *g);
    gr_err err;
    gr_kube_mgr_opts mo = {.name = "gang-itest", .recheck_ns = 1000000000LL};
    if (gr_kube_mgr_new(client_for(t), &mo, &g->m, &err) != GR_OK)
        fail_msg("manager: %s", err.msg);
    g->kc = gr_kube_mgr_client(g->m);
    if (gr_preflight_config_parse(yaml, strlen(yaml), "test", NULL, NULL, &g->cfg, &err) != GR_OK)
        fail_msg("config: %s", err.msg);
    g->mapper = mapper;
    gr_gang_service_opts o = {.client = g->kc, .cfg = g->cfg, .mapper = mapper, .workers = 4};
    if (gr_gang_service_new(&o, &g->svc, &err) != GR_OK)
        fail_msg("service: %s", err.msg);
    if (gr_gang_service_attach(g->svc, g->m, &err) != GR_OK)
        fail_msg("attach: %s", err.msg);
    if (gr_kube_mgr_start(g->m, &err) != GR_OK)
        fail_msg("start: %s", err.msg);
    char why[256] = "";
    for (int i = 0; i < 600 && !gr_kube_mgr_ready(g->m, why, sizeof why); i++)
        sleep_ms(100);
    if (!gr_kube_mgr_ready(g->m, why, sizeof why))
        fail_msg("not ready after 60 s: %s", why);
}

static void genv_stop(genv *g)
{
    gr_kube_mgr_free(g->m); /* stops the controllers, frees the client */
    gr_gang_service_free(g->svc);
    gr_preflight_config_free(g->cfg);
    gr_kube_mapper_free(g->mapper);
    memset(g, 0, sizeof *g);
}

/* Admission as the webhook does it: resolve only (issue 20: no API writes
 * on the admission path; the coordinator creates the ConfigMap once a
 * member pod exists). Returns the ConfigMap name (malloc'd) or NULL when
 * the pod is not a gang member. */
static char *admit(genv *g, const json_t *pod, const char *ns)
{
    gr_preflight_gang_ops ops = gr_gang_service_ops(g->svc);
    gr_preflight_gang_ctx ctx = {0};
    gr_err err;
    int rc = ops.resolve(ops.ud, pod, ns, &ctx, &err);
    if (rc == GR_ENOTFOUND)
        return NULL;
    if (rc != GR_OK)
        fail_msg("resolve: %s", err.msg);
    char *cm = strdup(ctx.configmap_name);
    gr_preflight_gang_ctx_clear(&ctx);
    return cm;
}

/* Create a member pod mounting the gang ConfigMap; `meta`/`spec` are extra
 * JSON members (without braces, may be ""). */
static void create_member(genv *g, const char *ns, const char *name, const char *cm,
                          const char *meta, const char *spec)
{
    json_t *pod = ij("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"%s%s},"
                     "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}],"
                     "\"volumes\":[{\"name\":\"nvsentinel-preflight-gang-config\",\"configMap\":"
                     "{\"name\":\"%s\",\"optional\":true}}]%s%s}}",
                     name, *meta ? "," : "", meta, cm, *spec ? "," : "", spec);
    gr_err err;
    gr_kube_status st;
    if (gr_kube_create(g->kc, &GR_KUBE_PODS, ns, pod, NULL, NULL, &st, &err) != GR_OK)
        fail_msg("create pod %s: %s", name, err.msg);
    json_decref(pod);
}

static void set_ip(genv *g, const char *ns, const char *name, const char *ip)
{
    json_t *patch = ij("{\"status\":{\"phase\":\"Running\",\"podIP\":\"%s\",\"podIPs\":[{\"ip\":"
                       "\"%s\"}]}}",
                       ip, ip);
    gr_kube_opts o = {0};
    o.subresource = "status";
    gr_err err;
    gr_kube_status st;
    if (gr_kube_patch(g->kc, &GR_KUBE_PODS, ns, name, GR_KUBE_PATCH_MERGE, patch, &o, NULL, &st,
                      &err) != GR_OK)
        fail_msg("patch pod %s: %s", name, err.msg);
    json_decref(patch);
}

/* GET the ConfigMap (NULL when absent). */
static json_t *get_cm(genv *g, const char *ns, const char *cm)
{
    json_t *out = NULL;
    gr_kube_status st;
    gr_err err;
    int rc = gr_kube_get(g->kc, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, &out, &st, &err);
    if (rc == GR_ENOTFOUND)
        return NULL;
    if (rc != GR_OK)
        fail_msg("get cm: %s", err.msg);
    return out;
}

/* Poll until the ConfigMap exists (the coordinator creates it after the
 * first member pod appears); fails after timeout_s. */
__attribute__((unused)) static json_t *wait_cm(genv *g, const char *ns, const char *cm,
                                               int timeout_s)
{
    for (int i = 0; i < timeout_s * 10; i++) {
        json_t *o = get_cm(g, ns, cm);
        if (o)
            return o;
        sleep_ms(100);
    }
    fail_msg("ConfigMap %s/%s was not created within %d s", ns, cm, timeout_s);
    return NULL;
}

static const char *cm_data(const json_t *cm, const char *key)
{
    return json_string_value(json_object_get(json_object_get(cm, "data"), key));
}

/* Poll until data[key] == want; returns the ConfigMap (caller decrefs).
 * timeout_s only bounds a hang; it is scaled to load (gr_test_scale.h). */
__attribute__((unused)) static json_t *wait_cm_data(genv *g, const char *ns, const char *cm,
                                                    const char *key, const char *want,
                                                    int timeout_s)
{
    int tries = gr_test_scaled_tries(timeout_s, 100);
    for (int i = 0; i < tries; i++) {
        json_t *o = get_cm(g, ns, cm);
        const char *v = o ? cm_data(o, key) : NULL;
        if (v && strcmp(v, want) == 0)
            return o;
        json_decref(o);
        sleep_ms(100);
    }
    json_t *o = get_cm(g, ns, cm);
    fail_msg("ConfigMap %s/%s: data.%s is \"%s\", want \"%s\"", ns, cm, key,
             o && cm_data(o, key) ? cm_data(o, key) : "(absent)", want);
    return NULL;
}

static void apply_yaml(const gr_harness_ctx *t, const char *ns, const char *yaml)
{
    assert_int_equal(gr_harness_apply_yaml(&t->cluster, ns, yaml), 0);
}

#endif
