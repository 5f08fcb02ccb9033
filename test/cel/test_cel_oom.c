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

/* The extension libraries (issue 21): every allocation they make may fail. */
static const char *const lib_exprs[] = {
    "quantity('1Gi') == quantity('1024Mi') && quantity('1.5').add(quantity('500m')) == "
    "quantity('2') && ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP('10.1.1.1')",
    "url('https://a.b:8/c?x=1&x=2').getQuery()['x'] == ['1', '2'] && semver('1.2.3').major() == 1 "
    "&& string(cidr('10.1.2.3/8').masked()) == '10.0.0.0/8'",
    "'%s-%d-%.2f-%e-%x'.format(['a', 1, 1234.5, 2.5, 'hi']).size() > 10 && "
    "'%s'.format([{'k': [1, 'v', 2.5]}]).size() > 5 && strings.quote('a\"b') != ''",
    "[3, 1, 2].sort() == [1, 2, 3] && [1, [2, [3]]].flatten(2).size() == 3 && "
    "[1, 1, 2].distinct().size() == 2 && [1, 2].reverse() == [2, 1] && lists.range(3).sum() == 3 "
    "&& sets.equivalent([1, 2], [2, 1]) && [1, 2, 3].slice(1, 2) == [2]",
    "{'a': 1}.?a.orValue(0) == 1 && [?optional.of(1), ?optional.none()] == [1] && "
    "{?'k': optional.of(2)}.k == 2 && optional.of(3).optMap(x, x + 1).value() == 4",
    "[1, 2].transformList(i, v, v * i) == [0, 2] && {'a': 1}.transformMap(k, v, v) == {'a': 1} "
    "&& {'a': 1}.transformMapEntry(k, v, {v: k}) == {1: 'a'} && cel.bind(x, [1], x.size() == 1)",
    "'abcabc'.findAll('[a-c]', 4).size() == 4 && 'x9'.find('[0-9]') == '9' && "
    "format.dns1123Label().validate('X_').value().size() == 1 && "
    "format.named('uuid').hasValue() && 'abc'.reverse() == 'cba' && math.greatest([1, 5, 2]) == 5",
    "timestamp('2038-07-01T12:00:00Z').getHours('America/New_York') == 8",
};

static void run_lib(bool sticky)
{
    for (size_t e = 0; e < sizeof(lib_exprs) / sizeof(lib_exprs[0]); e++) {
        const char *x = lib_exprs[e];
        long n;
        for (n = 1; n < 100000; n++) {
            gr_cel_program *p = NULL;
            gr_err err;
            gr_oom_arm(n, sticky);
            int rc = gr_cel_compile(x, strlen(x), NULL, 0, NULL, &p, NULL, &err);
            int b = -1;
            if (rc == GR_OK)
                rc = gr_cel_eval_bool(p, NULL, &b, NULL, &err);
            bool injected = gr_oom_disarm();
            gr_cel_program_free(p);
            if (rc == GR_OK) {
                if (b != 1)
                    fail_msg("N=%ld: %s: false", n, x);
            } else if (rc != GR_ENOMEM || !injected) {
                fail_msg("N=%ld%s: %s: %s: %s", n, sticky ? " (sticky)" : "", x, gr_rc_name(rc),
                         err.msg);
            }
            if (!injected)
                break;
        }
        assert_true(n > 1 && n < 100000);
    }
}

static void test_libraries_once(void **state)
{
    (void)state;
    run_lib(false);
}

static void test_libraries_sticky(void **state)
{
    (void)state;
    run_lib(true);
}

int main(void)
{
    gr_oom_install_jansson();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_health_once),
        cmocka_unit_test(test_node_health_sticky),
        cmocka_unit_test(test_libraries_once),
        cmocka_unit_test(test_libraries_sticky),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
