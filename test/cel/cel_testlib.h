/*
 * cel_testlib.h — helpers shared by the CEL conformance and differential
 * tests (test code only, not part of the product).
 */
#ifndef GR_CEL_TESTLIB_H
#define GR_CEL_TESTLIB_H

#include <stddef.h>

#include <jansson.h>

#include "gr_cel.h"

/*
 * A conformance-format VALUE ({"int64": "5"}, {"double": "1.5"}, {"list": [...]},
 * ...; see ../shared/conformance/cel/README.md) to a gr_cel_val. Returns 0 and
 * a value the caller releases, or -1 with *why (static string) when the value
 * is not representable (protobuf messages other than Duration/Timestamp,
 * enums). Doubles may be JSON numbers or strings parsed with strtod ("NaN",
 * "-Infinity", "-0.0", "9223372036854776000"). Two local kinds written by
 * cel_diff_gen.js: {"duration_ns": "123"} and
 * {"timestamp": {"seconds": "1", "nanos": 5}}.
 */
int gr_celtest_val_from(json_t *v, gr_cel_val *out, const char **why);

/* Strict equality: kinds must match exactly (1, 1u and 1.0 differ); NaN
 * equals NaN; -0.0 differs from 0.0; maps compare without regard to order. */
int gr_celtest_same(const gr_cel_val *a, const gr_cel_val *b);

/* The node_modules directory holding the npm test peers ($GR_NODE_MODULES or
 * $GR_SOURCE_DIR/test/node/node_modules), written into buf; NULL and *why
 * when @bufbuild/cel or @bufbuild/cel-spec is missing. */
const char *gr_celtest_node_modules(char *buf, size_t bufsz, const char **why);

/* Run `node argv...` ($GR_NODE or node from PATH) and wait. 0 on success,
 * 77 with *why when node cannot be started (the caller skips), -1 with *why
 * when it fails. argv is NULL-terminated, at most 14 entries. */
int gr_celtest_run_node(char *const argv[], const char **why);

#endif
