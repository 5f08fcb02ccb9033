/* libFuzzer target: the kubeconfig parser and the $KUBECONFIG merge (pure;
 * files are not read). The input is split at "\n%%\n" into up to
 * GR_KUBE_CONFIG_MAX_FILES documents merged in order; without a separator it
 * is one file. Invariants: no crash, no leak; a success has an http(s)
 * server and a context name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_kube_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sep[] = "\n%%\n";
    static const char *const dirs[] = {"/a", "/b", NULL, "rel"};
    gr_kube_config_src srcs[GR_KUBE_CONFIG_MAX_FILES];
    size_t n = 0;
    const char *p = (const char *)data, *end = p + size;
    while (n < GR_KUBE_CONFIG_MAX_FILES) {
        const char *s = memmem(p, (size_t)(end - p), sep, sizeof sep - 1);
        if (!s || n == GR_KUBE_CONFIG_MAX_FILES - 1)
            s = end;
        srcs[n] = (gr_kube_config_src){p, (size_t)(s - p), n % 2 ? "b" : "a", dirs[n % 4]};
        n++;
        if (s == end)
            break;
        p = s + sizeof sep - 1;
    }
    gr_kube_config cfg;
    gr_err err;
    int rc = gr_kube_config_parse_merged(srcs, n, NULL, &cfg, &err);
    if (rc == GR_OK) {
        if (!cfg.server || strncmp(cfg.server, "http", 4) != 0 || !cfg.context)
            abort();
        gr_kube_config_free(&cfg);
    } else if (cfg.server || cfg.context) {
        abort(); /* left empty on error */
    }
    return 0;
}
