/*
 * gpuready-sim — the simulated GPU cluster's helper (test infrastructure;
 * docs/simulated-cluster.md). scripts/cluster runs it:
 *
 *   gpuready-sim nodes --count N --platform P --gpu G [--spec FILE]
 *       print a v1 List of N fake GPU nodes (JSON) for `kubectl apply -f -`,
 *       shaped by the spec's node faults (gpus)
 *   gpuready-sim check-spec FILE
 *       validate a fault spec (exit 0, or 2 with the reason)
 *   gpuready-sim policy --spec FILE
 *       print the MutatingAdmissionPolicy (+ binding) that keeps the spec's
 *       `unschedulable` pods Pending (JSON documents), or nothing
 *   gpuready-sim watch --spec FILE --gpu G --dir DIR
 *       read `kubectl get pods -A -w -o json` on stdin; for each workload
 *       pod KWOK started, write its log (CRI format) under DIR/logs and a
 *       document to server-side-apply under DIR/apply, and print
 *       "apply PATH"; print "at UNIX_SECONDS not-ready|cordon NODE" for the
 *       spec's timed node faults. One line per event, flushed.
 *
 * Exit status: 0 ok, 2 bad usage/spec, 1 other errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gr_sim.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: gpuready-sim nodes --count N --platform P --gpu G [--spec FILE]\n"
            "       gpuready-sim check-spec FILE\n"
            "       gpuready-sim policy --spec FILE\n"
            "       gpuready-sim watch --spec FILE --gpu G --dir DIR\n"
            "GPUs: %s\nplatforms: %s\n",
            gr_sim_gpu_names(), gr_sim_platform_names());
    return 2;
}

/* opt: value of --name in argv, or NULL. */
static const char *opt(int argc, char **argv, const char *name)
{
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return NULL;
}

static int load_spec(const char *path, gr_sim_spec *s)
{
    gr_err err = {0};
    if (path == NULL || path[0] == '\0') {
        gr_sim_spec_init(s);
        return 0;
    }
    if (gr_sim_spec_load_file(path, s, &err) != GR_OK) {
        fprintf(stderr, "gpuready-sim: fault spec: %s\n", err.msg);
        return 2;
    }
    return 0;
}

static int cmd_nodes(int argc, char **argv)
{
    const char *count = opt(argc, argv, "--count"), *platform = opt(argc, argv, "--platform");
    const char *gpu = opt(argc, argv, "--gpu");
    if (count == NULL)
        return usage();
    char *end;
    errno = 0;
    unsigned long n = strtoul(count, &end, 10);
    if (errno || *end || end == count) {
        fprintf(stderr, "gpuready-sim: --count: \"%s\" is not a whole number\n", count);
        return 2;
    }
    gr_sim_spec s;
    int lrc = load_spec(opt(argc, argv, "--spec"), &s);
    if (lrc != 0)
        return lrc;
    json_t *list;
    gr_err err = {0};
    if (gr_sim_nodes_spec(n, platform ? platform : "onprem", gpu ? gpu : "h100", &s, &list, &err) !=
        GR_OK) {
        gr_sim_spec_free(&s);
        fprintf(stderr, "gpuready-sim: %s\n", err.msg);
        return 2;
    }
    gr_sim_spec_free(&s);
    int rc = json_dumpf(list, stdout, JSON_COMPACT) == 0 ? 0 : 1;
    putchar('\n');
    json_decref(list);
    return rc;
}

/* nodeSelector is an atomic map (ApplyConfiguration cannot merge into it):
 * add the key to an existing one, or create it. */
#define NODE_SELECTOR_PATCH                                                                   \
    "has(object.spec.nodeSelector) ? [JSONPatch{op: 'add', path: '/spec/nodeSelector/' + "    \
    "jsonpatch.escapeKey('sim.gpuready.io/unschedulable'), value: 'true'}] : [JSONPatch{op: " \
    "'add', path: '/spec/nodeSelector', value: {'sim.gpuready.io/unschedulable': 'true'}}]"

static int cmd_policy(int argc, char **argv)
{
    gr_sim_spec s;
    int rc = load_spec(opt(argc, argv, "--spec"), &s);
    if (rc != 0)
        return rc;
    size_t i;
    json_t *sel;
    json_array_foreach(s.unschedulable, i, sel)
    {
        char name[64];
        snprintf(name, sizeof name, "gpuready-sim-unschedulable-%zu", i);
        json_t *ps = json_object_get(sel, "podSelector");
        /* Adds a nodeSelector no node satisfies: the real scheduler then
         * reports the pod Unschedulable and it stays Pending. */
        json_t *pol = json_pack(
            "{s:s, s:s, s:{s:s}, s:{s:{s:O, s:[{s:[s], s:[s], s:[s], s:[s]}]}, s:s, s:[{s:s, "
            "s:{s:s}}], s:s}}",
            "apiVersion", "admissionregistration.k8s.io/v1", "kind", "MutatingAdmissionPolicy",
            "metadata", "name", name, "spec", "matchConstraints", "objectSelector", ps,
            "resourceRules", "apiGroups", "", "apiVersions", "v1", "operations", "CREATE",
            "resources", "pods", "failurePolicy", "Fail", "mutations", "patchType", "JSONPatch",
            "jsonPatch", "expression", NODE_SELECTOR_PATCH, "reinvocationPolicy", "Never");
        json_t *bind = json_pack(
            "{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "admissionregistration.k8s.io/v1", "kind",
            "MutatingAdmissionPolicyBinding", "metadata", "name", name, "spec", "policyName", name);
        if (pol == NULL || bind == NULL) {
            json_decref(pol), json_decref(bind);
            gr_sim_spec_free(&s);
            fprintf(stderr, "gpuready-sim: cannot render the policy\n");
            return 1;
        }
        fputs("---\n", stdout);
        json_dumpf(pol, stdout, JSON_COMPACT);
        fputs("\n---\n", stdout);
        json_dumpf(bind, stdout, JSON_COMPACT);
        fputs("\n", stdout);
        json_decref(pol);
        json_decref(bind);
    }
    gr_sim_spec_free(&s);
    return 0;
}

typedef struct first_seen {
    char node[GR_SIM_NAME_MAX];
} first_seen;

/* A processed NCCL pod of a group: its log is rewritten when a slower node
 * joins the group later (the scheduler may bind a gang's pods after KWOK
 * started the first one; logs are read after the pods finish). */
#define MAX_DONE_NCCL 4096
typedef struct done_nccl {
    json_t *pod;
    gr_sim_plan plan;
    int64_t start_ns;
    char logpath[4096];
} done_nccl;

typedef struct watch_ctx {
    gr_sim_spec spec;
    const char *gpu, *dir;
    first_seen *seen;
    size_t n_seen, cap_seen;
    unsigned long seq;
    gr_sim_groups groups;
    done_nccl *done; /* ring of processed grouped NCCL pods */
    size_t n_done, next_done;
} watch_ctx;

static void timed(const char *action, const gr_sim_timed *t, const char *node, int64_t base_ns)
{
    int64_t at = base_ns + t->after_ns;
    printf("at %" PRId64 " %s %s\n", at / 1000000000, action, node);
}

static int node_seen(watch_ctx *w, const char *node)
{
    for (size_t i = 0; i < w->n_seen; i++)
        if (strcmp(w->seen[i].node, node) == 0)
            return 1;
    if (w->n_seen == w->cap_seen) {
        size_t nc = w->cap_seen ? w->cap_seen * 2 : 64;
        if (nc > GR_SIM_MAX_NODES * 2)
            return 1; /* cap: forget the rest (timed faults need a listed node anyway) */
        first_seen *ns = realloc(w->seen, nc * sizeof *ns);
        if (ns == NULL)
            return 1;
        w->seen = ns;
        w->cap_seen = nc;
    }
    snprintf(w->seen[w->n_seen++].node, GR_SIM_NAME_MAX, "%s", node);
    return 0;
}

static void safe_name(char *dst, size_t dsz, const char *src)
{
    size_t j = 0;
    for (size_t i = 0; src[i] && j + 1 < dsz; i++) {
        char c = src[i];
        dst[j++] =
            (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ? c : '_';
    }
    dst[j] = '\0';
}

static int write_file(const char *path, const char *data, size_t len)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int write_file(const char *path, const char *data, size_t len);

static void write_log(watch_ctx *w, const gr_sim_plan *p, const json_t *pod, int64_t start_ns,
                      const char *path)
{
    gr_buf log = GR_BUF_INIT(16 * 1024 * 1024);
    gr_err err = {0};
    if (gr_sim_pod_log(p, &w->spec, w->gpu, pod, start_ns, &log, &err) != GR_OK)
        fprintf(stderr, "gpuready-sim: %s\n", err.msg);
    else if (write_file(path, log.data ? log.data : "", log.len) != 0)
        fprintf(stderr, "gpuready-sim: cannot write %s: %s\n", path, strerror(errno));
    gr_buf_free(&log);
}

/* A pod was observed: rewrite the logs of its group's processed NCCL pods
 * whose busbw the group's slowest node now lowers. */
static void regroup(watch_ctx *w, const json_t *pod)
{
    char group[2 * GR_SIM_NAME_MAX], other[2 * GR_SIM_NAME_MAX];
    gr_sim_pod_group(pod, group, sizeof group);
    if (group[0] == '\0')
        return;
    for (size_t i = 0; i < w->n_done; i++) {
        done_nccl *d = &w->done[i];
        gr_sim_pod_group(d->pod, other, sizeof other);
        if (strcmp(group, other) != 0)
            continue;
        gr_sim_plan p = d->plan;
        gr_sim_groups_apply(&w->groups, &w->spec, w->gpu, d->pod, &p);
        if (p.busbw_gbps < d->plan.busbw_gbps) {
            d->plan = p;
            write_log(w, &d->plan, d->pod, d->start_ns, d->logpath);
        }
    }
}

static void remember(watch_ctx *w, json_t *pod, const gr_sim_plan *p, int64_t start_ns,
                     const char *logpath)
{
    char group[2 * GR_SIM_NAME_MAX];
    gr_sim_pod_group(pod, group, sizeof group);
    if (p->kind != GR_SIM_NCCL || group[0] == '\0')
        return;
    if (w->done == NULL) {
        w->done = calloc(MAX_DONE_NCCL, sizeof *w->done);
        if (w->done == NULL)
            return;
    }
    done_nccl *d;
    if (w->n_done < MAX_DONE_NCCL) {
        d = &w->done[w->n_done++];
    } else { /* forget the oldest */
        d = &w->done[w->next_done];
        w->next_done = (w->next_done + 1) % MAX_DONE_NCCL;
        json_decref(d->pod);
    }
    d->pod = json_incref(pod);
    d->plan = *p;
    d->start_ns = start_ns;
    snprintf(d->logpath, sizeof d->logpath, "%s", logpath);
}

static int on_value(void *ctx, json_t *v, const gr_err *e)
{
    watch_ctx *w = ctx;
    if (v == NULL) {
        fprintf(stderr, "gpuready-sim: %s\n", e ? e->msg : "bad value");
        return 0;
    }
    /* A List (first answer of a plain `get -o json`) or a single Pod. */
    json_t *items = json_object_get(v, "items");
    if (json_is_array(items)) {
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it) on_value(ctx, it, NULL);
        return 0;
    }
    gr_sim_plan p;
    gr_err err = {0};
    if (gr_sim_groups_observe(&w->groups, v) != GR_OK)
        fprintf(stderr, "gpuready-sim: out of memory remembering pod groups\n");
    regroup(w, v);
    if (gr_sim_pod_plan(&w->spec, w->gpu, v, &p, &err) != GR_OK) {
        fprintf(stderr, "gpuready-sim: %s\n", err.msg);
        return 0;
    }
    if (!p.act)
        return 0;
    gr_sim_groups_apply(&w->groups, &w->spec, w->gpu, v, &p);
    int64_t now = now_ns();
    const gr_sim_node_fault *nf = gr_sim_spec_node(&w->spec, p.node);
    if (!node_seen(w, p.node) && nf != NULL) {
        if (nf->not_ready.enabled && nf->not_ready.from == GR_SIM_FROM_FIRST_POD)
            timed("not-ready", &nf->not_ready, p.node, now);
        if (nf->cordon.enabled && nf->cordon.from == GR_SIM_FROM_FIRST_POD)
            timed("cordon", &nf->cordon, p.node, now);
    }
    char ns[GR_SIM_NAME_MAX], name[GR_SIM_NAME_MAX], uid[64];
    safe_name(ns, sizeof ns, p.namespace_);
    safe_name(name, sizeof name, p.name);
    safe_name(uid, sizeof uid, p.uid);
    char logpath[4096], applypath[4096];
    snprintf(logpath, sizeof logpath, "%s/logs/%s_%s_%s.log", w->dir, ns, name, uid);
    snprintf(applypath, sizeof applypath, "%s/apply/%08lu-%s_%s.yaml", w->dir, ++w->seq, ns, name);
    gr_buf doc = GR_BUF_INIT(64 * 1024);
    write_log(w, &p, v, now, logpath);
    if (gr_sim_pod_apply_yaml(&p, logpath, &doc, &err) != GR_OK) {
        fprintf(stderr, "gpuready-sim: %s\n", err.msg);
    } else if (write_file(applypath, doc.data, doc.len) != 0) {
        fprintf(stderr, "gpuready-sim: cannot write %s: %s\n", applypath, strerror(errno));
    } else {
        printf("apply %s\n", applypath);
        remember(w, v, &p, now, logpath);
    }
    fflush(stdout);
    gr_buf_free(&doc);
    return 0;
}

static int cmd_watch(int argc, char **argv)
{
    watch_ctx w;
    memset(&w, 0, sizeof w);
    w.gpu = opt(argc, argv, "--gpu");
    w.dir = opt(argc, argv, "--dir");
    if (w.gpu == NULL || w.dir == NULL)
        return usage();
    if (gr_sim_gpu_find(w.gpu) == NULL) {
        fprintf(stderr, "gpuready-sim: --gpu: \"%s\" is not one of %s\n", w.gpu,
                gr_sim_gpu_names());
        return 2;
    }
    int rc = load_spec(opt(argc, argv, "--spec"), &w.spec);
    if (rc != 0)
        return rc;
    char path[4096];
    snprintf(path, sizeof path, "%s/logs", w.dir);
    mkdir(w.dir, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/apply", w.dir);
    mkdir(path, 0755);
    /* Timed faults counted from the start; `start` is the time in
     * DIR/start-ns when present (written once by scripts/cluster, so a
     * restarted watcher keeps the schedule). */
    int64_t start = now_ns();
    snprintf(path, sizeof path, "%s/start-ns", w.dir);
    FILE *sf = fopen(path, "r");
    if (sf != NULL) {
        if (fscanf(sf, "%" SCNd64, &start) != 1)
            start = now_ns();
        fclose(sf);
    }
    for (size_t i = 0; i < w.spec.n_nodes; i++) {
        const gr_sim_node_fault *nf = &w.spec.nodes[i];
        if (nf->not_ready.enabled && nf->not_ready.from == GR_SIM_FROM_START)
            timed("not-ready", &nf->not_ready, nf->name, start);
        if (nf->cordon.enabled && nf->cordon.from == GR_SIM_FROM_START)
            timed("cordon", &nf->cordon, nf->name, start);
    }
    fflush(stdout);
    gr_sim_stream st;
    gr_sim_stream_init(&st);
    char buf[65536];
    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        gr_sim_stream_feed(&st, buf, (size_t)n, on_value, &w);
    }
    gr_sim_stream_free(&st);
    free(w.seen);
    for (size_t i = 0; i < w.n_done; i++)
        json_decref(w.done[i].pod);
    free(w.done);
    gr_sim_groups_free(&w.groups);
    gr_sim_spec_free(&w.spec);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "nodes") == 0)
        return cmd_nodes(argc, argv);
    if (strcmp(argv[1], "check-spec") == 0) {
        if (argc != 3)
            return usage();
        gr_sim_spec s;
        int rc = load_spec(argv[2], &s);
        if (rc == 0)
            gr_sim_spec_free(&s);
        return rc;
    }
    if (strcmp(argv[1], "policy") == 0)
        return cmd_policy(argc, argv);
    if (strcmp(argv[1], "watch") == 0)
        return cmd_watch(argc, argv);
    return usage();
}
