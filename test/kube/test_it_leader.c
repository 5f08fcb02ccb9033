/* Integration: two processes elect a leader on a Lease with client-go's
 * default durations (15 s / 10 s / 2 s); the leader is killed (SIGKILL, no
 * release) and the other takes over within the lease duration (+ one
 * jittered retry period); a leader stopped gracefully releases the lease.
 *
 * The test binary re-executes itself as the candidate processes:
 *   test_it_leader --candidate <ns> <identity>
 * A candidate prints "LEADER <identity>" when it starts leading and exits
 * cleanly (releasing the lease) on SIGTERM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "gr_kube_leader.h"
#include "it_common.h"

/* ---- candidate process -------------------------------------------------- */

static volatile sig_atomic_t term;

static void on_term(int s)
{
    (void)s;
    term = 1;
}

static void started(void *ctx)
{
    printf("LEADER %s\n", (const char *)ctx);
    fflush(stdout);
}

static int candidate(const char *ns, const char *id)
{
    signal(SIGTERM, on_term);
    gr_kube_client *c = it_client("kubeconfig", -1);
    if (!c)
        return 2;
    gr_kube_leader_opts o = {0};
    o.ns = ns;
    o.name = "kube-it-lease";
    o.identity = id;
    o.on_started_leading = started;
    o.ctx = (void *)(uintptr_t)id;
    gr_kube_leader *l;
    gr_err err;
    if (gr_kube_leader_start(c, &o, &l, &err) != GR_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    while (!term)
        it_sleep_ms(50);
    gr_kube_leader_stop(l); /* releases the lease if leading */
    gr_kube_client_free(c);
    return 0;
}

/* ---- the test ------------------------------------------------------------ */

typedef struct child {
    pid_t pid;
    int fd;
    char id[32];
    char buf[256];
    size_t len;
} child;

static char self[4096];

static void spawn(child *ch, const char *ns, const char *id)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    snprintf(ch->id, sizeof ch->id, "%s", id);
    ch->len = 0;
    ch->pid = fork();
    if (ch->pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        execl(self, self, "--candidate", ns, id, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    ch->fd = p[0];
    fcntl(ch->fd, F_SETFL, O_NONBLOCK);
}

/* Wait until one of the children reports leadership; returns its index. */
static int wait_leader(child *ch, int n, double timeout_s)
{
    double end = it_now_s() + timeout_s * gr_test_timeout_scale(); /* bounds a hang */
    while (it_now_s() < end) {
        struct pollfd pf[2];
        for (int i = 0; i < n; i++) {
            pf[i].fd = ch[i].fd;
            pf[i].events = POLLIN;
        }
        poll(pf, (nfds_t)n, 100);
        for (int i = 0; i < n; i++) {
            if (ch[i].pid <= 0)
                continue;
            ssize_t r = read(ch[i].fd, ch[i].buf + ch[i].len, sizeof ch[i].buf - 1 - ch[i].len);
            if (r > 0) {
                ch[i].len += (size_t)r;
                ch[i].buf[ch[i].len] = 0;
            }
            if (strstr(ch[i].buf, "LEADER "))
                return i;
        }
    }
    return -1;
}

static void test_two_processes_failover(void **state)
{
    (void)state;
    gr_kube_client *admin = it_client("kubeconfig", -1);
    assert_non_null(admin);
    char ns[128];
    assert_int_equal(it_ns_create(admin, "kube-it-leader", ns, sizeof ns), GR_OK);
    child ch[2];
    spawn(&ch[0], ns, "cand-a");
    spawn(&ch[1], ns, "cand-b");
    int first = wait_leader(ch, 2, 30);
    assert_true(first >= 0);
    int other = 1 - first;
    /* only one leads: the other stays quiet for a few retry periods */
    it_sleep_ms(5000);
    assert_null(strstr(ch[other].buf, "LEADER"));
    /* kill the leader without letting it release */
    double killed = it_now_s();
    kill(ch[first].pid, SIGKILL);
    waitpid(ch[first].pid, NULL, 0);
    ch[first].pid = 0;
    int next = wait_leader(ch, 2, 40);
    double took = it_now_s() - killed;
    fprintf(stderr, "takeover after %.1f s\n", took);
    assert_int_equal(next, other);
    /* lease duration (15 s) + one jittered retry period (≤ 2 s × 2.2) + request
     * slack; the slack (not the lease) grows on a loaded machine, where the
     * candidate may wait for a CPU (gr_test_scale.h) */
    assert_true(took <= 15.0 + (4.4 + 2.0) * gr_test_timeout_scale());
    gr_err err;
    gr_kube_status st;
    json_t *lease = NULL;
    assert_int_equal(
        gr_kube_get(admin, &GR_KUBE_LEASES, ns, "kube-it-lease", NULL, &lease, &st, &err), GR_OK);
    json_t *spec = json_object_get(lease, "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")), ch[other].id);
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseDurationSeconds")), 15);
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 1);
    json_decref(lease);
    /* graceful stop releases the lease */
    kill(ch[other].pid, SIGTERM);
    int ws = 0;
    waitpid(ch[other].pid, &ws, 0);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    assert_int_equal(
        gr_kube_get(admin, &GR_KUBE_LEASES, ns, "kube-it-lease", NULL, &lease, &st, &err), GR_OK);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(lease, "spec"), "holderIdentity")), "");
    json_decref(lease);
    close(ch[0].fd);
    close(ch[1].fd);
    it_ns_delete(admin, ns);
    gr_kube_client_free(admin);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--candidate") == 0)
        return candidate(argv[2], argv[3]);
    int skip = it_skip();
    if (skip)
        return skip;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_processes_failover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
