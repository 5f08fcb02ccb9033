/*
 * test_cel_oom.c — allocation-failure tests for gr_cel (test `cel_oom`,
 * registered in oom.cmake with the failure-injection allocator of
 * test/base/oom_inject.c). For N = 1, 2, … the Nth allocation fails (once,
 * then sticky) while compiling and evaluating a node-health expression: the
 * call returns GR_OK with the right answer or GR_ENOMEM, never crashes, and
 * LeakSanitizer (ASan build) finds nothing leaked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gr_cel.h"
#include "oom_inject.h"

static const char *node_json =
    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":{\"gpu\":\"H100-80G\"}},"
    "\"spec\":{\"unschedulable\":false,\"taints\":[{\"key\":\"gpu\",\"effect\":\"NoSchedule\"}]},"
    "\"status\":{\"capacity\":{\"gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\","
    "\"status\":\"False\"},{\"type\":\"Disk\",\"status\":\"False\"}]}}";

static const char *expr =
    "node.spec.unschedulable == true || node.status.conditions.exists(c, c.type == 'Ready' "
    "&& c.status != 'True') || int(node.status.capacity['gpu']) < 8 || "
    "node.metadata.labels['gpu'].startsWith('A100') || [1, 2, 3].map(x, x * 2).size() > 5 || "
    "{'a': 1}.exists(k, k == 'b')";

static void run(bool sticky)
{
    static const gr_cel_decl decl = {"node", GR_CEL_MAP};
    json_error_t je;
    json_t *node = json_loads(node_json, 0, &je);
    assert_non_null(node);
    long n;
    for (n = 1; n < 100000; n++) {
        gr_cel_program *p = NULL;
        gr_err err;
        gr_oom_arm(n, sticky);
        int rc = gr_cel_compile(expr, strlen(expr), &decl, 1, NULL, &p, NULL, &err);
        int b = -1;
        if (rc == GR_OK)
            rc = gr_cel_eval_bool(p, &node, &b, NULL, &err);
        bool injected = gr_oom_disarm();
        gr_cel_program_free(p);
        if (rc == GR_OK) {
            assert_int_equal(b, 1); /* PF: node NotReady matches the health expression */
        } else {
            if (rc != GR_ENOMEM || !injected)
                fail_msg("N=%ld%s: %s: %s", n, sticky ? " (sticky)" : "", gr_rc_name(rc), err.msg);
        }
        if (!injected)
            break;
    }
    assert_true(n > 1 && n < 100000);
    json_decref(node);
}

static void test_node_health_once(void **state)
{
    (void)state;
    run(false);
}

static void test_node_health_sticky(void **state)
{
    (void)state;
    run(true);
}

int main(void)
{
    gr_oom_install_jansson();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_health_once),
        cmocka_unit_test(test_node_health_sticky),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
