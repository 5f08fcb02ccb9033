/*
 * bench_preflight.c — admission latency and throughput of the preflight
 * webhook, side by side with static-response servers on the same HTTP
 * stack (libmicrohttpd + GnuTLS, same threads and options): the ceiling
 * (a 100-byte "allowed" review) and `static_same_size`, which answers every
 * request with the bytes of a real injection response (~7.6 kB) without
 * computing anything — the part of the difference that is only the larger
 * response travelling through TLS and curl.
 *
 * Workload (bench_preflight_workload.h): a gang GPU pod (8 GPUs, 4 NICs,
 * NCCL env + mounts to inherit), 3 checks selected, inheritance on,
 * connector token on. Clients use libcurl over keep-alive HTTPS from
 * CLIENTS threads in this process (the TLS handshake is done before timing).
 *
 *   bench_preflight [seconds-per-phase=3] [clients=2] [rounds=6]
 *
 * The machine is shared, so the two servers are measured interleaved: each
 * phase is split into ROUNDS slices run in alternating order (A B C, C B A,
 * ...), so load from elsewhere hits all of them alike. Besides
 * wall-clock throughput, the process CPU time (user + system, clients and
 * server together) per request is reported: it is much less sensitive to
 * other load, and the ratio of the two is the throughput ratio the servers
 * would reach on a machine where this benchmark had the CPUs to itself.
 *
 * Prints `name: value unit` lines:
 *   preflight_admit_inprocess[_cpu]   µs per gr_preflight_admit() (wall, thread CPU)
 *   <server>_closed_loop_throughput   requests/s, CLIENTS back-to-back clients
 *   <server>_closed_loop_p50/p99      ms
 *   <server>_closed_loop_cpu_per_request  µs of process CPU per request
 *   <server>_closed_loop_server_cpu_per_request  the same without the client
 *                                     threads' own CPU time (the webhook's share)
 *   <server>_1000rps_achieved/p50/p99 paced at 1,000 requests/s in total
 *   mutate_throughput_vs_ceiling      % of the static server's throughput
 *   mutate_throughput_vs_ceiling_median_round  median over the rounds
 *   mutate_cpu_throughput_vs_ceiling  ceiling CPU/request ÷ mutate CPU/request, %
 *   mutate_server_cpu_throughput_vs_ceiling  the same for the server's CPU only
 *   same_size_static_server_cpu_throughput_vs_ceiling  the response-size floor
 *   mutate_server_cpu_throughput_vs_same_size_static   the admission's own cost
 *   mutation_cost_of_ceiling_throughput  100 − mutate_throughput_vs_ceiling
 *   failed_requests
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gr_log.h"
#include "gr_preflight.h"
#include "gr_preflight_server.h"

#include "bench_preflight_workload.h"

#define MAX_ROUNDS 64
#define NSERVERS   3 /* static ceiling, static with the mutate response, mutate */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double process_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
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

/* Latencies and counters of one server in one kind of phase. */
typedef struct acc {
    double *lat; /* ms */
    size_t n, cap;
    long errors;
    double wall, cpu;             /* seconds, summed over slices */
    double server_cpu;            /* cpu minus the client threads' own CPU */
    double round_rps[MAX_ROUNDS]; /* per-slice throughput */
} acc;

typedef struct client {
    CURL *h;
    struct curl_slist *hdr;
    double seconds;
    double rate; /* requests/s for this client; 0 = back to back */
    pthread_barrier_t *bar;
    acc own; /* latencies of this slice */
} client;

static void lat_push(acc *a, double ms)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 4096;
        a->lat = realloc(a->lat, a->cap * sizeof *a->lat);
        if (!a->lat)
            abort();
    }
    a->lat[a->n++] = ms;
}

static void *client_run(void *arg)
{
    client *c = arg;
    pthread_barrier_wait(c->bar);
    double start = now_s(), next = start;
    double cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
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
        if (curl_easy_perform(c->h) != CURLE_OK ||
            (curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code), code != 200)) {
            c->own.errors++;
            continue;
        }
        lat_push(&c->own, (now_s() - t0) * 1e3);
    }
    c->own.cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    return NULL;
}

static int clients_open(client *cs, int n, uint16_t port)
{
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/mutate", port);
    for (int i = 0; i < n; i++) {
        client *c = &cs[i];
        c->h = curl_easy_init();
        c->hdr = curl_slist_append(NULL, "Content-Type: application/json");
        if (!c->h || !c->hdr)
            return -1;
        curl_easy_setopt(c->h, CURLOPT_URL, url);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, k_review);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE, (long)(sizeof k_review - 1));
        curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdr);
        curl_easy_setopt(c->h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c->h, CURLOPT_SSL_VERIFYHOST, 0L);
        curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, sink);
        curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
        /* warm the connection: the TLS handshake is not measured */
        if (curl_easy_perform(c->h) != CURLE_OK)
            return -1;
    }
    return 0;
}

static void clients_close(client *cs, int n)
{
    for (int i = 0; i < n; i++) {
        curl_slist_free_all(cs[i].hdr);
        curl_easy_cleanup(cs[i].h);
    }
}

/* One slice: every client of `cs` runs for `seconds`; results go to `a`. */
static void run_slice(client *cs, int nclients, double seconds, double total_rate, int round,
                      acc *a)
{
    pthread_t th[64];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)nclients + 1);
    for (int i = 0; i < nclients; i++) {
        cs[i].seconds = seconds;
        cs[i].rate = total_rate / nclients;
        cs[i].bar = &bar;
        memset(&cs[i].own, 0, sizeof cs[i].own);
        pthread_create(&th[i], NULL, client_run, &cs[i]);
    }
    pthread_barrier_wait(&bar);
    double t0 = now_s(), c0 = process_cpu_s();
    size_t n = 0;
    for (int i = 0; i < nclients; i++)
        pthread_join(th[i], NULL);
    double wall = now_s() - t0, cpu = process_cpu_s() - c0;
    double server_cpu = cpu;
    for (int i = 0; i < nclients; i++) {
        server_cpu -= cs[i].own.cpu;
        for (size_t k = 0; k < cs[i].own.n; k++)
            lat_push(a, cs[i].own.lat[k]);
        n += cs[i].own.n;
        a->errors += cs[i].own.errors;
        free(cs[i].own.lat);
    }
    pthread_barrier_destroy(&bar);
    a->wall += wall;
    a->cpu += cpu;
    a->server_cpu += server_cpu;
    a->round_rps[round] = wall > 0 ? (double)n / wall : 0;
}

static double pct(acc *a, double p)
{
    if (!a->n)
        return 0;
    qsort(a->lat, a->n, sizeof *a->lat, cmp_d);
    size_t i = (size_t)((double)a->n * p);
    return a->lat[i < a->n ? i : a->n - 1];
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    int nclients = argc > 2 ? atoi(argv[2]) : 2;
    int rounds = argc > 3 ? atoi(argv[3]) : 6;
    if (seconds <= 0 || nclients < 1 || nclients > 64 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: bench_preflight [seconds-per-phase] [clients<=64] "
                        "[rounds<=64]\n");
        return 2;
    }
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
    double t0 = now_s(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < iters; i++) {
        if (gr_preflight_admit(cfg, &gang, k_review, sizeof k_review - 1, &a) != GR_OK ||
            a.result != GR_PREFLIGHT_ADMIT_INJECTED || a.n_injected != 3) {
            fprintf(stderr, "admission did not inject 3 checks\n");
            return 1;
        }
        gr_preflight_admission_clear(&a);
    }
    printf("preflight_admit_inprocess: %.1f us\n", (now_s() - t0) / iters * 1e6);
    printf("preflight_admit_inprocess_cpu: %.1f us\n",
           (clock_s(CLOCK_THREAD_CPUTIME_ID) - c0) / iters * 1e6);

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
    /* the response of a real admission, for the same-size static server */
    gr_preflight_admission real;
    if (gr_preflight_admit(cfg, &gang, k_review, sizeof k_review - 1, &real) != GR_OK)
        return 1;
    gr_preflight_server_opts o = {.port = 0, .cert_dir = dir, .loopback_only = true};
    gr_preflight_server *servers[NSERVERS] = {NULL};
    static const char *const names[NSERVERS] = {"static_ceiling", "static_same_size", "mutate"};
    for (int i = 0; i < NSERVERS; i++) {
        o.static_response = i < 2;
        o.static_body = i == 1 ? real.body : NULL;
        o.static_body_len = i == 1 ? real.body_len : 0;
        if (gr_preflight_server_start(&o, cfg, &gang, &servers[i], &err) != GR_OK) {
            fprintf(stderr, "server: %s\n", err.msg);
            return 1;
        }
    }
    printf("response_bytes_mutate: %zu bytes\n", real.body_len);
    gr_preflight_admission_clear(&real);
    struct {
        const char *name;
        gr_preflight_server *s;
        client cs[64];
        acc closed, paced;
    } *srv = calloc(NSERVERS, sizeof *srv);
    if (!srv)
        return 1;
    for (int i = 0; i < NSERVERS; i++) {
        srv[i].name = names[i];
        srv[i].s = servers[i];
        if (clients_open(srv[i].cs, nclients, gr_preflight_server_port(srv[i].s)) != 0) {
            fprintf(stderr, "cannot reach the %s server\n", srv[i].name);
            return 1;
        }
    }
    double slice = seconds / rounds;
    for (int phase = 0; phase < 2; phase++) {
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < NSERVERS; k++) {
                int i = (r & 1) ? NSERVERS - 1 - k : k; /* ABCCBA... */
                run_slice(srv[i].cs, nclients, slice, phase ? 1000 : 0, r,
                          phase ? &srv[i].paced : &srv[i].closed);
            }
        }
    }
    long errors = 0;
    double ratios[MAX_ROUNDS];
    const int M = NSERVERS - 1; /* mutate */
    for (int r = 0; r < rounds; r++)
        ratios[r] = srv[0].closed.round_rps[r] > 0
                        ? srv[M].closed.round_rps[r] / srv[0].closed.round_rps[r]
                        : 0;
    qsort(ratios, (size_t)rounds, sizeof *ratios, cmp_d);
    double rps[NSERVERS], cpu_req[NSERVERS], srv_req[NSERVERS];
    for (int i = 0; i < NSERVERS; i++) {
        acc *c = &srv[i].closed, *p = &srv[i].paced;
        rps[i] = c->wall > 0 ? (double)c->n / c->wall : 0;
        cpu_req[i] = c->n ? c->cpu / (double)c->n * 1e6 : 0;
        srv_req[i] = c->n ? c->server_cpu / (double)c->n * 1e6 : 0;
        printf("%s_closed_loop_throughput: %.0f requests/s\n", srv[i].name, rps[i]);
        printf("%s_closed_loop_p50: %.3f ms\n", srv[i].name, pct(c, 0.5));
        printf("%s_closed_loop_p99: %.3f ms\n", srv[i].name, pct(c, 0.99));
        printf("%s_closed_loop_cpu_per_request: %.1f us\n", srv[i].name, cpu_req[i]);
        printf("%s_closed_loop_server_cpu_per_request: %.1f us\n", srv[i].name, srv_req[i]);
        printf("%s_1000rps_achieved: %.0f requests/s\n", srv[i].name,
               p->wall > 0 ? (double)p->n / p->wall : 0);
        printf("%s_1000rps_p50: %.3f ms\n", srv[i].name, pct(p, 0.5));
        printf("%s_1000rps_p99: %.3f ms\n", srv[i].name, pct(p, 0.99));
        errors += c->errors + p->errors;
    }
    double ratio = rps[0] > 0 ? 100.0 * rps[M] / rps[0] : 0;
    printf("mutate_throughput_vs_ceiling: %.1f %%\n", ratio);
    printf("mutate_throughput_vs_ceiling_median_round: %.1f %%\n",
           100.0 * (rounds % 2 ? ratios[rounds / 2]
                               : (ratios[rounds / 2 - 1] + ratios[rounds / 2]) / 2));
    printf("mutate_cpu_throughput_vs_ceiling: %.1f %%\n",
           cpu_req[M] > 0 ? 100.0 * cpu_req[0] / cpu_req[M] : 0);
    printf("mutate_server_cpu_throughput_vs_ceiling: %.1f %%\n",
           srv_req[M] > 0 ? 100.0 * srv_req[0] / srv_req[M] : 0);
    printf("same_size_static_server_cpu_throughput_vs_ceiling: %.1f %%\n",
           srv_req[1] > 0 ? 100.0 * srv_req[0] / srv_req[1] : 0);
    printf("mutate_server_cpu_throughput_vs_same_size_static: %.1f %%\n",
           srv_req[M] > 0 ? 100.0 * srv_req[1] / srv_req[M] : 0);
    printf("mutation_cost_of_ceiling_throughput: %.1f %%\n", 100.0 - ratio);
    printf("failed_requests: %ld requests\n", errors);
    for (int i = 0; i < NSERVERS; i++) {
        clients_close(srv[i].cs, nclients);
        free(srv[i].closed.lat);
        free(srv[i].paced.lat);
        gr_preflight_server_stop(srv[i].s);
    }
    free(srv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    gr_preflight_config_free(cfg);
    curl_global_cleanup();
    return errors ? 1 : 0;
}
