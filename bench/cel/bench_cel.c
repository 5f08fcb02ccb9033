/*
 * bench_cel.c — compile time and evaluation cost of the CEL expressions the
 * controllers run: gang discovery's `podGroup.spec.minMember` and a node
 * health expression over a realistic Node object, and one typical expression
 * per extension library (issue 21). Prints `name: value unit`.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gr_cel.h"

static const char node_json[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"gpu-node-017\","
    "\"uid\":\"5b0c3c1e-6a55-4f0e-9d7e-0d3c9e2f1a11\",\"resourceVersion\":\"918273\","
    "\"labels\":{\"beta.kubernetes.io/arch\":\"amd64\",\"kubernetes.io/hostname\":\"gpu-node-017\","
    "\"kubernetes.io/os\":\"linux\",\"node.kubernetes.io/instance-type\":\"p5.48xlarge\","
    "\"nvidia.com/gpu.count\":\"8\",\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\","
    "\"nvidia.com/gpu.memory\":\"81559\",\"topology.kubernetes.io/zone\":\"us-east-1a\","
    "\"nvidia.com/mig.strategy\":\"single\",\"feature.node.kubernetes.io/"
    "rdma.available\":\"true\"},"
    "\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\",\"volumes.kubernetes.io/"
    "controller-managed-attach-detach\":\"true\"}},"
    "\"spec\":{\"unschedulable\":false,\"podCIDR\":\"10.0.17.0/24\",\"providerID\":\"aws:///"
    "us-east-1a/i-0abc\","
    "\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\",\"effect\":\"NoSchedule\"}]},"
    "\"status\":{\"capacity\":{\"cpu\":\"192\",\"memory\":\"2097152000Ki\",\"nvidia.com/"
    "gpu\":\"8\","
    "\"pods\":\"110\",\"ephemeral-storage\":\"3750000000Ki\"},"
    "\"allocatable\":{\"cpu\":\"191450m\",\"memory\":\"2096000000Ki\",\"nvidia.com/gpu\":\"8\","
    "\"pods\":\"110\"},"
    "\"conditions\":["
    "{\"type\":\"MemoryPressure\",\"status\":\"False\",\"reason\":\"KubeletHasSufficientMemory\","
    "\"lastHeartbeatTime\":\"2026-01-02T10:00:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:"
    "00Z\"},"
    "{\"type\":\"DiskPressure\",\"status\":\"False\",\"reason\":\"KubeletHasNoDiskPressure\","
    "\"lastHeartbeatTime\":\"2026-01-02T10:00:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:"
    "00Z\"},"
    "{\"type\":\"PIDPressure\",\"status\":\"False\",\"reason\":\"KubeletHasSufficientPID\","
    "\"lastHeartbeatTime\":\"2026-01-02T10:00:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:"
    "00Z\"},"
    "{\"type\":\"GpuHealthy\",\"status\":\"True\",\"reason\":\"AllGpusHealthy\","
    "\"lastHeartbeatTime\":\"2026-01-02T10:00:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:"
    "00Z\"},"
    "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\","
    "\"lastHeartbeatTime\":\"2026-01-02T10:00:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:"
    "00Z\"}],"
    "\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.17.5\"},"
    "{\"type\":\"Hostname\",\"address\":\"gpu-node-017\"}],"
    "\"nodeInfo\":{\"kubeletVersion\":\"v1.31.2\",\"containerRuntimeVersion\":\"containerd://"
    "1.7\"}}}";

static const char podgroup_json[] =
    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\",\"metadata\":"
    "{\"name\":\"train-llm\",\"namespace\":\"team-a\",\"uid\":\"0f6c\"},\"spec\":{\"minMember\":16,"
    "\"queue\":\"default\",\"minResources\":{\"nvidia.com/gpu\":\"128\"}},\"status\":"
    "{\"phase\":\"Running\",\"running\":16}}";

/* A custom resource's spec for the library expressions. */
static const char self_json[] =
    "{\"name\":\"trainer-42\",\"count\":3,\"limit\":\"8Gi\",\"addr\":\"10.0.17.5\","
    "\"net\":\"10.0.0.0/8\",\"u\":\"https://example.com:8443/v1/models?x=1\","
    "\"v\":\"1.31.2\",\"l\":[1,2,3,5,8,13],\"ts\":\"2026-01-02T10:00:00Z\","
    "\"m\":{\"team\":\"a\",\"tier\":\"gold\",\"zone\":\"us-east-1a\"},"
    "\"spec\":{\"replicas\":4}}";

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench(const char *name, const char *var, const char *expr, const char *doc)
{
    gr_cel_decl d = {var, GR_CEL_MAP};
    gr_err err;
    gr_cel_program *p = NULL;
    const int ncomp = 2000;
    double t0 = now_ns();
    for (int i = 0; i < ncomp; i++) {
        if (gr_cel_compile(expr, strlen(expr), &d, 1, NULL, &p, NULL, &err) != GR_OK) {
            fprintf(stderr, "%s: %s\n", name, err.msg);
            return 1;
        }
        if (i + 1 < ncomp)
            gr_cel_program_free(p);
    }
    double t1 = now_ns();
    json_t *j = json_loads(doc, 0, NULL);
    if (!j)
        return 1;
    gr_cel_val v;
    const int neval = 200000;
    /* warm up */
    for (int i = 0; i < 1000; i++) {
        if (gr_cel_eval_json(p, &j, &v, NULL, &err) != GR_OK) {
            fprintf(stderr, "%s: %s\n", name, err.msg);
            return 1;
        }
        gr_cel_val_release(&v);
    }
    double t2 = now_ns();
    for (int i = 0; i < neval; i++) {
        gr_cel_eval_json(p, &j, &v, NULL, &err);
        gr_cel_val_release(&v);
    }
    double t3 = now_ns();
    printf("cel_compile_%s: %.0f ns\n", name, (t1 - t0) / ncomp);
    printf("cel_eval_%s: %.0f ns/eval\n", name, (t3 - t2) / neval);
    json_decref(j);
    gr_cel_program_free(p);
    return 0;
}

int main(void)
{
    int rc = bench("podgroup_min_member", "podGroup", "podGroup.spec.minMember", podgroup_json);
    rc |= bench("node_health", "node",
                "node.spec.unschedulable == true || node.status.conditions.exists(c, c.type == "
                "'Ready' && c.status != 'True')",
                node_json);
    /* one typical expression per library */
    static const char *const lib[][2] = {
        {"lib_quantity", "quantity(self.limit).compareTo(quantity('10Gi')) <= 0"},
        {"lib_ip", "ip(self.addr).family() == 4"},
        {"lib_cidr", "cidr(self.net).containsIP(self.addr)"},
        {"lib_url", "url(self.u).getHost() == 'example.com:8443'"},
        {"lib_semver", "semver(self.v).isGreaterThan(semver('1.30.0'))"},
        {"lib_format", "'%s/%d'.format([self.name, self.count]) == 'trainer-42/3'"},
        {"lib_strings_ext",
         "self.name.reverse().startsWith('24') && strings.quote(self.name) != ''"},
        {"lib_lists", "self.l.isSorted() && self.l.sum() == 32 && self.l.max() == 13"},
        {"lib_lists_ext", "self.l.slice(1, 4).sort().distinct().size() == 3"},
        {"lib_sets", "sets.contains(self.l, [2, 3])"},
        {"lib_regex", "self.name.find('[0-9]+') == '42'"},
        {"lib_math", "math.greatest(self.l) < 100 && math.abs(-self.count) == 3"},
        {"lib_bind", "cel.bind(n, self.l.size(), n > 2 && n < 10)"},
        {"lib_two_var", "self.m.all(k, v, k.size() < 8 && v.size() < 64)"},
        {"lib_optional", "self.?spec.?replicas.orValue(1) > 0"},
        {"lib_timezone", "timestamp(self.ts).getHours('America/New_York') == 5"},
    };
    for (size_t i = 0; i < sizeof(lib) / sizeof(lib[0]); i++)
        rc |= bench(lib[i][0], "self", lib[i][1], self_json);
    return rc;
}
