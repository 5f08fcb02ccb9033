/*
 * fuzz_nvcre_job.c — random event sequences through the Job status machine
 * (gr_nvcre_job_step) with an injected clock. Each input byte pair is one
 * reconcile: the first byte picks what was observed (create outcome,
 * workload phase, blocked pods, hardware failure, restart eligibility), the
 * second how far the clock moved. After every step:
 *   - no crash, no error;
 *   - once any exclusive condition exists, exactly one of InProgress,
 *     Succeeded, Failed is True (JOB-46);
 *   - a finished Job never changes;
 *   - clocks are monotone: workloadStartTime only moves forward while the
 *     same workload runs, schedulingResumedTime never goes back, and no
 *     marker lies in the future.
 * The bytes after a 0xFF 0xFF marker are a pod log for the failure-log tail.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_nvcre_job.h"
#include "gr_nvcre_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_true(const json_t *st, int *present)
{
    static const char *const t[3] = {"InProgress", "Succeeded", "Failed"};
    int n = 0;
    *present = 0;
    for (int i = 0; i < 3; i++) {
        const json_t *c = gr_nvcre_job_condition(st, t[i]);
        if (!c)
            continue;
        (*present)++;
        const char *s = json_string_value(json_object_get(c, "status"));
        if (s && strcmp(s, "True") == 0)
            n++;
    }
    return n;
}

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = size;
    for (size_t i = 0; i + 1 < size; i += 2)
        if (data[i] == 0xFF && data[i + 1] == 0xFF) {
            n = i;
            break;
        }
    json_t *st = json_object();
    int64_t now = INT64_C(1767225600) * GR_NVCRE_NS_PER_S;
    gr_nvcre_job_stall_in stall = {.stall_multiplier = 2,
                                   .startup_timeout_s = 50,
                                   .sample_interval_ns = 5 * GR_NVCRE_NS_PER_S};
    unsigned failures = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        uint8_t op = data[i], arg = data[i + 1];
        now += (int64_t)arg * arg * (GR_NVCRE_NS_PER_S / 4);
        gr_nvcre_job_obs o;
        memset(&o, 0, sizeof o);
        o.now_ns = now;
        o.generation = 1 + (op >> 7);
        o.ns = "ns";
        o.workload_name = "j-workload";
        o.api_version = GR_NVCRE_TRAINER_API_VERSION;
        o.kind = GR_NVCRE_KIND_TRAIN_JOB;
        o.grace_ns = (op & 0x40) ? 10 * GR_NVCRE_NS_PER_S : -1;
        o.creation_deadline_ns = (op & 0x20) ? 20 * GR_NVCRE_NS_PER_S : 0;
        o.restart_eligible = (op >> 3) & 1;
        o.max_restarts = 3;
        o.group_nodes = (op & 0x10) ? "a,b" : NULL;
        if (op & 0x04) {
            stall.gm_start_ns = now - (int64_t)(arg % 7) * 10 * GR_NVCRE_NS_PER_S;
            stall.last_step_ns = (arg & 1) ? now - (int64_t)arg * GR_NVCRE_NS_PER_S : 0;
            stall.avg_step_s = (arg & 2) ? 1.5 : 0;
            o.stall = &stall;
        }
        int has_ref = json_object_get(st, GR_NVCRE_F_WORKLOAD_REF) != NULL;
        if (!has_ref) {
            o.create = (gr_nvcre_create)(1 + arg % 9);
            o.create_msg = "denied";
            failures = (o.create == GR_NVCRE_CREATE_OK || o.create == GR_NVCRE_CREATE_ADOPTED)
                           ? 0
                           : failures + 1;
            o.create_failures = failures;
        } else {
            static const gr_nvcre_wl_phase ph[8] = {GR_NVCRE_WL_PENDING, GR_NVCRE_WL_RUNNING,
                                                    GR_NVCRE_WL_RUNNING, GR_NVCRE_WL_RUNNING,
                                                    GR_NVCRE_WL_RUNNING, GR_NVCRE_WL_SUCCEEDED,
                                                    GR_NVCRE_WL_FAILED,  GR_NVCRE_WL_GONE};
            o.wl.phase = ph[op & 7];
            if (arg & 4)
                strcpy(o.wl.message, "detail");
            o.pods_blocked = (op & 7) == 3 || (op & 7) == 4;
            o.blocked_msg = "0/1 nodes are available";
        }
        json_t *before = json_deep_copy(st);
        int64_t start0 = gr_nvcre_job_time(st, GR_NVCRE_F_WORKLOAD_START_TIME);
        int64_t resumed0 = gr_nvcre_job_time(st, GR_NVCRE_F_SCHEDULING_RESUMED_TIME);
        json_int_t restarts0 = json_integer_value(json_object_get(st, GR_NVCRE_F_RESTART_COUNT));
        int was_terminal = gr_nvcre_job_terminal(st);
        gr_nvcre_job_out out;
        check(gr_nvcre_job_step(NULL, st, &o, &out, NULL) == GR_OK);
        if (was_terminal)
            check(json_equal(before, st) && !out.changed);
        json_decref(before);
        int present;
        int trues = count_true(st, &present);
        check(present == 0 || (present == 3 && trues == 1));
        int64_t start1 = gr_nvcre_job_time(st, GR_NVCRE_F_WORKLOAD_START_TIME);
        int64_t resumed1 = gr_nvcre_job_time(st, GR_NVCRE_F_SCHEDULING_RESUMED_TIME);
        int64_t blocked = gr_nvcre_job_time(st, GR_NVCRE_F_SCHEDULING_BLOCKED_SINCE);
        int64_t rej = gr_nvcre_job_time(st, GR_NVCRE_F_WORKLOAD_CREATION_REJECTED_SINCE);
        json_int_t restarts1 = json_integer_value(json_object_get(st, GR_NVCRE_F_RESTART_COUNT));
        check(start1 <= now && resumed1 <= now && blocked <= now && rej <= now);
        check(restarts1 >= restarts0);
        if (restarts1 == restarts0) {
            if (start0 && start1)
                check(start1 >= start0);
            check(!resumed0 || resumed1 >= resumed0);
        }
        check(out.requeue_ns >= 0);
        int b;
        (void)gr_nvcre_job_timed_out(st, 100 * GR_NVCRE_NS_PER_S, now - 1, now, &b);
        if (op == 0x7F) {
            const char *nodes[2] = {"a", "b"};
            check(gr_nvcre_job_mark_hardware_failed(st, nodes, 1 + (arg & 1), 1, now) >= 0);
        }
    }
    json_decref(st);

    if (n + 2 <= size) {
        const char *log = (const char *)data + n + 2;
        size_t len = size - n - 2;
        size_t off = gr_nvcre_job_log_tail(log, len);
        check(off <= len);
        gr_nvcre_failure_pick pk = {.found = 1,
                                    .pods = 1,
                                    .pod = "p",
                                    .node = "n",
                                    .container = "c",
                                    .exit_code = 1,
                                    .reason = "Error"};
        json_t *fl = NULL;
        check(gr_nvcre_job_failure_log(&pk, "j", log, len, NULL, &fl) == GR_OK);
        check(strlen(json_string_value(json_object_get(fl, "tail"))) <=
              3 * GR_NVCRE_FAILURE_LOG_MAX_BYTES);
        json_decref(fl);
    }
    return 0;
}
