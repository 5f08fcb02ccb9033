/*
 * test_gang_scale.c — a gang of 1,000 pods forms without lost updates
 * (PF-145, PF-147..PF-149): 1,000 member pods get their IPs concurrently
 * (status patches from 8 threads, in shuffled order) while 4 coordinator
 * workers rewrite one ConfigMap with optimistic-concurrency retries. The
 * final `peers` must list every pod exactly once with ranks 0..999 in name
 * order, and expected_count must be the PodGroup's minMember.
 *
 * Also prints (no assertion on it) how long the gang took to form:
 *   gang_form_1000_seconds: <s> s
 */
#include <pthread.h>

#include "gang_itest.h"

#define N       1000
#define THREADS 8

typedef struct job {
    genv *g;
    const char *ns;
    const char *cm;
    int from, step;
    int phase; /* 0 create, 1 set IP */
    const int *order;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (int k = j->from; k < N; k += j->step) {
        int i = j->order[k];
        char name[32], ip[32];
        snprintf(name, sizeof name, "m-%04d", i);
        snprintf(ip, sizeof ip, "10.%d.%d.%d", 100 + i / 65536, (i / 256) % 256, i % 256);
        if (j->phase == 0)
            create_member(j->g, j->ns, name, j->cm,
                          "\"annotations\":{\"scheduling.k8s.io/group-name\":\"big\"}", "");
        else
            set_ip(j->g, j->ns, name, ip);
    }
    return NULL;
}

static void run_phase(genv *g, const char *ns, const char *cm, int phase, const int *order)
{
    pthread_t th[THREADS];
    job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (job){g, ns, cm, i, THREADS, phase, order};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
}

static void test_gang_1000(void **state)
{
    gr_harness_ctx *t = *state;
    const char *ns = t->ns;
    assert_int_equal(
        gr_harness_apply_file(&t->cluster, NULL, "test/fixtures/crds/volcano-podgroup.yaml"), 0);
    genv g;
    genv_start(&g, t,
               "gangCoordination:\n  enabled: true\ngangDiscovery:\n  name: volcano\n"
               "  annotationKeys: [\"scheduling.k8s.io/group-name\"]\n  podGroupGVR:\n"
               "    group: scheduling.volcano.sh\n    version: v1beta1\n    resource: podgroups\n"
               "initContainers:\n  - name: preflight-nccl-allreduce\n    image: busybox\n",
               NULL);
    apply_yaml(t, ns,
               "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n"
               "  name: big\nspec:\n  minMember: 1000\n");
    json_t *pod = ij("{\"metadata\":{\"name\":\"m-0000\",\"annotations\":{"
                     "\"scheduling.k8s.io/group-name\":\"big\"}}}");
    char *cm = admit(&g, pod, ns);
    json_decref(pod);
    assert_non_null(cm);

    int order[N];
    for (int i = 0; i < N; i++)
        order[i] = i;
    srand(7);
    for (int i = N - 1; i > 0; i--) {
        int k = rand() % (i + 1);
        int tmp = order[i];
        order[i] = order[k];
        order[k] = tmp;
    }
    run_phase(&g, ns, cm, 0, order);
    int64_t t0 = gr_kube_now_ns();
    run_phase(&g, ns, cm, 1, order);

    /* wait until all 1000 peers are present */
    json_t *o = NULL;
    int tries = gr_test_scaled_tries(120, 100); /* bounds a hang; scaled to load */
    for (int i = 0; i < tries; i++) {
        o = get_cm(&g, ns, cm);
        gr_gang_peers p;
        if (o && gr_gang_peers_parse(cm_data(o, "peers"), &p, NULL) == GR_OK) {
            size_t n = p.n;
            gr_gang_peers_free(&p);
            if (n == N)
                break;
        }
        json_decref(o);
        o = NULL;
        sleep_ms(100);
    }
    double secs = (double)(gr_kube_now_ns() - t0) / 1e9;
    assert_non_null(o);
    print_message("gang_form_1000_seconds: %.2f s\n", secs);
    gr_gang_peers p;
    gr_err err;
    assert_int_equal(gr_gang_peers_parse(cm_data(o, "peers"), &p, &err), GR_OK);
    assert_int_equal(p.n, N);
    for (int i = 0; i < N; i++) {
        char name[32], ip[32];
        snprintf(name, sizeof name, "m-%04d", i);
        snprintf(ip, sizeof ip, "10.%d.%d.%d", 100 + i / 65536, (i / 256) % 256, i % 256);
        assert_string_equal(p.v[i].name, name); /* every pod once, in name order */
        assert_string_equal(p.v[i].ip, ip);     /* its latest IP: no lost update */
        assert_int_equal(p.v[i].rank, i);       /* PF-148 */
    }
    gr_gang_peers_free(&p);
    assert_string_equal(cm_data(o, "master_addr"), "10.100.0.0"); /* PF-149 */
    assert_string_equal(cm_data(o, "expected_count"), "1000");    /* PF-147 */
    json_decref(o);
    gr_gang_stats st;
    gr_gang_service_stats(g.svc, &st);
    print_message("gang_1000: reconciles %llu, writes %llu, conflict retries %llu\n",
                  (unsigned long long)st.reconciles, (unsigned long long)st.cm_writes,
                  (unsigned long long)st.conflicts);
    free(cm);
    genv_stop(&g);
    gr_harness_passed(t);
}

int main(void)
{
    int skip = gr_harness_skip_if_disabled();
    if (skip)
        return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gang_1000, gr_harness_setup, gr_harness_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
