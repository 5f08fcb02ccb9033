/* Unit test of gr_kube_pb (no cluster): bodies the real kube-apiserver
 * 1.36 served as protobuf (test/kube/data_pb/WHAT.pb, recorded by kube_it_pb
 * with GR_KUBE_PB_DUMP) decode to exactly the JSON it served for the same
 * objects (WHAT.json); malformed input gets an error, never a crash. Exits
 * 77 when the build has no protos (scripts/check-skips fails CI then). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_kube_pb.h"

static const char *data_dir;

static unsigned char *slurp(const char *name, size_t *len)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", data_dir, name);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    unsigned char *b = malloc(1 << 20);
    assert_non_null(b);
    *len = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static void check_pair(const char *what)
{
    char n[256];
    size_t plen, jlen;
    snprintf(n, sizeof n, "%s.pb", what);
    unsigned char *pb = slurp(n, &plen);
    snprintf(n, sizeof n, "%s.json", what);
    unsigned char *js = slurp(n, &jlen);
    json_t *want = json_loadb((const char *)js, jlen, 0, NULL);
    assert_non_null(want);
    json_t *got = NULL;
    gr_err err;
    int rc = gr_kube_pb_decode(pb, plen, 1 << 20, &got, &err);
    if (rc != GR_OK)
        fail_msg("%s: %s", what, err.msg);
    if (!json_equal(want, got)) {
        char *s = json_dumps(got, JSON_SORT_KEYS);
        fail_msg("%s: decoded %s", what, s);
    }
    json_decref(want);
    json_decref(got);
    free(pb);
    free(js);
}

static void test_real_objects_equal_json(void **state)
{
    (void)state;
    static const char *const kinds[] = {"Pod",    "PodList",    "ConfigMap", "ConfigMapList",
                                        "Secret", "SecretList", "Event",     "EventList",
                                        "Lease",  "LeaseList",  "Namespace", "NamespaceList",
                                        "Node",   "NodeList"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        check_pair(kinds[i]);
}

static void test_watch_event(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = slurp("WatchEvent.pb", &len);
    json_t *ev = NULL;
    gr_err err;
    assert_int_equal(gr_kube_pb_decode_watch_event(b, len, 1 << 20, &ev, &err), GR_OK);
    assert_string_equal(json_string_value(json_object_get(ev, "type")), "ADDED");
    json_t *obj = json_object_get(ev, "object");
    assert_string_equal(json_string_value(json_object_get(obj, "kind")), "Pod");
    assert_string_equal(json_string_value(json_object_get(obj, "apiVersion")), "v1");
    json_decref(ev);
    /* a frame over the cap */
    assert_int_equal(gr_kube_pb_decode_watch_event(b, len, len - 1, &ev, &err), GR_ETOOBIG);
    free(b);
}

/* Through a cache (the informer's watch), an event decodes to the same JSON,
 * and a repeated managedFields[].fieldsV1 is the same tree, by reference. */
static void test_watch_event_cached(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = slurp("WatchEvent.pb", &len);
    json_t *plain = NULL, *c1 = NULL, *c2 = NULL;
    gr_err err;
    gr_kube_pb_cache *pc = gr_kube_pb_cache_new();
    assert_non_null(pc);
    assert_int_equal(gr_kube_pb_decode_watch_event(b, len, 1 << 20, &plain, &err), GR_OK);
    assert_int_equal(gr_kube_pb_decode_watch_event_cached(b, len, 1 << 20, pc, &c1, &err), GR_OK);
    assert_int_equal(gr_kube_pb_decode_watch_event_cached(b, len, 1 << 20, pc, &c2, &err), GR_OK);
    assert_true(json_equal(plain, c1));
    assert_true(json_equal(plain, c2));
    json_t *mf1 = json_object_get(json_object_get(json_object_get(c1, "object"), "metadata"),
                                  "managedFields");
    json_t *mf2 = json_object_get(json_object_get(json_object_get(c2, "object"), "metadata"),
                                  "managedFields");
    assert_true(json_array_size(mf1) > 0);
    json_t *f1 = json_object_get(json_array_get(mf1, 0), "fieldsV1");
    json_t *f2 = json_object_get(json_array_get(mf2, 0), "fieldsV1");
    assert_true(json_is_object(f1));
    assert_ptr_equal(f1, f2);
    json_decref(c1);
    gr_kube_pb_cache_free(pc); /* the shared tree lives on in c2 */
    assert_true(json_equal(plain, c2));
    json_decref(c2);
    json_decref(plain);
    free(b);
}

/* runtime.Unknown read in place: a typeMeta split over two occurrences
 * merges, a content encoding is refused, a wrong wire type is malformed. */
static void test_envelope(void **state)
{
    (void)state;
    /* k8s\0, typeMeta{apiVersion "v1"}, typeMeta{kind "Namespace"}, raw{} */
    unsigned char m[64];
    size_t n = 0;
    memcpy(m, "k8s", 4);
    n = 4;
    const unsigned char tm1[] = {0x0a, 4, 0x0a, 2, 'v', '1'};
    const unsigned char tm2[] = {0x0a, 11, 0x12, 9, 'N', 'a', 'm', 'e', 's', 'p', 'a', 'c', 'e'};
    const unsigned char raw[] = {0x12, 0};
    memcpy(m + n, tm1, sizeof tm1);
    n += sizeof tm1;
    memcpy(m + n, tm2, sizeof tm2);
    n += sizeof tm2;
    memcpy(m + n, raw, sizeof raw);
    n += sizeof raw;
    json_t *o = NULL;
    gr_err err;
    assert_int_equal(gr_kube_pb_decode(m, n, 1 << 20, &o, &err), GR_OK);
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "Namespace");
    assert_string_equal(json_string_value(json_object_get(o, "apiVersion")), "v1");
    json_decref(o);
    /* contentEncoding "gzip" */
    const unsigned char enc[] = {0x1a, 4, 'g', 'z', 'i', 'p'};
    memcpy(m + n, enc, sizeof enc);
    assert_int_equal(gr_kube_pb_decode(m, n + sizeof enc, 1 << 20, &o, &err), GR_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "gzip"));
    /* raw with wire type 0 */
    const unsigned char bad[] = {0x10, 1};
    memcpy(m + n, bad, sizeof bad);
    assert_int_equal(gr_kube_pb_decode(m, n + sizeof bad, 1 << 20, &o, &err), GR_EPARSE);
}

static void test_framing(void **state)
{
    (void)state;
    const unsigned char f[] = {0, 0, 0, 3, 'a', 'b', 'c', 0, 0};
    size_t n = 0;
    gr_err err;
    assert_int_equal(gr_kube_pb_frame(f, 3, 100, &n, &err), 0);
    assert_int_equal(gr_kube_pb_frame(f, 6, 100, &n, &err), 0);
    assert_int_equal(gr_kube_pb_frame(f, 7, 100, &n, &err), 1);
    assert_int_equal(n, 3);
    const unsigned char big[] = {0x7f, 0xff, 0xff, 0xff};
    assert_int_equal(gr_kube_pb_frame(big, 4, 1 << 20, &n, &err), GR_ETOOBIG);
    assert_non_null(strstr(err.msg, "cap"));
}

/* Every truncation of a real body is an error or a (partial) object; with
 * the magic cut off it is an error naming the magic. */
static void test_malformed(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = slurp("Pod.pb", &len);
    json_t *o;
    gr_err err;
    for (size_t i = 0; i < len; i++) {
        o = NULL;
        int rc = gr_kube_pb_decode(b, i, 1 << 20, &o, &err);
        if (rc == GR_OK)
            json_decref(o);
        else
            assert_true(rc == GR_EPARSE || rc == GR_EUNSUPPORTED);
    }
    assert_int_equal(gr_kube_pb_decode(b + 1, len - 1, 1 << 20, &o, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "magic"));
    assert_int_equal(gr_kube_pb_decode(b, len, 10, &o, &err), GR_ETOOBIG);
    /* an unknown kind: the envelope of an apps/v1 Deployment */
    static const unsigned char dep[] = {'k', '8', 's', 0,   0x0a, 0x15, 0x0a, 0x07, 'a', 'p',
                                        'p', 's', '/', 'v', '1',  0x12, 0x0a, 'D',  'e', 'p',
                                        'l', 'o', 'y', 'm', 'e',  'n',  't',  0x12, 0x00};
    assert_int_equal(gr_kube_pb_decode(dep, sizeof dep, 1 << 20, &o, &err), GR_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "Deployment"));
    free(b);
}

static void test_supports(void **state)
{
    (void)state;
    assert_true(gr_kube_pb_supports("v1", "pods"));
    assert_true(gr_kube_pb_supports("coordination.k8s.io/v1", "leases"));
    assert_false(gr_kube_pb_supports("apps/v1", "deployments"));
    assert_false(gr_kube_pb_supports("gpuready.io/v1alpha1", "jobs"));
}

int main(int argc, char **argv)
{
    if (!gr_kube_pb_enabled()) {
        printf("SKIPPED: built without the Kubernetes protos (scripts/fetch-k8s-protos; "
               "-DGR_KUBE_PROTOBUF=ON)\n");
        return 77;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_objects_equal_json),
        cmocka_unit_test(test_watch_event),
        cmocka_unit_test(test_watch_event_cached),
        cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_framing),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_supports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
