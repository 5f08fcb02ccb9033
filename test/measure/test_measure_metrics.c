/*
 * test_measure_metrics.c — the measurement gauges of fact sheet §6.3 as
 * Prometheus text: names, HELP and TYPE lines, labels (escaped), one series
 * per status value / message size, nothing for values that are absent or
 * not numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gr_buf.h"
#include "gr_measure.h"

static json_t *parse(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s: %s", e.text, s);
    return j;
}

static void test_goodput(void **state)
{
    (void)state;
    json_t *st = parse("{\"result\":\"0.5169\",\"trainingTimeSec\":\"88.0\",\"avgStepTimeSec\":"
                       "\"1.2\",\"avgTFLOPSPerGPU\":\"bogus\",\"lostWorkTimeSec\":\"24.0\"}");
    gr_measure_metric_row rows[] = {
        {.ns = "ns", .name = "train-goodput", .job = "train", .workflow = "w\"f\\", .status = st},
        {.ns = "ns", .name = "empty", .job = "e", .workflow = "", .status = NULL},
    };
    gr_buf b;
    gr_buf_init(&b, 1 << 16);
    assert_int_equal(gr_measure_goodput_metrics_render(rows, 2, &b), GR_OK);
    assert_int_equal(gr_buf_puts(&b, ""), GR_OK);
    const char *want =
        "# HELP nvcre_goodput_ratio Goodput ratio of the training run: productive time over wall "
        "time (0..1).\n"
        "# TYPE nvcre_goodput_ratio gauge\n"
        "nvcre_goodput_ratio{namespace=\"ns\",measurement=\"train-goodput\",job=\"train\","
        "workflow=\"w\\\"f\\\\\"} 0.5169\n"
        "# HELP nvcre_goodput_avg_tflops_per_gpu Average TFLOPS per GPU over non-warm-up "
        "training steps.\n"
        "# TYPE nvcre_goodput_avg_tflops_per_gpu gauge\n"
        "# HELP nvcre_goodput_training_time_seconds Time spent in training steps, in seconds.\n"
        "# TYPE nvcre_goodput_training_time_seconds gauge\n"
        "nvcre_goodput_training_time_seconds{namespace=\"ns\",measurement=\"train-goodput\","
        "job=\"train\",workflow=\"w\\\"f\\\\\"} 88\n";
    assert_memory_equal(b.data, want, strlen(want));
    /* every family is declared, also without series */
    const char *fams[] = {"nvcre_goodput_ratio",
                          "nvcre_goodput_avg_tflops_per_gpu",
                          "nvcre_goodput_training_time_seconds",
                          "nvcre_goodput_reschedule_time_seconds",
                          "nvcre_goodput_resume_time_seconds",
                          "nvcre_goodput_checkpoint_save_time_seconds",
                          "nvcre_goodput_warmup_time_seconds",
                          "nvcre_goodput_non_warmup_time_seconds",
                          "nvcre_goodput_avg_step_time_seconds",
                          "nvcre_goodput_lost_work_time_seconds"};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        char t[128];
        snprintf(t, sizeof t, "# TYPE %s gauge\n", fams[i]);
        assert_non_null(strstr(b.data, t));
    }
    assert_non_null(strstr(b.data, "nvcre_goodput_avg_step_time_seconds{namespace=\"ns\","
                                   "measurement=\"train-goodput\",job=\"train\",workflow=\"w\\\"f"
                                   "\\\\\"} 1.2\n"));
    assert_null(strstr(b.data, "measurement=\"empty\""));
    gr_buf_free(&b);
    json_decref(st);
}

static void test_bandwidth(void **state)
{
    (void)state;
    json_t *st =
        parse("{\"results\":[{\"sizeBytes\":8,\"algBW\":\"0.0\",\"busBW\":\"0.0\","
              "\"samples\":1},{\"sizeBytes\":8589934592,\"algBW\":\"195.96\","
              "\"busBW\":\"366.5\",\"samples\":3},{\"algBW\":\"1.0\",\"busBW\":\"1.0\"}]}");
    gr_measure_metric_row rows[] = {{.ns = "ns",
                                     .name = "nccl-bandwidth",
                                     .job = "nccl",
                                     .workflow = "wf",
                                     .test_type = "all_reduce",
                                     .status = st}};
    gr_buf b;
    gr_buf_init(&b, 1 << 16);
    assert_int_equal(gr_measure_bw_metrics_render(rows, 1, &b), GR_OK);
    assert_int_equal(gr_buf_puts(&b, ""), GR_OK);
    const char *want =
        "# HELP nvcre_nccl_algbw_gbs NCCL algorithm bandwidth in GB/s, average per message "
        "size.\n"
        "# TYPE nvcre_nccl_algbw_gbs gauge\n"
        "nvcre_nccl_algbw_gbs{namespace=\"ns\",measurement=\"nccl-bandwidth\",job=\"nccl\","
        "workflow=\"wf\",nccl_test=\"all_reduce\",message_size_bytes=\"8\"} 0\n"
        "nvcre_nccl_algbw_gbs{namespace=\"ns\",measurement=\"nccl-bandwidth\",job=\"nccl\","
        "workflow=\"wf\",nccl_test=\"all_reduce\",message_size_bytes=\"8589934592\"} 195.96\n"
        "# HELP nvcre_nccl_busbw_gbs NCCL bus bandwidth in GB/s, average per message size.\n"
        "# TYPE nvcre_nccl_busbw_gbs gauge\n";
    assert_memory_equal(b.data, want, strlen(want));
    /* the deprecated twins carry the same values */
    assert_non_null(strstr(b.data, "# TYPE nvcre_nccl_busbw_gbps gauge\n"));
    assert_non_null(strstr(b.data, "nvcre_nccl_busbw_gbps{namespace=\"ns\",measurement=\"nccl-"
                                   "bandwidth\",job=\"nccl\",workflow=\"wf\",nccl_test=\"all_"
                                   "reduce\",message_size_bytes=\"8589934592\"} 366.5\n"));
    assert_non_null(strstr(b.data, "# HELP nvcre_nccl_algbw_gbps Deprecated: use "
                                   "nvcre_nccl_algbw_gbs"));
    gr_buf_free(&b);
    /* the cap is honoured */
    gr_buf_init(&b, 64);
    assert_int_equal(gr_measure_bw_metrics_render(rows, 1, &b), GR_ETOOBIG);
    gr_buf_free(&b);
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goodput),
        cmocka_unit_test(test_bandwidth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
