/* Integration (real kube-apiserver + etcd): an informer survives a
 * kube-apiserver restart and a forced 410 (etcd compacted while it was
 * away) and ends equal to a fresh list; an informer's cache equals a fresh
 * list after 1,000 random creates/updates/deletes. Each runs twice: synced
 * by a streaming list (sendInitialEvents, the default) and by paginated
 * LIST.
 *
 * The restart uses a PRIVATE second kube-apiserver on the shared etcd
 * (same flags as the fixture's, another port, watch cache off so watches
 * are served from etcd), so restarting it does not disturb other tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "gr_kube_informer.h"
#include "gr_kube_watch.h"
#include "it_common.h"

static gr_kube_client *admin;
static char ns[128];

typedef struct tally {
    atomic_int add, upd, del;
} tally;

static void t_add(void *c, const json_t *o)
{
    (void)o;
    atomic_fetch_add(&((tally *)c)->add, 1);
}
static void t_upd(void *c, const json_t *a, const json_t *b)
{
    (void)a;
    (void)b;
    atomic_fetch_add(&((tally *)c)->upd, 1);
}
static void t_del(void *c, const json_t *o)
{
    (void)o;
    atomic_fetch_add(&((tally *)c)->del, 1);
}

/* Does the cache hold exactly what a fresh list returns (key → version)? */
static bool cache_equals_list(gr_kube_store *s, bool verbose)
{
    json_t *list = NULL;
    gr_err err;
    gr_kube_status st;
    gr_kube_opts o = {0};
    if (gr_kube_list_all(admin, &GR_KUBE_CONFIGMAPS, ns, &o, &list, &st, &err) != GR_OK)
        return false;
    json_t *items = json_object_get(list, "items");
    bool eq = json_array_size(items) == gr_kube_store_len(s);
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        char key[GR_KUBE_KEY_MAX];
        gr_kube_object_key(it, key, sizeof key, NULL);
        json_t *c = NULL;
        if (gr_kube_store_get(s, key, &c, NULL) != GR_OK ||
            strcmp(gr_kube_obj_meta(c, "resourceVersion"),
                   gr_kube_obj_meta(it, "resourceVersion"))) {
            if (verbose)
                fprintf(stderr, "cache differs at %s\n", key);
            eq = false;
        }
        json_decref(c);
    }
    if (verbose && !eq)
        fprintf(stderr, "list has %zu, cache %zu\n", json_array_size(items), gr_kube_store_len(s));
    json_decref(list);
    return eq;
}

static bool wait_equal(gr_kube_store *s, int seconds)
{
    int tries = gr_test_scaled_tries(seconds, 200); /* bounds a hang; scaled to load */
    for (int i = 0; i < tries; i++) {
        if (cache_equals_list(s, false))
            return true;
        it_sleep_ms(200);
    }
    return cache_equals_list(s, true);
}

static void cm_create(gr_kube_client *c, const char *name, const char *v)
{
    json_t *cm = json_pack("{s:s,s:s,s:{s:s},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                           "metadata", "name", name, "data", "v", v);
    gr_err err;
    gr_kube_status st;
    gr_kube_create(c, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, NULL, &st, &err);
    json_decref(cm);
}

static void cm_patch(gr_kube_client *c, const char *name, const char *v)
{
    json_t *p = json_pack("{s:{s:s}}", "data", "v", v);
    gr_err err;
    gr_kube_status st;
    gr_kube_patch(c, &GR_KUBE_CONFIGMAPS, ns, name, GR_KUBE_PATCH_MERGE, p, NULL, NULL, &st, &err);
    json_decref(p);
}

static void cm_delete(gr_kube_client *c, const char *name)
{
    gr_err err;
    gr_kube_status st;
    gr_kube_delete(c, &GR_KUBE_CONFIGMAPS, ns, name, NULL, NULL, &st, &err);
}

/* ---- the private kube-apiserver ---------------------------------------- */

static char **api_argv;
static int api_port;
static pid_t api_pid;

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(s, (struct sockaddr *)&a, sizeof a);
    socklen_t l = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &l);
    close(s);
    return ntohs(a.sin_port);
}

static int load_apiserver_argv(void)
{
    if (api_argv)
        return 0; /* loaded by the first run */
    char p[4096];
    snprintf(p, sizeof p, "%s/kube-apiserver.pid", it_cluster_dir());
    FILE *f = fopen(p, "r");
    int pid = 0;
    if (!f || fscanf(f, "%d", &pid) != 1) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    snprintf(p, sizeof p, "/proc/%d/cmdline", pid);
    f = fopen(p, "r");
    if (!f)
        return -1;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    size_t argc = 0;
    for (size_t i = 0; i < n; i++)
        argc += buf[i] == 0;
    api_argv = calloc(argc + 4, sizeof *api_argv);
    size_t k = 0;
    api_port = free_port();
    for (char *s = buf; s < buf + n; s += strlen(s) + 1) {
        if (strncmp(s, "--secure-port=", 14) == 0) {
            char *r = malloc(32);
            snprintf(r, 32, "--secure-port=%d", api_port);
            api_argv[k++] = r;
        } else {
            api_argv[k++] = s;
        }
    }
    api_argv[k++] = (char *)(uintptr_t) "--watch-cache=false";
    api_argv[k] = NULL;
    return 0;
}

static gr_kube_client *private_client(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/kubeconfig", it_cluster_dir());
    gr_kube_config cfg;
    gr_err err;
    if (gr_kube_config_load_file(path, NULL, &cfg, &err) != GR_OK)
        return NULL;
    free(cfg.server);
    cfg.server = malloc(64);
    snprintf(cfg.server, 64, "https://127.0.0.1:%d", api_port);
    cfg.qps = -1;
    gr_kube_client *c = NULL;
    gr_kube_client_new(&cfg, &c, &err);
    gr_kube_config_free(&cfg);
    return c;
}

static int start_apiserver(gr_kube_client *pc)
{
    char log[4096];
    snprintf(log, sizeof log, "%s/logs/kube-it-apiserver-%d.log", it_cluster_dir(), (int)getpid());
    api_pid = fork();
    if (api_pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        setsid();
        execv(api_argv[0], api_argv);
        _exit(127);
    }
    int tries = gr_test_scaled_tries(60, 100); /* up to 60 s, scaled to load */
    for (int i = 0; i < tries; i++) {
        gr_buf b = GR_BUF_INIT(4096);
        long http = 0;
        gr_kube_opts o = {0};
        o.timeout_ms = 2000;
        gr_err err;
        int rc = gr_kube_request(pc, "GET", "/readyz", NULL, NULL, 0, &o, &b, &http, NULL, &err);
        gr_buf_free(&b);
        if (rc == GR_OK && http == 200)
            return 0;
        it_sleep_ms(100);
    }
    fprintf(stderr, "private kube-apiserver did not become ready; see %s\n", log);
    return -1;
}

static void stop_apiserver(void)
{
    if (api_pid > 0) {
        kill(api_pid, SIGTERM);
        int st;
        for (int i = 0; i < 150 && waitpid(api_pid, &st, WNOHANG) == 0; i++)
            it_sleep_ms(100);
        if (waitpid(api_pid, &st, WNOHANG) == 0) {
            kill(api_pid, SIGKILL);
            waitpid(api_pid, &st, 0);
        }
        api_pid = 0;
    }
}

static size_t sink(char *p, size_t s, size_t n, void *u)
{
    (void)p;
    (void)u;
    return s * n;
}

/* Compact etcd to its current revision: every older resourceVersion is gone. */
static int compact_etcd(void)
{
    char p[4096], line[512], url[256] = "";
    snprintf(p, sizeof p, "%s/cluster.env", it_cluster_dir());
    FILE *f = fopen(p, "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "GR_ETCD_URL=", 12) == 0)
            snprintf(url, sizeof url, "%.*s", (int)strcspn(line + 12, "\n"), line + 12);
    if (f)
        fclose(f);
    if (!url[0])
        return -1;
    CURL *h = curl_easy_init();
    gr_buf b = GR_BUF_INIT(1 << 16);
    char u[300];
    snprintf(u, sizeof u, "%s/v3/kv/range", url);
    curl_easy_setopt(h, CURLOPT_URL, u);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{\"key\":\"AA==\"}");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, NULL);
    FILE *mem = fmemopen(NULL, 4096, "w+");
    curl_easy_setopt(h, CURLOPT_WRITEDATA, mem);
    int rc = curl_easy_perform(h) == CURLE_OK ? 0 : -1;
    char resp[4096] = "";
    rewind(mem);
    size_t n = fread(resp, 1, sizeof resp - 1, mem);
    resp[n] = 0;
    fclose(mem);
    json_t *j = json_loads(resp, 0, NULL);
    const char *rev = json_string_value(json_object_get(json_object_get(j, "header"), "revision"));
    if (rc == 0 && rev) {
        char body[128];
        snprintf(body, sizeof body, "{\"revision\":\"%s\",\"physical\":true}", rev);
        snprintf(u, sizeof u, "%s/v3/kv/compaction", url);
        curl_easy_setopt(h, CURLOPT_URL, u);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
        long code = 0;
        rc = curl_easy_perform(h) == CURLE_OK ? 0 : -1;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        if (code != 200)
            rc = -1;
    } else {
        rc = -1;
    }
    json_decref(j);
    gr_buf_free(&b);
    curl_easy_cleanup(h);
    return rc;
}

static gr_kube_sync_mode streaming_mode = GR_KUBE_SYNC_AUTO;
static gr_kube_sync_mode list_mode = GR_KUBE_SYNC_LIST;

static const char *mode_name(gr_kube_sync_mode m)
{
    return m == GR_KUBE_SYNC_LIST ? "list" : "streaming";
}

static void test_survives_restart_and_forced_gone(void **state)
{
    gr_kube_sync_mode mode = *(gr_kube_sync_mode *)*state;
    assert_int_equal(load_apiserver_argv(), 0);
    gr_kube_client *pc = private_client();
    assert_non_null(pc);
    assert_int_equal(start_apiserver(pc), 0);
    tally t = {0};
    gr_kube_informer_opts o = {0};
    o.gvr = GR_KUBE_CONFIGMAPS;
    o.ns = ns;
    o.handlers = (gr_kube_handlers){t_add, t_upd, t_del, &t};
    o.watch_timeout_s = 60;
    o.backoff_initial_ns = 200000000LL;
    o.backoff_max_ns = 2000000000LL;
    o.sync_mode = mode;
    gr_kube_informer *inf;
    gr_err err;
    assert_int_equal(gr_kube_informer_new(pc, &o, &inf, &err), GR_OK);
    assert_int_equal(gr_kube_informer_start(inf, &err), GR_OK);
    assert_int_equal(gr_kube_informer_wait_synced(inf, 30000000000LL, &err), GR_OK);
    char name[64];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "r%d", i);
        cm_create(admin, name, "0");
    }
    assert_true(wait_equal(gr_kube_informer_store(inf), 30));
    /* restart: stop the apiserver the informer watches through; change
     * things behind its back; compact etcd so its resourceVersion is gone */
    stop_apiserver();
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "r%d", i);
        cm_delete(admin, name);
        snprintf(name, sizeof name, "r%d", i + 5);
        cm_patch(admin, name, "1");
        snprintf(name, sizeof name, "n%d", i);
        cm_create(admin, name, "0");
    }
    assert_int_equal(compact_etcd(), 0);
    it_sleep_ms(1500); /* let the informer notice the outage */
    assert_int_equal(start_apiserver(pc), 0);
    /* a plain watch from a compacted version: 410, typed */
    gr_kube_status gst;
    gr_kube_opts wo = {0};
    wo.resource_version = "1";
    wo.timeout_seconds = 5;
    assert_int_equal(
        gr_kube_watch(pc, &GR_KUBE_CONFIGMAPS, ns, &wo, 0, NULL, NULL, NULL, &gst, &err),
        GR_ESTATE);
    assert_true(gr_kube_status_is_gone(&gst));
    assert_int_equal(gst.http_code, 410);
    assert_true(wait_equal(gr_kube_informer_store(inf), 60));
    gr_kube_informer_stats s;
    gr_kube_informer_stats_get(inf, &s);
    fprintf(stderr,
            "restart (%s): lists=%llu streaming=%llu fallbacks=%llu watches=%llu gone=%llu "
            "errors=%llu events=%llu\n",
            mode_name(mode), (unsigned long long)s.lists, (unsigned long long)s.watch_lists,
            (unsigned long long)s.list_fallbacks, (unsigned long long)s.watches,
            (unsigned long long)s.gone, (unsigned long long)s.errors, (unsigned long long)s.events);
    if (mode == GR_KUBE_SYNC_LIST)
        assert_int_equal(s.watch_lists, 0); /* LIST only, as asked */
    assert_true(s.errors >= 1);             /* the outage was seen … */
    assert_true(s.gone >= 1);               /* … and the compacted version forced a relist */
    assert_true(s.lists >= 2);
    /* handlers saw every change exactly once: adds - deletes = cache size */
    assert_int_equal(atomic_load(&t.add) - atomic_load(&t.del),
                     (int)gr_kube_store_len(gr_kube_informer_store(inf)));
    /* the watch keeps working after all that */
    cm_create(admin, "after", "0");
    assert_true(wait_equal(gr_kube_informer_store(inf), 30));
    gr_kube_informer_free(inf);
    stop_apiserver();
    gr_kube_client_free(pc);
    for (int i = 0; i < 20; i++) { /* the next run starts from the same state */
        snprintf(name, sizeof name, "r%d", i);
        cm_delete(admin, name);
        snprintf(name, sizeof name, "n%d", i);
        cm_delete(admin, name);
    }
    cm_delete(admin, "after");
}

static char data_v[] = "data.v";

static void test_cache_equals_list_after_1000_ops(void **state)
{
    gr_kube_sync_mode mode = *(gr_kube_sync_mode *)*state;
    /* a few objects exist before the informer starts, so the sync has
     * something to deliver */
    char name[64], val[32];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "x%d", i);
        cm_create(admin, name, "0");
    }
    tally t = {0};
    gr_kube_informer_opts o = {0};
    o.gvr = GR_KUBE_CONFIGMAPS;
    o.ns = ns;
    o.sync_mode = mode;
    o.page_size = 3; /* LIST: several pages, each applied as it arrives */
    o.handlers = (gr_kube_handlers){t_add, t_upd, t_del, &t};
    gr_kube_informer *inf;
    gr_err err;
    assert_int_equal(gr_kube_informer_new(admin, &o, &inf, &err), GR_OK);
    assert_int_equal(gr_kube_informer_add_index(inf, "v", gr_kube_index_field, data_v, &err),
                     GR_OK);
    assert_int_equal(gr_kube_informer_start(inf, &err), GR_OK);
    assert_int_equal(gr_kube_informer_wait_synced(inf, 30000000000LL, &err), GR_OK);
    assert_true(cache_equals_list(gr_kube_informer_store(inf), true));
    gr_kube_informer_stats s0;
    gr_kube_informer_stats_get(inf, &s0);
    if (mode == GR_KUBE_SYNC_LIST) {
        assert_int_equal(s0.watch_lists, 0);
    } else { /* the fixture's kube-apiserver (1.36, watch cache on) streams */
        assert_int_equal(s0.watch_lists, 1);
        assert_int_equal(s0.list_fallbacks, 0);
    }
    unsigned seed = 42;
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "x%u", rand_r(&seed) % 60);
        snprintf(val, sizeof val, "%u", rand_r(&seed) % 5);
        switch (rand_r(&seed) % 3) {
        case 0:
            cm_create(admin, name, val);
            break;
        case 1:
            cm_patch(admin, name, val);
            break;
        default:
            cm_delete(admin, name);
        }
    }
    assert_true(wait_equal(gr_kube_informer_store(inf), 60));
    assert_int_equal(atomic_load(&t.add) - atomic_load(&t.del),
                     (int)gr_kube_store_len(gr_kube_informer_store(inf)));
    /* the index agrees with the objects */
    json_t *l = NULL;
    assert_int_equal(gr_kube_store_list(gr_kube_informer_store(inf), "v", "3", &l, &err), GR_OK);
    size_t i;
    json_t *it;
    json_array_foreach(l, i, it)
    {
        assert_string_equal(json_string_value(json_object_get(json_object_get(it, "data"), "v")),
                            "3");
    }
    json_decref(l);
    gr_kube_informer_free(inf);
    for (int k = 0; k < 60; k++) { /* the next run starts from the same state */
        snprintf(name, sizeof name, "x%d", k);
        cm_delete(admin, name);
    }
}

static int setup(void **state)
{
    (void)state;
    admin = it_client("kubeconfig", -1);
    return admin && it_ns_create(admin, "kube-it-watch", ns, sizeof ns) == GR_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    stop_apiserver();
    if (admin) {
        it_ns_delete(admin, ns);
        gr_kube_client_free(admin);
    }
    return 0;
}

int main(void)
{
    int skip = it_skip();
    if (skip)
        return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_survives_restart_and_forced_gone, &streaming_mode),
        cmocka_unit_test_prestate(test_survives_restart_and_forced_gone, &list_mode),
        cmocka_unit_test_prestate(test_cache_equals_list_after_1000_ops, &streaming_mode),
        cmocka_unit_test_prestate(test_cache_equals_list_after_1000_ops, &list_mode),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
