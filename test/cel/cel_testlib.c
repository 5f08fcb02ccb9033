/*
 * cel_testlib.c — helpers shared by the CEL conformance and differential
 * tests: the conformance JSON VALUE format (../shared/conformance/cel/README.md)
 * to gr_cel_val, strict value comparison, and running node test peers.
 */
#include "cel_testlib.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;

/* ---- JSON VALUE → gr_cel_val ---- */

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

static size_t b64_decode(const char *s, unsigned char *out)
{
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;
    for (; *s && *s != '='; s++) {
        int v = b64val((unsigned char)*s);
        if (v < 0)
            continue;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return n;
}

static int type_kind(const char *name)
{
    static const char *const names[] = {"null_type",
                                        "bool",
                                        "int",
                                        "uint",
                                        "double",
                                        "string",
                                        "bytes",
                                        "list",
                                        "map",
                                        "type",
                                        "google.protobuf.Duration",
                                        "google.protobuf.Timestamp"};
    static const int kinds[] = {GR_CEL_NULL,   GR_CEL_BOOL,   GR_CEL_INT,      GR_CEL_UINT,
                                GR_CEL_DOUBLE, GR_CEL_STRING, GR_CEL_BYTES,    GR_CEL_LIST,
                                GR_CEL_MAP,    GR_CEL_TYPE,   GR_CEL_DURATION, GR_CEL_TIMESTAMP};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(names[i], name) == 0)
            return kinds[i];
    return -1;
}

/* Returns 0 and a value, or -1 (with *why) when not representable. */
int gr_celtest_val_from(json_t *v, gr_cel_val *out, const char **why)
{
    const char *key;
    json_t *x;
    memset(out, 0, sizeof(*out));
    json_object_foreach(v, key, x)
    {
        if (strcmp(key, "null") == 0) {
            *out = gr_cel_val_null();
        } else if (strcmp(key, "bool") == 0) {
            *out = gr_cel_val_bool(json_is_true(x));
        } else if (strcmp(key, "int64") == 0) {
            *out = gr_cel_val_int(strtoll(json_string_value(x), NULL, 10));
        } else if (strcmp(key, "uint64") == 0) {
            *out = gr_cel_val_uint(strtoull(json_string_value(x), NULL, 10));
        } else if (strcmp(key, "double") == 0) {
            double d;
            if (json_is_string(x)) {
                const char *s = json_string_value(x);
                /* "NaN", "Infinity", "-Infinity", or a shortest round-trip
                 * form such as "-0.0" (cel_spec_to_json.js writes strings) */
                d = strtod(s, NULL);
            } else {
                d = json_number_value(x);
            }
            *out = gr_cel_val_double(d);
        } else if (strcmp(key, "string") == 0) {
            return gr_cel_val_string(json_string_value(x), json_string_length(x), out, NULL) ==
                           GR_OK
                       ? 0
                       : -1;
        } else if (strcmp(key, "bytes_b64") == 0) {
            const char *s = json_string_value(x);
            unsigned char *buf = malloc(strlen(s) + 1);
            size_t n = b64_decode(s, buf);
            int rc = gr_cel_val_bytes(buf, n, out, NULL);
            free(buf);
            return rc == GR_OK ? 0 : -1;
        } else if (strcmp(key, "list") == 0) {
            size_t n = json_array_size(x);
            gr_cel_val *items = calloc(n + 1, sizeof(*items));
            for (size_t i = 0; i < n; i++) {
                if (gr_celtest_val_from(json_array_get(x, i), &items[i], why) != 0) {
                    for (size_t k = 0; k < i; k++)
                        gr_cel_val_release(&items[k]);
                    free(items);
                    return -1;
                }
            }
            int rc = gr_cel_val_list(items, n, out, NULL);
            free(items);
            return rc == GR_OK ? 0 : -1;
        } else if (strcmp(key, "map") == 0) {
            size_t n = json_array_size(x);
            gr_cel_val *ks = calloc(n + 1, sizeof(*ks)), *vs = calloc(n + 1, sizeof(*vs));
            for (size_t i = 0; i < n; i++) {
                json_t *e = json_array_get(x, i);
                if (gr_celtest_val_from(json_object_get(e, "key"), &ks[i], why) != 0 ||
                    gr_celtest_val_from(json_object_get(e, "value"), &vs[i], why) != 0) {
                    for (size_t k = 0; k <= i; k++) {
                        gr_cel_val_release(&ks[k]);
                        gr_cel_val_release(&vs[k]);
                    }
                    free(ks);
                    free(vs);
                    return -1;
                }
            }
            int rc = gr_cel_val_map(ks, vs, n, out, NULL);
            free(ks);
            free(vs);
            return rc == GR_OK ? 0 : -1;
        } else if (strcmp(key, "duration_ns") == 0) {
            /* local kind of the differential test (cel_diff_gen.js) */
            *out = gr_cel_val_duration(strtoll(json_string_value(x), NULL, 10));
        } else if (strcmp(key, "timestamp") == 0) {
            /* local kind: {"seconds": "1", "nanos": 5} */
            const char *secs = json_string_value(json_object_get(x, "seconds"));
            json_int_t nanos = json_integer_value(json_object_get(x, "nanos"));
            if (!secs ||
                gr_cel_val_timestamp(strtoll(secs, NULL, 10), (int32_t)nanos, out, NULL) != GR_OK) {
                *why = "timestamp out of range";
                return -1;
            }
        } else if (strcmp(key, "type") == 0) {
            int k = type_kind(json_string_value(x));
            if (k < 0) {
                *why = "type value of a protobuf message type";
                return -1;
            }
            out->kind = GR_CEL_TYPE;
            out->u.type = k;
        } else if (strcmp(key, "object") == 0) {
            /* google.protobuf.Duration / Timestamp in protobuf JSON form
             * ({"@type": ..., "value": "1.5s"}, as cel_spec_to_json.js writes
             * them) are plain CEL values; other messages need schemas. */
            const char *url = json_string_value(json_object_get(x, "type_url"));
            const char *text = json_string_value(json_object_get(x, "text"));
            int as = -1;
            if (url && strcmp(url, "type.googleapis.com/google.protobuf.Duration") == 0)
                as = GR_CEL_DURATION;
            else if (url && strcmp(url, "type.googleapis.com/google.protobuf.Timestamp") == 0)
                as = GR_CEL_TIMESTAMP;
            json_t *body = as >= 0 && text ? json_loads(text, 0, NULL) : NULL;
            json_t *str = json_object_get(body, "value");
            int rc = json_is_string(str) ? gr_cel_val_from_json(str, (gr_cel_kind)as, out, NULL)
                                         : GR_EINVAL;
            json_decref(body);
            if (rc != GR_OK) {
                *why = "protobuf message value";
                return -1;
            }
        } else if (strcmp(key, "enum") == 0) {
            *why = "protobuf enum value";
            return -1;
        } else {
            *why = "value kind not representable";
            return -1;
        }
        return 0;
    }
    *why = "empty value";
    return -1;
}

/* Strict equality: the kinds must match exactly (1 vs 1u vs 1.0 differ). */
int gr_celtest_same(const gr_cel_val *a, const gr_cel_val *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case GR_CEL_NULL:
        return 1;
    case GR_CEL_BOOL:
        return a->u.b == b->u.b;
    case GR_CEL_INT:
        return a->u.i == b->u.i;
    case GR_CEL_UINT:
        return a->u.u == b->u.u;
    case GR_CEL_DOUBLE:
        if (isnan(a->u.d) || isnan(b->u.d))
            return isnan(a->u.d) && isnan(b->u.d);
        return a->u.d == b->u.d && signbit(a->u.d) == signbit(b->u.d);
    case GR_CEL_STRING:
    case GR_CEL_BYTES: {
        size_t la, lb;
        const char *sa = gr_cel_val_str(a, &la), *sb = gr_cel_val_str(b, &lb);
        return la == lb && memcmp(sa, sb, la) == 0;
    }
    case GR_CEL_TYPE:
        return a->u.type == b->u.type;
    case GR_CEL_DURATION:
        return a->u.dur_ns == b->u.dur_ns;
    case GR_CEL_TIMESTAMP:
        return a->u.ts.sec == b->u.ts.sec && a->u.ts.nsec == b->u.ts.nsec;
    case GR_CEL_LIST: {
        size_t n = gr_cel_val_list_size(a);
        if (n != gr_cel_val_list_size(b))
            return 0;
        int eq = 1;
        for (size_t i = 0; i < n && eq; i++) {
            gr_cel_val x, y;
            gr_cel_val_list_get(a, i, &x, NULL);
            gr_cel_val_list_get(b, i, &y, NULL);
            eq = gr_celtest_same(&x, &y);
            gr_cel_val_release(&x);
            gr_cel_val_release(&y);
        }
        return eq;
    }
    case GR_CEL_MAP: {
        size_t n = gr_cel_val_map_size(a);
        if (n != gr_cel_val_map_size(b))
            return 0;
        int eq = 1;
        for (size_t i = 0; i < n && eq; i++) {
            gr_cel_val k, x, y;
            gr_cel_val_map_entry(a, i, &k, &x, NULL);
            if (gr_cel_val_map_get(b, &k, &y, NULL) == GR_OK) {
                eq = gr_celtest_same(&k, &k) && gr_celtest_same(&x, &y);
                gr_cel_val_release(&y);
            } else {
                eq = 0;
            }
            gr_cel_val_release(&k);
            gr_cel_val_release(&x);
        }
        return eq;
    }
    default:
        return 0;
    }
}

/* ---- node test peers ---- */

const char *gr_celtest_node_modules(char *buf, size_t bufsz, const char **why)
{
    const char *nm = getenv("GR_NODE_MODULES");
    if (nm && *nm) {
        snprintf(buf, bufsz, "%s", nm);
    } else {
        const char *src = getenv("GR_SOURCE_DIR");
        snprintf(buf, bufsz, "%s/test/node/node_modules", src ? src : "../..");
    }
    char probe[4200];
    struct stat st;
    snprintf(probe, sizeof(probe), "%s/@bufbuild/cel-spec/package.json", buf);
    if (stat(probe, &st) != 0) {
        *why = "the npm test peers are not installed (test/node/node_modules/@bufbuild/cel-spec "
               "missing; run scripts/install-deps)";
        return NULL;
    }
    snprintf(probe, sizeof(probe), "%s/@bufbuild/cel/package.json", buf);
    if (stat(probe, &st) != 0) {
        *why = "the npm test peers are not installed (test/node/node_modules/@bufbuild/cel "
               "missing; run scripts/install-deps)";
        return NULL;
    }
    return buf;
}

int gr_celtest_run_node(char *const argv[], const char **why)
{
    const char *node = getenv("GR_NODE");
    if (!node || !*node)
        node = "node";
    char *args[16];
    size_t n = 0;
    args[n++] = (char *)(uintptr_t)node;
    for (size_t i = 0; argv[i] && n < 15; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid;
    int rc = posix_spawnp(&pid, node, NULL, NULL, args, environ);
    if (rc != 0) {
        *why = "node (Node.js) is not installed or not on PATH; set GR_NODE to its path";
        return 77;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            *why = "waitpid failed";
            return -1;
        }
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        *why = "the node helper failed (see its output above)";
        return -1;
    }
    return 0;
}
