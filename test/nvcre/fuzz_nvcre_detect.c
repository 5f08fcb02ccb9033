/*
 * fuzz_nvcre_detect.c — gr_nvcre_detect() over arbitrary Node lists (Node
 * status.allocatable and labels are outside input), then one Certification
 * step over the same Nodes. Input: one selector byte, then a JSON array of
 * Nodes. Detection must succeed with bounded messages (never a crash or a
 * leak); every kept name is one of the input's; the step succeeds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gr_nvcre_cert.h"
#include "gr_nvcre_detect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gr_nvcre_catalog *cat;
    static const char *archs[] = {"h100", "gb200", "rtxpro6000", "zz9"};
    if (!cat && gr_nvcre_catalog_load(&cat, NULL) != GR_OK)
        abort();
    if (size < 1 || size > 64 * 1024)
        return 0;
    unsigned sel = data[0];
    json_t *nodes = json_loadb((const char *)data + 1, size - 1, 0, NULL);
    if (!json_is_array(nodes)) {
        json_decref(nodes);
        return 0;
    }
    const char *arch = archs[sel % 4];
    json_t *popts = NULL;
    gr_err err;
    if (gr_nvcre_catalog_platform_options(cat, (sel & 4) ? "onprem" : "aws", arch, &popts, &err) !=
        GR_OK)
        abort();
    json_t *global = json_pack("{}");
    if (sel & 8)
        json_object_set_new(global, "gpusPerNode", json_integer(8));
    if (sel & 16)
        json_object_set_new(global, "nicResourceName", json_string("rdma/ib"));
    gr_nvcre_detect_req req = {nodes,
                               arch,
                               "NVIDIA-X",
                               global,
                               NULL,
                               popts,
                               gr_nvcre_catalog_arch_known(cat, arch),
                               gr_nvcre_catalog_explicit_gpu_count(cat, arch),
                               (sel & 32) != 0};
    gr_nvcre_detect_result res;
    if (gr_nvcre_detect(&req, &res, &err) != GR_OK)
        abort();
    if (json_array_size(res.keep) + res.dropped != json_array_size(nodes) && !res.fail[0])
        abort();
    gr_nvcre_detect_result_free(&res);
    json_t *cert = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:{},s:[{s:s,s:s}]}}", "apiVersion",
                             "nvcre.nvidia.com/v1alpha1", "kind", "Certification", "metadata",
                             "name", "c", "namespace", "ns", "uid", "u", "spec", "target",
                             "categories", "domain", "communication", "variant", "nccl-all-reduce");
    json_t *wfs = json_array();
    gr_nvcre_cert_input in = {cert, nodes, wfs, cat, 1767225600LL * 1000000000LL};
    gr_nvcre_cert_plan plan;
    if (gr_nvcre_cert_step(&in, &plan, &err) != GR_OK)
        abort();
    gr_nvcre_cert_plan_free(&plan);
    json_decref(cert);
    json_decref(wfs);
    json_decref(global);
    json_decref(popts);
    json_decref(nodes);
    return 0;
}
