/*
 * test_health_peer.c — gr_health against a real gRPC server: @grpc/grpc-js
 * (test/health/peer.js) loading the same health_event.proto, on a unix
 * socket (h2c), on plain TCP (h2c) and on TLS with a throwaway CA made by the
 * openssl CLI. The peer records every call (decoded request, metadata,
 * deadline) and plays scripted answers: UNAVAILABLE, UNAUTHENTICATED,
 * INVALID_ARGUMENT, slow responses, a socket that appears late.
 *
 * Backoff sleeps go through a hook that returns at once (and rotates the
 * token file), so the test takes seconds; network I/O is real.
 *
 * Checklist: PF-161 (socket path), PF-162/166/167/168 (direct path with
 * target, token, CA), PF-180 (attempt cap → DEADLINE_EXCEEDED then retry),
 * PF-182 (INVALID_ARGUMENT gives up at once), PF-194 (same events on both
 * paths), PF-256 (health events), PF-43 (token presented).
 *
 * argv[1]: path of the gpuready-publish binary (CLI checks).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gr_health.h"
#include "gr_log.h"

static char dir[64];       /* temp dir for sockets, certs, records */
static char proto[4096];   /* src/health/proto/health_event.proto */
static char peer_js[4096]; /* test/health/peer.js */
static const char *cli;    /* gpuready-publish */

/* The peer of the running test, killed by the teardown if a test fails. */
static pid_t live_pid;

typedef struct peer {
    pid_t pid;
    int out; /* read end of its stdout */
    int port;
    char records[256];
    char sock[256];
} peer;

/* --- helpers ------------------------------------------------------------ */

static void path_in_dir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(s, f);
    fclose(f);
}

/* Start the peer. cfg_extra is JSON members appended to the config object
 * (e.g. "\"responses\":[...]"). wait_ready: block until it listens. */
static void peer_start(peer *p, const char *listen, const char *cfg_extra, int wait_ready)
{
    static int seq;
    memset(p, 0, sizeof *p);
    char cfgpath[256], name[64];
    snprintf(name, sizeof name, "records-%d.jsonl", seq);
    path_in_dir(p->records, sizeof p->records, name);
    snprintf(name, sizeof name, "peer-%d.sock", seq);
    path_in_dir(p->sock, sizeof p->sock, name);
    snprintf(name, sizeof name, "peer-%d.json", seq);
    path_in_dir(cfgpath, sizeof cfgpath, name);
    seq++;
    unlink(p->records);
    unlink(p->sock);
    char listen_buf[300];
    if (strcmp(listen, "unix") == 0)
        snprintf(listen_buf, sizeof listen_buf, "unix:%s", p->sock);
    else
        snprintf(listen_buf, sizeof listen_buf, "%s", listen);
    json_t *cfg =
        json_pack("{s:s, s:s, s:s}", "proto", proto, "listen", listen_buf, "records", p->records);
    assert_non_null(cfg);
    char *base = json_dumps(cfg, JSON_COMPACT);
    json_decref(cfg);
    size_t bl = strlen(base);
    base[bl - 1] = '\0'; /* drop the closing brace */
    char text[8192];
    snprintf(text, sizeof text, "%s%s%s}", base, cfg_extra && *cfg_extra ? "," : "",
             cfg_extra ? cfg_extra : "");
    free(base);
    write_file(cfgpath, text);

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    p->pid = fork();
    assert_true(p->pid >= 0);
    if (p->pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execlp("node", "node", peer_js, cfgpath, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    p->out = fds[0];
    live_pid = p->pid;
    if (!wait_ready)
        return;
    char line[256];
    size_t len = 0;
    while (len < sizeof line - 1) {
        struct pollfd pfd = {p->out, POLLIN, 0};
        int r = poll(&pfd, 1, 30000);
        if (r <= 0)
            fail_msg("peer did not report ready within 30 s");
        ssize_t n = read(p->out, line + len, 1);
        if (n <= 0)
            fail_msg("peer exited before it was ready (see its stderr above)");
        if (line[len] == '\n')
            break;
        len++;
    }
    line[len] = '\0';
    json_t *ready = json_loads(line, 0, NULL);
    assert_non_null(ready);
    p->port = (int)json_integer_value(json_object_get(ready, "port"));
    json_decref(ready);
}

static void peer_stop(peer *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGTERM);
        int st;
        waitpid(p->pid, &st, 0);
        if (live_pid == p->pid)
            live_pid = 0;
        p->pid = 0;
    }
    if (p->out > 0)
        close(p->out);
    p->out = 0;
}

/* All records as a JSON array (caller decrefs). */
static json_t *peer_records(const peer *p)
{
    json_t *arr = json_array();
    FILE *f = fopen(p->records, "r");
    if (!f)
        return arr;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t je;
        json_t *rec = json_loads(line, 0, &je);
        if (!rec)
            fail_msg("bad record line: %s", je.text);
        json_array_append_new(arr, rec);
    }
    free(line);
    fclose(f);
    return arr;
}

/* metadata[name] as the only value, or NULL. */
static const char *md_one(json_t *rec, const char *name)
{
    json_t *vals = json_object_get(json_object_get(rec, "metadata"), name);
    if (!json_is_array(vals))
        return NULL;
    assert_int_equal(json_array_size(vals), 1); /* exactly one header */
    return json_string_value(json_array_get(vals, 0));
}

static json_t *rec_event(json_t *rec)
{
    json_t *req = json_object_get(rec, "request");
    assert_non_null(req);
    assert_int_equal(json_integer_value(json_object_get(req, "version")), 1);
    json_t *events = json_object_get(req, "events");
    assert_int_equal(json_array_size(events), 1);
    return json_array_get(events, 0);
}

static const char *ev_str(json_t *ev, const char *k)
{
    const char *s = json_string_value(json_object_get(ev, k));
    assert_non_null(s);
    return s;
}

typedef struct fast {
    int sleeps;
    const char *token_path;
    const char *rotate_to;
} fast;

static void fast_sleep(void *ctx, int64_t ns)
{
    fast *f = ctx;
    (void)ns;
    f->sleeps++;
    if (f->rotate_to) {
        write_file(f->token_path, f->rotate_to);
        f->rotate_to = NULL;
    }
}

static gr_health_hooks fast_hooks(fast *f)
{
    gr_health_hooks h;
    memset(&h, 0, sizeof h);
    h.ctx = f;
    h.sleep_ns = fast_sleep;
    return h;
}

static void dcgm_event(gr_health_event *ev, const char **codes, gr_health_entity *ent)
{
    gr_health_event_init(ev);
    ev->agent = "preflight-dcgm-diag";
    ev->component_class = "GPU";
    ev->check_name = "DcgmDiagnosticPcieTest";
    ev->is_fatal = 1;
    ev->is_healthy = 0;
    ev->message = "PCIe replay rate exceeded \xe2\x80\x94 \xc3\xbc";
    ev->recommended_action = GR_HEALTH_ACTION_RESTART_VM;
    codes[0] = "DCGM_FR_PCIE_REPLAY_RATE";
    ev->error_codes = codes;
    ev->n_error_codes = 1;
    ent->type = "GPU_UUID";
    ent->value = "GPU-3c9a1f0e-0000-1111-2222-333344445555";
    ev->entities = ent;
    ev->n_entities = 1;
    ev->generated_ns = 1764000000LL * GR_HEALTH_NS_PER_S + 123456789;
    ev->node_name = "gpu-node-7";
    ev->processing_strategy = GR_HEALTH_STRATEGY_STORE_ONLY;
}

/* Every field the peer decoded, against what we sent. */
static void check_dcgm_fields(json_t *rec)
{
    json_t *ev = rec_event(rec);
    assert_null(json_object_get(rec, "decodeError")
                    ? json_string_value(json_object_get(rec, "decodeError"))
                    : NULL);
    assert_int_equal(json_integer_value(json_object_get(ev, "version")), 1);
    assert_string_equal(ev_str(ev, "agent"), "preflight-dcgm-diag");
    assert_string_equal(ev_str(ev, "componentClass"), "GPU");
    assert_string_equal(ev_str(ev, "checkName"), "DcgmDiagnosticPcieTest");
    assert_true(json_is_true(json_object_get(ev, "isFatal")));
    assert_true(json_is_false(json_object_get(ev, "isHealthy")));
    assert_string_equal(ev_str(ev, "message"), "PCIe replay rate exceeded \xe2\x80\x94 \xc3\xbc");
    assert_string_equal(ev_str(ev, "recommendedAction"), "RESTART_VM");
    json_t *codes = json_object_get(ev, "errorCode");
    assert_int_equal(json_array_size(codes), 1);
    assert_string_equal(json_string_value(json_array_get(codes, 0)), "DCGM_FR_PCIE_REPLAY_RATE");
    json_t *ents = json_object_get(ev, "entitiesImpacted");
    assert_int_equal(json_array_size(ents), 1);
    assert_string_equal(ev_str(json_array_get(ents, 0), "entityType"), "GPU_UUID");
    assert_string_equal(ev_str(json_array_get(ents, 0), "entityValue"),
                        "GPU-3c9a1f0e-0000-1111-2222-333344445555");
    json_t *ts = json_object_get(ev, "generatedTimestamp");
    assert_string_equal(ev_str(ts, "seconds"), "1764000000");
    assert_int_equal(json_integer_value(json_object_get(ts, "nanos")), 123456789);
    assert_string_equal(ev_str(ev, "nodeName"), "gpu-node-7");
    assert_string_equal(ev_str(ev, "processingStrategy"), "STORE_ONLY");
    /* Not set by the checks. */
    assert_int_equal(json_object_size(json_object_get(ev, "metadata")), 0);
    assert_true(json_is_null(json_object_get(ev, "quarantineOverrides")));
    assert_true(json_is_null(json_object_get(ev, "drainOverrides")));
    assert_string_equal(ev_str(ev, "id"), "");
    assert_string_equal(ev_str(ev, "customRecommendedAction"), "");
}

static int is_hex32(const char *s)
{
    if (!s || strlen(s) != 32)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return 0;
    return 1;
}

static gr_health_publisher *socket_pub(const peer *p, const char *token, const gr_health_hooks *h)
{
    gr_health_config cfg;
    gr_health_config_init(&cfg);
    char uri[300];
    snprintf(uri, sizeof uri, "unix://%s", p->sock);
    assert_int_equal(gr_health_config_set_socket(&cfg, uri, NULL), GR_OK);
    if (token)
        snprintf(cfg.token_path, sizeof cfg.token_path, "%s", token);
    gr_health_publisher *pub;
    gr_err err;
    if (gr_health_publisher_new(&cfg, h, &pub, &err) != GR_OK)
        fail_msg("publisher: %s", err.msg);
    return pub;
}

static gr_health_publisher *direct_pub(const peer *p, const char *token, const char *ca,
                                       const char *sni, int64_t window, int64_t attempt,
                                       const gr_health_hooks *h)
{
    gr_health_config cfg;
    gr_health_config_init(&cfg);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", p->port);
    assert_int_equal(gr_health_config_set_target(&cfg, target, NULL), GR_OK);
    snprintf(cfg.token_path, sizeof cfg.token_path, "%s", token);
    if (ca)
        snprintf(cfg.ca_file, sizeof cfg.ca_file, "%s", ca);
    else
        cfg.insecure = 1;
    if (sni)
        snprintf(cfg.server_name, sizeof cfg.server_name, "%s", sni);
    if (window)
        cfg.retry_window_ns = window;
    if (attempt)
        cfg.attempt_max_ns = attempt;
    gr_health_publisher *pub;
    gr_err err;
    if (gr_health_publisher_new(&cfg, h, &pub, &err) != GR_OK)
        fail_msg("publisher: %s", err.msg);
    return pub;
}

static char token_file[256];

/* --- tests -------------------------------------------------------------- */

/* PF-161, PF-256: every field and the metadata over the unix socket. */
static void test_unix_all_fields(void **state)
{
    (void)state;
    peer p;
    peer_start(&p, "unix", NULL, 1);
    write_file(token_file, "projected.sa.token\n");
    gr_health_publisher *pub = socket_pub(&p, token_file, NULL);
    const char *codes[1];
    gr_health_entity ent;
    gr_health_event ev;
    dcgm_event(&ev, codes, &ent);
    gr_health_report rep;
    gr_err err;
    int rc = gr_health_publish(pub, &ev, &rep, &err);
    if (rc != GR_OK)
        fail_msg("publish: %s", err.msg);
    assert_int_equal(rep.outcome, GR_HEALTH_DELIVERED);
    assert_int_equal(rep.attempts, 1);
    assert_int_equal(rep.grpc_code, GR_GRPC_OK);
    gr_health_publisher_free(pub);
    peer_stop(&p);

    json_t *recs = peer_records(&p);
    assert_int_equal(json_array_size(recs), 1);
    json_t *rec = json_array_get(recs, 0);
    check_dcgm_fields(rec);
    /* Trailing newline trimmed; exactly one authorization header (PF-43). */
    assert_string_equal(md_one(rec, "authorization"), "Bearer projected.sa.token");
    assert_true(is_hex32(md_one(rec, "idempotency-key")));
    assert_string_equal(md_one(rec, "idempotency-key"), rep.idempotency_key);
    assert_non_null(strstr(md_one(rec, "user-agent"), "grpc-c-gpuready/"));
    /* grpc-timeout reached the server: the deadline is at most 30 s away. */
    json_t *dl = json_object_get(rec, "deadlineMs");
    assert_true(json_is_integer(dl));
    assert_true(json_integer_value(dl) > 0 && json_integer_value(dl) <= 30000);

    /* The bytes on the wire are exactly what the encoder produced. */
    gr_buf mine = GR_BUF_INIT(4096);
    assert_int_equal(gr_health_event_encode(&ev, 0, &mine, NULL), GR_OK);
    const char *b64 = json_string_value(json_object_get(rec, "raw"));
    assert_non_null(b64);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "echo '%s' | base64 -d | cmp -s - '%s/mine.bin'", b64, dir);
    char mine_path[256];
    path_in_dir(mine_path, sizeof mine_path, "mine.bin");
    FILE *mf = fopen(mine_path, "wb");
    assert_non_null(mf);
    fwrite(mine.data, 1, mine.len, mf);
    fclose(mf);
    assert_int_equal(system(cmd), 0);
    gr_buf_free(&mine);
    json_decref(recs);
}

/* Socket mode: UNAVAILABLE is retried with the same key; UNAUTHENTICATED
 * and INVALID_ARGUMENT stop at once; grpc-message is percent-decoded. */
static void test_unix_retry_and_stop(void **state)
{
    (void)state;
    peer p;
    peer_start(&p, "unix",
               "\"responses\":[{\"code\":\"UNAVAILABLE\",\"message\":\"starting\"},"
               "{\"code\":\"OK\"},"
               "{\"code\":\"UNAUTHENTICATED\",\"message\":\"token \\u00fc 100% bad\"},"
               "{\"code\":\"INVALID_ARGUMENT\",\"message\":\"event 0: nope\"}]",
               1);
    write_file(token_file, "tok-a");
    fast f = {0};
    gr_health_hooks h = fast_hooks(&f);
    gr_health_publisher *pub = socket_pub(&p, token_file, &h);
    const char *codes[1];
    gr_health_entity ent;
    gr_health_event ev;
    dcgm_event(&ev, codes, &ent);
    gr_health_report rep;
    gr_err err;
    assert_int_equal(gr_health_publish(pub, &ev, &rep, &err), GR_OK);
    assert_int_equal(rep.attempts, 2);
    assert_int_equal(f.sleeps, 1);

    assert_int_equal(gr_health_publish(pub, &ev, &rep, &err), GR_EPERM);
    assert_int_equal(rep.attempts, 1);
    assert_int_equal(rep.grpc_code, GR_GRPC_UNAUTHENTICATED);
    assert_string_equal(rep.grpc_message, "token \xc3\xbc 100% bad");

    assert_int_equal(gr_health_publish(pub, &ev, &rep, &err), GR_EIO);
    assert_int_equal(rep.grpc_code, GR_GRPC_INVALID_ARGUMENT);
    assert_int_equal(rep.outcome, GR_HEALTH_UNDELIVERED);
    assert_string_equal(rep.grpc_message, "event 0: nope");
    gr_health_publisher_free(pub);
    peer_stop(&p);

    json_t *recs = peer_records(&p);
    assert_int_equal(json_array_size(recs), 4);
    const char *k0 = md_one(json_array_get(recs, 0), "idempotency-key");
    const char *k1 = md_one(json_array_get(recs, 1), "idempotency-key");
    const char *k2 = md_one(json_array_get(recs, 2), "idempotency-key");
    assert_string_equal(k0, k1);     /* reused across retries */
    assert_string_not_equal(k1, k2); /* a new event, a new key */
    for (size_t i = 0; i < 4; i++)
        check_dcgm_fields(json_array_get(recs, i));
    json_decref(recs);
}

/* Direct mode over plaintext TCP (HEALTH_PUBLISH_INSECURE): UNAVAILABLE and
 * UNAUTHENTICATED are retried, the token is re-read each attempt. PF-182:
 * INVALID_ARGUMENT gives up at once. */
static void test_direct_insecure(void **state)
{
    (void)state;
    peer p;
    peer_start(&p, "tcp",
               "\"responses\":[{\"code\":\"UNAVAILABLE\"},{\"code\":\"UNAUTHENTICATED\"},"
               "{\"code\":\"OK\"},{\"code\":\"INVALID_ARGUMENT\",\"message\":\"names another "
               "node\"}]",
               1);
    assert_true(p.port > 0);
    write_file(token_file, "old-token\n");
    fast f = {0, token_file, "new-token\n"};
    gr_health_hooks h = fast_hooks(&f);
    gr_health_publisher *pub = direct_pub(&p, token_file, NULL, NULL, 0, 0, &h);
    const char *codes[1];
    gr_health_entity ent;
    gr_health_event ev;
    dcgm_event(&ev, codes, &ent);
    gr_health_report rep;
    gr_err err;
    if (gr_health_publish(pub, &ev, &rep, &err) != GR_OK)
        fail_msg("publish: %s", err.msg);
    assert_int_equal(rep.attempts, 3);
    /* Delivered on the third attempt: the time was charged to the budget. */
    assert_true(gr_health_publisher_retry(pub)->budget_left_ns <
                gr_health_publisher_retry(pub)->window_ns);

    assert_int_equal(gr_health_publish(pub, &ev, &rep, &err), GR_EIO);
    assert_int_equal(rep.outcome, GR_HEALTH_REJECTED);
    assert_int_equal(rep.attempts, 1);
    assert_non_null(strstr(err.msg, "INVALID_ARGUMENT"));
    assert_non_null(strstr(err.msg, "names another node"));
    gr_health_publisher_free(pub);
    peer_stop(&p);

    json_t *recs = peer_records(&p);
    assert_int_equal(json_array_size(recs), 4);
    assert_string_equal(md_one(json_array_get(recs, 0), "authorization"), "Bearer old-token");
    assert_string_equal(md_one(json_array_get(recs, 1), "authorization"), "Bearer new-token");
    assert_string_equal(md_one(json_array_get(recs, 2), "authorization"), "Bearer new-token");
    assert_string_equal(md_one(json_array_get(recs, 0), "idempotency-key"),
                        md_one(json_array_get(recs, 2), "idempotency-key"));
    check_dcgm_fields(json_array_get(recs, 2));
    json_decref(recs);
}

/* PF-180: an attempt is cut at its timeout (here lowered to 1 s), reported
 * as DEADLINE_EXCEEDED, and retried. */
static void test_slow_response(void **state)
{
    (void)state;
    peer p;
    peer_start(&p, "tcp", "\"responses\":[{\"code\":\"OK\",\"delayMs\":4000},{\"code\":\"OK\"}]",
               1);
    write_file(token_file, "tok");
    fast f = {0};
    gr_health_hooks h = fast_hooks(&f);
    gr_health_publisher *pub = direct_pub(&p, token_file, NULL, NULL, 0, GR_HEALTH_NS_PER_S, &h);
    const char *codes[1];
    gr_health_entity ent;
    gr_health_event ev;
    dcgm_event(&ev, codes, &ent);
    gr_health_report rep;
    gr_err err;
    if (gr_health_publish(pub, &ev, &rep, &err) != GR_OK)
        fail_msg("publish: %s", err.msg);
    assert_int_equal(rep.attempts, 2);
    assert_int_equal(f.sleeps, 1);
    gr_health_publisher_free(pub);
    peer_stop(&p);
    json_t *recs = peer_records(&p);
    assert_int_equal(json_array_size(recs), 2);
    json_int_t dl = json_integer_value(json_object_get(json_array_get(recs, 0), "deadlineMs"));
    assert_true(dl > 0 && dl <= 1000); /* grpc-timeout carried the 1 s cap */
    json_decref(recs);
}

/* Socket mode: the connector's socket appears 1.5 s after we start. */
static void test_late_socket(void **state)
{
    (void)state;
    peer p;
    peer_start(&p, "unix", "\"delayListenMs\":1500", 0);
    write_file(token_file, "tok");
    gr_health_publisher *pub = socket_pub(&p, token_file, NULL); /* real clock */
    const char *codes[1];
    gr_health_entity ent;
    gr_health_event ev;
    dcgm_event(&ev, codes, &ent);
    gr_health_report rep;
    gr_err err;
    if (gr_health_publish(pub, &ev, &rep, &err) != GR_OK)
        fail_msg("publish: %s", err.msg);
    assert_int_equal(rep.attempts, 1);
    gr_health_publisher_free(pub);
    peer_stop(&p);
    json_t *recs = peer_records(&p);
    assert_int_equal(json_array_size(recs), 1);
    json_decref(recs);
}

static int make_certs(void)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && "
             "printf 'subjectAltName=DNS:pc.gpuready.test,IP:127.0.0.1\\n"
             "basicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > ext.cnf && "
             "for ca in ca other; do openssl req -x509 -newkey ec -pkeyopt "
             "ec_paramgen_curve:prime256v1 -nodes -keyout $ca.key -out $ca.crt -days 1 "
             "-subj /CN=gpuready-test-$ca || exit 1; done && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout srv.key -out srv.csr -subj /CN=pc.gpuready.test && "
             "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
             "-out srv.crt -days 1 -extfile ext.cnf",
             dir);
    strcat(cmd, " >/dev/null 2>openssl.log");
    return system(cmd);
}

/* PF-162/PF-166..168: TLS with the CA bundle, with and without a server name
 * override; a wrong CA or plaintext to a TLS port is not delivered. */
static void test_tls(void **state)
{
    (void)state;
    if (make_certs() != 0)
        fail_msg("openssl could not make the test certificates (see %s/openssl.log)", dir);
    char extra[1024], ca[256], other[256];
    snprintf(extra, sizeof extra, "\"tls\":{\"cert\":\"%s/srv.crt\",\"key\":\"%s/srv.key\"}", dir,
             dir);
    path_in_dir(ca, sizeof ca, "ca.crt");
    path_in_dir(other, sizeof other, "other.crt");
    peer p;
    peer_start(&p, "tcp", extra, 1);
    write_file(token_file, "tls-token");
    fast f = {0};
    gr_health_hooks h = fast_hooks(&f);
    const char *codes[1];
    gr_health_entity ent;
    gr_health_event ev;
    dcgm_event(&ev, codes, &ent);
    gr_health_report rep;
    gr_err err;

    /* Server name override (HEALTH_PUBLISH_TLS_SERVER_NAME). */
    gr_health_publisher *pub = direct_pub(&p, token_file, ca, "pc.gpuready.test", 0, 0, &h);
    if (gr_health_publish(pub, &ev, &rep, &err) != GR_OK)
        fail_msg("publish over TLS with server name: %s", err.msg);
    gr_health_publisher_free(pub);
    /* Default server name: the target host (IP SAN). */
    pub = direct_pub(&p, token_file, ca, NULL, 0, 0, &h);
    if (gr_health_publish(pub, &ev, &rep, &err) != GR_OK)
        fail_msg("publish over TLS: %s", err.msg);
    gr_health_publisher_free(pub);

    /* Wrong CA: the handshake fails (UNAVAILABLE); a 1 s window gives up
     * after the first attempt because the 2 s backoff passes the deadline. */
    pub = direct_pub(&p, token_file, other, NULL, GR_HEALTH_NS_PER_S, 0, &h);
    assert_int_equal(gr_health_publish(pub, &ev, &rep, &err), GR_EAGAIN);
    assert_int_equal(rep.grpc_code, GR_GRPC_UNAVAILABLE);
    assert_int_equal(rep.attempts, 1);
    gr_health_publisher_free(pub);
    /* Wrong server name. */
    pub = direct_pub(&p, token_file, ca, "wrong.gpuready.test", GR_HEALTH_NS_PER_S, 0, &h);
    assert_int_equal(gr_health_publish(pub, &ev, &rep, &err), GR_EAGAIN);
    gr_health_publisher_free(pub);
    /* Plaintext to the TLS port. */
    pub = direct_pub(&p, token_file, NULL, NULL, GR_HEALTH_NS_PER_S, 2 * GR_HEALTH_NS_PER_S, &h);
    assert_int_not_equal(gr_health_publish(pub, &ev, &rep, &err), GR_OK);
    gr_health_publisher_free(pub);
    peer_stop(&p);

    json_t *recs = peer_records(&p);
    assert_int_equal(json_array_size(recs), 2); /* only the two good ones */
    for (size_t i = 0; i < 2; i++) {
        check_dcgm_fields(json_array_get(recs, i));
        assert_string_equal(md_one(json_array_get(recs, i), "authorization"), "Bearer tls-token");
    }
    json_decref(recs);
}

static int run_cli(const char *args, const char *env)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "env -u HEALTH_PUBLISH_TARGET -u PLATFORM_CONNECTOR_SOCKET %s '%s' %s "
             ">'%s/cli.out' 2>'%s/cli.err'",
             env ? env : "", cli, args, dir, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The operator CLI: one event from flags; exit 0 / 1 / 2. */
static void test_cli(void **state)
{
    (void)state;
    if (!cli)
        fail_msg("pass the gpuready-publish path as argv[1]");
    peer p;
    peer_start(&p, "unix", "\"responses\":[{\"code\":\"OK\"},{\"code\":\"PERMISSION_DENIED\"}]", 1);
    write_file(token_file, "cli-token\n");
    char args[2048];
    snprintf(args, sizeof args,
             "--socket unix://%s --token-path %s --node n1 --agent preflight-nccl-loopback "
             "--check-name NCCLLoopbackTest --unhealthy --fatal --action CONTACT_SUPPORT "
             "--error-code NCCL_BW_DEGRADED --entity GPU_UUID=GPU-1 --message 'bw low' "
             "--strategy STORE_AND_ANALYSE --idempotency-key cli-key-1",
             p.sock, token_file);
    assert_int_equal(run_cli(args, NULL), 0);
    /* PERMISSION_DENIED: not delivered → 1. */
    assert_int_equal(run_cli(args, NULL), 1);
    peer_stop(&p);
    json_t *recs = peer_records(&p);
    assert_int_equal(json_array_size(recs), 2);
    json_t *rec = json_array_get(recs, 0);
    json_t *ev = rec_event(rec);
    assert_string_equal(ev_str(ev, "agent"), "preflight-nccl-loopback");
    assert_string_equal(ev_str(ev, "componentClass"), "Node");
    assert_string_equal(ev_str(ev, "checkName"), "NCCLLoopbackTest");
    assert_string_equal(ev_str(ev, "message"), "bw low");
    assert_string_equal(ev_str(ev, "recommendedAction"), "CONTACT_SUPPORT");
    assert_string_equal(ev_str(ev, "processingStrategy"), "STORE_AND_ANALYSE");
    assert_string_equal(ev_str(ev, "nodeName"), "n1");
    assert_true(json_is_true(json_object_get(ev, "isFatal")));
    assert_true(json_is_false(json_object_get(ev, "isHealthy")));
    assert_string_equal(md_one(rec, "idempotency-key"), "cli-key-1");
    assert_string_equal(md_one(rec, "authorization"), "Bearer cli-token");
    json_decref(recs);

    /* Configuration errors → 2 (PF-183, PF-185). */
    assert_int_equal(run_cli("--target pc:50051 --insecure --node n1", NULL), 2);
    assert_int_equal(run_cli("--node n1", "HEALTH_PUBLISH_TARGET=pc:1 HEALTH_PUBLISH_TOKEN_PATH=/t "
                                          "HEALTH_PUBLISH_INSECURE=1 "
                                          "HEALTH_PUBLISH_RETRY_WINDOW=5x"),
                     2);
    assert_int_equal(run_cli("--bogus", NULL), 2);
    assert_int_equal(run_cli("--help", NULL), 0);
}

static int kill_live(void **state)
{
    (void)state;
    if (live_pid > 0) {
        kill(live_pid, SIGTERM);
        waitpid(live_pid, NULL, 0);
        live_pid = 0;
    }
    return 0;
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gr-health-peer-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    path_in_dir(token_file, sizeof token_file, "token");
    return 0;
}

static int group_teardown(void **state)
{
    kill_live(state);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *src = getenv("GR_SOURCE_DIR");
    if (!src)
        src = "../..";
    snprintf(proto, sizeof proto, "%s/src/health/proto/health_event.proto", src);
    snprintf(peer_js, sizeof peer_js, "%s/test/health/peer.js", src);
    cli = argc > 1 ? argv[1] : NULL;
    char grpcjs[4096];
    snprintf(grpcjs, sizeof grpcjs, "%s/test/node/node_modules/@grpc/grpc-js/package.json", src);
    if (system("node --version >/dev/null 2>&1") != 0 || access(grpcjs, R_OK) != 0) {
        printf("SKIP: node or test/node/node_modules/@grpc/grpc-js is missing; run "
               "scripts/install-deps\n");
        return 77;
    }
    if (system("openssl version >/dev/null 2>&1") != 0) {
        printf("SKIP: the openssl CLI is missing; run scripts/install-deps\n");
        return 77;
    }
    signal(SIGPIPE, SIG_IGN);
    gr_log_set_level(GR_LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_unix_all_fields, kill_live),
        cmocka_unit_test_teardown(test_unix_retry_and_stop, kill_live),
        cmocka_unit_test_teardown(test_direct_insecure, kill_live),
        cmocka_unit_test_teardown(test_slow_response, kill_live),
        cmocka_unit_test_teardown(test_late_socket, kill_live),
        cmocka_unit_test_teardown(test_tls, kill_live),
        cmocka_unit_test_teardown(test_cli, kill_live),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
