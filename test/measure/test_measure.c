/*
 * test_measure.c — unit tests of gr_measure (issue 18): RE2 syntax on
 * PCRE2, Go time layouts, LogProfiles (the built-in ones included),
 * incremental reading, NCCL-tests tables, goodput, bandwidth, thresholds.
 * Fixtures: test/measure/data/ (real-shaped logs).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_measure.h"
#include "gr_time.h"
#include "gr_yaml.h"

#ifndef GR_MEASURE_SOURCE_DIR
#define GR_MEASURE_SOURCE_DIR "."
#endif

static const char *source_dir(void)
{
    const char *d = getenv("GR_SOURCE_DIR");
    return d ? d : GR_MEASURE_SOURCE_DIR;
}

static char *slurp(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", source_dir(), rel);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail_msg("cannot open %s", path);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The spec of a LogProfile YAML file (caller decrefs the returned doc). */
static json_t *load_profile_doc(const char *rel)
{
    json_t *docs = NULL;
    char path[1024];
    gr_err err;
    snprintf(path, sizeof path, "%s/%s", source_dir(), rel);
    if (gr_yaml_load_file(path, 1 << 20, &docs, &err) != GR_OK) {
        fail_msg("%s: %s", path, err.msg);
    }
    json_t *doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return doc;
}

static gr_measure_profile *profile_from(const char *rel)
{
    json_t *doc = load_profile_doc(rel);
    gr_measure_profile *p = NULL;
    gr_err err;
    if (gr_measure_profile_new(json_object_get(doc, "spec"), &p, &err) != GR_OK) {
        fail_msg("%s: %s", rel, err.msg);
    }
    json_decref(doc);
    return p;
}

static int64_t ts(const char *s)
{
    int64_t ns = 0;
    assert_int_equal(gr_time_parse_ns(s, &ns, NULL), GR_OK);
    return ns;
}

/* ------------------------------------------------------------ RE2 syntax */

static void expect_re_refused(const char *rx, const char *needle)
{
    gr_measure_re *re = NULL;
    gr_err err;
    int rc = gr_measure_re_compile(rx, strlen(rx), &re, &err);
    if (rc == GR_OK) {
        gr_measure_re_free(re);
        fail_msg("%s: accepted, but RE2 refuses it", rx);
    }
    if (!strstr(err.msg, needle)) {
        fail_msg("%s: message \"%s\" lacks \"%s\"", rx, err.msg, needle);
    }
}

static void test_re2_refuses(void **state)
{
    (void)state;
    expect_re_refused("(a)\\1", "backreference");
    expect_re_refused("(?P<x>a)(?P=x)", "RE2 has no backreferences");
    expect_re_refused("\\k<x>", "backreference");
    expect_re_refused("a(?=b)", "lookahead");
    expect_re_refused("a(?!b)", "lookahead");
    expect_re_refused("(?<=a)b", "lookbehind");
    expect_re_refused("(?<!a)b", "lookbehind");
    expect_re_refused("(?>ab)", "atomic group");
    expect_re_refused("a++", "possessive");
    expect_re_refused("a*+", "possessive");
    expect_re_refused("a**", "nested repetition");
    expect_re_refused("a{2}{3}", "nested repetition");
    expect_re_refused("\\C", "\\C");
    expect_re_refused("a\\Kb", "escape");
    expect_re_refused("a\\Z", "escape");
    expect_re_refused("(?R)", "recursion");
    expect_re_refused("(?1)", "recursion");
    expect_re_refused("(?(1)a|b)", "conditional");
    expect_re_refused("(?x)a b", "RE2 flags are i, m, s and U");
    expect_re_refused("a{1001}", "at most 1000");
    expect_re_refused("[\\1]", "backreference");
    expect_re_refused("(?'n'a)", "named group");
    expect_re_refused("(*UTF)a", "verb");
    expect_re_refused("(?#c)a", "comment");
    expect_re_refused("", "empty regex");
}

static void test_re2_accepts(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "step (?P<step>\\d+)",
        "step (?<step>\\d+)",
        "(?i)STEP\\s+\\d+",
        "(?i:a)b",
        "(?-s:.)",
        "a{2,5}?",
        "a??b*?",
        "[\\]a-]+",
        "\\Q(?=\\E",
        "[[:digit:]]+\\z",
        "\\pL\\p{Greek}",
        "a{1000}",
        "x{,3}",
        "\\x{41}\\101",
        "(?U)a+",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        gr_measure_re *re = NULL;
        gr_err err;
        if (gr_measure_re_compile(ok[i], strlen(ok[i]), &re, &err) != GR_OK) {
            fail_msg("%s: refused: %s", ok[i], err.msg);
        }
        gr_measure_re_free(re);
    }
    /* named groups of both spellings, and $ only at the very end (RE2) */
    gr_measure_re *re = NULL;
    assert_int_equal(gr_measure_re_compile("(?P<a>\\d+)-(?<b>\\d+)$", 21, &re, NULL), GR_OK);
    assert_int_equal(gr_measure_re_group(re, "a"), 1);
    assert_int_equal(gr_measure_re_group(re, "b"), 2);
    assert_int_equal(gr_measure_re_group(re, "c"), -1);
    gr_measure_match m;
    assert_int_equal(gr_measure_re_match(re, "x 12-345", 8, &m), 1);
    assert_int_equal(m.start[1], 2);
    assert_int_equal(m.end[2], 8);
    assert_int_equal(gr_measure_re_match(re, "12-345\n", 7, &m), 0);
    /* invalid UTF-8 in a log line is not an error */
    assert_int_equal(gr_measure_re_match(re, "\xff\xfe 1-2", 6, &m), 1);
    gr_measure_re_free(re);
}

/* ------------------------------------------------------------ Go layouts */

static void expect_time(const char *layout, const char *v, const char *want)
{
    int64_t ns = 0;
    gr_err err;
    if (gr_measure_gotime_parse(layout, v, strlen(v), ts("2026-06-01T00:00:00Z"), &ns, &err) !=
        GR_OK) {
        fail_msg("%s / %s: %s", layout, v, err.msg);
    }
    if (ns != ts(want)) {
        char got[64];
        gr_time_format_ns(ns, got);
        fail_msg("%s / %s: got %s, want %s", layout, v, got, want);
    }
}

static void test_gotime(void **state)
{
    (void)state;
    expect_time("2006-01-02 15:04:05", "2026-01-05 10:00:30", "2026-01-05T10:00:30Z");
    expect_time("2006-01-02T15:04:05.999999999Z07:00", "2026-01-05T10:00:30.25+01:00",
                "2026-01-05T09:00:30.25Z");
    expect_time("2006-01-02T15:04:05Z07:00", "2026-01-05T10:00:30Z", "2026-01-05T10:00:30Z");
    /* a fraction after the seconds is accepted even without .000 */
    expect_time("2006-01-02 15:04:05", "2026-01-05 10:00:30.5", "2026-01-05T10:00:30.5Z");
    expect_time("2006-01-02 15:04:05,000", "2026-01-05 10:00:30,125", "2026-01-05T10:00:30.125Z");
    /* syslog style: no year → the reference time's year */
    expect_time("Jan _2 15:04:05", "Feb  3 07:08:09", "2026-02-03T07:08:09Z");
    expect_time("Mon Jan 2 15:04:05 MST 2006", "Tue Jan 6 10:00:00 PST 2026",
                "2026-01-06T10:00:00Z");
    expect_time("01/02/06 03:04:05 PM", "12/31/25 11:59:59 PM", "2025-12-31T23:59:59Z");
    expect_time("01/02/06 3:04:05 pm", "01/01/26 12:00:00 am", "2026-01-01T00:00:00Z");
    expect_time("2006.002 15:04:05 -0700", "2024.060 10:00:00 -0200", "2024-02-29T12:00:00Z");
    expect_time("20060102-150405", "20260105-100030", "2026-01-05T10:00:30Z");

    int64_t ns;
    gr_err err;
    assert_int_equal(gr_measure_gotime_parse("2006-01-02", "2026-02-30", 10, 0, &ns, &err),
                     GR_EPARSE);
    assert_int_equal(gr_measure_gotime_parse("2006-01-02", "2026-1-05", 9, 0, &ns, &err),
                     GR_EPARSE);
    assert_non_null(strstr(err.msg, "cannot parse"));
    assert_int_equal(gr_measure_gotime_parse("15:04:05", "10:00:30 extra", 14, 0, &ns, &err),
                     GR_EPARSE);
    assert_non_null(strstr(err.msg, "extra text"));
    assert_int_equal(gr_measure_gotime_check("yyyy-MM-dd", &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "reference time"));
    assert_int_equal(gr_measure_gotime_check("2006-01-02", &err), GR_OK);
}

/* ------------------------------------------------------------ profiles */

static void test_builtin_profiles(void **state)
{
    (void)state;
    static const char *const files[] = {
        "deploy/logprofiles/nccl-loopback.yaml", "deploy/logprofiles/nccl-all-reduce.yaml",
        "deploy/logprofiles/nccl-all-gather.yaml", "deploy/logprofiles/nccl-alltoall.yaml",
        "deploy/logprofiles/megatron.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        json_t *doc = load_profile_doc(files[i]);
        const json_t *spec = json_object_get(doc, "spec");
        gr_measure_profile *p = NULL;
        gr_err err;
        if (gr_measure_profile_new(spec, &p, &err) != GR_OK) {
            fail_msg("%s: %s", files[i], err.msg);
        }
        /* every example parses into an event of its kind */
        for (int k = 0; k < GR_MEASURE_KINDS; k++) {
            const json_t *pat = json_object_get(json_object_get(spec, "patterns"),
                                                gr_measure_kind_name((gr_measure_kind)k));
            const char *ex = json_string_value(json_object_get(pat, "example"));
            if (!ex) {
                continue;
            }
            gr_measure_event ev;
            int rc = gr_measure_profile_parse_line(p, ex, strlen(ex), ts("2026-01-05T10:00:00Z"),
                                                   &ev, &err);
            if (rc != 1) {
                fail_msg("%s: example of %s: rc %d %s", files[i],
                         gr_measure_kind_name((gr_measure_kind)k), rc, err.msg);
            }
            assert_int_equal(ev.kind, k);
        }
        gr_measure_profile_free(p);
        json_decref(doc);
    }
}

static void expect_profile_error(const char *json, const char *needle)
{
    json_error_t jerr;
    json_t *spec = json_loads(json, 0, &jerr);
    if (!spec) {
        fail_msg("bad test JSON: %s", jerr.text);
    }
    gr_measure_profile *p = NULL;
    gr_err err;
    int rc = gr_measure_profile_new(spec, &p, &err);
    json_decref(spec);
    if (rc == GR_OK) {
        gr_measure_profile_free(p);
        fail_msg("%s: accepted", json);
    }
    if (!strstr(err.msg, needle)) {
        fail_msg("%s: message \"%s\" lacks \"%s\"", json, err.msg, needle);
    }
}

static void test_profile_errors(void **state)
{
    (void)state;
    expect_profile_error(
        "{\"patterns\":{\"trainingStep\":{\"regex\":\"s (?=x)(?P<step>\\\\d+)\"}}}",
        "spec.patterns.trainingStep.regex: offset 2: lookahead");
    expect_profile_error("{\"patterns\":{\"trainingStep\":{\"regex\":\"s \\\\d+\"}}}",
                         "needs a named group step");
    expect_profile_error("{\"patterns\":{\"bandwidthResult\":{\"regex\":\"(?P<size>\\\\d+)\"}}}",
                         "needs named groups size and busbw");
    expect_profile_error("{\"patterns\":{}}", "spec.patterns: required");
    expect_profile_error("{\"patterns\":{\"trainingstep\":{\"regex\":\"a\"}}}",
                         "spec.patterns.trainingstep: unknown pattern");
    expect_profile_error("{\"timestamp\":{\"layout\":\"YYYY\"},\"patterns\":{\"trainingStep\":"
                         "{\"regex\":\"(?P<step>\\\\d+)\"}}}",
                         "spec.timestamp.layout: layout \"YYYY\" has no date or time");
    expect_profile_error("{\"patterns\":{\"trainingStep\":{\"regex\":\"(?P<step>\\\\d+) "
                         "(?P<stepTime>\\\\d+)\",\"units\":{\"stepTime\":\"min\"}}}}",
                         "spec.patterns.trainingStep.units.stepTime: unsupported unit");
    expect_profile_error("{\"patterns\":{\"trainingStep\":{\"regex\":\"(?P<step>\\\\d+)\","
                         "\"units\":{\"other\":\"ms\"}}}}",
                         "the regex has no capture other");
    expect_profile_error("{\"patterns\":{\"trainingStep\":{\"regex\":\"step (?P<step>\\\\d+)\","
                         "\"example\":\"iteration 3\"}}}",
                         "spec.patterns.trainingStep: example must match regex");
    expect_profile_error("{\"patterns\":{\"trainingStep\":{\"regex\":\"(?P<step>\\\\d+)\"}},"
                         "\"workerStrategy\":{\"type\":\"Many\"}}",
                         "spec.workerStrategy.type: use Single or Multi");
}

static void test_worker_strategy(void **state)
{
    (void)state;
    gr_measure_profile *p = profile_from("deploy/logprofiles/megatron.yaml");
    const gr_measure_strategy *s = gr_measure_profile_strategy(p);
    assert_true(s->multi);
    assert_string_equal(s->replicated_job, "trainer");
    assert_int_equal(gr_measure_profile_pick_pod(p, GR_MEASURE_TRAINING_STEP, 4), 3);
    assert_int_equal(gr_measure_profile_pick_pod(p, GR_MEASURE_APPLICATION_START, 4), 0);
    assert_int_equal(gr_measure_profile_pick_pod(p, GR_MEASURE_TRAINING_STEP, 0), -1);
    assert_int_equal(gr_measure_profile_warmup_steps(p), 10);
    gr_measure_profile_free(p);
    p = profile_from("deploy/logprofiles/nccl-all-reduce.yaml");
    s = gr_measure_profile_strategy(p);
    assert_false(s->multi);
    assert_string_equal(s->replicated_job, "launcher");
    assert_int_equal(gr_measure_profile_pick_pod(p, GR_MEASURE_TRAINING_STEP, 4), 0);
    gr_measure_profile_free(p);
}

/* ------------------------------------------------------------ reading */

typedef struct lines {
    char text[64][256];
    int64_t ts[64];
    size_t n;
} lines;

static int collect(void *ctx, const char *line, size_t len, int64_t kts)
{
    lines *l = ctx;
    if (l->n < 64) {
        snprintf(l->text[l->n], sizeof l->text[0], "%.*s", (int)len, line);
        l->ts[l->n++] = kts;
    }
    return 0;
}

static void test_reader_partial_lines(void **state)
{
    (void)state;
    const char *log = "2026-01-05T10:00:00.1Z one\n2026-01-05T10:00:00.2Z two\r\n"
                      "2026-01-05T10:00:01Z three\nno prefix line\n2026-01-05T10:00:02Z four";
    /* fed in chunks of every size: same lines */
    for (size_t chunk = 1; chunk <= 9; chunk++) {
        gr_measure_reader r;
        gr_measure_reader_init(&r);
        lines l;
        memset(&l, 0, sizeof l);
        gr_measure_reader_begin_poll(&r);
        for (size_t i = 0; i < strlen(log); i += chunk) {
            size_t n = strlen(log) - i < chunk ? strlen(log) - i : chunk;
            assert_int_equal(gr_measure_reader_feed(&r, log + i, n, 1, collect, &l), 0);
        }
        assert_int_equal(l.n, 4); /* "four" is partial */
        assert_string_equal(l.text[0], "one");
        assert_string_equal(l.text[1], "two");
        assert_string_equal(l.text[2], "three");
        assert_string_equal(l.text[3], "no prefix line");
        assert_true(l.ts[3] == 0);
        assert_true(l.ts[2] == ts("2026-01-05T10:00:01Z"));
        /* the container finished: the last line is complete */
        assert_int_equal(gr_measure_reader_end_poll(&r, 1, 1, collect, &l), 0);
        assert_int_equal(l.n, 5);
        assert_string_equal(l.text[4], "four");
        gr_measure_reader_free(&r);
    }
}

static void test_reader_since_time(void **state)
{
    (void)state;
    /* Poll 1 got the bytes up to a limit that cut line 3; poll 2 starts at
     * the second of the newest complete line, so lines of that second come
     * again and are skipped; each line is seen exactly once. */
    const char *poll1 = "2026-01-05T10:00:00.1Z a\n2026-01-05T10:00:05.5Z b\n"
                        "2026-01-05T10:00:05.5Z c\n2026-01-05T10:00:05.9Z d-cut";
    const char *poll2 = "2026-01-05T10:00:05.5Z b\n2026-01-05T10:00:05.5Z c\n"
                        "2026-01-05T10:00:05.9Z d-whole\n2026-01-05T10:00:06Z e\n";
    gr_measure_reader r;
    gr_measure_reader_init(&r);
    lines l;
    memset(&l, 0, sizeof l);
    char since[40];
    gr_measure_reader_since(&r, ts("2026-01-05T10:00:10Z"), since);
    assert_string_equal(since, ""); /* first poll: from the start */
    gr_measure_reader_begin_poll(&r);
    gr_measure_reader_feed(&r, poll1, strlen(poll1), 1, collect, &l);
    gr_measure_reader_end_poll(&r, 0, 1, collect, &l);
    assert_int_equal(l.n, 3);
    gr_measure_reader_since(&r, ts("2026-01-05T10:00:10Z"), since);
    assert_string_equal(since, "2026-01-05T10:00:05Z");
    gr_measure_reader_begin_poll(&r);
    gr_measure_reader_feed(&r, poll2, strlen(poll2), 1, collect, &l);
    gr_measure_reader_end_poll(&r, 0, 1, collect, &l);
    assert_int_equal(l.n, 5);
    assert_string_equal(l.text[3], "d-whole");
    assert_string_equal(l.text[4], "e");
    /* the lookback bound: never further back than 30 minutes */
    gr_measure_reader_since(&r, ts("2026-01-05T12:00:00.7Z"), since);
    assert_string_equal(since, "2026-01-05T11:30:00Z");
    gr_measure_reader_free(&r);
}

static void test_reader_line_cap(void **state)
{
    (void)state;
    size_t n = GR_MEASURE_LINE_MAX * 2 + 10;
    char *big = malloc(n + 2);
    assert_non_null(big);
    memset(big, 'x', n);
    big[n] = '\n';
    big[n + 1] = 'y';
    gr_measure_reader r;
    gr_measure_reader_init(&r);
    lines l;
    memset(&l, 0, sizeof l);
    /* whole, then in pieces: the line is cut at the cap either way */
    gr_measure_reader_feed(&r, big, n + 1, 0, collect, &l);
    for (size_t i = 0; i < n + 1; i += 4096) {
        size_t k = n + 1 - i < 4096 ? n + 1 - i : 4096;
        gr_measure_reader_feed(&r, big + i, k, 0, collect, &l);
    }
    assert_int_equal(l.n, 2);
    assert_int_equal(r.lines_cut, 2);
    assert_true(r.part_cap <= GR_MEASURE_LINE_MAX);
    gr_measure_reader_free(&r);
    free(big);
}

/* ------------------------------------------------------------ NCCL tables */

typedef struct bw_ctx {
    gr_measure_profile *p;
    gr_measure_bw bw;
    gr_measure_wrap wrap;
    int use_wrap;
    int rows, errors;
} bw_ctx;

static int bw_line(void *ctx, const char *line, size_t len, int64_t kts)
{
    bw_ctx *c = ctx;
    gr_measure_event ev;
    gr_err err;
    int rc = gr_measure_profile_parse_line(c->p, line, len, kts, &ev, &err);
    if (rc == 0 && c->use_wrap) {
        char joined[1024];
        size_t jl = 0;
        if (gr_measure_wrap_join(&c->wrap, line, len, joined, sizeof joined, &jl)) {
            rc = gr_measure_profile_parse_line(c->p, joined, jl, kts, &ev, &err);
        }
    }
    if (rc < 0) {
        c->errors++;
    } else if (rc == 1 && ev.kind == GR_MEASURE_BANDWIDTH_RESULT) {
        c->wrap.prev_len = 0;
        gr_measure_bw_add(&c->bw, &ev);
        c->rows++;
    }
    return 0;
}

static void parse_nccl(bw_ctx *c, const char *log, size_t len)
{
    gr_measure_reader r;
    gr_measure_reader_init(&r);
    gr_measure_reader_begin_poll(&r);
    gr_measure_reader_feed(&r, log, len, 0, bw_line, c);
    gr_measure_reader_end_poll(&r, 1, 0, bw_line, c);
    gr_measure_reader_free(&r);
}

static void expect_size(const gr_measure_bw *b, int64_t size, const char *alg, const char *bus,
                        int64_t samples)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->sizes[i].size_bytes == size) {
            char a[48], u[48];
            gr_measure_fmt_float(gr_measure_bw_avg_alg(&b->sizes[i]), a);
            gr_measure_fmt_float(gr_measure_bw_avg_bus(&b->sizes[i]), u);
            assert_string_equal(a, alg);
            assert_string_equal(u, bus);
            assert_int_equal(b->sizes[i].samples, samples);
            return;
        }
    }
    fail_msg("size %lld missing", (long long)size);
}

static void test_nccl_table(void **state)
{
    (void)state;
    size_t len;
    char *log = slurp("test/measure/data/nccl_all_reduce.log", &len);
    bw_ctx c;
    memset(&c, 0, sizeof c);
    c.p = profile_from("deploy/logprofiles/nccl-all-reduce.yaml");
    gr_measure_bw_init(&c.bw);
    parse_nccl(&c, log, len);
    /* out-of-place columns; the mpirun-tagged row and the wrapped row's
     * first half count; headers, INFO lines of other ranks and the
     * "# Avg bus bandwidth" summary do not */
    assert_int_equal(c.rows, 4);
    assert_int_equal(c.errors, 0);
    assert_int_equal(c.bw.n, 4);
    expect_size(&c.bw, 8, "0.0", "0.0", 1);
    expect_size(&c.bw, 1048576, "17.44", "32.7", 1);
    expect_size(&c.bw, 134217728, "165.6", "310.5", 1);
    expect_size(&c.bw, 1073741824, "195.47", "366.5", 1);
    char b[48];
    gr_measure_fmt_float(gr_measure_bw_max_bus(&c.bw), b);
    assert_string_equal(b, "366.5");

    /* in-place columns; a row without them falls back to out-of-place */
    memset(&c.bw, 0, sizeof c.bw);
    c.bw.in_place = 1;
    c.rows = 0;
    parse_nccl(&c, log, len);
    expect_size(&c.bw, 1048576, "17.53", "32.87", 1);
    expect_size(&c.bw, 134217728, "165.72", "310.73", 1);
    expect_size(&c.bw, 1073741824, "195.47", "366.5", 1);

    /* a second run of the same test (the next sample): running averages */
    c.bw.in_place = 0;
    memset(&c.bw, 0, sizeof c.bw);
    parse_nccl(&c, log, len);
    parse_nccl(&c, log, len);
    expect_size(&c.bw, 134217728, "165.6", "310.5", 2);
    gr_measure_profile_free(c.p);
    free(log);
}

static void test_nccl_wrapped_rows(void **state)
{
    (void)state;
    /* a profile that requires both halves: the wrapped 1 GiB row is joined
     * across an interleaved INFO line of another rank */
    json_error_t jerr;
    json_t *spec = json_loads("{\"patterns\":{\"bandwidthResult\":{\"regex\":\"^\\\\s*(?P<size>"
                              "\\\\d+)\\\\s+\\\\d+\\\\s+\\\\w+"
                              "\\\\s+\\\\S+\\\\s+-?\\\\d+\\\\s+[0-9.]+\\\\s+(?P<algbw>[0-9.]+)"
                              "\\\\s+(?P<busbw>[0-9.]+)\\\\s+"
                              "\\\\S+\\\\s+[0-9.]+\\\\s+(?P<ipAlgbw>[0-9.]+)\\\\s+(?P<ipBusbw>[0-9."
                              "]+)\\\\s+\\\\S+\\\\s*$\"}}}",
                              0, &jerr);
    assert_non_null(spec);
    bw_ctx c;
    memset(&c, 0, sizeof c);
    gr_err err;
    if (gr_measure_profile_new(spec, &c.p, &err) != GR_OK) {
        fail_msg("%s", err.msg);
    }
    json_decref(spec);
    size_t len;
    char *log = slurp("test/measure/data/nccl_all_reduce.log", &len);
    c.use_wrap = 1;
    c.bw.in_place = 1;
    parse_nccl(&c, log, len);
    assert_int_equal(c.rows, 3); /* 8, 1 MiB, joined 1 GiB (the tagged row needs the tag) */
    expect_size(&c.bw, 1073741824, "195.65", "366.84", 1);
    c.use_wrap = 0;
    memset(&c.bw, 0, sizeof c.bw);
    c.rows = 0;
    parse_nccl(&c, log, len);
    assert_int_equal(c.rows, 2);
    gr_measure_profile_free(c.p);
    free(log);
}

static void test_bw_status_roundtrip_and_final_read(void **state)
{
    (void)state;
    gr_measure_bw b;
    gr_measure_bw_init(&b);
    gr_measure_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GR_MEASURE_BANDWIDTH_RESULT;
    ev.ip_algbw = ev.ip_busbw = (double)NAN;
    ev.size_bytes = 1024;
    ev.algbw = 10;
    ev.busbw = 20;
    gr_measure_bw_add(&b, &ev);
    ev.algbw = 12;
    ev.busbw = 22;
    gr_measure_bw_add(&b, &ev);
    json_t *st = json_object();
    assert_int_equal(gr_measure_bw_to_status(&b, st), GR_OK);
    char *s = json_dumps(json_object_get(st, "results"), JSON_COMPACT);
    assert_string_equal(
        s, "[{\"sizeBytes\":1024,\"algBW\":\"11.0\",\"busBW\":\"21.0\",\"samples\":2}]");
    free(s);
    /* a restarted controller continues the running average */
    gr_measure_bw r;
    gr_measure_bw_from_status(&r, st);
    ev.algbw = 14;
    ev.busbw = 24;
    gr_measure_bw_add(&r, &ev);
    expect_size(&r, 1024, "12.0", "22.0", 3);
    /* the final read replaces: a fresh state from the whole log */
    gr_measure_bw fin;
    gr_measure_bw_init(&fin);
    ev.algbw = 30;
    ev.busbw = 40;
    gr_measure_bw_add(&fin, &ev);
    gr_measure_bw_to_status(&fin, st);
    s = json_dumps(json_object_get(st, "results"), JSON_COMPACT);
    assert_string_equal(
        s, "[{\"sizeBytes\":1024,\"algBW\":\"30.0\",\"busBW\":\"40.0\",\"samples\":1}]");
    free(s);
    json_decref(st);
    /* the size cap */
    gr_measure_bw_init(&b);
    for (int64_t i = 0; i < (int64_t)GR_MEASURE_BW_SIZES_MAX + 5; i++) {
        ev.size_bytes = 1000 - i;
        gr_measure_bw_add(&b, &ev);
    }
    assert_int_equal(b.n, GR_MEASURE_BW_SIZES_MAX);
    assert_int_equal(b.dropped, 5);
    for (size_t i = 1; i < b.n; i++) {
        assert_true(b.sizes[i - 1].size_bytes < b.sizes[i].size_bytes);
    }
}

/* ------------------------------------------------------------ goodput */

typedef struct gp_ctx {
    gr_measure_profile *p;
    gr_measure_goodput g;
    int events;
} gp_ctx;

static int gp_line(void *ctx, const char *line, size_t len, int64_t kts)
{
    gp_ctx *c = ctx;
    gr_measure_event ev;
    if (gr_measure_profile_parse_line(c->p, line, len, kts, &ev, NULL) == 1) {
        gr_measure_goodput_apply(&c->g, &ev);
        c->events++;
    }
    return 0;
}

static void expect_field(const json_t *st, const char *k, const char *want)
{
    const json_t *v = json_object_get(st, k);
    char *s = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
    if (!s || strcmp(s, want) != 0) {
        fail_msg("status.%s is %s, want %s", k, s ? s : "absent", want);
    }
    free(s);
}

static void test_goodput_megatron_restart(void **state)
{
    (void)state;
    size_t len;
    char *log = slurp("test/measure/data/megatron.log", &len);
    gp_ctx c;
    memset(&c, 0, sizeof c);
    c.p = profile_from("deploy/logprofiles/megatron.yaml");
    gr_measure_goodput_init(&c.g, gr_measure_profile_warmup_steps(c.p),
                            gr_measure_profile_log_interval(c.p));
    gr_measure_reader r;
    gr_measure_reader_init(&r);
    gr_measure_reader_begin_poll(&r);
    gr_measure_reader_feed(&r, log, len, 1, gp_line, &c);
    gr_measure_reader_end_poll(&r, 1, 1, gp_line, &c);
    assert_int_equal(c.events, 15);
    int64_t end = ts("2026-01-05T10:03:28Z");
    json_t *st = json_object();
    assert_int_equal(gr_measure_goodput_to_status(&c.g, end, st), GR_OK);
    /* t_w 178 s, lost 20 steps × 1.2 s, resume 30 s, reschedule 60 s,
     * save 3 s: (178 − 24 − 30 − 60 − 3) / (178 − 60) = 0.5169 */
    expect_field(st, "result", "\"0.5169\"");
    expect_field(st, "currentStep", "70");
    expect_field(st, "highestStep", "70");
    expect_field(st, "interruptionCount", "1");
    expect_field(st, "lastCheckpointStep", "40");
    expect_field(st, "lastCheckpointTime", "\"2026-01-05T10:01:10Z\"");
    expect_field(st, "lostWorkTimeSec", "\"24.0\"");
    expect_field(st, "resumeTimeSec", "\"30.0\"");
    expect_field(st, "rescheduleTimeSec", "\"60.0\"");
    expect_field(st, "checkpointSaveTimeSec", "\"3.0\"");
    expect_field(st, "trainingTimeSec", "\"88.0\"");
    expect_field(st, "avgStepTimeSec", "\"1.2\"");
    expect_field(st, "avgTFLOPSPerGPU", "\"456.7\"");
    expect_field(st, "logInterval", "10");
    expect_field(st, "warmupBaseStep", "50");
    expect_field(st, "warmupTimeSec", "\"24.0\"");
    expect_field(st, "nonWarmupTimeSec", "\"64.0\"");
    expect_field(st, "lastNonWarmupStep", "70");
    expect_field(st, "lastStepTimestamp", "\"2026-01-05T10:03:28Z\"");
    expect_field(st, "applicationStartTime", "\"2026-01-05T10:00:00Z\"");
    assert_null(json_object_get(st, "pendingInterruption"));
    json_decref(st);
    gr_measure_reader_free(&r);

    /* state recovery: stop after the checkpoint, persist, restore into a
     * fresh accumulator (a restarted controller), continue: same status */
    gp_ctx d;
    memset(&d, 0, sizeof d);
    d.p = c.p;
    gr_measure_goodput_init(&d.g, 10, 0);
    const char *cut = strstr(log, "2026-01-05T10:01:22");
    assert_non_null(cut);
    gr_measure_reader_init(&r);
    gr_measure_reader_feed(&r, log, (size_t)(cut - log), 1, gp_line, &d);
    json_t *saved = json_object();
    gr_measure_goodput_to_status(&d.g, ts("2026-01-05T10:01:20Z"), saved);
    gp_ctx e;
    memset(&e, 0, sizeof e);
    e.p = c.p;
    gr_measure_goodput_init(&e.g, 10, 0);
    gr_measure_goodput_from_status(&e.g, saved);
    gr_measure_reader_feed(&r, cut, len - (size_t)(cut - log), 1, gp_line, &e);
    json_t *a = json_object(), *b = json_object();
    gr_measure_goodput_to_status(&c.g, end, a);
    gr_measure_goodput_to_status(&e.g, end, b);
    json_object_del(a, "accounting");
    json_object_del(b, "accounting");
    json_object_del(a, "applicationStartTime"); /* identical, checked above */
    json_object_del(b, "applicationStartTime");
    char *sa = json_dumps(a, JSON_SORT_KEYS), *sb = json_dumps(b, JSON_SORT_KEYS);
    assert_string_equal(sa, sb);
    free(sa);
    free(sb);
    json_decref(a);
    json_decref(b);
    json_decref(saved);
    gr_measure_reader_free(&r);
    gr_measure_profile_free(c.p);
    free(log);
}

static void test_goodput_pending_interruption(void **state)
{
    (void)state;
    gr_measure_goodput g;
    gr_measure_goodput_init(&g, 0, 0);
    gr_measure_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GR_MEASURE_TRAINING_STEP;
    ev.step_time_s = ev.tflops = (double)NAN;
    for (int i = 1; i <= 5; i++) {
        ev.step = i;
        ev.ts_ns = ts("2026-01-05T10:00:00Z") + (int64_t)i * 2000000000;
        gr_measure_goodput_apply(&g, &ev);
    }
    /* no ratio before wall time passes; 1.0 with no badput */
    assert_true(isnan(gr_measure_goodput_ratio(&g, ts("2026-01-05T10:00:00Z"))));
    assert_true(gr_measure_goodput_ratio(&g, ts("2026-01-05T10:00:10Z")) == 1.0);
    assert_true(gr_measure_goodput_avg_step(&g) == 2.0);
    /* the Job restarts the workload: pending until the next step */
    gr_measure_goodput_interrupt(&g, ts("2026-01-05T10:00:20Z"));
    json_t *st = json_object();
    gr_measure_goodput_to_status(&g, ts("2026-01-05T10:00:21Z"), st);
    expect_field(json_object_get(st, "pendingInterruption"), "detectedTime",
                 "\"2026-01-05T10:00:20Z\"");
    expect_field(json_object_get(st, "pendingInterruption"), "lastStep", "5");
    ev.step = 1; /* no checkpoint: from scratch */
    ev.ts_ns = ts("2026-01-05T10:00:50Z");
    gr_measure_goodput_apply(&g, &ev);
    gr_measure_goodput_to_status(&g, ts("2026-01-05T10:00:50Z"), st);
    assert_null(json_object_get(st, "pendingInterruption"));
    expect_field(st, "interruptionCount", "1");
    expect_field(st, "rescheduleTimeSec", "\"30.0\"");
    expect_field(st, "lostWorkTimeSec", "\"10.0\""); /* steps 1..5 × 2 s */
    json_decref(st);
}

static void test_gm_view_and_restart_patch(void **state)
{
    (void)state;
    /* stall inputs (JOB-55/JOB-66 use them) and checkpoint restart (§3.6) */
    json_t *gm = json_loads(
        "{\"spec\":{\"sampleInterval\":\"30s\"},\"status\":{\"startTime\":\"2026-01-05T10:00:00Z\","
        "\"applicationStartTime\":\"2026-01-05T10:00:05Z\",\"lastStepTimestamp\":"
        "\"2026-01-05T10:03:28Z\",\"avgStepTimeSec\":\"1.2\",\"logInterval\":10,"
        "\"highestStep\":70,\"lastCheckpointStep\":40}}",
        0, NULL);
    assert_non_null(gm);
    gr_measure_gm_view v;
    gr_measure_gm_view_from(gm, &v);
    assert_true(v.exists && !v.complete);
    assert_true(v.sample_interval_ns == (int64_t)30 * 1000000000);
    assert_true(v.last_step_ns == ts("2026-01-05T10:03:28Z"));
    assert_true(v.app_start_ns == ts("2026-01-05T10:00:05Z"));
    assert_true(v.avg_step_s == 1.2);
    assert_int_equal(v.log_interval, 10);
    assert_int_equal(v.last_checkpoint_step, 40);
    json_t *patch = NULL;
    assert_int_equal(gr_measure_gm_restart_patch(gm, ts("2026-01-05T10:05:00Z"), &patch, NULL),
                     GR_OK);
    char *txt = json_dumps(patch, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(txt, "{\"status\":{\"accounting\":{\"runFirstStep\":-1},"
                             "\"applicationStartTime\":null,\"avgStepTimeSec\":null,"
                             "\"lastStepTimestamp\":null,\"pendingInterruption\":{"
                             "\"detectedTime\":\"2026-01-05T10:05:00Z\",\"lastCheckpointStep\":40,"
                             "\"lastStep\":70},\"startTime\":\"2026-01-05T10:05:00Z\"}}");
    free(txt);
    json_decref(patch);
    /* the patched status continues in the accounting: one interruption */
    json_t *st = json_object_get(gm, "status");
    json_object_del(st, "lastStepTimestamp");
    json_object_set_new(
        st, "pendingInterruption",
        json_pack("{s:s,s:i}", "detectedTime", "2026-01-05T10:05:00Z", "lastStep", 70));
    json_object_set_new(st, "accounting", json_pack("{s:i}", "runFirstStep", -1));
    gr_measure_goodput g;
    gr_measure_goodput_init(&g, 0, 0);
    gr_measure_goodput_from_status(&g, st);
    gr_measure_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GR_MEASURE_TRAINING_STEP;
    ev.step_time_s = ev.tflops = (double)NAN;
    ev.step = 41;
    ev.ts_ns = ts("2026-01-05T10:06:00Z");
    gr_measure_goodput_apply(&g, &ev);
    assert_int_equal(g.interruptions, 1);
    assert_true(g.reschedule_s == 60.0);
    gr_measure_gm_view_from(NULL, &v);
    assert_false(v.exists);
    json_decref(gm);
}

/* ------------------------------------------------------------ thresholds */

static json_t *obj(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j) {
        fail_msg("bad test JSON %s: %s", s, e.text);
    }
    return j;
}

#define BM_FINAL                                                                              \
    "{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}],\"results\":[" \
    "{\"sizeBytes\":8,\"algBW\":\"0.0\",\"busBW\":\"0.0\",\"samples\":1},"                    \
    "{\"sizeBytes\":1073741824,\"algBW\":\"195.47\",\"busBW\":\"366.5\",\"samples\":1}]}}"
#define BM_RUNNING                                                                             \
    "{\"status\":{\"conditions\":[{\"type\":\"Measuring\",\"status\":\"True\"}],\"results\":[" \
    "{\"sizeBytes\":1073741824,\"algBW\":\"195.47\",\"busBW\":\"366.5\",\"samples\":1}]}}"
#define GM_FINAL                                                                 \
    "{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]," \
    "\"result\":\"0.9312\",\"avgStepTimeSec\":\"1.2\",\"avgTFLOPSPerGPU\":\"456.7\"}}"

static gr_measure_result eval(const char *thr, const char *gm, const char *bm, int64_t since_s)
{
    json_t *t = obj(thr), *g = gm ? obj(gm) : NULL, *b = bm ? obj(bm) : NULL;
    gr_measure_values v;
    gr_measure_values_from(g, b, &v);
    gr_measure_result r;
    gr_err err;
    int64_t now = ts("2026-01-05T11:00:00Z");
    int rc = gr_measure_threshold_eval(t, &v, now - since_s * 1000000000, 0, now, &r, &err);
    if (rc != GR_OK) {
        fail_msg("%s", err.msg);
    }
    json_decref(t);
    json_decref(g);
    json_decref(b);
    return r;
}

static void test_thresholds(void **state)
{
    (void)state;
    gr_measure_result r;
    /* pass (JOB-100) */
    r = eval("{\"busBandwidthGBps\":\"value >= 300\",\"goodputRatio\":\"value > 0.9\"}", GM_FINAL,
             BM_FINAL, 1);
    assert_int_equal(r.verdict, GR_MEASURE_PASS);
    assert_string_equal(r.reason, "ThresholdsMet");
    assert_string_equal(r.message, "All performance thresholds satisfied");
    /* fail: the first violation in sorted key order (JOB-100) */
    r = eval("{\"goodputRatio\":\"value > 0.95\",\"busBandwidthGBps\":\"value >= 400\"}", GM_FINAL,
             BM_FINAL, 1);
    assert_int_equal(r.verdict, GR_MEASURE_FAIL);
    assert_string_equal(r.reason, "ThresholdViolated");
    assert_string_equal(r.message,
                        "Threshold \"busBandwidthGBps\" violated: measured 366.5000, expression: "
                        "value >= 400");
    /* range fail */
    r = eval("{\"avgStepTimeSec\":\"value >= 0.5 && value <= 1.0\"}", GM_FINAL, NULL, 1);
    assert_int_equal(r.verdict, GR_MEASURE_FAIL);
    assert_string_equal(r.message, "Threshold \"avgStepTimeSec\" violated: measured 1.2000, "
                                   "expression: value >= 0.5 && value <= 1.0");
    /* integer literals compare with the double value */
    r = eval("{\"avgTFLOPsPerGPU\":\"value > 400\"}", GM_FINAL, NULL, 1);
    assert_int_equal(r.verdict, GR_MEASURE_PASS);
    /* issue #404: a non-final BandwidthMeasurement is never judged */
    r = eval("{\"busBandwidthGBps\":\"value >= 400\"}", NULL, BM_RUNNING, 60);
    assert_int_equal(r.verdict, GR_MEASURE_PENDING);
    assert_null(r.reason);
    /* ... until measurementTimeout (default 5m) after Succeeded */
    r = eval("{\"busBandwidthGBps\":\"value >= 400\",\"goodputRatio\":\"value > 0.5\"}", NULL,
             BM_RUNNING, 301);
    assert_int_equal(r.verdict, GR_MEASURE_FAIL);
    assert_string_equal(r.reason, "MeasurementTimeout");
    assert_string_equal(r.message, "Measurement data not available within 5m0s for keys: "
                                   "[busBandwidthGBps goodputRatio]");
    /* invalid expression, unknown key, non-bool result */
    r = eval("{\"busBandwidthGBps\":\"value >=\"}", NULL, BM_FINAL, 1);
    assert_int_equal(r.verdict, GR_MEASURE_FAIL);
    assert_string_equal(r.reason, "InvalidThresholdExpression");
    assert_true(strncmp(r.message, "Threshold \"busBandwidthGBps\": ", 30) == 0);
    r = eval("{\"busBandwidthGBps\":\"value + 1.0\"}", NULL, BM_FINAL, 1);
    assert_string_equal(r.reason, "InvalidThresholdExpression");
    if (!strstr(r.message, "must evaluate to bool")) {
        fail_msg("%s", r.message);
    }
    r = eval("{\"busBandwidth\":\"value > 1\"}", NULL, BM_FINAL, 1);
    assert_string_equal(r.reason, "UnknownThresholdKey");
    assert_string_equal(r.message, "Unknown threshold key \"busBandwidth\"");
    /* a GoodputMeasurement value of 0 is missing data, not a measurement */
    r = eval("{\"goodputRatio\":\"value >= 0\"}",
             "{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}],"
             "\"result\":\"0.0\"}}",
             NULL, 10);
    assert_int_equal(r.verdict, GR_MEASURE_PENDING);
    /* no thresholds: pass */
    r = eval("{}", NULL, NULL, 1);
    assert_int_equal(r.verdict, GR_MEASURE_PASS);
}

/* Status floats: "%.4f" trimmed; a value that does not fit 48 bytes in fixed
 * notation (from a hostile log; found by scripts/fuzz as a stack overflow)
 * is written in exponent notation. */
static void test_fmt_float(void **state)
{
    (void)state;
    char b[48];
    gr_measure_fmt_float(3.0, b);
    assert_string_equal(b, "3.0");
    gr_measure_fmt_float(148.25, b);
    assert_string_equal(b, "148.25");
    gr_measure_fmt_float(-0.00001, b);
    assert_string_equal(b, "0.0");
    gr_measure_fmt_float(1e300, b);
    assert_string_equal(b, "1e+300");
    gr_measure_fmt_float(1e42, b);
    assert_true(strlen(b) < sizeof b);
    gr_measure_fmt_float(-1e60, b);
    assert_string_equal(b, "-1e+60");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_re2_refuses),
        cmocka_unit_test(test_re2_accepts),
        cmocka_unit_test(test_gotime),
        cmocka_unit_test(test_builtin_profiles),
        cmocka_unit_test(test_profile_errors),
        cmocka_unit_test(test_worker_strategy),
        cmocka_unit_test(test_reader_partial_lines),
        cmocka_unit_test(test_reader_since_time),
        cmocka_unit_test(test_reader_line_cap),
        cmocka_unit_test(test_nccl_table),
        cmocka_unit_test(test_nccl_wrapped_rows),
        cmocka_unit_test(test_bw_status_roundtrip_and_final_read),
        cmocka_unit_test(test_goodput_megatron_restart),
        cmocka_unit_test(test_goodput_pending_interruption),
        cmocka_unit_test(test_gm_view_and_restart_patch),
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_fmt_float),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
