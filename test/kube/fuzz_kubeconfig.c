/* libFuzzer target: the kubeconfig parser (pure; files are not read). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_kube_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gr_kube_config cfg;
    gr_err err;
    int rc = gr_kube_config_parse((const char *)data, size, "fuzz", "/base", NULL, &cfg, &err);
    if (rc == GR_OK) {
        if (!cfg.server || strncmp(cfg.server, "http", 4) != 0)
            abort();
        gr_kube_config_free(&cfg);
    }
    return 0;
}
