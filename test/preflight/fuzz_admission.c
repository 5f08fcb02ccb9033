/*
 * fuzz_admission.c — libFuzzer target for the AdmissionReview handler
 * (gr_preflight_admit) with a config that turns every feature on: gang
 * coordination with the static resolver, connector token, publishTo
 * deployment, inheritance, pull secrets, extra mounts. Every response must
 * be a well-formed review or a 400.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"
#include "gr_preflight.h"

static const char k_cfg[] =
    "networkResourceNames: [nvidia.com/mlnxnics]\n"
    "connectorTokenAudience: platform-connector.nvsentinel.nvidia.com\n"
    "connectorTokenMountPath: /var/run/secrets/nvsentinel/platform-connector\n"
    "connectorTokenExpirationSeconds: 3600\n"
    "publishTo: deployment\n"
    "healthPublish: {target: 'pc:50051'}\n"
    "imagePullSecrets: [{name: ngc}]\n"
    "gangCoordination:\n"
    "  enabled: true\n"
    "  ncclTopoConfigMap: topo\n"
    "  extraHostPathMounts: [{name: h, hostPath: /h, mountPath: /h, hostPathType: Directory}]\n"
    "  extraVolumeMounts: [{name: nvtcpxo-x, mountPath: /x}]\n"
    "initContainers:\n"
    "  - {name: preflight-dcgm-diag, image: dcgm:v1, env: [{name: NCCL_DEBUG, value: WARN}]}\n"
    "  - {name: preflight-nccl-loopback, image: l:v1, inheritUserEnv: false}\n"
    "  - {name: preflight-nccl-allreduce, image: a:v1, defaultEnabled: false}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gr_preflight_config *cfg;
    static gr_preflight_gang_ops ops;
    if (!cfg) {
        if (gr_preflight_config_parse(k_cfg, strlen(k_cfg), "fuzz", NULL, NULL, &cfg, NULL) !=
            GR_OK)
            abort();
        ops = gr_preflight_gang_static_ops(cfg);
    }
    gr_preflight_admission a;
    if (gr_preflight_admit(cfg, &ops, (const char *)data, size, &a) != GR_OK) {
        gr_preflight_admission_clear(&a);
        return 0;
    }
    if (a.http_status == 200) {
        json_t *doc = NULL;
        if (gr_json_parse(a.body, a.body_len, 0, "resp", &doc, NULL) != GR_OK ||
            !json_is_boolean(gr_json_ptr_get(doc, "/response/allowed")))
            abort();
        json_decref(doc);
    } else if (a.http_status != 400) {
        abort();
    }
    gr_preflight_admission_clear(&a);
    return 0;
}
