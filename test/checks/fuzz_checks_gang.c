/* fuzz_checks_gang.c — the gang ConfigMap parser: the input is split at NUL
 * bytes into expected_count, peers, master_addr, master_port, gang_id. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_checks_gang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *parts[5] = {NULL, NULL, NULL, NULL, NULL};
    char *p = buf;
    for (int i = 0; i < 5 && p <= buf + size; i++) {
        parts[i] = p;
        p += strlen(p) + 1;
    }
    gr_checks_gang_files f = {parts[0], parts[1], parts[2], parts[3], parts[4]};
    gr_checks_gang g;
    if (gr_checks_gang_parse(&f, &g, NULL) == GR_OK) {
        (void)gr_checks_gang_complete(&g);
        (void)gr_checks_gang_find(&g, "pod-0");
        char detail[256];
        (void)gr_checks_gang_checks_mismatch(&g, detail, sizeof detail);
        for (size_t i = 0; i < g.n_peers; i++)
            if (g.peers[i].rank < -1 || !g.peers[i].name[0])
                abort();
        gr_checks_gang_free(&g);
    }
    free(buf);
    return 0;
}
