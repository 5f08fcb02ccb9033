/* test_checks_boot_tcp.c — the TCP bootstrap in one process: rank 0 serves,
 * other nodes join from threads over 127.0.0.1; the same id reaches all;
 * disagreeing nodes are refused; timeouts. (Multi-process runs are in
 * test_programs.sh.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "gr_checks_boot.h"

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(s, (struct sockaddr *)&a, sizeof a);
    socklen_t l = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &l);
    close(s);
    return ntohs(a.sin_port);
}

static int make_id(void *ctx, unsigned char id[GR_CHECKS_BOOT_ID_BYTES], gr_err *err)
{
    (void)err;
    (*(int *)ctx)++;
    for (int i = 0; i < GR_CHECKS_BOOT_ID_BYTES; i++)
        id[i] = (unsigned char)(i * 7 + 1);
    return GR_OK;
}

typedef struct joiner {
    int port;
    gr_checks_boot_msg hello, out;
    int rc;
    gr_err err;
} joiner;

static void *join_main(void *arg)
{
    joiner *j = arg;
    j->rc = gr_checks_boot_join("127.0.0.1", j->port, &j->hello, 5000, NULL, &j->out, &j->err);
    return NULL;
}

static gr_checks_boot_msg hello(uint32_t rank, uint32_t nnodes, uint32_t gpn, const char *gang)
{
    gr_checks_boot_msg m;
    memset(&m, 0, sizeof m);
    m.type = GR_CHECKS_BOOT_HELLO;
    m.node_rank = rank;
    m.nnodes = nnodes;
    m.gpus_per_node = gpn;
    snprintf(m.gang_id, sizeof m.gang_id, "%s", gang);
    return m;
}

static void test_three_nodes(void **state)
{
    (void)state;
    int port = free_port(), made = 0;
    joiner j[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        memset(&j[i], 0, sizeof j[i]);
        j[i].port = port;
        j[i].hello = hello((uint32_t)i + 1, 3, 4, "g");
        pthread_create(&t[i], NULL, join_main, &j[i]); /* may start before rank 0 listens */
    }
    usleep(300000);
    gr_checks_boot_msg self = hello(0, 3, 4, "g"), out;
    gr_err err;
    assert_int_equal(
        gr_checks_boot_serve("127.0.0.1", port, &self, 5000, make_id, &made, NULL, &out, &err),
        GR_OK);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(j[i].rc, GR_OK);
        assert_memory_equal(j[i].out.id, out.id, GR_CHECKS_BOOT_ID_BYTES);
        assert_int_equal(j[i].out.world_size, 12);
    }
    assert_int_equal(made, 1);
}

static void test_refusals(void **state)
{
    (void)state;
    int port = free_port(), made = 0;
    joiner j;
    memset(&j, 0, sizeof j);
    j.port = port;
    j.hello = hello(1, 2, 8, "g"); /* 8 GPUs, rank 0 has 4 */
    pthread_t t;
    pthread_create(&t, NULL, join_main, &j);
    gr_checks_boot_msg self = hello(0, 2, 4, "g"), out;
    gr_err err;
    assert_int_equal(
        gr_checks_boot_serve("127.0.0.1", port, &self, 5000, make_id, &made, NULL, &out, &err),
        GR_EINVAL);
    pthread_join(t, NULL);
    assert_int_equal(j.rc, GR_EINVAL);
    assert_non_null(strstr(j.err.msg, "has 8 GPUs, rank 0 has 4"));
    assert_int_equal(made, 0);

    /* Another gang's node is dropped; rank 0 then times out. */
    port = free_port();
    j.port = port;
    j.hello = hello(1, 2, 4, "other");
    pthread_create(&t, NULL, join_main, &j);
    assert_int_equal(
        gr_checks_boot_serve("127.0.0.1", port, &self, 800, make_id, &made, NULL, &out, &err),
        GR_ETIMEDOUT);
    pthread_join(t, NULL);
    assert_int_equal(j.rc, GR_EINVAL);
    assert_non_null(strstr(err.msg, "only 1 of 2 nodes"));
}

static void test_join_timeout(void **state)
{
    (void)state;
    gr_checks_boot_msg h = hello(1, 2, 1, "g"), out;
    gr_err err;
    assert_int_equal(gr_checks_boot_join("127.0.0.1", free_port(), &h, 600, NULL, &out, &err),
                     GR_ETIMEDOUT);
    assert_non_null(strstr(err.msg, "cannot reach rank 0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_nodes),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_join_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
