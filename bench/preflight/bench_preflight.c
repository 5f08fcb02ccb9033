/*
 * bench_preflight.c — admission latency and throughput of the preflight
 * webhook, side by side with a static-response server on the same HTTP
 * stack (libmicrohttpd + GnuTLS, same threads and options): the ceiling.
 *
 * Workload: a gang GPU pod (8 GPUs, 4 NICs, NCCL env + mounts to inherit),
 * 3 checks selected, inheritance on, connector token on. Clients use
 * libcurl over keep-alive HTTPS from CLIENTS threads.
 *
 *   bench_preflight [seconds-per-phase=3] [clients=2]
 *
 * Prints `name: value unit` lines:
 *   preflight_admit_inprocess      µs per gr_preflight_admit() call
 *   <server>_closed_loop_throughput  requests/s with CLIENTS back-to-back clients
 *   <server>_closed_loop_p50/p99     ms
 *   <server>_1000rps_p50/p99         ms, paced at 1,000 requests/s
 *   mutate_throughput_vs_ceiling   % of the static server's throughput
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gr_log.h"
#include "gr_preflight.h"
#include "gr_preflight_server.h"

#include "bench_preflight_workload.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t sink(char *p, size_t s, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return s * n;
}

typedef struct client {
    char url[128];
    double seconds;
    double rate; /* requests/s for this client; 0 = back to back */
    double *lat;
    size_t nlat, cap;
    long errors;
} client;

static void *client_run(void *arg)
{
    client *c = arg;
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, c->url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, k_review);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)(sizeof k_review - 1));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* warm the connection (TLS handshake not measured) */
    curl_easy_perform(h);
    double start = now_s(), next = start;
    while (now_s() - start < c->seconds) {
        if (c->rate > 0) {
            next += 1.0 / c->rate;
            double wait = next - now_s();
            if (wait > 0) {
                struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
                nanosleep(&ts, NULL);
            }
        }
        double t0 = now_s();
        long code = 0;
        if (curl_easy_perform(h) != CURLE_OK ||
            (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code), code != 200)) {
            c->errors++;
            continue;
        }
        if (c->nlat == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 4096;
            c->lat = realloc(c->lat, c->cap * sizeof *c->lat);
            if (!c->lat)
                abort();
        }
        c->lat[c->nlat++] = (now_s() - t0) * 1e3;
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return NULL;
}

typedef struct result {
    double rps, p50, p99;
    long errors;
} result;

static result run_phase(uint16_t port, int nclients, double seconds, double total_rate)
{
    client *cs = calloc((size_t)nclients, sizeof *cs);
    pthread_t *th = calloc((size_t)nclients, sizeof *th);
    for (int i = 0; i < nclients; i++) {
        snprintf(cs[i].url, sizeof cs[i].url, "https://127.0.0.1:%u/mutate", port);
        cs[i].seconds = seconds;
        cs[i].rate = total_rate / nclients;
        pthread_create(&th[i], NULL, client_run, &cs[i]);
    }
    size_t n = 0;
    for (int i = 0; i < nclients; i++) {
        pthread_join(th[i], NULL);
        n += cs[i].nlat;
    }
    double *all = malloc((n ? n : 1) * sizeof *all);
    size_t k = 0;
    result r = {0};
    for (int i = 0; i < nclients; i++) {
        memcpy(all + k, cs[i].lat, cs[i].nlat * sizeof *all);
        k += cs[i].nlat;
        r.errors += cs[i].errors;
        free(cs[i].lat);
    }
    qsort(all, n, sizeof *all, cmp_d);
    r.rps = (double)n / seconds;
    r.p50 = n ? all[n / 2] : 0;
    r.p99 = n ? all[(size_t)((double)n * 0.99)] : 0;
    free(all);
    free(cs);
    free(th);
    return r;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    int nclients = argc > 2 ? atoi(argv[2]) : 2;
    if (seconds <= 0 || nclients < 1)
        return 2;
    gr_err err;
    gr_preflight_config *cfg = NULL;
    if (gr_preflight_config_parse(k_cfg, strlen(k_cfg), "bench", NULL, NULL, &cfg, &err) != GR_OK) {
        fprintf(stderr, "config: %s\n", err.msg);
        return 1;
    }
    gr_log_set_level(GR_LOG_WARN); /* one info line per injection would dominate */
    gr_preflight_gang_ops gang = {.resolve = gang_resolve};

    /* in-process cost of one admission */
    gr_preflight_admission a;
    int iters = 2000;
    double t0 = now_s();
    for (int i = 0; i < iters; i++) {
        if (gr_preflight_admit(cfg, &gang, k_review, sizeof k_review - 1, &a) != GR_OK ||
            a.result != GR_PREFLIGHT_ADMIT_INJECTED || a.n_injected != 3) {
            fprintf(stderr, "admission did not inject 3 checks\n");
            return 1;
        }
        gr_preflight_admission_clear(&a);
    }
    printf("preflight_admit_inprocess: %.1f us\n", (now_s() - t0) / iters * 1e6);

    char dir[] = "/tmp/gr-bench-preflight-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
             "-subj /CN=localhost -keyout %s/tls.key -out %s/tls.crt 2>/dev/null",
             dir, dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "openssl failed\n");
        return 1;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    gr_preflight_server_opts o = {.port = 0, .cert_dir = dir, .loopback_only = true};
    gr_preflight_server *mut = NULL, *stat = NULL;
    if (gr_preflight_server_start(&o, cfg, &gang, &mut, &err) != GR_OK) {
        fprintf(stderr, "server: %s\n", err.msg);
        return 1;
    }
    o.static_response = true;
    if (gr_preflight_server_start(&o, cfg, &gang, &stat, &err) != GR_OK) {
        fprintf(stderr, "server: %s\n", err.msg);
        return 1;
    }
    struct {
        const char *name;
        gr_preflight_server *s;
        result closed, paced;
    } srv[2] = {{.name = "static_ceiling", .s = stat}, {.name = "mutate", .s = mut}};
    for (int i = 0; i < 2; i++) {
        uint16_t port = gr_preflight_server_port(srv[i].s);
        srv[i].closed = run_phase(port, nclients, seconds, 0);
        srv[i].paced = run_phase(port, nclients, seconds, 1000);
    }
    long errors = 0;
    for (int i = 0; i < 2; i++) {
        printf("%s_closed_loop_throughput: %.0f requests/s\n", srv[i].name, srv[i].closed.rps);
        printf("%s_closed_loop_p50: %.3f ms\n", srv[i].name, srv[i].closed.p50);
        printf("%s_closed_loop_p99: %.3f ms\n", srv[i].name, srv[i].closed.p99);
        printf("%s_1000rps_achieved: %.0f requests/s\n", srv[i].name, srv[i].paced.rps);
        printf("%s_1000rps_p50: %.3f ms\n", srv[i].name, srv[i].paced.p50);
        printf("%s_1000rps_p99: %.3f ms\n", srv[i].name, srv[i].paced.p99);
        errors += srv[i].closed.errors + srv[i].paced.errors;
    }
    printf("mutate_throughput_vs_ceiling: %.1f %%\n",
           srv[0].closed.rps > 0 ? 100.0 * srv[1].closed.rps / srv[0].closed.rps : 0);
    printf("mutation_cost_of_ceiling_throughput: %.1f %%\n",
           srv[0].closed.rps > 0 ? 100.0 * (1 - srv[1].closed.rps / srv[0].closed.rps) : 0);
    printf("failed_requests: %ld requests\n", errors);
    gr_preflight_server_stop(mut);
    gr_preflight_server_stop(stat);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    gr_preflight_config_free(cfg);
    curl_global_cleanup();
    return errors ? 1 : 0;
}
