/*
 * smp_apply — test helper for test_smp_kubectl.sh: reads JSON lines
 * {"id": ..., "root": ..., "doc": {...}, "patch": {...}} on stdin and
 * writes {"id": ..., "result": {...}} or {"id": ..., "error": "..."} lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gr_smp.h"

int main(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        json_error_t je;
        json_t *in = json_loadb(line, (size_t)n, 0, &je);
        if (!in) {
            fprintf(stderr, "smp_apply: bad input line: %s\n", je.text);
            rc = 1;
            continue;
        }
        json_t *doc = json_incref(json_object_get(in, "doc"));
        json_t *out = json_object();
        json_object_set(out, "id", json_object_get(in, "id"));
        gr_err err = {0};
        if (gr_smp_apply(&doc, json_object_get(in, "patch"), NULL,
                         json_string_value(json_object_get(in, "root")), &err) == 0)
            json_object_set(out, "result", doc);
        else
            json_object_set_new(out, "error", json_string(err.msg));
        char *s = json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY);
        if (s)
            puts(s);
        free(s);
        json_decref(out);
        json_decref(doc);
        json_decref(in);
    }
    free(line);
    return rc;
}
