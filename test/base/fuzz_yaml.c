/*
 * fuzz_yaml.c — libFuzzer target for gr_yaml_load_all().
 *
 * Invariant checked on success: every document serialises to JSON and parses
 * back (gr_json_parse) to an equal value, i.e. the loader only ever produces
 * well-formed JSON (valid UTF-8, no NaN/Inf, no duplicate keys).
 *
 * Run: build/asan/test/base/fuzz_yaml -max_total_time=60 test/base/corpus/yaml
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gr_buf.h"
#include "gr_json.h"
#include "gr_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *docs = NULL;
    gr_err err;
    int rc = gr_yaml_load_all((const char *)data, size, "fuzz", &docs, &err);
    if (rc != GR_OK) {
        if (docs != NULL || err.code != rc || err.msg[0] == 0)
            abort(); /* errors must be reported, and nothing returned */
        return 0;
    }
    gr_buf b = GR_BUF_INIT((size_t)64 << 20);
    if (gr_json_dump_buf(docs, JSON_COMPACT, &b) == GR_OK) {
        json_t *back = NULL;
        if (gr_json_parse(b.data, b.len, 0, "roundtrip", &back, &err) == GR_OK) {
            if (!gr_json_equal(docs, back)) {
                fprintf(stderr, "round trip mismatch: %s\n", b.data);
                abort();
            }
            json_decref(back);
        } else if (err.code != GR_ETOOBIG) {
            fprintf(stderr, "loader produced invalid JSON: %s\n%s\n", err.msg, b.data);
            abort();
        }
    }
    gr_buf_free(&b);
    json_decref(docs);
    return 0;
}
