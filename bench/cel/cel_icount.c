/*
 * cel_icount.c — a fixed amount of CEL work for instruction counting, so that
 * a regression check does not depend on wall-clock time on a loaded machine.
 * Uses the public API only, so the same source builds against any commit's
 * libgr_cel.a:
 *
 *   cel_icount eval|compile <var> <expr> <json-file> <n>
 *   valgrind --tool=cachegrind --cache-sim=no cel_icount eval podGroup \
 *       podGroup.spec.minMember bench/cel/data/podgroup.json 2000
 *
 * (instructions for n = 2000 minus n = 0, divided by 2000, are the cost of
 * one evaluation; docs/cel.md "Benchmark").
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_cel.h"

int main(int argc, char **argv)
{
    if (argc != 6 || (strcmp(argv[1], "eval") != 0 && strcmp(argv[1], "compile") != 0)) {
        fprintf(stderr, "usage: cel_icount eval|compile <var> <expr> <json-file> <n>\n");
        return 2;
    }
    bool eval = strcmp(argv[1], "eval") == 0;
    gr_cel_decl d = {argv[2], GR_CEL_MAP};
    const char *expr = argv[3];
    long n = strtol(argv[5], NULL, 10);
    json_error_t je;
    json_t *j = json_load_file(argv[4], 0, &je);
    if (!j) {
        fprintf(stderr, "%s: %s\n", argv[4], je.text);
        return 1;
    }
    gr_err err;
    gr_cel_program *p = NULL;
    int rc = 0;
    if (!eval) {
        for (long i = 0; i < n && rc == 0; i++) {
            rc = gr_cel_compile(expr, strlen(expr), &d, 1, NULL, &p, NULL, &err) != GR_OK;
            gr_cel_program_free(p);
        }
    } else if (gr_cel_compile(expr, strlen(expr), &d, 1, NULL, &p, NULL, &err) != GR_OK) {
        rc = 1;
    } else {
        for (long i = 0; i < n && rc == 0; i++) {
            gr_cel_val v;
            rc = gr_cel_eval_json(p, &j, &v, NULL, &err) != GR_OK;
            gr_cel_val_release(&v);
        }
        gr_cel_program_free(p);
    }
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    json_decref(j);
    return rc;
}
