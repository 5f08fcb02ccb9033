/* gr_harness — see gr_harness.h. Plain POSIX + libc on purpose: the harness
 * must not depend on the product libraries it is used to test. */
#include "gr_harness.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GR_HARNESS_SOURCE_DIR
#define GR_HARNESS_SOURCE_DIR "."
#endif

#define MAX_ARGS       64
#define MAX_CAPTURE    (64u * 1024u * 1024u)
#define APPLY_ATTEMPTS 6

/* ---------------------------------------------------------------- utils */

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gr_harness: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static bool env_true(const char *name)
{
    const char *v = getenv(name);
    if (!v) {
        return false;
    }
    return strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
           strcasecmp(v, "on") == 0;
}

bool gr_harness_contains(const char *haystack, const char *needle)
{
    return haystack && needle && strstr(haystack, needle) != NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

static char *trim(char *s)
{
    if (!s) {
        return s;
    }
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) {
        s[--n] = '\0';
    }
    size_t i = 0;
    while (s[i] && isspace((unsigned char)s[i])) {
        i++;
    }
    if (i > 0) {
        memmove(s, s + i, n - i + 1);
    }
    return s;
}

static int copy_str(char *dst, size_t dstsz, const char *src)
{
    size_t n = strlen(src);
    if (n >= dstsz) {
        return -1;
    }
    memcpy(dst, src, n + 1);
    return 0;
}

__attribute__((format(printf, 3, 4))) static int fmt_str(char *dst, size_t dstsz, const char *fmt,
                                                         ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, dstsz, fmt, ap);
    va_end(ap);
    return (n < 0 || (size_t)n >= dstsz) ? -1 : 0;
}

int gr_harness_skip_if_disabled(void)
{
    if (env_true("GR_SKIP_INTEGRATION")) {
        printf("SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION\n");
        fflush(stdout);
        return GR_HARNESS_SKIP;
    }
    return 0;
}

int gr_harness_source_path(const char *rel, char *out, size_t outsz)
{
    if (rel[0] == '/') {
        return copy_str(out, outsz, rel);
    }
    const char *root = getenv("GR_SOURCE_DIR");
    if (!root || !*root) {
        root = GR_HARNESS_SOURCE_DIR;
    }
    return fmt_str(out, outsz, "%s/%s", root, rel);
}

/* ---------------------------------------------------------------- cluster */

/* Parse one KEY=VALUE line of cluster.env. Values were written with bash's
 * printf %q; the paths we generate need no quoting, but undo simple
 * backslash escapes and quotes so odd directories still work. */
static void unquote(char *v)
{
    char *r = v, *w = v;
    char q = 0;
    if (r[0] == '$' && r[1] == '\'') { /* $'...' form: keep it simple */
        r += 2;
        q = '\'';
    }
    for (; *r; r++) {
        if (q) {
            if (*r == q) {
                q = 0;
                continue;
            }
            if (q == '"' && *r == '\\' && r[1]) {
                r++;
            }
            *w++ = *r;
        } else if (*r == '\'' || *r == '"') {
            q = *r;
        } else if (*r == '\\' && r[1]) {
            *w++ = *++r;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

static void default_cluster_dir(char *out, size_t outsz)
{
    const char *d = getenv("GR_CLUSTER_DIR");
    if (d && *d) {
        copy_str(out, outsz, d);
        return;
    }
    const char *tmp = getenv("TMPDIR");
    fmt_str(out, outsz, "%s/gpuready-cluster-%u", (tmp && *tmp) ? tmp : "/tmp", (unsigned)getuid());
}

int gr_harness_open(gr_harness_cluster *c)
{
    memset(c, 0, sizeof *c);
    default_cluster_dir(c->dir, sizeof c->dir);
    char envfile[GR_HARNESS_PATH_MAX + 16];
    fmt_str(envfile, sizeof envfile, "%s/cluster.env", c->dir);
    FILE *f = fopen(envfile, "r");
    if (!f) {
        say("no cluster in %s (%s): start one with `scripts/cluster up %s` or run the "
            "integration tests through ctest (fixture gr_cluster); set "
            "GR_SKIP_INTEGRATION=1 to skip them",
            c->dir, strerror(errno), c->dir);
        return -1;
    }
    char line[GR_HARNESS_PATH_MAX + 64];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq) {
            continue;
        }
        *eq = '\0';
        char *k = line, *v = eq + 1;
        unquote(v);
        if (strcmp(k, "KUBECONFIG") == 0) {
            copy_str(c->kubeconfig, sizeof c->kubeconfig, v);
        } else if (strcmp(k, "GR_KUBECONFIG_LOWPRIV") == 0) {
            copy_str(c->kubeconfig_lowpriv, sizeof c->kubeconfig_lowpriv, v);
        } else if (strcmp(k, "GR_KUBECTL") == 0) {
            copy_str(c->kubectl, sizeof c->kubectl, v);
        } else if (strcmp(k, "KUBECACHEDIR") == 0) {
            copy_str(c->cache_dir, sizeof c->cache_dir, v);
        } else if (strcmp(k, "GR_APISERVER_URL") == 0) {
            copy_str(c->apiserver_url, sizeof c->apiserver_url, v);
        } else if (strcmp(k, "GR_APISERVER_LOG") == 0) {
            copy_str(c->apiserver_log, sizeof c->apiserver_log, v);
        } else if (strcmp(k, "GR_CA_CERT") == 0) {
            copy_str(c->ca_cert, sizeof c->ca_cert, v);
        } else if (strcmp(k, "GR_CA_KEY") == 0) {
            copy_str(c->ca_key, sizeof c->ca_key, v);
        } else if (strcmp(k, "GR_ADMIN_CERT") == 0) {
            copy_str(c->admin_cert, sizeof c->admin_cert, v);
        } else if (strcmp(k, "GR_ADMIN_KEY") == 0) {
            copy_str(c->admin_key, sizeof c->admin_key, v);
        } else if (strcmp(k, "GR_LOWPRIV_CERT") == 0) {
            copy_str(c->lowpriv_cert, sizeof c->lowpriv_cert, v);
        } else if (strcmp(k, "GR_LOWPRIV_KEY") == 0) {
            copy_str(c->lowpriv_key, sizeof c->lowpriv_key, v);
        } else if (strcmp(k, "GR_CLUSTER_KCM") == 0) {
            c->controller_manager = strcmp(v, "1") == 0;
        }
    }
    fclose(f);
    if (!c->kubeconfig[0] || !c->kubectl[0]) {
        say("%s is incomplete (no KUBECONFIG or GR_KUBECTL)", envfile);
        return -1;
    }
    if (access(c->kubectl, X_OK) != 0) {
        say("kubectl %s is not executable: %s", c->kubectl, strerror(errno));
        return -1;
    }
    if (gr_harness_ready(c) != 0) {
        say("the cluster in %s is not ready (GET /readyz failed); see %s/logs/", c->dir, c->dir);
        return -1;
    }
    return 0;
}

int gr_harness_ready(const gr_harness_cluster *c)
{
    gr_harness_result r;
    const char *argv[] = {"get", "--raw", "/readyz", "--request-timeout=5s", NULL};
    int rc = gr_harness_kubectl_argv(c, NULL, NULL, 10, argv, &r);
    int ok = rc == 0 && strcmp(trim(r.out), "ok") == 0;
    if (!ok && rc >= 0) {
        say("/readyz: %s%s", r.out, r.err);
    }
    gr_harness_result_free(&r);
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- running */

typedef struct {
    char *p;
    size_t len, cap;
} sbuf;

static int sbuf_add(sbuf *b, const char *data, size_t n)
{
    if (b->len + n + 1 > MAX_CAPTURE) {
        n = MAX_CAPTURE - b->len - 1; /* truncate, keep going */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *np = realloc(b->p, cap);
        if (!np) {
            return -1;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static char *sbuf_take(sbuf *b, size_t *len)
{
    if (!b->p) {
        b->p = calloc(1, 1);
        b->len = 0;
    }
    *len = b->len;
    char *p = b->p;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

void gr_harness_result_free(gr_harness_result *r)
{
    if (!r) {
        return;
    }
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) {
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    }
}

static void print_cmdline(const char *const *argv)
{
    fputs("gr_harness: $", stderr);
    for (size_t i = 0; argv[i]; i++) {
        fprintf(stderr, " %s", argv[i]);
    }
    fputc('\n', stderr);
}

/* Run argv[0] with argv, optional stdin, capturing stdout/stderr. */
static int run_capture(const char *const *argv, const char *cache_dir, const char *stdin_data,
                       int timeout_s, gr_harness_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        say("pipe: %s", strerror(errno));
        goto fail_early;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        say("fork: %s", strerror(errno));
        goto fail_early;
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        if (cache_dir && *cache_dir) {
            setenv("KUBECACHEDIR", cache_dir, 1);
        }
        signal(SIGPIPE, SIG_DFL);
        execv(argv[0], (char *const *)(uintptr_t)argv);
        dprintf(2, "gr_harness: exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    in[0] = out[1] = err[1] = -1;

    const char *wp = stdin_data ? stdin_data : "";
    size_t wleft = strlen(wp);
    if (wleft == 0) {
        close(in[1]);
        in[1] = -1;
    } else {
        set_nonblock(in[1]);
    }
    sbuf bo = {0}, be = {0};
    /* The caller's timeout is already scaled (gr_harness_wait); the default
     * one is scaled here. */
    if (timeout_s <= 0) {
        timeout_s = gr_test_scaled_s(GR_HARNESS_CMD_TIMEOUT);
    }
    double deadline = now_s() + timeout_s;
    bool out_open = true, err_open = true;
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    while (out_open || err_open) {
        struct pollfd pf[3];
        nfds_t n = 0;
        int io = -1, ie = -1, iw = -1;
        if (out_open) {
            pf[n] = (struct pollfd){.fd = out[0], .events = POLLIN};
            io = (int)n++;
        }
        if (err_open) {
            pf[n] = (struct pollfd){.fd = err[0], .events = POLLIN};
            ie = (int)n++;
        }
        if (in[1] >= 0) {
            pf[n] = (struct pollfd){.fd = in[1], .events = POLLOUT};
            iw = (int)n++;
        }
        double left = deadline - now_s();
        if (left <= 0) {
            r->timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        int pr = poll(pf, n, (int)(left * 1000) + 1);
        if (pr < 0) {
            if (errno == EINTR) {
                continue;
            }
            kill(pid, SIGKILL);
            break;
        }
        char buf[65536];
        if (io >= 0 && (pf[io].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t k = read(out[0], buf, sizeof buf);
            if (k > 0) {
                sbuf_add(&bo, buf, (size_t)k);
            } else if (k == 0 || errno != EINTR) {
                out_open = false;
            }
        }
        if (ie >= 0 && (pf[ie].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t k = read(err[0], buf, sizeof buf);
            if (k > 0) {
                sbuf_add(&be, buf, (size_t)k);
            } else if (k == 0 || errno != EINTR) {
                err_open = false;
            }
        }
        if (iw >= 0 && (pf[iw].revents & (POLLOUT | POLLHUP | POLLERR))) {
            ssize_t k = write(in[1], wp, wleft);
            if (k > 0) {
                wp += k;
                wleft -= (size_t)k;
            }
            if ((k < 0 && errno != EAGAIN && errno != EINTR) || wleft == 0) {
                close(in[1]);
                in[1] = -1;
            }
        }
    }
    signal(SIGPIPE, old_pipe);
    if (in[1] >= 0) {
        close(in[1]);
    }
    close(out[0]);
    close(err[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    r->out = sbuf_take(&bo, &r->out_len);
    r->err = sbuf_take(&be, &r->err_len);
    if (r->timed_out) {
        r->status = -1;
        say("timed out after %ds:", timeout_s);
        print_cmdline(argv);
        return -1;
    }
    if (WIFEXITED(st)) {
        r->status = WEXITSTATUS(st);
        return r->status == 0 ? 0 : 1;
    }
    r->status = -1;
    return -1;

fail_early:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0) {
            close(in[i]);
        }
        if (out[i] >= 0) {
            close(out[i]);
        }
        if (err[i] >= 0) {
            close(err[i]);
        }
    }
    r->out = calloc(1, 1);
    r->err = calloc(1, 1);
    return -1;
}

int gr_harness_kubectl_argv(const gr_harness_cluster *c, const char *kubeconfig,
                            const char *stdin_data, int timeout_s, const char *const argv[],
                            gr_harness_result *r)
{
    const char *full[MAX_ARGS + 4];
    char kc[GR_HARNESS_PATH_MAX + 16];
    size_t n = 0;
    full[n++] = c->kubectl;
    fmt_str(kc, sizeof kc, "--kubeconfig=%s", kubeconfig ? kubeconfig : c->kubeconfig);
    full[n++] = kc;
    for (size_t i = 0; argv[i]; i++) {
        if (n >= MAX_ARGS + 2) {
            say("too many kubectl arguments");
            memset(r, 0, sizeof *r);
            r->out = calloc(1, 1);
            r->err = calloc(1, 1);
            r->status = -1;
            return -1;
        }
        full[n++] = argv[i];
    }
    full[n] = NULL;
    if (env_true("GR_HARNESS_VERBOSE")) {
        print_cmdline(full);
    }
    return run_capture(full, c->cache_dir, stdin_data, timeout_s, r);
}

static int kubectl_va(const gr_harness_cluster *c, const char *kubeconfig, const char *stdin_data,
                      gr_harness_result *r, va_list ap)
{
    const char *argv[MAX_ARGS + 1];
    size_t n = 0;
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL) {
        if (n >= MAX_ARGS) {
            say("too many kubectl arguments");
            memset(r, 0, sizeof *r);
            r->out = calloc(1, 1);
            r->err = calloc(1, 1);
            r->status = -1;
            return -1;
        }
        argv[n++] = a;
    }
    argv[n] = NULL;
    return gr_harness_kubectl_argv(c, kubeconfig, stdin_data, 0, argv, r);
}

int gr_harness_kubectl(const gr_harness_cluster *c, gr_harness_result *r, ...)
{
    va_list ap;
    va_start(ap, r);
    int rc = kubectl_va(c, NULL, NULL, r, ap);
    va_end(ap);
    return rc;
}

int gr_harness_kubectl_lowpriv(const gr_harness_cluster *c, gr_harness_result *r, ...)
{
    va_list ap;
    va_start(ap, r);
    int rc = kubectl_va(c, c->kubeconfig_lowpriv, NULL, r, ap);
    va_end(ap);
    return rc;
}

int gr_harness_kubectl_stdin(const gr_harness_cluster *c, const char *stdin_data,
                             gr_harness_result *r, ...)
{
    va_list ap;
    va_start(ap, r);
    int rc = kubectl_va(c, NULL, stdin_data, r, ap);
    va_end(ap);
    return rc;
}

/* ---------------------------------------------------------------- namespaces */

static void sanitize_dns(const char *in, char *out, size_t outsz, size_t maxlen)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < outsz && n < maxlen; p++) {
        unsigned char ch = (unsigned char)*p;
        if (isalnum(ch)) {
            out[n++] = (char)tolower(ch);
        } else if (n > 0 && out[n - 1] != '-') {
            out[n++] = '-';
        }
    }
    while (n > 0 && out[n - 1] == '-') {
        n--;
    }
    if (n == 0 && outsz > 1) {
        out[n++] = 't';
    }
    out[n] = '\0';
}

int gr_harness_ns_create(const gr_harness_cluster *c, const char *prefix, char *name, size_t namesz)
{
    static unsigned counter;
    char pfx[40];
    sanitize_dns(prefix ? prefix : "test", pfx, sizeof pfx, 36);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned rnd = (unsigned)(ts.tv_nsec ^ (ts.tv_sec << 7)) ^ ((unsigned)getpid() << 16);
    if (fmt_str(name, namesz, "%s-%x-%u-%04x", pfx, (unsigned)getpid(), counter++, rnd & 0xffffu) !=
        0) {
        say("namespace name buffer too small");
        return -1;
    }
    char yaml[512];
    fmt_str(yaml, sizeof yaml,
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n"
            "    gpuready.test/harness: \"true\"\n",
            name);
    gr_harness_result r;
    int rc = gr_harness_kubectl_stdin(c, yaml, &r, "create", "-f", "-", NULL);
    if (rc != 0) {
        say("creating namespace %s failed: %s", name, r.err);
        gr_harness_result_free(&r);
        return -1;
    }
    gr_harness_result_free(&r);
    if (c->controller_manager) {
        /* Pods need the namespace's default service account, which the
         * controller manager creates asynchronously. */
        int limit_s = gr_test_scaled_s(30);
        double deadline = now_s() + limit_s;
        for (;;) {
            rc = gr_harness_kubectl(c, &r, "get", "serviceaccount", "default", "-n", name, "-o",
                                    "name", NULL);
            gr_harness_result_free(&r);
            if (rc == 0) {
                break;
            }
            if (now_s() > deadline) {
                say("namespace %s: default service account not created within %ds", name, limit_s);
                return -1;
            }
            sleep_ms(100);
        }
    }
    return 0;
}

int gr_harness_ns_delete(const gr_harness_cluster *c, const char *name)
{
    if (!name || !*name) {
        return 0;
    }
    if (env_true("GR_HARNESS_KEEP_NS")) {
        say("keeping namespace %s (GR_HARNESS_KEEP_NS)", name);
        return 0;
    }
    gr_harness_result r;
    int rc = gr_harness_kubectl(c, &r, "delete", "namespace", name, "--wait=false",
                                "--ignore-not-found", NULL);
    if (rc != 0) {
        say("deleting namespace %s failed: %s", name, r.err);
    }
    gr_harness_result_free(&r);
    return rc == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- apply */

#define CRD_PREFIX "customresourcedefinition.apiextensions.k8s.io/"

typedef struct {
    char **v;
    size_t n;
} strlist;

static void strlist_add_unique(strlist *l, const char *s, size_t len)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strlen(l->v[i]) == len && strncmp(l->v[i], s, len) == 0) {
            return;
        }
    }
    char **nv = realloc(l->v, (l->n + 1) * sizeof *nv);
    if (!nv) {
        return;
    }
    l->v = nv;
    l->v[l->n] = strndup(s, len);
    if (l->v[l->n]) {
        l->n++;
    }
}

static void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i]);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static void collect_crds(const char *out, strlist *crds)
{
    const char *p = out;
    while ((p = strstr(p, CRD_PREFIX)) != NULL) {
        const char *s = p + strlen(CRD_PREFIX);
        size_t len = strcspn(s, " \t\r\n");
        if (len > 0) {
            strlist_add_unique(crds, s, len);
        }
        p = s;
    }
}

static int wait_crds_established(const gr_harness_cluster *c, const strlist *crds, int timeout_s)
{
    for (size_t i = 0; i < crds->n; i++) {
        char res[512];
        if (fmt_str(res, sizeof res, "crd/%s", crds->v[i]) != 0) {
            return -1;
        }
        if (gr_harness_wait(c, NULL, res, "condition=Established", timeout_s) != 0) {
            return -1;
        }
    }
    return 0;
}

static bool retryable_apply_error(const char *err)
{
    return gr_harness_contains(err, "no matches for kind") ||
           gr_harness_contains(err, "ensure CRDs are installed first") ||
           gr_harness_contains(err, "the server could not find the requested resource") ||
           gr_harness_contains(err, "could not find the requested resource");
}

static int apply_common(const gr_harness_cluster *c, const char *ns, const char *file,
                        const char *stdin_data, const char *what)
{
    strlist crds = {0};
    int result = -1;
    for (int attempt = 1; attempt <= APPLY_ATTEMPTS; attempt++) {
        const char *argv[16];
        size_t n = 0;
        argv[n++] = "apply";
        argv[n++] = "--server-side";
        argv[n++] = "--force-conflicts";
        argv[n++] = "--field-manager=gr-harness";
        argv[n++] = "-o";
        argv[n++] = "name";
        argv[n++] = "-f";
        argv[n++] = file;
        if (ns) {
            argv[n++] = "-n";
            argv[n++] = ns;
        }
        argv[n] = NULL;
        gr_harness_result r;
        int rc = gr_harness_kubectl_argv(c, NULL, stdin_data, 120, argv, &r);
        collect_crds(r.out, &crds);
        if (rc == 0) {
            gr_harness_result_free(&r);
            result = wait_crds_established(c, &crds, 60);
            break;
        }
        bool retry = rc > 0 && retryable_apply_error(r.err) && attempt < APPLY_ATTEMPTS;
        if (!retry) {
            say("apply %s failed (exit %d):\n%s%s", what, r.status, r.out, r.err);
            gr_harness_result_free(&r);
            break;
        }
        gr_harness_result_free(&r);
        /* Objects whose kinds come from CRDs applied a moment ago: wait for
         * those CRDs, then apply again (apply is idempotent). */
        if (wait_crds_established(c, &crds, 60) != 0) {
            break;
        }
        sleep_ms(200L * attempt);
    }
    strlist_free(&crds);
    return result;
}

int gr_harness_apply_file(const gr_harness_cluster *c, const char *ns, const char *path)
{
    char full[GR_HARNESS_PATH_MAX];
    if (gr_harness_source_path(path, full, sizeof full) != 0) {
        say("path too long: %s", path);
        return -1;
    }
    if (access(full, R_OK) != 0) {
        say("cannot read %s: %s", full, strerror(errno));
        return -1;
    }
    return apply_common(c, ns, full, NULL, full);
}

int gr_harness_apply_yaml(const gr_harness_cluster *c, const char *ns, const char *yaml)
{
    return apply_common(c, ns, "-", yaml, "<inline yaml>");
}

/* ---------------------------------------------------------------- waiting */

static void print_object(const gr_harness_cluster *c, const char *ns, const char *resource)
{
    gr_harness_result r;
    const char *argv[8];
    size_t n = 0;
    argv[n++] = "get";
    argv[n++] = resource;
    argv[n++] = "-o";
    argv[n++] = "yaml";
    if (ns) {
        argv[n++] = "-n";
        argv[n++] = ns;
    }
    argv[n] = NULL;
    gr_harness_kubectl_argv(c, NULL, NULL, 20, argv, &r);
    fprintf(stderr, "---- %s%s%s ----\n%s%s", resource, ns ? " -n " : "", ns ? ns : "", r.out,
            r.err);
    gr_harness_result_free(&r);
}

int gr_harness_wait(const gr_harness_cluster *c, const char *ns, const char *resource,
                    const char *for_expr, int timeout_s)
{
    if (timeout_s <= 0) {
        timeout_s = GR_HARNESS_CMD_TIMEOUT;
    }
    timeout_s = gr_test_scaled_s(timeout_s); /* gr_test_scale.h: scaled to load */
    char forarg[1024], toarg[32];
    if (fmt_str(forarg, sizeof forarg, "--for=%s", for_expr) != 0) {
        say("--for expression too long");
        return -1;
    }
    fmt_str(toarg, sizeof toarg, "--timeout=%ds", timeout_s);
    const char *argv[10];
    size_t n = 0;
    argv[n++] = "wait";
    argv[n++] = forarg;
    argv[n++] = toarg;
    argv[n++] = resource;
    if (ns) {
        argv[n++] = "-n";
        argv[n++] = ns;
    }
    argv[n] = NULL;
    gr_harness_result r;
    /* kubectl wait gives up at once ("... accessor error: <nil> is of the type
     * <nil>") when the object has no status.conditions yet, e.g. a CRD the
     * apiserver has not reconciled. That is "not yet", so try again until the
     * deadline. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc;
    for (;;) {
        rc = gr_harness_kubectl_argv(c, NULL, NULL, timeout_s + 15, argv, &r);
        if (rc == 0 || !strstr(r.err, "accessor error")) {
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (t1.tv_sec - t0.tv_sec >= timeout_s) {
            break;
        }
        gr_harness_result_free(&r);
        nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    }
    if (rc != 0) {
        say("wait --for=%s %s%s%s failed after up to %ds: %s", for_expr, resource, ns ? " -n " : "",
            ns ? ns : "", timeout_s, r.err);
        if (strcmp(for_expr, "delete") != 0) {
            print_object(c, ns, resource);
        }
    }
    gr_harness_result_free(&r);
    return rc == 0 ? 0 : -1;
}

int gr_harness_get_jsonpath(const gr_harness_cluster *c, const char *ns, const char *resource,
                            const char *jsonpath, char **out)
{
    *out = NULL;
    char jp[1024];
    if (fmt_str(jp, sizeof jp, "jsonpath=%s", jsonpath) != 0) {
        return -1;
    }
    const char *argv[10];
    size_t n = 0;
    argv[n++] = "get";
    argv[n++] = resource;
    argv[n++] = "-o";
    argv[n++] = jp;
    if (ns) {
        argv[n++] = "-n";
        argv[n++] = ns;
    }
    argv[n] = NULL;
    gr_harness_result r;
    int rc = gr_harness_kubectl_argv(c, NULL, NULL, 0, argv, &r);
    if (rc != 0) {
        gr_harness_result_free(&r);
        return -1;
    }
    *out = trim(r.out);
    r.out = NULL;
    gr_harness_result_free(&r);
    return 0;
}

int gr_harness_wait_jsonpath(const gr_harness_cluster *c, const char *ns, const char *resource,
                             const char *jsonpath, const char *want, int timeout_s)
{
    if (timeout_s <= 0) {
        timeout_s = GR_HARNESS_CMD_TIMEOUT;
    }
    timeout_s = gr_test_scaled_s(timeout_s); /* gr_test_scale.h: scaled to load */
    double deadline = now_s() + timeout_s;
    char *last = NULL;
    for (;;) {
        char *got = NULL;
        if (gr_harness_get_jsonpath(c, ns, resource, jsonpath, &got) == 0) {
            if (strcmp(got, want) == 0) {
                free(got);
                free(last);
                return 0;
            }
            free(last);
            last = got;
        }
        if (now_s() > deadline) {
            break;
        }
        sleep_ms(200);
    }
    say("%s%s%s: %s is \"%s\", wanted \"%s\" within %ds", resource, ns ? " -n " : "", ns ? ns : "",
        jsonpath, last ? last : "(unavailable)", want, timeout_s);
    free(last);
    print_object(c, ns, resource);
    return -1;
}

/* ---------------------------------------------------------------- dumping */

static void tail_file(const char *path, int lines)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return;
    }
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return;
    }
    long size = ftell(f);
    long start = size > 65536 ? size - 65536 : 0;
    fseek(f, start, SEEK_SET);
    size_t cap = (size_t)(size - start) + 1;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return;
    }
    size_t got = fread(buf, 1, cap - 1, f);
    buf[got] = '\0';
    fclose(f);
    int seen = 0;
    size_t i = got;
    while (i > 0) {
        if (buf[i - 1] == '\n' && i != got && ++seen > lines) {
            break;
        }
        i--;
    }
    fprintf(stderr, "==== %s (last %d lines) ====\n%s", path, lines, buf + i);
    if (got > 0 && buf[got - 1] != '\n') {
        fputc('\n', stderr);
    }
    free(buf);
}

void gr_harness_dump_state(const gr_harness_cluster *c, const char *ns)
{
    fprintf(stderr, "\n======== gr_harness: cluster state%s%s ========\n",
            ns ? " for namespace " : "", ns ? ns : "");
    gr_harness_result r;
    if (ns) {
        /* Every listable namespaced resource, CRs included. */
        int rc = gr_harness_kubectl(c, &r, "api-resources", "--namespaced=true", "--verbs=list",
                                    "-o", "name", NULL);
        sbuf kinds = {0};
        if (rc == 0) {
            char *save = NULL;
            for (char *tok = strtok_r(r.out, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
                if (strcmp(tok, "events") == 0 || strcmp(tok, "events.events.k8s.io") == 0 ||
                    strcmp(tok, "endpoints") == 0) { /* deprecated; slices are listed */
                    continue;
                }
                if (kinds.len) {
                    sbuf_add(&kinds, ",", 1);
                }
                sbuf_add(&kinds, tok, strlen(tok));
            }
        }
        gr_harness_result_free(&r);
        size_t klen;
        char *k = sbuf_take(&kinds, &klen);
        gr_harness_kubectl(c, &r, "get", klen ? k : "all", "-n", ns, "-o", "wide",
                           "--ignore-not-found", "--show-kind", NULL);
        fprintf(stderr, "---- objects in %s ----\n%s%s", ns, r.out, r.err);
        gr_harness_result_free(&r);
        free(k);
        gr_harness_kubectl(c, &r, "get", "events", "-n", ns,
                           "--sort-by=.metadata.creationTimestamp", NULL);
        fprintf(stderr, "---- events in %s ----\n%s%s", ns, r.out, r.err);
        gr_harness_result_free(&r);
    }
    gr_harness_kubectl(c, &r, "get", "crd", NULL);
    fprintf(stderr, "---- CRDs ----\n%s%s", r.out, r.err);
    gr_harness_result_free(&r);
    if (c->apiserver_log[0]) {
        tail_file(c->apiserver_log, 40);
    }
    if (c->controller_manager) {
        char p[GR_HARNESS_PATH_MAX + 64];
        fmt_str(p, sizeof p, "%s/logs/kube-controller-manager.log", c->dir);
        tail_file(p, 20);
    }
    fprintf(stderr, "======== end of cluster state ========\n\n");
}

/* ---------------------------------------------------------------- cmocka */

static void test_prefix(char *out, size_t outsz)
{
    char exe[GR_HARNESS_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        copy_str(out, outsz, "test");
        return;
    }
    exe[n] = '\0';
    const char *base = strrchr(exe, '/');
    copy_str(out, outsz, base ? base + 1 : exe);
}

int gr_harness_setup(void **state)
{
    gr_harness_ctx *t = calloc(1, sizeof *t);
    if (!t) {
        return -1;
    }
    if (gr_harness_open(&t->cluster) != 0) {
        free(t);
        return -1;
    }
    char prefix[64];
    test_prefix(prefix, sizeof prefix);
    if (gr_harness_ns_create(&t->cluster, prefix, t->ns, sizeof t->ns) != 0) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

int gr_harness_teardown(void **state)
{
    gr_harness_ctx *t = *state;
    if (!t) {
        return 0;
    }
    if (!t->passed) {
        gr_harness_dump_state(&t->cluster, t->ns);
    }
    gr_harness_ns_delete(&t->cluster, t->ns);
    free(t);
    *state = NULL;
    return 0;
}
