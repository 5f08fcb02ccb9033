/*
 * gr_measure.h — measurements from pod logs (issue 18; docs/measurements.md).
 *
 * The pure logic behind GoodputMeasurement, BandwidthMeasurement and the
 * Job's performance thresholds. Nothing here does I/O or reads the clock:
 * callers hand in log bytes and the current time.
 *
 *   gr_measure_re_*        LogProfile regexes in Go RE2 syntax, compiled with
 *                          PCRE2 (JIT) after refusing what RE2 refuses
 *   gr_measure_gotime_*    Go time layouts ("2006-01-02 15:04:05")
 *   gr_measure_profile_*   a LogProfile spec (JSON) → compiled patterns
 *   gr_measure_reader_*    incremental reading: kubelet timestamp prefix,
 *                          partial last line, sinceTime + lines to skip
 *   gr_measure_goodput_*   goodput accounting from parsed events
 *   gr_measure_bw_*        NCCL-tests rows → per size running averages
 *   gr_measure_threshold_* thresholds as CEL over `value`
 *   gr_measure_*_metrics_render  the §6.3 gauges (Prometheus text)
 *
 * Memory: every object returned through an `**out` parameter is the
 * caller's and is released with the matching _free(); strings returned by
 * _fmt functions live in caller buffers. Borrowed arguments are not kept.
 *
 * Errors: GR_EINVAL with a message naming the field and the fix (regex
 * syntax RE2 refuses, bad layout, bad profile), GR_EPARSE (a value that does
 * not match its layout), GR_ETOOBIG (a cap below was hit), GR_ENOMEM.
 */
#ifndef GR_MEASURE_H
#define GR_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"

/* ------------------------------------------------------------ limits */

#define GR_MEASURE_REGEX_MAX      4096u  /* bytes of a pattern (the CRD's maxLength) */
#define GR_MEASURE_REPEAT_MAX     1000   /* RE2's largest {n,m} */
#define GR_MEASURE_LINE_MAX       65536u /* a longer line is cut (counted in lines_cut) */
#define GR_MEASURE_POLL_BYTES_MAX ((int64_t)4 * 1024 * 1024)      /* limitBytes per poll */
#define GR_MEASURE_LOOKBACK_NS    ((int64_t)30 * 60 * 1000000000) /* 30 min max lookback */
#define GR_MEASURE_BW_SIZES_MAX   256u /* message sizes kept (the CRD's maxItems) */

/* ------------------------------------------------------------ regexes */

typedef struct gr_measure_re gr_measure_re;

/*
 * Compile a pattern written in Go RE2 syntax. Refused, with a message that
 * names the construct (as Go's regexp/syntax would): backreferences (\1,
 * \k<n>, \g), lookahead/lookbehind, atomic groups, possessive and nested
 * repetition (a++, a**), recursion, conditionals, \C \K \G \R \X \Z \h \N,
 * inline flags other than i m s U, repeat counts above 1000. Named groups
 * (?P<n>…) and (?<n>…) are kept. `$` matches only at the end (RE2).
 */
int gr_measure_re_compile(const char *pattern, size_t len, gr_measure_re **out, gr_err *err);
void gr_measure_re_free(gr_measure_re *re);

/* Index of the named group, or -1. */
int gr_measure_re_group(const gr_measure_re *re, const char *name);

#define GR_MEASURE_RE_GROUPS_MAX 32

typedef struct gr_measure_match {
    size_t ngroups;                         /* groups + 1 (group 0 = whole match) */
    size_t start[GR_MEASURE_RE_GROUPS_MAX]; /* byte offsets into the subject */
    size_t end[GR_MEASURE_RE_GROUPS_MAX];   /* start == end == SIZE_MAX: group unset */
} gr_measure_match;

/* 1 on a match (m filled when non-NULL), 0 on none, negative on error. The
 * match state is per compiled regex: one thread per gr_measure_re. */
int gr_measure_re_match(gr_measure_re *re, const char *s, size_t len, gr_measure_match *m);

/* ------------------------------------------------------------ Go time */

/*
 * Parse `s` (len bytes) with a Go reference-time layout (2006 01 02 15 04 05,
 * Jan January Mon Monday 1 2 _2 3 4 5 06 002 PM pm MST -0700 -07:00 -07
 * Z0700 Z07:00 Z07 .000 .999 ,000 …). Fields the layout lacks come from
 * `ref_ns` (the year, for layouts without one); a zone abbreviation (MST)
 * reads as UTC. Result: ns since the Unix epoch (UTC).
 */
int gr_measure_gotime_parse(const char *layout, const char *s, size_t len, int64_t ref_ns,
                            int64_t *out_ns, gr_err *err);
/* GR_OK when the layout has at least a time of day or a date element. */
int gr_measure_gotime_check(const char *layout, gr_err *err);

/* ------------------------------------------------------------ profiles */

typedef enum gr_measure_kind {
    GR_MEASURE_TRAINING_STEP = 0,
    GR_MEASURE_CHECKPOINT_SAVE,
    GR_MEASURE_CHECKPOINT_DONE,
    GR_MEASURE_CHECKPOINT_RESTORE,
    GR_MEASURE_CHECKPOINT_LOADED,
    GR_MEASURE_APPLICATION_START,
    GR_MEASURE_WARMUP_STEP,
    GR_MEASURE_BANDWIDTH_RESULT,
    GR_MEASURE_KINDS,
} gr_measure_kind;

/* The spec.patterns key of a kind ("trainingStep"). */
const char *gr_measure_kind_name(gr_measure_kind k);

typedef struct gr_measure_profile gr_measure_profile;

typedef struct gr_measure_strategy {
    int multi;               /* workerStrategy.type Multi */
    int lifecycle_last;      /* lifecyclePod last */
    int step_last;           /* trainingStepPod last */
    char replicated_job[64]; /* default "trainer" */
} gr_measure_strategy;

/*
 * Build a profile from a LogProfile `spec` object. Errors name the field:
 * "spec.patterns.trainingStep.regex: lookahead (?=…) is not supported in
 * RE2 syntax; …". The profile borrows nothing from `spec`.
 */
int gr_measure_profile_new(const json_t *spec, gr_measure_profile **out, gr_err *err);
void gr_measure_profile_free(gr_measure_profile *p);
const gr_measure_strategy *gr_measure_profile_strategy(const gr_measure_profile *p);
int64_t gr_measure_profile_warmup_steps(const gr_measure_profile *p);
int64_t gr_measure_profile_log_interval(const gr_measure_profile *p);
/* The container to read (borrowed; "" = the first container). */
const char *gr_measure_profile_container(const gr_measure_profile *p);
/* 1 when the profile has a pattern for `k`. */
int gr_measure_profile_has(const gr_measure_profile *p, gr_measure_kind k);

/*
 * Index of the pod whose logs give `what` (GR_MEASURE_TRAINING_STEP or
 * GR_MEASURE_APPLICATION_START for the lifecycle pod) among `n` pods sorted
 * by name (pod index order): 0 or n-1 per the strategy; -1 when n == 0.
 */
long gr_measure_profile_pick_pod(const gr_measure_profile *p, gr_measure_kind what, size_t n);

/* One parsed event. Values absent from the line are NAN / -1. */
typedef struct gr_measure_event {
    gr_measure_kind kind;
    int64_t ts_ns;             /* capture `timestamp` (layout), else the kubelet prefix, else 0 */
    int64_t step;              /* capture `step`, -1 when absent */
    double step_time_s;        /* capture `stepTime` (units), NAN when absent */
    double save_time_s;        /* capture `saveTime` (units), NAN when absent */
    double tflops;             /* capture `tflops`, NAN when absent */
    int64_t size_bytes;        /* bandwidthResult `size`, -1 when absent */
    double algbw, busbw;       /* out-of-place (capture algbw/busbw), NAN when absent */
    double ip_algbw, ip_busbw; /* in-place (ipAlgbw/ipBusbw), NAN when absent */
} gr_measure_event;

/*
 * Match one log line (without the newline; kubelet prefix already split off
 * into `kubelet_ts_ns`, 0 when none) against the profile's patterns in kind
 * order; the first match wins. Returns 1 with *ev filled, 0 when no pattern
 * matches, negative on error (a capture that does not parse: the message
 * names the pattern and capture; the caller counts and skips the line).
 */
int gr_measure_profile_parse_line(gr_measure_profile *p, const char *line, size_t len,
                                  int64_t kubelet_ts_ns, gr_measure_event *ev, gr_err *err);

/* ------------------------------------------------------------ incremental reading */

/*
 * Per pod reading state. A poll asks the API for the log with
 * timestamps=true, sinceTime = since (RFC 3339, second precision at the
 * kubelet: lines of that second come again) and limitBytes =
 * GR_MEASURE_POLL_BYTES_MAX, and feeds the bytes; complete lines newer
 * than what was seen are handed to the callback, a trailing partial line is
 * kept until the next feed (and dropped by _end_poll(), so the next poll
 * reads it again, whole). The state is small and is persisted in the
 * measurement status (logReadState) so a restarted controller resumes.
 */
typedef struct gr_measure_reader {
    int64_t since_ns;      /* newest complete line's kubelet time; 0 = from the start */
    int64_t seen_at_since; /* lines already consumed with exactly since_ns (to skip) */
    int64_t skip_left;     /* during a poll: lines at since_ns still to skip */
    char *part;            /* partial last line (owned) */
    size_t part_len, part_cap;
    int part_cut; /* the partial line hit GR_MEASURE_LINE_MAX */
    uint64_t lines, lines_cut, bytes;
} gr_measure_reader;

typedef int (*gr_measure_line_fn)(void *ctx, const char *line, size_t len, int64_t kubelet_ts_ns);

void gr_measure_reader_init(gr_measure_reader *r);
void gr_measure_reader_free(gr_measure_reader *r);
/* Start a poll: skip the lines at since_ns already consumed. */
void gr_measure_reader_begin_poll(gr_measure_reader *r);
/* Feed bytes; calls fn for each new complete line. A callback's negative
 * return stops the feed and is returned. `timestamps`: lines carry the
 * kubelet RFC 3339 prefix ("2026-01-05T10:00:00.123456789Z "). */
int gr_measure_reader_feed(gr_measure_reader *r, const char *data, size_t len, int timestamps,
                           gr_measure_line_fn fn, void *ctx);
/* End a poll: flush (final = 1: the container finished, the partial line is
 * complete) or drop (final = 0) the partial line. */
int gr_measure_reader_end_poll(gr_measure_reader *r, int final, int timestamps,
                               gr_measure_line_fn fn, void *ctx);
/* The sinceTime to send for the next poll ("" when reading from the
 * start): the newest line's second, floored, bounded below by now −
 * GR_MEASURE_LOOKBACK_NS. buf holds at least 40 bytes. */
void gr_measure_reader_since(const gr_measure_reader *r, int64_t now_ns, char buf[40]);

/* ------------------------------------------------------------ goodput */

typedef struct gr_measure_goodput {
    /* inputs */
    int64_t warmup_steps; /* profile warmupSteps */
    int64_t log_interval; /* profile logInterval (0 = observe) */
    /* state and outputs (seconds are doubles; steps int64; times ns, 0 = unset) */
    int64_t current_step, highest_step;
    int64_t first_step_ns, last_step_ns; /* of the current run */
    int64_t run_first_step;              /* first step of the current run (-1: none yet) */
    int64_t warmup_base_step;
    int64_t last_ckpt_step, last_ckpt_ns;
    int64_t save_start_ns;
    int64_t app_start_ns;     /* first application start */
    int64_t run_app_start_ns; /* application start of the current run */
    int64_t app_stop_ns;
    int64_t interruptions;
    int64_t pending_ns;        /* pending interruption detected (0: none) */
    int64_t pending_step;      /* highest step when it was detected */
    int64_t restored_step;     /* checkpointLoaded step of the current run (-1) */
    int64_t observed_interval; /* min positive step delta */
    int64_t nonwarmup_steps;
    int64_t last_nonwarmup_step;
    int64_t tflops_n, step_time_n;
    double tflops_sum, step_time_sum; /* non-warm-up captures */
    double training_s, prior_training_s, lost_s, reschedule_s, resume_s, save_s;
    double warmup_s, nonwarmup_s;
} gr_measure_goodput;

void gr_measure_goodput_init(gr_measure_goodput *g, int64_t warmup_steps, int64_t log_interval);
/* Apply one event (events of one pod in log order). */
void gr_measure_goodput_apply(gr_measure_goodput *g, const gr_measure_event *ev);
/* An interruption the Job reported (checkpoint restart, pod lost) at now. */
void gr_measure_goodput_interrupt(gr_measure_goodput *g, int64_t now_ns);
/* Derived values. goodput: (t_w − t_ch − t_rm − t_re − t_save)/(t_w − t_re)
 * with t_w the wall time from the first step to `end_ns` (now while running,
 * the completion time once final), t_ch lost work, t_rm resume, t_re
 * reschedule, t_save checkpoint saving; NAN before two steps. */
double gr_measure_goodput_ratio(const gr_measure_goodput *g, int64_t end_ns);
double gr_measure_goodput_avg_step(const gr_measure_goodput *g);   /* NAN: none */
double gr_measure_goodput_avg_tflops(const gr_measure_goodput *g); /* NAN: none */
int64_t gr_measure_goodput_log_interval(const gr_measure_goodput *g);
/*
 * Write the status fields (floats as strings, times RFC 3339) into
 * `status`, leaving conditions and other fields alone. end_ns as for _ratio.
 */
int gr_measure_goodput_to_status(const gr_measure_goodput *g, int64_t end_ns, json_t *status);
/* Restore the accounting state from a status written by _to_status (the
 * controller restarted); unknown or absent fields keep their init values. */
int gr_measure_goodput_from_status(gr_measure_goodput *g, const json_t *status);

/*
 * What the Job controller reads from its GoodputMeasurement (stall
 * detection §3.5, checkpoint restarts §3.6). Absent values are 0 (times,
 * steps) or NAN (avg_step_s).
 */
typedef struct gr_measure_gm_view {
    int exists, complete;
    int64_t sample_interval_ns; /* spec.sampleInterval, default 60 s */
    int64_t start_ns, app_start_ns, last_step_ns;
    double avg_step_s;
    int64_t log_interval;
    int64_t last_checkpoint_step;
} gr_measure_gm_view;

void gr_measure_gm_view_from(const json_t *gm, gr_measure_gm_view *v);

/*
 * The checkpoint restart of §3.6 as a JSON merge patch of the
 * GoodputMeasurement status (caller decrefs *out): lastStepTimestamp,
 * avgStepTimeSec and applicationStartTime cleared, startTime = now, and a
 * pendingInterruption detected now (unless one is pending), so the next run
 * counts as an interruption. Send it to the status subresource.
 */
int gr_measure_gm_restart_patch(const json_t *gm, int64_t now_ns, json_t **out, gr_err *err);

/* Format a double as upstream does for status strings ("%.4f" trimmed of
 * trailing zeros, at least one decimal: "0.9312", "148.2", "3.0"; a value
 * too large for that in 48 bytes as "%.6g"). */
void gr_measure_fmt_float(double v, char buf[48]);

/* ------------------------------------------------------------ bandwidth */

typedef struct gr_measure_bw_size {
    int64_t size_bytes;
    double algbw_sum, busbw_sum; /* GB/s */
    int64_t samples;
} gr_measure_bw_size;

typedef struct gr_measure_bw {
    gr_measure_bw_size sizes[GR_MEASURE_BW_SIZES_MAX];
    size_t n;
    int in_place;     /* use the in-place columns instead of out-of-place */
    uint64_t dropped; /* rows past GR_MEASURE_BW_SIZES_MAX sizes */
} gr_measure_bw;

void gr_measure_bw_init(gr_measure_bw *b);
/* Add one bandwidthResult event to the running average of its size. */
void gr_measure_bw_add(gr_measure_bw *b, const gr_measure_event *ev);
/* Sorted by size. Averages: NAN for a size without samples. */
double gr_measure_bw_avg_alg(const gr_measure_bw_size *s);
double gr_measure_bw_avg_bus(const gr_measure_bw_size *s);
/* Max average busBW / algBW over sizes (the threshold keys); NAN when none. */
double gr_measure_bw_max_bus(const gr_measure_bw *b);
double gr_measure_bw_max_alg(const gr_measure_bw *b);
/* status.results (replaced) from the state; startTime etc. are the caller's. */
int gr_measure_bw_to_status(const gr_measure_bw *b, json_t *status);
int gr_measure_bw_from_status(gr_measure_bw *b, const json_t *status);

/*
 * NCCL-tests wrapped rows: a row split over two lines (out-of-place half,
 * then in-place half, e.g. when ranks' writes interleave or a terminal
 * wraps). Feed every line that did not match; when the previous unmatched
 * line and this one joined by a space form a line, *joined (caller buffer of
 * cap bytes) receives it and 1 is returned; the caller matches it again.
 * After any successful match (a line or a joined line) the caller sets
 * prev_len = 0. Lines of other ranks in between (not starting with a
 * number) are ignored, so the halves may be interleaved with them.
 */
typedef struct gr_measure_wrap {
    char prev[512];
    size_t prev_len;
} gr_measure_wrap;
int gr_measure_wrap_join(gr_measure_wrap *w, const char *line, size_t len, char *joined, size_t cap,
                         size_t *joined_len);

/* ------------------------------------------------------------ thresholds */

/* The keys (§3.9); sorted. */
#define GR_MEASURE_KEY_ALG_BW     "algBandwidthGBps"
#define GR_MEASURE_KEY_AVG_STEP   "avgStepTimeSec"
#define GR_MEASURE_KEY_AVG_TFLOPS "avgTFLOPsPerGPU"
#define GR_MEASURE_KEY_BUS_BW     "busBandwidthGBps"
#define GR_MEASURE_KEY_GOODPUT    "goodputRatio"

/* Messages (byte for byte, §3.9). */
#define GR_MEASURE_MSG_VIOLATED    "Threshold %q violated: measured %.4f, expression: %s"
#define GR_MEASURE_MSG_UNKNOWN     "Unknown threshold key %q"
#define GR_MEASURE_MSG_INVALID     "Threshold %q: %v"
#define GR_MEASURE_MSG_TIMEOUT     "Measurement data not available within %s for keys: %v"
#define GR_MEASURE_MSG_MET         "All performance thresholds satisfied"
#define GR_MEASURE_REASON_VIOLATED "ThresholdViolated"
#define GR_MEASURE_REASON_UNKNOWN  "UnknownThresholdKey"
#define GR_MEASURE_REASON_INVALID  "InvalidThresholdExpression"
#define GR_MEASURE_REASON_TIMEOUT  "MeasurementTimeout"
#define GR_MEASURE_REASON_MET      "ThresholdsMet"

/*
 * Measured values for the threshold keys. A key's value is available only
 * from a final (Complete=True) measurement, and GoodputMeasurement values
 * only when > 0 (issue #404: never judge a non-final measurement).
 */
typedef struct gr_measure_values {
    int bm_final, gm_final;
    double bus_bw, alg_bw;                /* from the BandwidthMeasurement */
    double goodput, avg_tflops, avg_step; /* from the GoodputMeasurement */
} gr_measure_values;

/* Values from measurement objects (either may be NULL): final = condition
 * Complete True; status strings parsed. */
void gr_measure_values_from(const json_t *gm, const json_t *bm, gr_measure_values *v);

typedef enum gr_measure_verdict {
    GR_MEASURE_PENDING = 0, /* data missing, timeout not reached: requeue */
    GR_MEASURE_PASS,        /* ValidationFailed=False/ThresholdsMet */
    GR_MEASURE_FAIL,        /* ValidationFailed=True with reason/message */
} gr_measure_verdict;

typedef struct gr_measure_result {
    gr_measure_verdict verdict;
    const char *reason; /* static; NULL when pending */
    char message[1024];
    char key[128]; /* the violated / unknown / invalid key, "" otherwise */
} gr_measure_result;

/*
 * Evaluate `thresholds` (object key → CEL string) in sorted key order.
 * succeeded_ns: when the Job's Succeeded condition became True;
 * timeout_ns: measurementTimeout (0 → 5 min). The first unknown key,
 * invalid expression or violation fails; missing data is pending until
 * now − succeeded_ns > timeout, then MeasurementTimeout names the keys.
 * An empty or absent map passes.
 */
int gr_measure_threshold_eval(const json_t *thresholds, const gr_measure_values *v,
                              int64_t succeeded_ns, int64_t timeout_ns, int64_t now_ns,
                              gr_measure_result *out, gr_err *err);

/* ------------------------------------------------------------ metrics */

/* One measurement for the gauges of fact sheet §6.3 (all borrowed). */
typedef struct gr_measure_metric_row {
    const char *ns, *name; /* the measurement's namespace and name */
    const char *job;       /* spec.jobRef.name */
    const char *workflow;  /* the Job's nvcre.nvidia.com/workflow label, "" when none */
    const char *test_type; /* BandwidthMeasurement spec.testType ("" when unset) */
    const json_t *status;  /* the measurement's status */
} gr_measure_metric_row;

/*
 * Append the goodput gauges (Prometheus text 0.0.4): nvcre_goodput_ratio,
 * _avg_tflops_per_gpu, _training_time_seconds, _reschedule_time_seconds,
 * _resume_time_seconds, _checkpoint_save_time_seconds, _warmup_time_seconds,
 * _non_warmup_time_seconds, _avg_step_time_seconds, _lost_work_time_seconds,
 * labels {namespace, measurement, job, workflow}; a series only for a status
 * field that holds a number. HELP and TYPE lines are always written.
 * GR_ETOOBIG at out's cap.
 */
int gr_measure_goodput_metrics_render(const gr_measure_metric_row *rows, size_t n, gr_buf *out);

/* Append nvcre_nccl_algbw_gbs / nvcre_nccl_busbw_gbs (and the deprecated
 * _gbps twins, same values) per status.results entry, labels {namespace,
 * measurement, job, workflow, nccl_test, message_size_bytes}. */
int gr_measure_bw_metrics_render(const gr_measure_metric_row *rows, size_t n, gr_buf *out);

#endif
