/*
 * reconcile-cases — run reconcile cases (docs/reconcile-cases.md) against the
 * real control plane that scripts/cluster started (GR_CLUSTER_DIR), with the
 * controller manager as a child process. Normally started through
 * scripts/reconcile-cases, which brings a cluster up when none is given.
 *
 *   reconcile-cases [--update] [--manager CMD | --no-manager] [--keep] DIR...
 *
 * Exit status: 0 when every case passed, 1 when one failed, 2 on bad usage or
 * when the cluster/manager could not be started.
 */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "gr_buf.h"
#include "gr_cases.h"
#include "gr_harness.h"
#include "gr_json.h"
#include "gr_kube_config.h"
#include "gr_kube_discovery.h"
#include "gr_kube_rest.h"
#include "gr_test_scale.h"
#include "gr_time.h"
#include "gr_yaml.h"

#define FIELD_MANAGER   "reconcile-cases"
#define POLL_NS         (200LL * 1000000LL)
#define MAX_INPUT_BYTES ((size_t)16 * 1024 * 1024)
#define MAX_CASES       4096
#define MANAGER_READY_S 120
#define FROZEN_SETTLE_S 4
#define SA_WAIT_S       30
#define MAX_TRACKED     (GR_CASES_MAX_NODES + 256)

/* core/v1 Events: also shows events.k8s.io/v1 ones, and takes the
 * involvedObject.* field selectors. */
static const gr_kube_gvr CORE_EVENTS = {"", "v1", "events"};
static const gr_kube_gvr SERVICEACCOUNTS = {"", "v1", "serviceaccounts"};
static const gr_kube_gvr VAPS = {"admissionregistration.k8s.io", "v1",
                                 "validatingadmissionpolicies"};
static const gr_kube_gvr VAPBS = {"admissionregistration.k8s.io", "v1",
                                  "validatingadmissionpolicybindings"};

typedef struct opts {
    bool update;
    bool keep;
    bool no_manager;
    const char *manager_cmd;
} opts;

typedef struct runner {
    opts o;
    gr_harness_cluster cluster;
    gr_kube_client *kc;
    gr_kube_mapper *mapper;
    char tmpdir[PATH_MAX];
    char logs_dir[PATH_MAX];
    pid_t manager;
    int metrics_port;
    int health_port;
} runner;

/* A cluster-scoped object (or extra namespace) a case created. */
typedef struct tracked {
    gr_kube_gvr gvr;
    char group[128], version[64], resource[128];
    char name[256];
} tracked;

typedef struct kcase {
    runner *r;
    const char *dir;
    char name[256];
    char ns[64];
    char node_hash[7];
    gr_cases_config cfg;
    tracked *trk;
    size_t ntrk;
    gr_buf log;  /* failure explanation */
    long wait_s; /* the last wait's length: timeoutSeconds scaled to the load */
} kcase;

/* A wait's deadline: the case's timeoutSeconds bounds a hang, it is not a
 * timing assertion, so on a loaded machine it stretches like every other
 * integration wait (gr_test_scale.h: GR_TEST_TIMEOUT_SCALE × load, load
 * clamped to [1, 4]). The length is kept for the failure message. */
static int64_t case_deadline(kcase *k)
{
    k->wait_s = (long)((double)k->cfg.timeout_s * gr_test_timeout_scale() + 0.5);
    if (k->wait_s < k->cfg.timeout_s)
        k->wait_s = k->cfg.timeout_s;
    return gr_time_mono_ns() + (int64_t)k->wait_s * 1000000000LL;
}

static volatile sig_atomic_t g_stop;

/* snprintf that truncates silently (paths and names here are bounded). */
static void fmt_str(char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fmt_str(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !g_stop) {
    }
}

static void fail(kcase *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(kcase *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)gr_buf_vprintf(&k->log, fmt, ap);
    va_end(ap);
    (void)gr_buf_putc(&k->log, '\n');
}

static const char *or_str(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static int read_file(const char *path, gr_buf *out, gr_err *err)
{
    gr_buf_init(out, MAX_INPUT_BYTES);
    FILE *f = fopen(path, "rb");
    if (!f)
        return gr_err_set(err, GR_EIO, "%s: %s", path, strerror(errno));
    char chunk[65536];
    size_t n;
    int rc = GR_OK;
    while (rc == GR_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        rc = gr_buf_append(out, chunk, n);
    if (rc == GR_OK && ferror(f))
        rc = gr_err_set(err, GR_EIO, "%s: read failed", path);
    else if (rc == GR_ETOOBIG)
        gr_err_set(err, rc, "%s: larger than %zu bytes", path, MAX_INPUT_BYTES);
    else if (rc != GR_OK)
        gr_err_set(err, rc, "%s: out of memory", path);
    fclose(f);
    if (rc == GR_OK && !out->data)
        rc = gr_buf_puts(out, "");
    return rc;
}

static int write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    return (fclose(f) == 0 && w == len) ? 0 : -1;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ------------------------------------------------------------ HTTP (local) */

static size_t http_write(char *p, size_t sz, size_t n, void *ud)
{
    return gr_buf_append(ud, p, sz * n) == GR_OK ? sz * n : 0;
}

/* GET url into out (capped); returns the HTTP code or -1. */
static long http_get(const char *url, gr_buf *out)
{
    CURL *h = curl_easy_init();
    if (!h)
        return -1;
    gr_buf_reset(out);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, http_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L); /* loopback, self-signed */
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    long code = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    return code;
}

/* ------------------------------------------------------------- manager */

static int free_port(void)
{
    /* Let the kernel pick: bind port 0 and read it back. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* The default manager: gpuready-manager next to this build
 * (<build>/src/cmd/gpuready-manager, this tool is <build>/test/cases/...). */
static bool default_manager(char *out, size_t outsz)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *s = strrchr(self, '/');
    if (!s)
        return false;
    *s = '\0';
    fmt_str(out, outsz, "%s/../../src/cmd/gpuready-manager", self);
    return access(out, X_OK) == 0;
}

static int start_manager(runner *r)
{
    char cmd[PATH_MAX + 512];
    if (r->o.no_manager)
        return 0;
    r->metrics_port = free_port();
    r->health_port = free_port();
    if (r->metrics_port < 0 || r->health_port < 0) {
        fprintf(stderr, "reconcile-cases: no free loopback port for the manager\n");
        return -1;
    }
    if (r->o.manager_cmd) {
        fmt_str(cmd, sizeof cmd, "%s", r->o.manager_cmd);
    } else {
        char path[PATH_MAX];
        if (!default_manager(path, sizeof path)) {
            fprintf(stderr,
                    "reconcile-cases: gpuready-manager is not built in this build tree; build it "
                    "(ninja gpuready-manager), give --manager CMD, or run with --no-manager\n");
            return -1;
        }
        fmt_str(cmd, sizeof cmd,
                "exec '%s' "
                "--metrics-bind-address 127.0.0.1:$GR_METRICS_PORT "
                "--health-probe-bind-address 127.0.0.1:$GR_HEALTH_PORT",
                path);
    }
    char port[16];
    setenv("KUBECONFIG", r->cluster.kubeconfig, 1);
    setenv("GR_POD_LOGS_DIR", r->logs_dir, 1);
    fmt_str(port, sizeof port, "%d", r->metrics_port);
    setenv("GR_METRICS_PORT", port, 1);
    fmt_str(port, sizeof port, "%d", r->health_port);
    setenv("GR_HEALTH_PORT", port, 1);
    char logpath[PATH_MAX + 16];
    fmt_str(logpath, sizeof logpath, "%s/manager.log", r->tmpdir);
    fprintf(stderr, "reconcile-cases: manager: %s (log %s)\n", cmd, logpath);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* If the runner dies (a crash, SIGKILL from a CTest timeout), the
         * manager goes with it instead of reconciling the shared control
         * plane for the next test. `sh -c 'exec …'` keeps the signal: it
         * survives exec. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
            _exit(127);
        int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    r->manager = pid;
    char url[128];
    fmt_str(url, sizeof url, "http://127.0.0.1:%d/readyz", r->health_port);
    gr_buf body;
    gr_buf_init(&body, 1024 * 1024);
    int64_t deadline = gr_time_mono_ns() + (int64_t)MANAGER_READY_S * 1000000000LL;
    int rc = -1;
    while (!g_stop && gr_time_mono_ns() < deadline) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "reconcile-cases: the manager exited before it was ready (see %s)\n",
                    logpath);
            r->manager = 0;
            break;
        }
        if (http_get(url, &body) == 200) {
            rc = 0;
            break;
        }
        sleep_ns(POLL_NS);
    }
    gr_buf_free(&body);
    if (rc != 0 && r->manager)
        fprintf(stderr, "reconcile-cases: the manager did not report ready on %s within %d s\n",
                url, MANAGER_READY_S);
    return rc;
}

static void stop_manager(runner *r)
{
    if (r->manager <= 0)
        return;
    kill(-r->manager, SIGTERM);
    for (int i = 0; i < 150; i++) {
        if (waitpid(r->manager, NULL, WNOHANG) == r->manager) {
            r->manager = 0;
            return;
        }
        sleep_ns(POLL_NS);
    }
    kill(-r->manager, SIGKILL);
    waitpid(r->manager, NULL, 0);
    r->manager = 0;
}

/* ------------------------------------------------------------- objects */

static void set_gvr(tracked *t)
{
    t->gvr.group = t->group;
    t->gvr.version = t->version;
    t->gvr.resource = t->resource;
}

/* Remember a cluster-scoped object for cleanup. GR_ETOOBIG past
 * MAX_TRACKED (the case fails rather than leak objects). */
static int track(kcase *k, const gr_kube_mapping *m, const char *name)
{
    for (size_t i = 0; i < k->ntrk; i++)
        if (!strcmp(k->trk[i].resource, m->resource) && !strcmp(k->trk[i].group, m->group) &&
            !strcmp(k->trk[i].name, name))
            return GR_OK;
    if (k->ntrk >= MAX_TRACKED) {
        fail(k, "more than %d cluster-scoped objects in one case", MAX_TRACKED);
        return GR_ETOOBIG;
    }
    tracked *t = &k->trk[k->ntrk++];
    fmt_str(t->group, sizeof t->group, "%s", m->group);
    fmt_str(t->version, sizeof t->version, "%s", m->version);
    fmt_str(t->resource, sizeof t->resource, "%s", m->resource);
    fmt_str(t->name, sizeof t->name, "%s", name);
    set_gvr(t);
    return GR_OK;
}

static gr_kube_gvr gvr_of(const gr_kube_mapping *m)
{
    gr_kube_gvr g = {m->group, m->version, m->resource};
    return g;
}

/* "Kind" or "Kind.group" → mapping. Bare kinds are looked up in
 * nvcre.nvidia.com first, then the core group, then the built-in groups,
 * then every installed CRD. */
static int resolve_kind(runner *r, const char *kind, gr_kube_mapping *out, gr_err *err)
{
    char k[128];
    const char *dot = strchr(kind, '.');
    if (dot) {
        fmt_str(k, sizeof k, "%.*s", (int)(dot - kind), kind);
        return gr_kube_mapper_kind(r->mapper, dot + 1, NULL, k, out, err);
    }
    static const char *const GROUPS[] = {"nvcre.nvidia.com",
                                         "",
                                         "trainer.kubeflow.org",
                                         "batch",
                                         "apps",
                                         "jobset.x-k8s.io",
                                         "resource.k8s.io",
                                         "scheduling.k8s.io",
                                         "coordination.k8s.io",
                                         "policy",
                                         "rbac.authorization.k8s.io",
                                         "admissionregistration.k8s.io",
                                         "apiextensions.k8s.io",
                                         "events.k8s.io",
                                         NULL};
    for (size_t i = 0; GROUPS[i]; i++)
        if (gr_kube_mapper_kind(r->mapper, GROUPS[i], NULL, kind, out, NULL) == GR_OK)
            return GR_OK;
    json_t *list = NULL;
    int rc = gr_kube_list_all(r->kc, &GR_KUBE_CRDS, NULL, NULL, &list, NULL, err);
    if (rc != GR_OK)
        return rc;
    size_t i;
    json_t *crd;
    rc = gr_err_set(err, GR_ENOTFOUND,
                    "kind %s is not served by the API server (install its CRD with an "
                    "input_crd_*.yaml, or write Kind.group)",
                    kind);
    json_array_foreach(json_object_get(list, "items"), i, crd)
    {
        const char *ck = json_string_value(
            json_object_get(json_object_get(json_object_get(crd, "spec"), "names"), "kind"));
        const char *g = json_string_value(json_object_get(json_object_get(crd, "spec"), "group"));
        if (ck && g && strcmp(ck, kind) == 0 &&
            gr_kube_mapper_kind(r->mapper, g, NULL, kind, out, err) == GR_OK) {
            rc = GR_OK;
            break;
        }
    }
    json_decref(list);
    return rc;
}

/* The namespace an object reference lands in: the case namespace unless an
 * explicit one other than "default" is given. NULL for cluster-scoped. */
static const char *ref_ns(const kcase *k, const gr_kube_mapping *m, const char *given)
{
    if (!m->namespaced)
        return NULL;
    if (!given || !*given || strcmp(given, "default") == 0)
        return k->ns;
    return given;
}

static int ensure_namespace(kcase *k, const char *ns, bool track_it)
{
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Namespace",
                            "metadata", "name", ns, "labels", "gpuready.test/harness", "true");
    gr_err err;
    gr_kube_status st;
    int rc = gr_kube_create(k->r->kc, &GR_KUBE_NAMESPACES, NULL, obj, NULL, NULL, &st, &err);
    json_decref(obj);
    if (rc == GR_ECONFLICT && track_it)
        return GR_OK; /* exists already: not ours, never deleted */
    if (rc != GR_OK) {
        /* The case namespace must be new (its name is random). */
        fail(k, "create namespace %s: %s", ns, err.msg);
        return rc;
    }
    if (track_it) {
        gr_kube_mapping m = {.group = "", .version = "v1", .resource = "namespaces"};
        if ((rc = track(k, &m, ns)) != GR_OK) {
            (void)gr_kube_delete(k->r->kc, &GR_KUBE_NAMESPACES, NULL, ns, NULL, NULL, NULL, NULL);
            return rc;
        }
    }
    /* With the controller manager, pods need the default ServiceAccount. */
    if (k->r->cluster.controller_manager) {
        int64_t deadline = gr_time_mono_ns() + (int64_t)SA_WAIT_S * 1000000000LL;
        while (!g_stop && gr_time_mono_ns() < deadline) {
            json_t *sa = NULL;
            if (gr_kube_get(k->r->kc, &SERVICEACCOUNTS, ns, "default", NULL, &sa, NULL, NULL) ==
                GR_OK) {
                json_decref(sa);
                break;
            }
            sleep_ns(POLL_NS);
        }
    }
    return GR_OK;
}

static int install_crds(kcase *k)
{
    DIR *d = opendir(k->dir);
    if (!d)
        return GR_OK;
    struct dirent *e;
    char *names[256];
    size_t n = 0;
    while ((e = readdir(d)) && n < 256)
        if (!strncmp(e->d_name, "input_crd_", 10) && strstr(e->d_name, ".yaml"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    int rc = GR_OK;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++)
            if (names[i] && names[j] && strcmp(names[i], names[j]) > 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    }
    for (size_t i = 0; i < n && rc == GR_OK; i++) {
        char path[PATH_MAX];
        gr_err err;
        json_t *docs = NULL;
        if (!names[i]) {
            rc = GR_ENOMEM;
            break;
        }
        fmt_str(path, sizeof path, "%s/%s", k->dir, names[i]);
        rc = gr_yaml_load_file(path, MAX_INPUT_BYTES, &docs, &err);
        if (rc != GR_OK) {
            fail(k, "%s", err.msg);
            break;
        }
        size_t j;
        json_t *crd;
        json_array_foreach(docs, j, crd)
        {
            const char *name = gr_kube_obj_meta(crd, "name");
            gr_kube_opts o = {.field_manager = FIELD_MANAGER, .force = true};
            if (!name || (rc = gr_kube_apply(k->r->kc, &GR_KUBE_CRDS, NULL, crd, &o, NULL, NULL,
                                             &err)) != GR_OK) {
                fail(k, "%s: document %zu: %s", path, j + 1,
                     name ? err.msg : "a CRD needs metadata.name");
                rc = rc ? rc : GR_EINVAL;
                break;
            }
            /* wait for Established */
            int64_t deadline = case_deadline(k);
            bool ok = false;
            while (!ok && !g_stop && gr_time_mono_ns() < deadline) {
                json_t *cur = NULL;
                if (gr_kube_get(k->r->kc, &GR_KUBE_CRDS, NULL, name, NULL, &cur, NULL, NULL) ==
                    GR_OK) {
                    size_t ci;
                    json_t *c;
                    json_array_foreach(
                        json_object_get(json_object_get(cur, "status"), "conditions"), ci, c)
                    {
                        const char *t = json_string_value(json_object_get(c, "type"));
                        const char *s = json_string_value(json_object_get(c, "status"));
                        if (t && s && !strcmp(t, "Established") && !strcmp(s, "True"))
                            ok = true;
                    }
                    json_decref(cur);
                }
                if (!ok)
                    sleep_ns(POLL_NS);
            }
            if (!ok) {
                fail(k, "%s: CRD %s not Established within %ld s", path, name, k->wait_s);
                rc = GR_ETIMEDOUT;
                break;
            }
        }
        json_decref(docs);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    if (rc == GR_OK && n > 0)
        (void)gr_kube_mapper_refresh(k->r->mapper, NULL);
    return rc;
}

static int generate_nodes(kcase *k)
{
    const gr_cases_config *c = &k->cfg;
    for (long i = 0; c->generate_nodes && i < c->node_count; i++) {
        char name[GR_CASES_NODE_NAME_MAX], idx[16];
        gr_err err;
        if (gr_cases_node_name(k->ns, i, name, &err) != GR_OK) {
            fail(k, "%s", err.msg);
            return err.code;
        }
        fmt_str(idx, sizeof idx, "%02ld", i);
        json_t *labels = json_object();
        if (c->node_labels)
            json_object_update(labels, (json_t *)(uintptr_t)c->node_labels);
        json_object_set_new(labels, "nvidia.com/gpu.present", json_string("true"));
        json_object_set_new(labels, "kubernetes.io/hostname", json_string(name));
        json_t *node = json_pack("{s:s, s:s, s:{s:s, s:o}, s:{}}", "apiVersion", "v1", "kind",
                                 "Node", "metadata", "name", name, "labels", labels, "spec");
        if (c->provider_id) {
            bool oom = false;
            (void)oom;
            gr_buf p;
            gr_buf_init(&p, 4096);
            for (const char *s = c->provider_id; *s; s++) {
                if (!strncmp(s, "{name}", 6)) {
                    (void)gr_buf_puts(&p, name);
                    s += 5;
                } else if (!strncmp(s, "{index}", 7)) {
                    (void)gr_buf_puts(&p, idx);
                    s += 6;
                } else {
                    (void)gr_buf_putc(&p, *s);
                }
            }
            json_object_set_new(json_object_get(node, "spec"), "providerID",
                                json_string(gr_buf_cstr(&p)));
            gr_buf_free(&p);
        }
        if (c->node_allocatable || c->node_allocatable_of) {
            char key[24];
            fmt_str(key, sizeof key, "%ld", i);
            json_t *a = c->node_allocatable ? json_deep_copy(c->node_allocatable) : json_object();
            const json_t *over = json_object_get(c->node_allocatable_of, key);
            if (a && over)
                json_object_update(a, (json_t *)(uintptr_t)over);
            json_object_set_new(node, "status",
                                json_pack("{s:O, s:o}", "capacity", a, "allocatable", a));
        }
        gr_kube_mapping m = {.group = "", .version = "v1", .resource = "nodes"};
        int rc = track(k, &m, name);
        if (rc != GR_OK) {
            json_decref(node);
            return rc;
        }
        rc = gr_kube_create(k->r->kc, &GR_KUBE_NODES, NULL, node, NULL, NULL, NULL, &err);
        json_decref(node);
        if (rc != GR_OK) {
            fail(k, "generateNodes: create Node %s: %s", name, err.msg);
            return rc;
        }
    }
    return GR_OK;
}

static int copy_logs(kcase *k)
{
    DIR *d = opendir(k->dir);
    if (!d)
        return GR_OK;
    char nsdir[PATH_MAX + 80];
    fmt_str(nsdir, sizeof nsdir, "%s/%s", k->r->logs_dir, k->ns);
    int rc = GR_OK;
    struct dirent *e;
    while (rc == GR_OK && (e = readdir(d))) {
        size_t L = strlen(e->d_name);
        if (strncmp(e->d_name, "input_logs_", 11) != 0 || L <= 15 ||
            strcmp(e->d_name + L - 4, ".txt") != 0)
            continue;
        char src[PATH_MAX], dst[PATH_MAX + 400];
        gr_buf b;
        gr_err err;
        fmt_str(src, sizeof src, "%s/%s", k->dir, e->d_name);
        fmt_str(dst, sizeof dst, "%s/%.*s.txt", nsdir, (int)(L - 15), e->d_name + 11);
        (void)mkdir(nsdir, 0755);
        rc = read_file(src, &b, &err);
        if (rc == GR_OK && write_file(dst, b.data, b.len) != 0) {
            rc = GR_EIO;
            gr_err_set(&err, rc, "write %s: %s", dst, strerror(errno));
        }
        if (rc != GR_OK)
            fail(k, "input logs: %s", err.msg);
        gr_buf_free(&b);
    }
    closedir(d);
    return rc;
}

static void remove_logs(kcase *k)
{
    char nsdir[PATH_MAX + 80];
    fmt_str(nsdir, sizeof nsdir, "%s/%s", k->r->logs_dir, k->ns);
    DIR *d = opendir(nsdir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[PATH_MAX + 400];
        fmt_str(p, sizeof p, "%s/%s", nsdir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(nsdir);
}

/* rejectWorkflowCreates: a ValidatingAdmissionPolicy that denies CREATE of
 * workflows.nvcre.nvidia.com in the case namespace with reason Forbidden
 * (403), and a probe ConfigMap name that it denies too, so the runner can
 * wait until the API server enforces it. */
static int reject_workflows(kcase *k)
{
    char name[128], probe[80];
    fmt_str(name, sizeof name, "reconcile-cases-reject-workflows-%s", k->ns);
    fmt_str(probe, sizeof probe, "reconcile-cases-reject-probe");
    /* The runner's own creates (input_client_objects.yaml, field manager
     * FIELD_MANAGER) pass; everyone else's Workflow creates are refused. */
    char expr[1024];
    fmt_str(expr, sizeof expr,
            "(has(request.options) && has(request.options.fieldManager) && "
            "request.options.fieldManager == '" FIELD_MANAGER "') || "
            "(request.resource.resource != 'workflows' && !(request.resource.resource == "
            "'configmaps' && object.metadata.name == '%s'))",
            probe);
    json_t *vap = json_pack(
        "{s:s, s:s, s:{s:s}, s:{s:s, s:{s:[{s:[s], s:[s], s:[s], s:[s]}, {s:[s], s:[s], "
        "s:[s], s:[s]}]}, s:[{s:s, s:s, s:s}]}}",
        "apiVersion", "admissionregistration.k8s.io/v1", "kind", "ValidatingAdmissionPolicy",
        "metadata", "name", name, "spec", "failurePolicy", "Fail", "matchConstraints",
        "resourceRules", "apiGroups", "nvcre.nvidia.com", "apiVersions", "*", "operations",
        "CREATE", "resources", "workflows", "apiGroups", "", "apiVersions", "v1", "operations",
        "CREATE", "resources", "configmaps", "validations", "expression", expr, "message",
        "workflow creation is rejected by the reconcile case (rejectWorkflowCreates)", "reason",
        "Forbidden");
    json_t *bind = json_pack(
        "{s:s, s:s, s:{s:s}, s:{s:s, s:[s], s:{s:{s:{s:s}}}}}", "apiVersion",
        "admissionregistration.k8s.io/v1", "kind", "ValidatingAdmissionPolicyBinding", "metadata",
        "name", name, "spec", "policyName", name, "validationActions", "Deny", "matchResources",
        "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name", k->ns);
    gr_err err;
    int rc = vap && bind ? GR_OK : GR_ENOMEM;
    gr_kube_mapping m1 = {.group = "admissionregistration.k8s.io",
                          .version = "v1",
                          .resource = "validatingadmissionpolicies"};
    gr_kube_mapping m2 = m1;
    fmt_str(m2.resource, sizeof m2.resource, "validatingadmissionpolicybindings");
    if (rc == GR_OK) {
        if ((rc = track(k, &m2, name)) == GR_OK && (rc = track(k, &m1, name)) == GR_OK) {
            rc = gr_kube_create(k->r->kc, &VAPS, NULL, vap, NULL, NULL, NULL, &err);
            if (rc == GR_OK)
                rc = gr_kube_create(k->r->kc, &VAPBS, NULL, bind, NULL, NULL, NULL, &err);
            if (rc != GR_OK)
                fail(k, "rejectWorkflowCreates: %s", err.msg);
        }
    }
    json_decref(vap);
    json_decref(bind);
    if (rc != GR_OK)
        return rc;
    json_t *cm = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                           "metadata", "name", probe);
    gr_kube_opts o = {.dry_run = true};
    int64_t deadline = case_deadline(k);
    rc = GR_ETIMEDOUT;
    while (!g_stop && gr_time_mono_ns() < deadline) {
        int prc = gr_kube_create(k->r->kc, &GR_KUBE_CONFIGMAPS, k->ns, cm, &o, NULL, NULL, NULL);
        if (prc == GR_EPERM || prc == GR_EINVAL) {
            rc = GR_OK;
            break;
        }
        sleep_ns(POLL_NS);
    }
    json_decref(cm);
    if (rc != GR_OK)
        fail(k, "rejectWorkflowCreates: the admission policy was not enforced within %ld s",
             k->wait_s);
    return rc;
}

static int create_objects(kcase *k)
{
    char path[PATH_MAX];
    fmt_str(path, sizeof path, "%s/input_client_objects.yaml", k->dir);
    if (!exists(path))
        return GR_OK;
    json_t *docs = NULL;
    gr_err err;
    int rc = gr_yaml_load_file(path, MAX_INPUT_BYTES, &docs, &err);
    if (rc != GR_OK) {
        fail(k, "%s", err.msg);
        return rc;
    }
    size_t i;
    json_t *doc;
    json_array_foreach(docs, i, doc)
    {
        const char *av = json_string_value(json_object_get(doc, "apiVersion"));
        const char *kind = json_string_value(json_object_get(doc, "kind"));
        const char *name = gr_kube_obj_meta(doc, "name");
        gr_kube_mapping m;
        if (!av || !kind || !name) {
            fail(k, "%s: document %zu: apiVersion, kind and metadata.name are required", path,
                 i + 1);
            rc = GR_EINVAL;
            break;
        }
        if ((rc = gr_kube_mapper_api_version_kind(k->r->mapper, av, kind, &m, &err)) != GR_OK) {
            fail(k, "%s: document %zu (%s %s): %s", path, i + 1, kind, name, err.msg);
            break;
        }
        json_t *obj = json_deep_copy(doc);
        json_t *status = json_incref(json_object_get(obj, "status"));
        json_object_del(obj, "status");
        const char *ns = ref_ns(k, &m, gr_kube_obj_meta(doc, "namespace"));
        json_t *md = json_object_get(obj, "metadata");
        if (ns) {
            json_object_set_new(md, "namespace", json_string(ns));
            if (strcmp(ns, k->ns) != 0 && (rc = ensure_namespace(k, ns, true)) != GR_OK) {
                json_decref(obj);
                json_decref(status);
                break;
            }
        } else {
            json_object_del(md, "namespace");
            if ((rc = track(k, &m, name)) != GR_OK) {
                json_decref(obj);
                json_decref(status);
                break;
            }
        }
        /* An Event's involvedObject lives in the Event's namespace. */
        json_t *inv = json_object_get(obj, "involvedObject");
        if (ns && strcmp(kind, "Event") == 0 && json_is_object(inv)) {
            const char *ins = json_string_value(json_object_get(inv, "namespace"));
            if (!ins || !*ins || strcmp(ins, "default") == 0)
                json_object_set_new(inv, "namespace", json_string(ns));
        }
        gr_kube_gvr g = gvr_of(&m);
        gr_kube_opts co = {.field_manager = FIELD_MANAGER};
        rc = gr_kube_create(k->r->kc, &g, ns, obj, &co, NULL, NULL, &err);
        if (rc == GR_OK && status) {
            json_t *p = json_pack("{s:O}", "status", status);
            gr_kube_opts o = {.subresource = "status"};
            rc =
                gr_kube_patch(k->r->kc, &g, ns, name, GR_KUBE_PATCH_MERGE, p, &o, NULL, NULL, &err);
            json_decref(p);
            if (rc != GR_OK)
                gr_err_prefix(&err, "status: ");
        }
        json_decref(obj);
        json_decref(status);
        if (rc != GR_OK) {
            fail(k, "%s: document %zu (%s %s): %s", path, i + 1, kind, name, err.msg);
            break;
        }
    }
    json_decref(docs);
    return rc;
}

/* ---------------------------------------------------------------- waits */

static int wait_for(kcase *k, const char *what, const gr_cases_wait *w)
{
    gr_kube_mapping m;
    gr_err err;
    int rc = resolve_kind(k->r, w->ref.kind, &m, &err);
    if (rc != GR_OK) {
        fail(k, "%s: %s", what, err.msg);
        return rc;
    }
    gr_kube_gvr g = gvr_of(&m);
    const char *ns = ref_ns(k, &m, w->ref.namespace_);
    int64_t deadline = case_deadline(k);
    json_t *last = NULL;
    char lasterr[GR_ERR_MSG_MAX] = "object not found";
    while (!g_stop) {
        json_t *obj = NULL;
        if (gr_kube_get(k->r->kc, &g, ns, w->ref.name, NULL, &obj, NULL, &err) != GR_OK) {
            fmt_str(lasterr, sizeof lasterr, "%s", err.msg);
        } else {
            bool ok = gr_cases_wait_met(w, obj);
            json_decref(last);
            last = obj;
            if (ok) {
                json_decref(last);
                return GR_OK;
            }
        }
        if (gr_time_mono_ns() >= deadline)
            break;
        sleep_ns(POLL_NS);
    }
    char *st =
        last ? json_dumps(json_object_get(last, "status"), JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    fail(k, "%s %s/%s: timed out after %ld s waiting for%s%s%s%s%s; last status: %s", what,
         w->ref.kind, w->ref.name, k->wait_s, w->condition ? " condition " : " existence",
         w->condition ? w->condition : "", w->reason ? " reason " : "", w->reason ? w->reason : "",
         w->restart_count >= 0 || w->failed_node_count >= 0 ? " (and counts)" : "",
         last ? (st ? st : "null") : lasterr);
    free(st);
    json_decref(last);
    return GR_ETIMEDOUT;
}

static int apply_patches(kcase *k, size_t si, const gr_cases_step *s)
{
    for (size_t j = 0; j < s->npatches; j++) {
        const gr_cases_patch *p = &s->patches[j];
        gr_kube_mapping m;
        gr_err err;
        int rc = resolve_kind(k->r, p->target.kind, &m, &err);
        gr_kube_gvr g = gvr_of(&m);
        gr_kube_opts o = {.subresource = p->status ? "status" : NULL};
        if (rc == GR_OK)
            rc = gr_kube_patch(k->r->kc, &g, ref_ns(k, &m, p->target.namespace_), p->target.name,
                               GR_KUBE_PATCH_MERGE, p->patch, &o, NULL, NULL, &err);
        if (rc != GR_OK) {
            fail(k, "steps[%zu].patches[%zu] (%s/%s): %s", si, j, p->target.kind, p->target.name,
                 err.msg);
            return rc;
        }
    }
    return GR_OK;
}

static int delete_objects(kcase *k)
{
    for (size_t i = 0; i < k->cfg.ndelete; i++) {
        const gr_cases_delete *d = &k->cfg.delete_after_wait[i];
        gr_kube_mapping m;
        gr_err err;
        int rc = resolve_kind(k->r, d->ref.kind, &m, &err);
        gr_kube_gvr g = gvr_of(&m);
        const char *ns = rc == GR_OK ? ref_ns(k, &m, d->ref.namespace_) : NULL;
        if (rc == GR_OK) {
            rc = gr_kube_delete(k->r->kc, &g, ns, d->ref.name, NULL, NULL, NULL, &err);
            if (rc == GR_ENOTFOUND)
                rc = GR_OK;
        }
        if (rc == GR_OK && d->strip_finalizers) {
            json_t *p = json_pack("{s:{s:n}}", "metadata", "finalizers");
            rc = gr_kube_patch(k->r->kc, &g, ns, d->ref.name, GR_KUBE_PATCH_MERGE, p, NULL, NULL,
                               NULL, &err);
            json_decref(p);
            if (rc == GR_ENOTFOUND)
                rc = GR_OK;
        }
        if (rc != GR_OK) {
            fail(k, "deleteAfterWait[%zu] (%s/%s): %s", i, d->ref.kind, d->ref.name, err.msg);
            return rc;
        }
    }
    if (!k->cfg.wait_for_deletion)
        return GR_OK;
    int64_t deadline = case_deadline(k);
    for (size_t i = 0; i < k->cfg.ndelete; i++) {
        const gr_cases_delete *d = &k->cfg.delete_after_wait[i];
        gr_kube_mapping m;
        if (resolve_kind(k->r, d->ref.kind, &m, NULL) != GR_OK)
            continue;
        gr_kube_gvr g = gvr_of(&m);
        for (;;) {
            json_t *obj = NULL;
            int rc = gr_kube_get(k->r->kc, &g, ref_ns(k, &m, d->ref.namespace_), d->ref.name, NULL,
                                 &obj, NULL, NULL);
            if (rc == GR_ENOTFOUND)
                break;
            if (gr_time_mono_ns() >= deadline || g_stop) {
                const json_t *fz = json_object_get(json_object_get(obj, "metadata"), "finalizers");
                char *f = fz ? json_dumps(fz, JSON_COMPACT) : NULL;
                fail(k, "waitForDeletion: %s/%s still exists after %ld s (finalizers: %s)",
                     d->ref.kind, d->ref.name, k->wait_s, f ? f : "none");
                free(f);
                json_decref(obj);
                return GR_ETIMEDOUT;
            }
            json_decref(obj);
            sleep_ns(POLL_NS);
        }
    }
    return GR_OK;
}

/* --------------------------------------------------------------- events */

static json_t *list_events(kcase *k, const char *ns, const char *kind, const char *name)
{
    char sel[1024];
    fmt_str(sel, sizeof sel, "involvedObject.kind=%s,involvedObject.name=%s", kind, name);
    gr_kube_opts o = {.field_selector = sel};
    json_t *list = NULL;
    if (gr_kube_list_all(k->r->kc, &CORE_EVENTS, ns, &o, &list, NULL, NULL) != GR_OK)
        return NULL;
    json_t *items = json_incref(json_object_get(list, "items"));
    json_decref(list);
    return items;
}

static int check_events(kcase *k)
{
    for (size_t i = 0; i < k->cfg.nevents; i++) {
        const gr_cases_event_case *ec = &k->cfg.events[i];
        const char *ns = ec->namespace_ && *ec->namespace_ && strcmp(ec->namespace_, "default")
                             ? ec->namespace_
                             : k->ns;
        /* One cumulative deadline per event case. */
        int64_t deadline = case_deadline(k);
        size_t missing = ec->nexpect;
        json_t *items = NULL;
        while (!g_stop) {
            json_decref(items);
            items = list_events(k, ns, ec->involved_kind, ec->involved_name);
            missing = 0;
            for (size_t j = 0; j < ec->nexpect; j++) {
                bool seen = false;
                size_t x;
                json_t *e;
                json_array_foreach(items, x, e)
                {
                    const char *t = json_string_value(json_object_get(e, "type"));
                    const char *r = json_string_value(json_object_get(e, "reason"));
                    if (r && !strcmp(r, ec->expect[j].reason) &&
                        (!ec->expect[j].type || (t && !strcmp(t, ec->expect[j].type))))
                        seen = true;
                }
                missing += !seen;
            }
            if (!missing || gr_time_mono_ns() >= deadline)
                break;
            sleep_ns(POLL_NS);
        }
        if (missing) {
            gr_buf seen;
            gr_buf_init(&seen, 64 * 1024);
            size_t x;
            json_t *e;
            json_array_foreach(items, x, e)
            {
                (void)gr_buf_printf(&seen, "%s%s/%s", x ? ", " : "",
                                    or_str(json_string_value(json_object_get(e, "type")), "?"),
                                    or_str(json_string_value(json_object_get(e, "reason")), "?"));
            }
            for (size_t j = 0; j < ec->nexpect; j++)
                fail(k, "events[%zu] %s/%s: expected event %s/%s (within %ld s); seen: [%s]", i,
                     ec->involved_kind, ec->involved_name,
                     ec->expect[j].type ? ec->expect[j].type : "*", ec->expect[j].reason, k->wait_s,
                     seen.data ? seen.data : "");
            gr_buf_free(&seen);
            json_decref(items);
            return GR_ETIMEDOUT;
        }
        json_decref(items);
    }
    return GR_OK;
}

/* Events on the waitFor object with one of the reasons, as
 * [{type, reason, message, count}] sorted; NULL on error. */
static json_t *event_summary(kcase *k, const char *const *reasons)
{
    gr_kube_mapping m;
    const gr_cases_wait *w = &k->cfg.wait;
    if (resolve_kind(k->r, w->ref.kind, &m, NULL) != GR_OK)
        return NULL;
    json_t *items =
        list_events(k, or_str(ref_ns(k, &m, w->ref.namespace_), k->ns), m.kind, w->ref.name);
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(items, i, e)
    {
        const char *r = json_string_value(json_object_get(e, "reason"));
        bool want = false;
        for (size_t j = 0; reasons[j] && r; j++)
            want |= !strcmp(reasons[j], r);
        if (!want)
            continue;
        json_t *cnt = json_object_get(e, "count");
        json_array_append_new(out, json_pack("{s:O?, s:s, s:O?, s:I}", "type",
                                             json_object_get(e, "type"), "reason", r, "message",
                                             json_object_get(e, "message"), "count",
                                             (json_int_t)(cnt ? json_integer_value(cnt) : 1)));
    }
    json_decref(items);
    return out;
}

/* ----------------------------------------------------------- verifiers */

static int verify_spec_immutable(kcase *k)
{
    const gr_cases_wait *w = &k->cfg.wait;
    gr_kube_mapping m;
    gr_err err;
    if (resolve_kind(k->r, w->ref.kind, &m, &err) != GR_OK) {
        fail(k, "verifySpecImmutable: %s", err.msg);
        return err.code;
    }
    gr_kube_gvr g = gvr_of(&m);
    const char *ns = ref_ns(k, &m, w->ref.namespace_);
    json_t *obj = NULL;
    if (gr_kube_get(k->r->kc, &g, ns, w->ref.name, NULL, &obj, NULL, &err) != GR_OK) {
        fail(k, "verifySpecImmutable: %s", err.msg);
        return err.code;
    }
    /* The CRD's schema of spec (enum values), when the kind is a CRD. */
    json_t *crd = NULL;
    const json_t *props = NULL;
    char crdname[300];
    fmt_str(crdname, sizeof crdname, "%s.%s", m.resource, m.group);
    if (*m.group &&
        gr_kube_get(k->r->kc, &GR_KUBE_CRDS, NULL, crdname, NULL, &crd, NULL, NULL) == GR_OK) {
        size_t vi;
        json_t *ver;
        json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), vi, ver)
        {
            const char *vn = json_string_value(json_object_get(ver, "name"));
            if (vn && !strcmp(vn, m.version))
                props = gr_json_ptr_get(ver, "/schema/openAPIV3Schema/properties/spec/properties");
        }
    }
    /* Change every scalar top-level spec field, one dry-run patch each (an
     * enum field to another allowed value). None may be accepted, and at
     * least one must be refused as immutable; a change refused for another
     * reason (a pattern, a format) says nothing and is skipped. */
    size_t immutable = 0;
    const char *key;
    json_t *v;
    int rc = GR_OK;
    gr_buf other = GR_BUF_INIT(64 * 1024);
    json_object_foreach(json_object_get(obj, "spec"), key, v)
    {
        const json_t *en = json_object_get(json_object_get(props, key), "enum");
        json_t *nv = NULL;
        size_t ei;
        json_t *ev;
        json_array_foreach(en, ei, ev)
        {
            if (!nv && !gr_json_equal(ev, v))
                nv = json_deep_copy(ev);
        }
        if (!nv && !en)
            nv = json_is_string(v)    ? json_sprintf("%s-changed", json_string_value(v))
                 : json_is_integer(v) ? json_integer(json_integer_value(v) + 1)
                 : json_is_boolean(v) ? json_boolean(!json_is_true(v))
                 : json_is_real(v)    ? json_real(json_real_value(v) + 1)
                                      : NULL;
        if (!nv)
            continue;
        json_t *p = json_pack("{s:{s:o}}", "spec", key, nv);
        gr_kube_opts o = {.dry_run = true};
        gr_kube_status st;
        int prc = gr_kube_patch(k->r->kc, &g, ns, w->ref.name, GR_KUBE_PATCH_MERGE, p, &o, NULL,
                                &st, &err);
        json_decref(p);
        if (prc == GR_OK) {
            fail(k, "verifySpecImmutable: changing spec.%s of %s/%s was accepted", key, w->ref.kind,
                 w->ref.name);
            rc = GR_ESTATE;
        } else if (strstr(st.message, "immutable")) {
            immutable++;
        } else {
            (void)gr_buf_printf(&other, "\n  spec.%s: %s", key, err.msg);
        }
    }
    json_decref(obj);
    json_decref(crd);
    if (rc == GR_OK && immutable == 0) {
        fail(k,
             "verifySpecImmutable: no change of a scalar spec field of %s/%s was refused as "
             "immutable%s%s",
             w->ref.kind, w->ref.name, other.len ? "; refused otherwise:" : "",
             other.len ? other.data : "");
        rc = GR_ESTATE;
    }
    gr_buf_free(&other);
    return rc;
}

static json_t *goodput_statuses(kcase *k)
{
    gr_kube_mapping m;
    if (resolve_kind(k->r, "GoodputMeasurement", &m, NULL) != GR_OK)
        return NULL;
    gr_kube_gvr g = gvr_of(&m);
    json_t *list = NULL;
    if (gr_kube_list_all(k->r->kc, &g, k->ns, NULL, &list, NULL, NULL) != GR_OK)
        return NULL;
    json_t *out = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(list, "items"), i, e)
    {
        json_object_set(out, or_str(gr_kube_obj_meta(e, "name"), ""), json_object_get(e, "status"));
    }
    json_decref(list);
    return out;
}

static int verify_frozen(kcase *k)
{
    json_t *before = goodput_statuses(k);
    if (!before || json_object_size(before) == 0) {
        fail(k, "verifyFrozenGoodput: no GoodputMeasurement in the case namespace");
        json_decref(before);
        return GR_ESTATE;
    }
    if (k->cfg.frozen_goodput == GR_CASES_FROZEN_STRIP)
        remove_logs(k);
    sleep_ns((int64_t)FROZEN_SETTLE_S * 1000000000LL);
    json_t *after = goodput_statuses(k);
    int rc = GR_OK;
    if (!gr_json_equal(before, after)) {
        char *a = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
        char *b = after ? json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        fail(k,
             "verifyFrozenGoodput (%s): GoodputMeasurement status changed after completion:\n"
             "  before: %s\n  after:  %s",
             k->cfg.frozen_goodput == GR_CASES_FROZEN_STRIP ? "strip" : "intact", a ? a : "?",
             b ? b : "?");
        free(a);
        free(b);
        rc = GR_ESTATE;
    }
    json_decref(before);
    json_decref(after);
    return rc;
}

/* ------------------------------------------------------------- snapshot */

static int obj_cmp(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    char *kx = gr_cases_obj_key(x), *ky = gr_cases_obj_key(y);
    int c = strcmp(kx ? kx : "", ky ? ky : "");
    free(kx);
    free(ky);
    if (c == 0) {
        char *dx = json_dumps(x, JSON_COMPACT | JSON_SORT_KEYS);
        char *dy = json_dumps(y, JSON_COMPACT | JSON_SORT_KEYS);
        c = strcmp(dx ? dx : "", dy ? dy : "");
        free(dx);
        free(dy);
    }
    return c;
}

static bool tracked_name(const kcase *k, const gr_kube_mapping *m, const char *name)
{
    for (size_t i = 0; i < k->ntrk; i++)
        if (!strcmp(k->trk[i].resource, m->resource) && !strcmp(k->trk[i].group, m->group) &&
            !strcmp(k->trk[i].name, name))
            return true;
    return false;
}

static int scrape(kcase *k, const gr_cases_metrics *mt, const char *key, json_t *snap)
{
    if (!mt->set)
        return GR_OK;
    if (k->r->o.no_manager || k->r->metrics_port <= 0) {
        fail(k, "%s: needs the manager's /metrics (run without --no-manager)", key);
        return GR_ESTATE;
    }
    char url[128];
    fmt_str(url, sizeof url, "http://127.0.0.1:%d/metrics", k->r->metrics_port);
    const char *env = getenv("GR_CASES_METRICS_URL");
    gr_buf body;
    gr_buf_init(&body, (size_t)64 * 1024 * 1024);
    long code = http_get(env && *env ? env : url, &body);
    int rc = GR_OK;
    json_t *m = NULL;
    gr_err err;
    if (code != 200) {
        fail(k, "%s: GET %s answered %ld", key, env && *env ? env : url, code);
        rc = GR_EIO;
    } else if ((rc = gr_cases_metrics_filter(body.data ? body.data : "", body.len, mt, k->ns, &m,
                                             &err)) != GR_OK) {
        fail(k, "%s: %s", key, err.msg);
    } else {
        json_object_set_new(snap, key, m);
    }
    gr_buf_free(&body);
    return rc;
}

static int collect(kcase *k, json_t **out)
{
    json_t *snap = json_object();
    json_t *objs = json_array();
    json_object_set_new(snap, "objects", objs);
    int rc = GR_OK;
    for (size_t i = 0; i < k->cfg.ncollect && rc == GR_OK; i++) {
        gr_kube_mapping m;
        gr_err err;
        if ((rc = resolve_kind(k->r, k->cfg.collect[i], &m, &err)) != GR_OK) {
            fail(k, "collect[%zu]: %s", i, err.msg);
            break;
        }
        gr_kube_gvr g = gvr_of(&m);
        json_t *list = NULL;
        if ((rc = gr_kube_list_all(k->r->kc, &g, m.namespaced ? k->ns : NULL, NULL, &list, NULL,
                                   &err)) != GR_OK) {
            fail(k, "collect[%zu] (%s): %s", i, k->cfg.collect[i], err.msg);
            break;
        }
        size_t j;
        json_t *e;
        json_array_foreach(json_object_get(list, "items"), j, e)
        {
            const char *name = gr_kube_obj_meta(e, "name");
            /* Cluster-scoped kinds: only what this case created. */
            if (!m.namespaced && (!name || !tracked_name(k, &m, name)))
                continue;
            /* Published into every namespace by kube-controller-manager. */
            if (name && !strcmp(m.kind, "ConfigMap") && !strcmp(name, "kube-root-ca.crt"))
                continue;
            if (name && !strcmp(m.kind, "ServiceAccount") && !strcmp(name, "default"))
                continue;
            json_t *c = json_deep_copy(e);
            /* Items of a List carry no apiVersion/kind. */
            char av[200];
            fmt_str(av, sizeof av, "%s%s%s", m.group, *m.group ? "/" : "", m.version);
            json_object_set_new(c, "apiVersion", json_string(av));
            json_object_set_new(c, "kind", json_string(m.kind));
            if ((rc = gr_cases_sanitize(c, k->ns, k->node_hash, &err)) != GR_OK) {
                fail(k, "collect: %s", err.msg);
                json_decref(c);
                break;
            }
            json_array_append_new(objs, c);
        }
        json_decref(list);
    }
    if (rc == GR_OK) {
        size_t n = json_array_size(objs);
        json_t **v = calloc(n ? n : 1, sizeof *v);
        for (size_t i = 0; v && i < n; i++)
            v[i] = json_incref(json_array_get(objs, i));
        if (v) {
            qsort(v, n, sizeof *v, obj_cmp);
            json_array_clear(objs);
            for (size_t i = 0; i < n; i++)
                json_array_append_new(objs, v[i]);
            free(v);
        }
    }
    if (rc == GR_OK)
        rc = scrape(k, &k->cfg.metrics, "metrics", snap);
    if (rc == GR_OK)
        rc = scrape(k, &k->cfg.bandwidth_metrics, "bandwidthMetrics", snap);
    if (rc == GR_OK)
        rc = scrape(k, &k->cfg.job_metrics, "jobMetrics", snap);
    if (rc == GR_OK)
        rc = scrape(k, &k->cfg.topology_metrics, "topologyMetrics", snap);
    static const char *const NODE_POLL[] = {"HardwareFailureDetected", NULL};
    static const char *const CHECKPOINT[] = {"WorkloadRestarting", NULL};
    if (rc == GR_OK && k->cfg.verify_node_poll_events) {
        json_t *ev = event_summary(k, NODE_POLL);
        size_t i;
        json_t *e;
        json_array_foreach(ev, i, e)
        {
            if (json_integer_value(json_object_get(e, "count")) > 1) {
                fail(k,
                     "verifyNodePollEvents: %s emitted %lld times; repeated node polls "
                     "must not repeat the event",
                     json_string_value(json_object_get(e, "reason")),
                     (long long)json_integer_value(json_object_get(e, "count")));
                rc = GR_ESTATE;
            }
            json_object_del(e, "count");
        }
        json_object_set_new(snap, "nodePollEvents", ev ? ev : json_null());
    }
    if (rc == GR_OK && k->cfg.verify_checkpoint_events) {
        json_t *ev = event_summary(k, CHECKPOINT);
        json_int_t total = 0;
        size_t i;
        json_t *e;
        json_array_foreach(ev, i, e)
        {
            total += json_integer_value(json_object_get(e, "count"));
            json_object_del(e, "count");
        }
        if (k->cfg.wait.restart_count >= 0 && total != k->cfg.wait.restart_count) {
            fail(k, "verifyCheckpointEvents: %lld WorkloadRestarting events for restartCount %ld",
                 (long long)total, k->cfg.wait.restart_count);
            rc = GR_ESTATE;
        }
        json_object_set_new(snap, "checkpointEvents", ev ? ev : json_null());
    }
    /* Sanitize the event summaries like objects (namespace, node hash). */
    json_t *wrap =
        json_pack("{s:O?, s:O?}", "nodePollEvents", json_object_get(snap, "nodePollEvents"),
                  "checkpointEvents", json_object_get(snap, "checkpointEvents"));
    if (wrap)
        gr_cases_sanitize(wrap, k->ns, k->node_hash, NULL);
    json_decref(wrap);
    *out = snap;
    return rc;
}

/* ----------------------------------------------------------- compare */

static int show_diff(kcase *k, const char *expected_path, const char *actual)
{
    char apath[PATH_MAX + 32];
    fmt_str(apath, sizeof apath, "%s/actual-%s.json", k->r->tmpdir, k->ns);
    if (write_file(apath, actual, strlen(actual)) != 0) {
        fail(k, "write %s: %s", apath, strerror(errno));
        return -1;
    }
    char cmd[3 * PATH_MAX];
    fmt_str(cmd, sizeof cmd, "diff -u --label '%s' --label 'actual (%s)' '%s' '%s' 2>&1",
            expected_path, k->name, expected_path, apath);
    FILE *p = popen(cmd, "r");
    if (p) {
        char line[4096];
        while (fgets(line, sizeof line, p))
            (void)gr_buf_puts(&k->log, line);
        pclose(p);
    }
    unlink(apath);
    return 0;
}

static char *pretty(const json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    return t;
}

static int compare(kcase *k, json_t *snap)
{
    char path[PATH_MAX];
    fmt_str(path, sizeof path, "%s/expected.json", k->dir);
    char *actual = pretty(snap);
    if (!actual) {
        fail(k, "out of memory");
        return -1;
    }
    int rc = 0;
    gr_buf want;
    gr_err err;
    bool have = exists(path);
    json_t *exp = NULL;
    if (have) {
        if (read_file(path, &want, &err) != GR_OK) {
            fail(k, "%s", err.msg);
            free(actual);
            return -1;
        }
        if (gr_json_parse(want.data, want.len, 0, path, &exp, &err) != GR_OK && !k->r->o.update) {
            fail(k, "%s (rewrite it with --update)", err.msg);
            rc = -1;
        }
        gr_buf_free(&want);
    }
    if (rc == 0 && k->r->o.update) {
        if (!exp || !gr_json_equal(exp, snap)) {
            if (write_file(path, actual, strlen(actual)) != 0) {
                fail(k, "write %s: %s", path, strerror(errno));
                rc = -1;
            } else {
                fprintf(stderr, "reconcile-cases: %s: wrote %s\n", k->name, path);
            }
        }
    } else if (rc == 0 && !have) {
        fail(k, "%s does not exist; create it with --update", path);
        rc = -1;
    } else if (rc == 0 && !gr_json_equal(exp, snap)) {
        char *e = pretty(exp);
        char epath[PATH_MAX + 32];
        /* diff the pretty-printed key-sorted forms (the file may be formatted otherwise) */
        fmt_str(epath, sizeof epath, "%s/expected-%s.json", k->r->tmpdir, k->ns);
        if (e && write_file(epath, e, strlen(e)) == 0) {
            fail(k, "snapshot differs from %s:", path);
            show_diff(k, epath, actual);
            unlink(epath);
        } else {
            fail(k, "snapshot differs from %s", path);
        }
        free(e);
        rc = -1;
    }
    json_decref(exp);
    free(actual);
    return rc;
}

/* ----------------------------------------------------------- one case */

static void cleanup(kcase *k)
{
    if (k->r->o.keep) {
        fprintf(stderr, "reconcile-cases: %s: kept namespace %s\n", k->name, k->ns);
        return;
    }
    gr_kube_opts bg = {.propagation = "Background"};
    for (size_t i = k->ntrk; i-- > 0;) {
        tracked *t = &k->trk[i];
        set_gvr(t);
        (void)gr_kube_delete(k->r->kc, &t->gvr, NULL, t->name, &bg, NULL, NULL, NULL);
        json_t *p = json_pack("{s:{s:n}}", "metadata", "finalizers");
        (void)gr_kube_patch(k->r->kc, &t->gvr, NULL, t->name, GR_KUBE_PATCH_MERGE, p, NULL, NULL,
                            NULL, NULL);
        json_decref(p);
    }
    (void)gr_kube_delete(k->r->kc, &GR_KUBE_NAMESPACES, NULL, k->ns, &bg, NULL, NULL, NULL);
    remove_logs(k);
}

static void make_ns_name(const char *casename, char *out, size_t outsz)
{
    char base[40];
    size_t n = 0;
    for (const char *s = casename; *s && n < 30; s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            c = '-';
        if (c == '-' && (n == 0 || base[n - 1] == '-'))
            continue;
        base[n++] = c;
    }
    while (n && base[n - 1] == '-')
        n--;
    base[n] = '\0';
    static unsigned seq;
    unsigned r = (unsigned)gr_time_now_ns() ^ ((unsigned)getpid() << 8) ^ (++seq * 2654435761u);
    fmt_str(out, outsz, "rc-%s-%05x", n ? base : "case", r & 0xfffff);
}

static bool run_case(runner *r, const char *dir, const char *name)
{
    kcase k = {.r = r, .dir = dir};
    fmt_str(k.name, sizeof k.name, "%s", name);
    gr_buf_init(&k.log, (size_t)4 * 1024 * 1024);
    k.trk = calloc(MAX_TRACKED, sizeof *k.trk);
    make_ns_name(name, k.ns, sizeof k.ns);
    gr_err err;
    (void)gr_cases_node_hash(k.ns, k.node_hash, NULL);

    char path[PATH_MAX];
    fmt_str(path, sizeof path, "%s/input_config.yaml", dir);
    int rc = k.trk ? GR_OK : GR_ENOMEM;
    gr_buf text = GR_BUF_INIT(GR_CASES_MAX_CONFIG_BYTES);
    if (rc == GR_OK && exists(path)) {
        if ((rc = read_file(path, &text, &err)) == GR_OK)
            rc = gr_cases_config_parse(text.data, text.len, path, &k.cfg, &err);
        if (rc != GR_OK)
            fail(&k, "%s", err.msg);
    } else if (rc == GR_OK) {
        rc = gr_cases_config_parse("", 0, path, &k.cfg, &err);
    }
    gr_buf_free(&text);
    bool created = false;
    json_t *snap = NULL;
    if (rc == GR_OK && (rc = ensure_namespace(&k, k.ns, false)) == GR_OK)
        created = true;
    if (rc == GR_OK)
        rc = install_crds(&k);
    if (rc == GR_OK)
        rc = generate_nodes(&k);
    if (rc == GR_OK)
        rc = copy_logs(&k);
    if (rc == GR_OK && k.cfg.reject_workflow_creates)
        rc = reject_workflows(&k);
    if (rc == GR_OK)
        rc = create_objects(&k);
    for (size_t i = 0; rc == GR_OK && i < k.cfg.nsteps; i++) {
        char what[48];
        fmt_str(what, sizeof what, "steps[%zu].waitFor", i);
        if (k.cfg.steps[i].wait.set)
            rc = wait_for(&k, what, &k.cfg.steps[i].wait);
        if (rc == GR_OK)
            rc = apply_patches(&k, i, &k.cfg.steps[i]);
    }
    if (rc == GR_OK && k.cfg.wait.set)
        rc = wait_for(&k, "waitFor", &k.cfg.wait);
    if (rc == GR_OK)
        rc = delete_objects(&k);
    if (rc == GR_OK)
        rc = check_events(&k);
    if (rc == GR_OK && k.cfg.verify_spec_immutable)
        rc = verify_spec_immutable(&k);
    if (rc == GR_OK && k.cfg.frozen_goodput != GR_CASES_FROZEN_NONE)
        rc = verify_frozen(&k);
    if (rc == GR_OK)
        rc = collect(&k, &snap);
    bool ok = rc == GR_OK && compare(&k, snap) == 0;
    if (g_stop)
        ok = false;
    json_decref(snap);
    if (created)
        cleanup(&k);
    if (ok) {
        printf("PASS %s\n", name);
    } else {
        printf("FAIL %s (namespace %s)\n", name, k.ns);
        if (k.log.data)
            fputs(k.log.data, stdout);
    }
    fflush(stdout);
    gr_cases_config_free(&k.cfg);
    gr_buf_free(&k.log);
    free(k.trk);
    return ok;
}

/* ----------------------------------------------------------- discovery */

static int path_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_case_dir(const char *dir)
{
    char p[PATH_MAX + 32];
    fmt_str(p, sizeof p, "%s/input_config.yaml", dir);
    if (exists(p))
        return true;
    fmt_str(p, sizeof p, "%s/input_client_objects.yaml", dir);
    return exists(p);
}

/* Append every case folder at or under dir (depth-first, sorted). */
static int find_cases(const char *dir, char **out, size_t *n, int depth)
{
    if (depth > 16)
        return 0;
    if (is_case_dir(dir)) {
        if (*n >= MAX_CASES)
            return -1;
        out[(*n)++] = strdup(dir);
        return 0;
    }
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char *kids[1024];
    size_t nk = 0;
    struct dirent *e;
    while ((e = readdir(d)) && nk < 1024) {
        if (e->d_name[0] == '.')
            continue;
        char p[PATH_MAX];
        struct stat st;
        fmt_str(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            kids[nk++] = strdup(p);
    }
    closedir(d);
    qsort(kids, nk, sizeof kids[0], path_cmp);
    int rc = 0;
    for (size_t i = 0; i < nk; i++) {
        if (rc == 0 && kids[i])
            rc = find_cases(kids[i], out, n, depth + 1);
        free(kids[i]);
    }
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: reconcile-cases [--update] [--manager CMD | --no-manager] [--keep] DIR...\n"
               "Runs every reconcile case under DIR against the cluster in $GR_CLUSTER_DIR.\n"
               "See docs/reconcile-cases.md.\n");
}

int main(int argc, char **argv)
{
    runner r = {0};
    int ndirs = 0;
    const char *dirs[256];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--update"))
            r.o.update = true;
        else if (!strcmp(a, "--keep"))
            r.o.keep = true;
        else if (!strcmp(a, "--no-manager"))
            r.o.no_manager = true;
        else if (!strcmp(a, "--manager") && i + 1 < argc)
            r.o.manager_cmd = argv[++i];
        else if (!strncmp(a, "--manager=", 10))
            r.o.manager_cmd = a + 10;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-') {
            fprintf(stderr, "reconcile-cases: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else if (ndirs < 256)
            dirs[ndirs++] = a;
    }
    if (ndirs == 0 || (r.o.no_manager && r.o.manager_cmd)) {
        usage(stderr);
        return 2;
    }
    char **cases = calloc(MAX_CASES, sizeof *cases);
    size_t ncases = 0;
    for (int i = 0; cases && i < ndirs; i++) {
        size_t before = ncases;
        if (find_cases(dirs[i], cases, &ncases, 0) != 0 || ncases == before) {
            fprintf(stderr,
                    "reconcile-cases: %s: no case folders (a case holds input_config.yaml "
                    "or input_client_objects.yaml)\n",
                    dirs[i]);
            for (size_t j = 0; j < ncases; j++)
                free(cases[j]);
            free(cases);
            return 2;
        }
    }
    if (!cases)
        return 2;

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int status = 2;
    gr_err err;
    gr_kube_config kcfg = {0};
    const char *tmp = getenv("TMPDIR");
    fmt_str(r.tmpdir, sizeof r.tmpdir, "%s/reconcile-cases-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(r.tmpdir)) {
        fprintf(stderr, "reconcile-cases: mkdtemp: %s\n", strerror(errno));
        goto out;
    }
    fmt_str(r.logs_dir, sizeof r.logs_dir, "%s/pod-logs", r.tmpdir);
    mkdir(r.logs_dir, 0755);
    if (gr_harness_open(&r.cluster) != 0)
        goto out;
    if (gr_kube_config_load_file(r.cluster.kubeconfig, NULL, &kcfg, &err) != GR_OK ||
        (kcfg.qps = -1, gr_kube_client_new(&kcfg, &r.kc, &err)) != GR_OK ||
        gr_kube_mapper_new(r.kc, &r.mapper, &err) != GR_OK ||
        gr_kube_mapper_refresh(r.mapper, &err) != GR_OK) {
        fprintf(stderr, "reconcile-cases: %s\n", err.msg);
        goto out;
    }
    if (start_manager(&r) != 0)
        goto out;
    size_t passed = 0, failed = 0;
    for (size_t i = 0; i < ncases && !g_stop; i++) {
        const char *nm = cases[i];
        for (int d = 0; d < ndirs; d++) {
            size_t L = strlen(dirs[d]);
            if (!strncmp(cases[i], dirs[d], L) && cases[i][L] == '/') {
                nm = cases[i] + L + 1;
                break;
            }
        }
        const char *slash = strrchr(cases[i], '/');
        if (nm == cases[i] && slash)
            nm = slash + 1;
        if (run_case(&r, cases[i], nm))
            passed++;
        else
            failed++;
    }
    if (r.manager > 0) {
        int st;
        if (waitpid(r.manager, &st, WNOHANG) == r.manager) {
            printf("the manager exited during the run (log: %s/manager.log)\n", r.tmpdir);
            r.manager = 0;
            failed += passed;
            passed = 0;
        }
    }
    printf("%zu passed, %zu failed\n", passed, failed);
    status = failed ? 1 : 0;
out:
    stop_manager(&r);
    gr_kube_mapper_free(r.mapper);
    gr_kube_client_free(r.kc);
    gr_kube_config_free(&kcfg);
    for (size_t i = 0; i < ncases; i++)
        free(cases[i]);
    free(cases);
    /* Kept when it explains something: a failed case, a manager's log. */
    char mlog[PATH_MAX + 16];
    fmt_str(mlog, sizeof mlog, "%s/manager.log", r.tmpdir);
    bool keep_tmp = r.o.keep || (status != 0 && exists(mlog));
    if (r.tmpdir[0] && keep_tmp)
        fprintf(stderr, "reconcile-cases: kept %s (manager.log)\n", r.tmpdir);
    if (r.tmpdir[0] && !keep_tmp) {
        char cmd[PATH_MAX + 16];
        fmt_str(cmd, sizeof cmd, "rm -rf '%s'", r.tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "reconcile-cases: could not remove %s\n", r.tmpdir);
    }
    curl_global_cleanup();
    return status;
}
