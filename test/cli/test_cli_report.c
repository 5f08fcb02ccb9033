/*
 * gr_cli_report: the certification report of data/report-input.yaml in
 * text, JSON, JUnit and HTML against data/report.{txt,json,xml,html}
 * (GR_UPDATE_GOLDEN=1 rewrites them); the text fits 100 columns; the
 * JUnit names every node with its failure; catalog list/show.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "gr_cli.h"
#include "gr_file.h"
#include "gr_yaml.h"

static json_t *report;

static int setup(void **state)
{
    (void)state;
    json_t *docs = NULL;
    gr_err err;
    if (gr_yaml_load_file("data/report-input.yaml", 0, &docs, &err) != GR_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    json_t *wfs = json_array(), *jobs = json_array(), *bms = json_array(), *cert = NULL;
    size_t i;
    json_t *d;
    json_array_foreach(docs, i, d)
    {
        const char *k = json_string_value(json_object_get(d, "kind"));
        if (!strcmp(k, "Certification"))
            cert = d;
        else if (!strcmp(k, "Workflow"))
            json_array_append(wfs, d);
        else if (!strcmp(k, "Job"))
            json_array_append(jobs, d);
        else
            json_array_append(bms, d);
    }
    int rc = gr_cli_report_build(cert, wfs, jobs, bms, &report, &err);
    json_decref(wfs);
    json_decref(jobs);
    json_decref(bms);
    json_decref(docs);
    return rc == GR_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(report);
    return 0;
}

static char *render(const char *fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gr_err err;
    assert_int_equal(gr_cli_report_render(report, fmt, f, &err), GR_OK);
    fclose(f);
    return buf;
}

static void golden(const char *got, const char *path)
{
    if (getenv("GR_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(got, f);
        fclose(f);
        return;
    }
    char *want = NULL;
    size_t len = 0;
    gr_err err;
    if (gr_file_read(path, 1 << 20, &want, &len, &err) != GR_OK)
        fail_msg("%s: %s (GR_UPDATE_GOLDEN=1 writes it)", path, err.msg);
    if (strcmp(want, got))
        fail_msg("%s differs; got:\n%s", path, got);
    free(want);
}

static size_t columns(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            c++;
    return c;
}

static void test_text(void **state)
{
    (void)state;
    char *t = render("text");
    golden(t, "data/report.txt");
    /* every line exactly 100 columns: boxes close */
    for (const char *p = t; *p;) {
        const char *e = strchr(p, '\n');
        assert_non_null(e);
        assert_int_equal(columns(p, (size_t)(e - p)), GR_CLI_REPORT_WIDTH);
        p = e + 1;
    }
    assert_non_null(strstr(t, "Nodes: 1 passed, 2 failed"));
    /* JOB-76: ThresholdViolation; the message with the measured value is
     * wrapped onto a second line, not cut off */
    assert_non_null(
        strstr(t, "ThresholdViolation: Threshold \"busBandwidthGBps\" violated: measured"));
    assert_non_null(strstr(t, "212.4000, expression: value >= 350"));
    assert_non_null(strstr(t, "column limit of the text report"));
    assert_non_null(strstr(t, "8 GiB"));
    assert_non_null(strstr(t, "all_reduce_perf: 1 test FAILED"));
    assert_null(strstr(t, "Channel 00/32")); /* only the last 5 log lines */
    free(t);
}

static void test_json(void **state)
{
    (void)state;
    char *t = render("json");
    golden(t, "data/report.json");
    json_t *j = json_loads(t, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "result")), "Failed");
    json_t *bw = json_object_get(json_array_get(json_object_get(j, "categories"), 0), "bandwidth");
    assert_int_equal(json_array_size(bw), 3);
    /* sorted by message size */
    assert_int_equal(json_integer_value(json_object_get(json_array_get(bw, 0), "sizeBytes")), 8);
    json_decref(j);
    free(t);
}

static void test_junit(void **state)
{
    (void)state;
    char *t = render("junit");
    golden(t, "data/report.xml");
    assert_non_null(strstr(t, "<testsuites name=\"nightly\" tests=\"6\" failures=\"2\">"));
    assert_null(strstr(t, "<b>"));
    assert_non_null(strstr(t, "name=\"ip-10-0-1-13\">"));
    free(t);
    gr_err err;
    assert_int_equal(gr_cli_report_render(report, "pdf", stdout, &err), GR_EINVAL);
    assert_string_equal(err.msg, "-o pdf: want text, json, junit or html");
}

/* The HTML report (data/report.html, also the input of cli_html, which
 * checks it in headless Chromium): self-contained, every node a cell with
 * its reason on hover, failed nodes listed, a plot with the threshold. */
static void test_html(void **state)
{
    (void)state;
    char *t = render("html");
    golden(t, "data/report.html");
    assert_null(strstr(t, "http://"));
    assert_null(strstr(t, "https://"));
    assert_null(strstr(t, "src="));
    size_t cells = 0;
    for (const char *p = t; (p = strstr(p, "<div class=\"node")); p++)
        cells++;
    assert_int_equal(cells, 6);
    assert_non_null(strstr(t, "<span class=\"failed-node\">ip-10-0-1-12</span>"));
    assert_non_null(strstr(t, "title=\"ip-10-0-1-13: HardwareFailureDetected XID 79"));
    assert_non_null(strstr(t, "<line class=\"threshold\""));
    assert_non_null(strstr(t, "&lt;b&gt;remote process&lt;/b&gt;"));
    free(t);
}

static json_t *J(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    return j;
}

/* An intra-node run has one BandwidthMeasurement per node: the text report
 * sums them up per size (lowest, median, highest busBW) instead of listing
 * every measurement's row (16 nodes x 32 sizes in the demo). */
static void test_text_many_measurements(void **state)
{
    (void)state;
    json_t *cert =
        J("{\"metadata\":{\"name\":\"c\",\"namespace\":\"n\"},\"status\":{"
          "\"categoryStatuses\":[{\"domain\":\"communication\",\"variant\":"
          "\"nccl-all-reduce\",\"status\":\"Failed\",\"workflowRef\":{\"name\":\"w\"}}]}}");
    json_t *wfs = J("[{\"metadata\":{\"name\":\"w\",\"namespace\":\"n\"}}]");
    json_t *bms = json_array();
    const char *bw[3] = {"480.00", "120.00", "470.00"};
    for (int i = 0; i < 3; i++) {
        json_t *bm = json_pack(
            "{s:{s:s++,s:s,s:[{s:s,s:s,s:s}]},s:{s:[{s:I,s:s,s:s},{s:I,s:s,s:s}]}}", "metadata",
            "name", "j",
            (i == 0   ? "0"
             : i == 1 ? "1"
                      : "2"),
            "-bandwidth", "namespace", "n", "ownerReferences", "kind", "Workflow", "name", "w",
            "uid", "u", "status", "results", "sizeBytes", (json_int_t)1073741824, "busBW", bw[i],
            "algBW", "1.00", "sizeBytes", (json_int_t)8, "busBW", "0.00", "algBW", "0.00");
        assert_non_null(bm);
        json_array_append_new(bms, bm);
    }
    json_t *jobs = json_array(), *rep = NULL;
    gr_err err;
    assert_int_equal(gr_cli_report_build(cert, wfs, jobs, bms, &rep, &err), GR_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(gr_cli_report_render(rep, "text", f, &err), GR_OK);
    fclose(f);
    assert_non_null(strstr(buf, "Bus bandwidth by message size, 3 measurements (busBW GB/s):"));
    assert_non_null(strstr(buf, "          1 GiB        120.00        470.00        480.00"));
    assert_non_null(strstr(buf, "            8 B          0.00          0.00          0.00"));
    assert_null(strstr(buf, "algBW GB/s"));
    free(buf);
    json_decref(rep);
    json_decref(cert);
    json_decref(wfs);
    json_decref(bms);
    json_decref(jobs);
}

/* A long node message of 4-byte characters and no spaces: hard-wrapped
 * within the line buffer onto 3 lines, every line 100 columns. */
static void test_text_wrap_wide(void **state)
{
    (void)state;
    char msg[4001];
    size_t k = 0;
    while (k + 4 < sizeof msg) {
        memcpy(msg + k, "\xF0\x9D\x84\x9E", 4); /* U+1D11E */
        k += 4;
    }
    msg[k] = '\0';
    json_t *cert = J("{\"metadata\":{\"name\":\"c\",\"namespace\":\"n\"},\"status\":{"
                     "\"categoryStatuses\":[{\"domain\":\"d\",\"variant\":\"v\","
                     "\"status\":\"Failed\",\"workflowRef\":{\"name\":\"w\"}}]}}");
    json_t *wfs = json_pack("[{s:{s:s,s:s},s:{s:{s:{s:s,s:s,s:s}}}}]", "metadata", "name", "w",
                            "namespace", "n", "status", "nodeResults", "node-a", "status", "Failed",
                            "reason", "WorkloadFailed", "message", msg);
    assert_non_null(wfs);
    json_t *none = json_array(), *rep = NULL;
    gr_err err;
    assert_int_equal(gr_cli_report_build(cert, wfs, none, none, &rep, &err), GR_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(gr_cli_report_render(rep, "text", f, &err), GR_OK);
    fclose(f);
    assert_non_null(strstr(buf, "node-a"));
    size_t lines = 0;
    for (const char *p = buf; *p;) {
        const char *e = strchr(p, '\n');
        assert_non_null(e);
        assert_int_equal(columns(p, (size_t)(e - p)), GR_CLI_REPORT_WIDTH);
        if (strstr(p, "\xF0\x9D\x84\x9E") && strstr(p, "\xF0\x9D\x84\x9E") < e)
            lines++;
        p = e + 1;
    }
    assert_int_equal(lines, 3);
    free(buf);
    json_decref(rep);
    json_decref(cert);
    json_decref(wfs);
    json_decref(none);
}

/* gr_cli_catalog with argv built from string literals (writable copies). */
static int catalog(FILE *out, FILE *errf, int argc, ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc && i < 16; i++)
        argv[i] = strdup(va_arg(ap, const char *));
    va_end(ap);
    int rc = gr_cli_catalog(argc, argv, out, errf);
    for (int i = 0; i < argc && i < 16; i++)
        free(argv[i]);
    return rc;
}

static void test_catalog_cli(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(catalog(f, stderr, 2, "catalog", "list"), 0);
    fclose(f);
    assert_non_null(strstr(buf, "diagnostics/dcgm-level4"));
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(catalog(f, stderr, 9, "catalog", "show", "communication/nccl-loopback",
                             "--platform", "oci", "--gpu", "l40s", "-o", "json"),
                     0);
    fclose(f);
    json_t *j = json_loads(buf, 0, NULL);
    assert_non_null(j);
    json_decref(j);
    free(buf);
    FILE *devnull = fopen("/dev/null", "w");
    assert_int_equal(catalog(devnull, devnull, 3, "catalog", "show", "x/y"), 1);
    assert_int_equal(catalog(devnull, devnull, 1, "catalog"), 2);
    fclose(devnull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_junit),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_text_many_measurements),
        cmocka_unit_test(test_text_wrap_wide),
        cmocka_unit_test(test_catalog_cli),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
