/* The webhook side of the CA bundle sync: the healthPublish.caFile and
 * healthPublish.namespaceSelector config keys, and the `injected` admission
 * hook that calls gr_casync_ensure() for every pod admitted with a patch,
 * gang member or not, never for a dry run (PF-172, PF-175). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gr_casync.h"
#include "gr_preflight.h"

#define DEPLOY_CFG                                             \
    "connectorSocket: \"\"\n"                                  \
    "connectorTokenAudience: a\nconnectorTokenMountPath: /t\n" \
    "connectorTokenExpirationSeconds: 3600\n"                  \
    "publishTo: deployment\n"                                  \
    "initContainers:\n  - {name: preflight-dcgm-diag, image: dcgm:v1}\n"

static gr_preflight_config *load(const char *text, int want)
{
    gr_preflight_config *cfg = NULL;
    gr_err err;
    int rc = gr_preflight_config_parse(text, strlen(text), "t", NULL, NULL, &cfg, &err);
    if (rc != want)
        fail_msg("config: rc %d: %s", rc, err.msg);
    return cfg;
}

static void test_config_keys(void **state)
{
    (void)state;
    gr_preflight_config *cfg = load(DEPLOY_CFG "healthPublish: {target: 'pc:50051'}\n", GR_OK);
    assert_string_equal(cfg->publish.ca_file, "/etc/preflight-ca/ca.crt"); /* default */
    assert_string_equal(cfg->publish.ca_file, GR_CASYNC_DEFAULT_CA_FILE);
    assert_null(cfg->publish.namespace_selector);
    gr_preflight_config_free(cfg);

    cfg = load(DEPLOY_CFG "healthPublish:\n  target: 'pc:50051'\n  caFile: /x/ca.pem\n"
                          "  namespaceSelector: {matchLabels: {team: gpu}}\n",
               GR_OK);
    assert_string_equal(cfg->publish.ca_file, "/x/ca.pem");
    gr_buf b = GR_BUF_INIT(1024);
    gr_err err;
    assert_int_equal(gr_casync_selector_string(cfg->publish.namespace_selector,
                                               "healthPublish.namespaceSelector", &b, &err),
                     GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "team=gpu");
    gr_buf_free(&b);
    gr_preflight_config_free(cfg);

    load(DEPLOY_CFG "healthPublish: {target: 'pc:50051', caFile: ''}\n", GR_EINVAL);
    load(DEPLOY_CFG "healthPublish: {target: 'pc:50051', namespaceSelector: [a]}\n", GR_EINVAL);
}

typedef struct rec {
    int injected, admitted;
    char ns[64];
} rec;

static void rec_injected(void *ud, const json_t *pod, const char *ns, const char *name)
{
    (void)pod;
    (void)name;
    rec *r = ud;
    r->injected++;
    snprintf(r->ns, sizeof r->ns, "%s", ns);
}

static void rec_admitted(void *ud, const json_t *pod, const char *ns, const char *name,
                         const gr_preflight_gang_ctx *ctx)
{
    (void)pod;
    (void)ns;
    (void)name;
    (void)ctx;
    ((rec *)ud)->admitted++;
}

#define POD                                                                                     \
    "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"x\"," \
    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}"

static void admit(const gr_preflight_config *cfg, const gr_preflight_gang_ops *ops,
                  const char *body, gr_preflight_admit_result want)
{
    gr_preflight_admission a;
    assert_int_equal(gr_preflight_admit(cfg, ops, body, strlen(body), &a), GR_OK);
    assert_int_equal(a.result, want);
    gr_preflight_admission_clear(&a);
}

static void test_injected_hook(void **state)
{
    (void)state;
    gr_preflight_config *cfg = load(DEPLOY_CFG "healthPublish: {target: 'pc:50051'}\n", GR_OK);
    rec r = {0};
    gr_preflight_gang_ops ops = gr_preflight_gang_static_ops(cfg);
    ops.injected = rec_injected;
    ops.admitted = rec_admitted;
    ops.ud = &r;
    /* PF-172: a pod admitted with a patch, not a gang member: ensure runs */
    admit(cfg, &ops, "{\"request\":{\"uid\":\"u\",\"namespace\":\"team-a\",\"object\":" POD "}}",
          GR_PREFLIGHT_ADMIT_INJECTED);
    assert_int_equal(r.injected, 1);
    assert_string_equal(r.ns, "team-a");
    assert_int_equal(r.admitted, 0); /* no gang: no gang registration */
    /* dry run: no side effect */
    admit(cfg, &ops,
          "{\"request\":{\"uid\":\"u\",\"dryRun\":true,\"namespace\":\"team-b\",\"object\":" POD
          "}}",
          GR_PREFLIGHT_ADMIT_INJECTED);
    assert_int_equal(r.injected, 1);
    /* no patch (not a GPU pod): nothing to mount, nothing to ensure */
    admit(cfg, &ops,
          "{\"request\":{\"uid\":\"u\",\"namespace\":\"team-c\",\"object\":{\"metadata\":{"
          "\"name\":\"q\"},\"spec\":{\"containers\":[{\"name\":\"m\"}]}}}}",
          GR_PREFLIGHT_ADMIT_SKIPPED);
    assert_int_equal(r.injected, 1);
    gr_preflight_config_free(cfg);
}

static void test_injected_pod_mounts_the_copy(void **state)
{
    (void)state;
    /* PF-175: the pod mounts the ConfigMap the sync keeps (PF-171 name) */
    gr_preflight_config *cfg = load(DEPLOY_CFG "healthPublish: {target: 'pc:50051'}\n", GR_OK);
    json_error_t je;
    json_t *pod = json_loads(POD, 0, &je);
    gr_preflight_result res;
    gr_err err;
    assert_int_equal(gr_preflight_inject(cfg, NULL, pod, "n", &res, &err), GR_OK);
    char *txt = json_dumps(res.patch, JSON_COMPACT);
    assert_non_null(strstr(txt, "\"configMap\":{\"name\":\"" GR_CASYNC_CM_NAME "\""));
    assert_non_null(
        strstr(txt, "\"mountPath\":\"/etc/nvsentinel/platform-connector-deployment-ca\""));
    free(txt);
    gr_preflight_result_clear(&res);
    json_decref(pod);
    gr_preflight_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_keys),
        cmocka_unit_test(test_injected_hook),
        cmocka_unit_test(test_injected_pod_mounts_the_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
