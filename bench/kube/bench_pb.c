/* bench_pb — decoding cost of one Pod as protobuf (gr_kube_pb) and as JSON
 * (jansson, as the JSON path parses it), on the bodies the real
 * kube-apiserver served for the same pod (test/kube/data_pb/Pod.{pb,json}).
 * Prints `name: value unit` lines: decodes per CPU-second and bytes per pod.
 *
 *   bench_kube_pb DATA_DIR [iterations]     (default 20000)
 *
 * CPU time, not wall (the machine is shared). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_kube_pb.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    char *b = malloc(1 << 20);
    *len = b ? fread(b, 1, 1 << 20, f) : 0;
    fclose(f);
    return b;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR [iterations]\n", argv[0]);
        return 2;
    }
    if (!gr_kube_pb_enabled()) {
        printf("SKIPPED: built without the Kubernetes protos\n");
        return 77;
    }
    long n = argc > 2 ? atol(argv[2]) : 20000;
    size_t plen = 0, jlen = 0;
    char *pb = slurp(argv[1], "Pod.pb", &plen);
    char *js = slurp(argv[1], "Pod.json", &jlen);
    if (!pb || !js || n <= 0) {
        fprintf(stderr, "bench_pb: cannot read %s/Pod.pb and Pod.json\n", argv[1]);
        return 1;
    }
    gr_err err;
    json_t *o;
    double t0 = cpu_s();
    for (long i = 0; i < n; i++) {
        if (gr_kube_pb_decode(pb, plen, 1 << 20, &o, &err) != GR_OK) {
            fprintf(stderr, "bench_pb: %s\n", err.msg);
            return 1;
        }
        json_decref(o);
    }
    double t1 = cpu_s();
    for (long i = 0; i < n; i++) {
        o = json_loadb(js, jlen, JSON_REJECT_DUPLICATES, NULL);
        if (!o)
            return 1;
        json_decref(o);
    }
    double t2 = cpu_s();
    printf("pod bytes protobuf: %zu bytes\n", plen);
    printf("pod bytes json: %zu bytes\n", jlen);
    printf("decode protobuf to json_t: %.0f pods/CPU-s\n", (double)n / (t1 - t0));
    printf("parse json to json_t: %.0f pods/CPU-s\n", (double)n / (t2 - t1));
    printf("protobuf / json CPU: %.2f x\n", (t1 - t0) / (t2 - t1));
    free(pb);
    free(js);
    return 0;
}
