/*
 * oom_base.c — allocation-failure tests for gr_base (test `base_oom`,
 * registered in oom.cmake with the failure-injection allocator).
 *
 * The project promises that resource exhaustion never crashes, leaks or
 * corrupts. For every operation below and for N = 1, 2, 3, … the Nth
 * allocation fails (once, then again with memory staying exhausted from the
 * Nth on) until the operation runs without meeting a failure. Each round
 * asserts: the call returns GR_OK or GR_ENOMEM (never crashes), its output or
 * target is valid (unchanged on failure where the header promises it, equal
 * to the reference result on success), and — judged by LeakSanitizer in the
 * ASan build (detect_leaks=1) — nothing leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gr_base64.h"
#include "gr_buf.h"
#include "gr_file.h"
#include "gr_json.h"
#include "gr_log.h"
#include "gr_yaml.h"
#include "oom_inject.h"

/* Bytes for the base64 round (its encoding is larger than a buffer's first
 * allocation, so the decoder has to grow one). */
static const unsigned char pod_json_bytes[300] = {1, 2, 3, 250, 251, 0, 7};

/* No operation here needs anywhere near this many allocations. */
#define MAX_ROUNDS 100000L

static json_t *load(const char *s)
{
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    assert_non_null(j);
    return j;
}

/* Run `round(n, sticky, ctx)` for N = 1.. in both modes. round() returns
 * true once an operation completed without an injected failure. */
typedef bool (*round_fn)(long n, bool sticky, void *ctx);

static void each_failure(round_fn round, void *ctx)
{
    for (int mode = 0; mode < 2; mode++) {
        long n;
        for (n = 1; n < MAX_ROUNDS; n++)
            if (round(n, mode == 1, ctx))
                break;
        assert_true(n < MAX_ROUNDS);
        assert_true(n > 1); /* at least one failure was injected */
    }
}

/* ------------------------------------------------------------------ gr_buf */

static bool buf_round(long n, bool sticky, void *ctx)
{
    (void)ctx;
    char big[700];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    gr_buf b = GR_BUF_INIT((size_t)64 << 20);
    int rc = GR_OK;
    gr_oom_arm(n, sticky);
    /* Each append either succeeds or leaves the buffer exactly as it was. */
    for (int i = 0; i < 40 && rc == GR_OK; i++) {
        size_t before = b.len;
        static char snap[65536]; /* no allocation here: it would be counted */
        assert_true(before < sizeof snap);
        if (before)
            memcpy(snap, b.data, before);
        switch (i % 4) {
        case 0:
            rc = gr_buf_puts(&b, "abcdefghij");
            break;
        case 1:
            rc = gr_buf_putc(&b, '-');
            break;
        case 2:
            rc = gr_buf_printf(&b, "%d:%s", i, big); /* > 256: the reserve path */
            break;
        default:
            rc = gr_buf_append(&b, big, 100);
            break;
        }
        if (rc != GR_OK) {
            bool injected = gr_oom_disarm();
            assert_true(injected);
            assert_int_equal(rc, GR_ENOMEM);
            assert_int_equal(b.len, before);
            if (before)
                assert_memory_equal(b.data, snap, before);
            assert_true(b.data == NULL || b.data[b.len] == '\0');
        }
    }
    size_t len = 0;
    char *s = gr_buf_steal(&b, &len);
    bool injected = gr_oom_disarm() || rc != GR_OK;
    if (s) {
        assert_int_equal(strlen(s), len);
        free(s);
    } else {
        assert_true(injected); /* steal of an empty buffer may need calloc */
    }
    gr_buf_free(&b);
    return !injected;
}

static void test_buf(void **state)
{
    (void)state;
    each_failure(buf_round, NULL);
}

/* gr_buf_steal() of an empty buffer allocates "" and must not lose the
 * buffer on failure. */
static void test_buf_steal_empty(void **state)
{
    (void)state;
    gr_buf b = GR_BUF_INIT(16);
    gr_oom_arm(1, false);
    char *s = gr_buf_steal(&b, NULL);
    assert_true(gr_oom_disarm());
    assert_null(s);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    gr_buf_free(&b);
}

/* ------------------------------------------------------- gr_file, base64 */

static bool file_round(long n, bool sticky, void *ctx)
{
    const char *path = ctx;
    char *s = (char *)1;
    size_t len = 0;
    gr_err err;
    gr_oom_arm(n, sticky);
    int rc = gr_file_read(path, 1 << 20, &s, &len, &err);
    bool injected = gr_oom_disarm();
    if (rc == GR_OK) {
        assert_int_equal(len, 5000);
        assert_int_equal(strlen(s), 5000);
        free(s);
    } else {
        assert_true(injected);
        assert_int_equal(rc, GR_ENOMEM);
        assert_int_equal(err.code, GR_ENOMEM);
        assert_null(s);
    }
    return !injected;
}

static void test_file_read(void **state)
{
    (void)state;
    char path[] = "/tmp/gr-oom-file-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char data[5000];
    memset(data, 'q', sizeof data);
    assert_int_equal(write(fd, data, sizeof data), (ssize_t)sizeof data);
    close(fd);
    each_failure(file_round, path);
    unlink(path);
}

static bool base64_round(long n, bool sticky, void *ctx)
{
    (void)ctx;
    gr_buf e = GR_BUF_INIT(1 << 20), d = GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_buf_puts(&d, ""), GR_OK); /* d's first allocation is not counted */
    gr_oom_arm(n, sticky);
    int rc = gr_base64_encode(pod_json_bytes, sizeof pod_json_bytes, &e);
    if (rc == GR_OK)
        rc = gr_base64_decode(e.data, e.len, &d, NULL);
    bool injected = gr_oom_disarm();
    if (rc == GR_OK) {
        assert_int_equal(d.len, sizeof pod_json_bytes);
        assert_memory_equal(d.data, pod_json_bytes, d.len);
    } else {
        assert_true(injected);
        assert_int_equal(rc, GR_ENOMEM);
        assert_int_equal(d.len, 0); /* unchanged */
    }
    gr_buf_free(&e);
    gr_buf_free(&d);
    return !injected;
}

static void test_base64(void **state)
{
    (void)state;
    each_failure(base64_round, NULL);
}

/* -------------------------------------------------------------- gr_json_parse */

static const char *pod_json =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"train-0\","
    "\"namespace\":\"ml\",\"labels\":{\"app\":\"train\",\"tier\":\"gpu\"},"
    "\"annotations\":{\"nvsentinel.nvidia.com/preflight-checks\":\"nccl,dcgm\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"nvcr.io/x:1\","
    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":8}},\"env\":[{\"name\":\"A\","
    "\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2.5e3\"}]}],\"tolerations\":[],"
    "\"nodeSelector\":{\"gpu\":\"h100\"}},\"status\":{\"phase\":\"Pending\","
    "\"ok\":true,\"none\":null,\"ratio\":0.25}}";

/* Every string token here is shorter than 16 bytes. jansson 2.14 copies a
 * token into a buffer that starts at 16 bytes and ignores a failure to grow
 * it (lex_save()), silently dropping a byte of a longer string when that
 * allocation fails: an upstream bug no caller can detect. The parse tests
 * keep to short tokens so they judge our code, not that one. */
static const char *short_json =
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"train-0\",\"labels\":{\"app\":\"x\"}},"
    "\"spec\":{\"c\":[{\"n\":\"main\",\"gpu\":8},{\"n\":\"b\",\"v\":\"2.5e3\"}],"
    "\"t\":[]},\"status\":{\"ok\":true,\"none\":null,\"ratio\":0.25}}";

struct parse_ctx {
    json_t *want;
};

static bool parse_round(long n, bool sticky, void *vctx)
{
    struct parse_ctx *c = vctx;
    json_t *out = NULL;
    gr_err err;
    gr_oom_arm(n, sticky);
    int rc = gr_json_parse(short_json, strlen(short_json), 0, "pod.json", &out, &err);
    bool injected = gr_oom_disarm();
    if (rc == GR_OK) {
        assert_non_null(out);
        assert_true(gr_json_equal(out, c->want));
        json_decref(out);
    } else {
        assert_true(injected);
        assert_int_equal(rc, GR_ENOMEM);
        assert_int_equal(err.code, GR_ENOMEM);
    }
    return !injected;
}

static void test_json_parse(void **state)
{
    (void)state;
    struct parse_ctx c = {load(short_json)};
    each_failure(parse_round, &c);
    json_decref(c.want);
}

/* ------------------------------------------------------- JSON Patch (6902) */

struct patch_ctx {
    json_t *doc;   /* the target; must equal `orig` after every failure */
    json_t *orig;  /* deep copy of the target before patching */
    json_t *patch; /* the patch */
    json_t *want;  /* the reference result */
};

static bool patch_round(long n, bool sticky, void *vctx)
{
    struct patch_ctx *c = vctx;
    json_t *doc = json_deep_copy(c->orig);
    assert_non_null(doc);
    json_t *before = doc;
    gr_err err;
    gr_oom_arm(n, sticky);
    int rc = gr_json_patch_apply(&doc, c->patch, &err);
    bool injected = gr_oom_disarm();
    if (rc == GR_OK) {
        assert_true(gr_json_equal(doc, c->want));
    } else {
        assert_true(injected);
        assert_int_equal(rc, GR_ENOMEM);
        /* Atomicity: the target document is untouched on failure. */
        assert_ptr_equal(doc, before);
        assert_true(gr_json_equal(doc, c->orig));
    }
    json_decref(doc);

    /* The copying variant never touches its input and returns no value on
     * failure. */
    json_t *out = (json_t *)(uintptr_t)1;
    gr_oom_arm(n, sticky);
    rc = gr_json_patch_apply_copy(c->orig, c->patch, &out, &err);
    bool injected2 = gr_oom_disarm();
    if (rc == GR_OK) {
        assert_true(gr_json_equal(out, c->want));
        json_decref(out);
    } else {
        assert_true(injected2);
        assert_int_equal(rc, GR_ENOMEM);
    }
    return !injected && !injected2;
}

static void test_json_patch(void **state)
{
    (void)state;
    struct patch_ctx c;
    c.orig = load(pod_json);
    c.patch = load(
        "[{\"op\":\"test\",\"path\":\"/metadata/name\",\"value\":\"train-0\"},"
        "{\"op\":\"add\",\"path\":\"/metadata/labels/new\",\"value\":{\"a\":[1,2,{\"b\":null}]}},"
        "{\"op\":\"add\",\"path\":\"/spec/containers/0/env/-\",\"value\":{\"name\":\"C\"}},"
        "{\"op\":\"add\",\"path\":\"/spec/containers/0/env/0\",\"value\":{\"name\":\"Z\"}},"
        "{\"op\":\"replace\",\"path\":\"/status/phase\",\"value\":\"Running\"},"
        "{\"op\":\"remove\",\"path\":\"/status/none\"},"
        "{\"op\":\"copy\",\"from\":\"/metadata/labels\",\"path\":\"/spec/nodeSelector/copied\"},"
        "{\"op\":\"move\",\"from\":\"/metadata/annotations\",\"path\":\"/status/moved\"},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"k~1\":\"v\"}},"
        "{\"op\":\"test\",\"path\":\"/status/moved/nvsentinel.nvidia.com~1preflight-checks\","
        "\"value\":\"nccl,dcgm\"}]");
    json_t *want = json_deep_copy(c.orig);
    gr_err err;
    assert_int_equal(gr_json_patch_apply(&want, c.patch, &err), GR_OK);
    c.want = want;
    c.doc = NULL;
    each_failure(patch_round, &c);

    /* A patch replacing the root. */
    json_decref(c.patch);
    json_decref(c.want);
    c.patch = load("[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"x\":[\"y\",{\"z\":1}]}}]");
    c.want = load("{\"x\":[\"y\",{\"z\":1}]}");
    each_failure(patch_round, &c);

    json_decref(c.patch);
    json_decref(c.want);
    json_decref(c.orig);
}

/* Patch building under failure: the builder steals `value` also on failure
 * (LSan reports it otherwise) and leaves the patch a valid array. */
static bool patch_build_round(long n, bool sticky, void *ctx)
{
    (void)ctx;
    json_t *patch = json_array();
    assert_non_null(patch);
    gr_err err;
    gr_oom_arm(n, sticky);
    int rc = gr_json_patch_add(patch, "/a/b", json_pack("{s:[i,s]}", "k", 1, "two"), &err);
    if (rc == GR_OK)
        rc = gr_json_patch_remove(patch, "/a/c", &err);
    if (rc == GR_OK)
        rc = gr_json_patch_move(patch, "/x", "/y~1z", &err);
    if (rc == GR_OK)
        rc = gr_json_patch_test(patch, "/t", json_string("v"), &err);
    bool injected = gr_oom_disarm();
    assert_true(json_is_array(patch));
    if (rc == GR_OK) {
        assert_int_equal(json_array_size(patch), 4);
    } else {
        assert_true(injected);
        /* json_pack() yields NULL on ENOMEM: the builder sees value NULL. */
        assert_true(rc == GR_ENOMEM || rc == GR_EINVAL);
        assert_true(json_array_size(patch) < 4);
    }
    json_decref(patch);
    return !injected;
}

static void test_json_patch_build(void **state)
{
    (void)state;
    each_failure(patch_build_round, NULL);
}

/* ------------------------------------------------- JSON Merge Patch (7386) */

struct merge_ctx {
    json_t *orig, *patch, *want, *modified;
};

static bool merge_round(long n, bool sticky, void *vctx)
{
    struct merge_ctx *c = vctx;
    json_t *target = json_deep_copy(c->orig);
    assert_non_null(target);
    json_t *before = target;
    gr_err err;
    gr_oom_arm(n, sticky);
    int rc = gr_json_merge_patch_apply(&target, c->patch, &err);
    bool injected = gr_oom_disarm();
    if (rc == GR_OK) {
        assert_true(gr_json_equal(target, c->want));
    } else {
        assert_true(injected);
        assert_int_equal(rc, GR_ENOMEM);
        assert_ptr_equal(target, before); /* "on failure *target is untouched" */
        assert_true(gr_json_equal(target, c->orig));
    }
    json_decref(target);

    json_t *mp = NULL;
    gr_oom_arm(n, sticky);
    rc = gr_json_merge_patch_create(c->orig, c->modified, &mp, &err);
    bool injected2 = gr_oom_disarm();
    if (rc == GR_OK) {
        /* The created patch turns orig into modified. */
        json_t *t = json_deep_copy(c->orig);
        assert_int_equal(gr_json_merge_patch_apply(&t, mp, &err), GR_OK);
        assert_true(gr_json_equal(t, c->modified));
        json_decref(t);
        json_decref(mp);
    } else {
        assert_true(injected2);
        assert_int_equal(rc, GR_ENOMEM);
    }
    return !injected && !injected2;
}

static void test_merge_patch(void **state)
{
    (void)state;
    struct merge_ctx c;
    c.orig = load(pod_json);
    c.patch = load("{\"metadata\":{\"labels\":{\"tier\":null,\"new\":\"x\"},\"annotations\":null},"
                   "\"spec\":{\"nodeSelector\":{\"gpu\":\"a100\",\"zone\":{\"a\":[1,2]}}},"
                   "\"status\":{\"phase\":\"Running\",\"deep\":{\"a\":{\"b\":{\"c\":1}}}}}");
    c.want = json_deep_copy(c.orig);
    gr_err err;
    assert_int_equal(gr_json_merge_patch_apply(&c.want, c.patch, &err), GR_OK);
    json_t *mod = json_deep_copy(c.want);
    /* merge_patch_create cannot express null members: drop status.none. */
    json_object_del(json_object_get(mod, "status"), "none");
    json_array_append_new(
        json_object_get(
            json_array_get(json_object_get(json_object_get(mod, "spec"), "containers"), 0), "env"),
        json_pack("{s:s}", "name", "D"));
    c.modified = mod;
    each_failure(merge_round, &c);
    json_decref(c.orig);
    json_decref(c.patch);
    json_decref(c.want);
    json_decref(c.modified);
}

/* ------------------------------------------------------------ gr_yaml */

static const char *yaml_multi =
    "# defaults shared by both documents\n"
    "base: &base\n"
    "  image: nvcr.io/nvidia/pytorch:24.01\n"
    "  resources: &res {limits: {nvidia.com/gpu: 8}, requests: {cpu: '4'}}\n"
    "  args: [--a, \"--b\", 3, 0x10, 1.5e3, ~, true]\n"
    "job:\n"
    "  <<: *base\n"
    "  name: train\n"
    "  copies: [*res, *res]\n"
    "---\n"
    "# empty document follows\n"
    "---\n"
    "kind: ConfigMap\n"
    "data:\n"
    "  script: |\n"
    "    #!/bin/sh\n"
    "    echo 'hi'\n"
    "  folded: >\n"
    "    a\n"
    "    b\n"
    "  quoted: 'it''s'\n"
    "list: &l\n"
    "  - &item {k: v, n: 1}\n"
    "  - *item\n"
    "again: *l\n"
    "merged:\n"
    "  <<: [*item, {z: 2}]\n"
    "  k: override\n"
    "...\n";

struct yaml_ctx {
    json_t *want;
};

static bool yaml_round(long n, bool sticky, void *vctx)
{
    struct yaml_ctx *c = vctx;
    json_t *docs = (json_t *)(uintptr_t)1;
    gr_err err;
    gr_oom_arm(n, sticky);
    int rc = gr_yaml_load_all(yaml_multi, strlen(yaml_multi), "multi.yaml", &docs, &err);
    bool injected = gr_oom_disarm();
    if (rc == GR_OK) {
        assert_true(gr_json_equal(docs, c->want));
        json_decref(docs);
    } else {
        assert_true(injected);
        if (rc != GR_ENOMEM)
            fail_msg("N=%ld%s: rc %s: %s", n, sticky ? " (sticky)" : "", gr_rc_name(rc), err.msg);
        assert_null(docs); /* "On error *out is set to NULL." */
    }
    return !injected;
}

static void test_yaml_load_all(void **state)
{
    (void)state;
    struct yaml_ctx c;
    gr_err err;
    assert_int_equal(gr_yaml_load_all(yaml_multi, strlen(yaml_multi), "multi.yaml", &c.want, &err),
                     GR_OK);
    assert_int_equal(json_array_size(c.want), 2);
    each_failure(yaml_round, &c);
    json_decref(c.want);
}

/* JSON input takes the jansson fast path of the YAML loader. */
static bool yaml_json_round(long n, bool sticky, void *vctx)
{
    struct yaml_ctx *c = vctx;
    json_t *docs = NULL;
    gr_err err;
    gr_oom_arm(n, sticky);
    int rc = gr_yaml_load_all(short_json, strlen(short_json), "pod.json", &docs, &err);
    bool injected = gr_oom_disarm();
    if (rc == GR_OK && !gr_json_equal(docs, c->want)) {
        char *a = json_dumps(docs, JSON_SORT_KEYS), *b = json_dumps(c->want, JSON_SORT_KEYS);
        fail_msg("N=%ld: got %s\nwant %s", n, a, b);
    }
    if (rc == GR_OK) {
        assert_true(gr_json_equal(docs, c->want));
        json_decref(docs);
    } else {
        assert_true(injected);
        assert_int_equal(rc, GR_ENOMEM);
        assert_null(docs);
    }
    return !injected;
}

static void test_yaml_json_input(void **state)
{
    (void)state;
    struct yaml_ctx c;
    c.want = json_pack("[O]", load(short_json));
    json_decref(json_array_get(c.want, 0)); /* load()'s reference */
    each_failure(yaml_json_round, &c);
    json_decref(c.want);
}

/* ------------------------------------------------------------ gr_log */

/* Every line gr_log writes is a complete JSON object with all its fields; a
 * line that cannot be built is dropped, never written half. */
static bool log_round(long n, bool sticky, void *ctx)
{
    int fd = *(int *)ctx;
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    gr_oom_arm(n, sticky);
    gr_log(GR_LOG_ERROR, "oomtest", "Fatal error", GR_KV_STR("error", "out of memory"),
           GR_KV_INT("count", 3), GR_KV_DOUBLE("ratio", 0.5), GR_KV_BOOL("ok", 1),
           GR_KV_STR("nul", NULL), GR_KV_STR("bad", "\xff\xfe"), GR_KV_END);
    bool injected = gr_oom_disarm();
    off_t size = lseek(fd, 0, SEEK_END);
    assert_true(size >= 0);
    if (size > 0) {
        char *text = calloc(1, (size_t)size + 1);
        assert_non_null(text);
        assert_int_equal(pread(fd, text, (size_t)size, 0), size);
        assert_int_equal(text[size - 1], '\n');
        json_error_t je;
        json_t *o = json_loads(text, 0, &je);
        assert_non_null(o);
        static const char *const keys[] = {"time", "level", "msg", "error",  "count",  "ratio",
                                           "ok",   "nul",   "bad", "module", "version"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            if (!json_object_get(o, keys[i]))
                fail_msg("N=%ld%s: line lacks \"%s\": %s", n, sticky ? " (sticky)" : "", keys[i],
                         text);
        }
        assert_string_equal(json_string_value(json_object_get(o, "level")), "ERROR");
        /* Invalid UTF-8 is written as U+FFFD, as slog does. */
        assert_string_equal(json_string_value(json_object_get(o, "bad")),
                            "\xef\xbf\xbd\xef\xbf\xbd");
        json_decref(o);
        free(text);
    } else {
        assert_true(injected); /* only an allocation failure drops the line */
    }
    return !injected;
}

static void test_log(void **state)
{
    (void)state;
    char path[] = "/tmp/gr_oom_log_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    gr_log_set_fd(fd);
    gr_log_set_level(GR_LOG_DEBUG);
    each_failure(log_round, &fd);
    gr_log_set_fd(-1);
    close(fd);
}

int main(void)
{
    gr_oom_install_jansson();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_buf_steal_empty),
        cmocka_unit_test(test_file_read),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_json_parse),
        cmocka_unit_test(test_json_patch),
        cmocka_unit_test(test_json_patch_build),
        cmocka_unit_test(test_merge_patch),
        cmocka_unit_test(test_yaml_load_all),
        cmocka_unit_test(test_yaml_json_input),
        cmocka_unit_test(test_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
