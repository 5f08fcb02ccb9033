/* test_checks_gang_dir.c — gr_checks_gang_read_dir() against a directory laid
 * out like the kubelet mounts a ConfigMap (key -> ..data/key, ..data ->
 * ..<timestamp>), with ..data swapped concurrently: every snapshot must come
 * from one version (PF-145, PF-146). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gr_checks_gang.h"

static char dir[256];

static void put(const char *d, const char *k, const char *v)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", d, k);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(v, f);
    fclose(f);
}

static void rm_rf(const char *p)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    assert_int_equal(system(cmd), 0);
}

/* Write version `n` (n peers, expected_count n) and swap ..data to it. */
static void publish(int n, int seq)
{
    char ts[64], full[512], tmp[512], data[512], old[256] = "";
    snprintf(ts, sizeof ts, "..2026_%06d", seq);
    snprintf(full, sizeof full, "%s/%s", dir, ts);
    mkdir(full, 0755);
    char num[16], peers[512] = "";
    snprintf(num, sizeof num, "%d", n);
    for (int i = 0; i < n; i++)
        snprintf(peers + strlen(peers), sizeof peers - strlen(peers), "pod-%d;10.0.0.%d;%d\n", i,
                 i + 1, i);
    put(full, "expected_count", num);
    put(full, "peers", peers);
    put(full, "master_addr", "10.0.0.1");
    put(full, "master_port", "29500");
    put(full, "gang_id", num);
    snprintf(data, sizeof data, "%s/..data", dir);
    ssize_t l = readlink(data, old, sizeof old - 1);
    if (l > 0)
        old[l] = '\0';
    snprintf(tmp, sizeof tmp, "%s/..data_tmp", dir);
    unlink(tmp);
    assert_int_equal(symlink(ts, tmp), 0);
    assert_int_equal(rename(tmp, data), 0);
    static const char *const keys[] = {"expected_count", "peers", "master_addr", "master_port",
                                       "gang_id"};
    for (int i = 0; i < 5; i++) {
        char link[512], target[128];
        snprintf(link, sizeof link, "%s/%s", dir, keys[i]);
        snprintf(target, sizeof target, "..data/%s", keys[i]);
        if (symlink(target, link) != 0)
            assert_int_equal(errno, EEXIST);
    }
    if (l > 0) {
        char o[512];
        snprintf(o, sizeof o, "%s/%s", dir, old);
        rm_rf(o);
    }
}

static volatile int stop_swapping;

static void *swapper(void *arg)
{
    (void)arg;
    for (int seq = 2; !stop_swapping; seq++)
        publish(seq % 2 ? 3 : 2, seq);
    return NULL;
}

static void test_consistent_snapshots_under_swaps(void **state)
{
    (void)state;
    publish(2, 1);
    pthread_t t;
    stop_swapping = 0;
    assert_int_equal(pthread_create(&t, NULL, swapper, NULL), 0);
    int seen2 = 0, seen3 = 0;
    for (int i = 0; i < 400; i++) {
        gr_checks_gang_files f;
        gr_err err;
        int rc = gr_checks_gang_read_dir(dir, &f, &err);
        if (rc == GR_EAGAIN)
            continue;
        assert_int_equal(rc, GR_OK);
        gr_checks_gang g;
        assert_int_equal(gr_checks_gang_parse(&f, &g, &err), GR_OK);
        /* One version: expected_count, gang_id and peers agree. */
        assert_non_null(f.gang_id);
        assert_int_equal(g.expected_count, atol(f.gang_id));
        assert_int_equal((long)g.n_peers, g.expected_count);
        seen2 += g.expected_count == 2;
        seen3 += g.expected_count == 3;
        gr_checks_gang_free(&g);
        gr_checks_gang_files_free(&f);
    }
    stop_swapping = 1;
    pthread_join(t, NULL);
    assert_true(seen2 + seen3 > 0);
}

static void test_plain_directory_and_missing_keys(void **state)
{
    (void)state;
    char plain[300];
    snprintf(plain, sizeof plain, "%s/plain", dir);
    mkdir(plain, 0755);
    put(plain, "expected_count", "1");
    gr_checks_gang_files f;
    assert_int_equal(gr_checks_gang_read_dir(plain, &f, NULL), GR_OK);
    assert_string_equal(f.expected_count, "1");
    assert_null(f.peers);
    assert_null(f.master_addr);
    gr_checks_gang_files_free(&f);
    char nope[300];
    snprintf(nope, sizeof nope, "%s/nope", dir);
    gr_err err;
    assert_int_equal(gr_checks_gang_read_dir(nope, &f, &err), GR_EIO);
    assert_non_null(strstr(err.msg, "GANG_CONFIG_DIR"));
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/gr-gang-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_consistent_snapshots_under_swaps),
        cmocka_unit_test(test_plain_directory_and_missing_keys),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
