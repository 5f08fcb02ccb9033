/*
 * gr_cli.h — the `gpuready` / `kubectl gpuready` subcommands (docs/cli.md).
 * src/cmd/gpuready.c only dispatches to these.
 *
 *   certify   create a Certification (--category D/V ..., --node-selector
 *             K=V, --name, --wait: follow it, exit 1 when it failed)
 *   report    the certification report: text (fits 100 columns), -o json,
 *             -o junit, -o html (one self-contained file)
 *   status    one Certification's conditions and categories
 *   list      the Certifications of a namespace (-A: all)
 *   cleanup   delete a Certification and wait until its Workflows, Jobs and
 *             GPU pods are gone
 *   catalog   list | show DOMAIN/VARIANT [--platform P --gpu G] [-o yaml|json]
 *
 * Cluster commands take kubectl's --kubeconfig, --context, -n/--namespace.
 * Each command gets argv[0] = its name, writes its output to `out` and
 * its diagnostics to `errf`, and returns the process exit status: 0 ok,
 * 1 failed (a failed certification, an API error), 2 bad usage.
 *
 * The report model and its renderers are pure (gr_cli_report_*), so the
 * formats are tested against goldens without a cluster.
 * Ownership: json_t results are new references (json_decref()); inputs are
 * borrowed. Errors: GR_ENOMEM, GR_EINVAL (unknown format, named).
 */
#ifndef GR_CLI_H
#define GR_CLI_H

#include <stdio.h>

#include <jansson.h>

#include "gr_err.h"

int gr_cli_catalog(int argc, char **argv, FILE *out, FILE *errf);
int gr_cli_certify(int argc, char **argv, FILE *out, FILE *errf);
int gr_cli_report(int argc, char **argv, FILE *out, FILE *errf);
int gr_cli_status(int argc, char **argv, FILE *out, FILE *errf);
int gr_cli_list(int argc, char **argv, FILE *out, FILE *errf);
int gr_cli_cleanup(int argc, char **argv, FILE *out, FILE *errf);
/* `render (-f WORKFLOW.yaml | -f CERTIFICATION.yaml | --category D/V ...
 * [--set K=V ...]) (--nodes NODES.yaml | --platform P --gpu G [--count N]
 * [--gpus-per-node N]) [-o yaml|json]` (issues 16, 17, offline: the
 * Certification controller's step, the Workflow controller's planning path
 * gr_nvcre_wf_plan() and the Job controller's workload builder; sorted keys,
 * fixed uids). Exit 0 when everything would run, 1 when a controller would
 * mark its object Failed, 2 on bad usage or input. */
int gr_cli_render(int argc, char **argv, FILE *out, FILE *errf);

/* Widest line of the text report, in columns. */
#define GR_CLI_REPORT_WIDTH 100

/* The report model from a Certification, the Workflows of its namespace,
 * the NVCRE Jobs and the BandwidthMeasurements (arrays; NULL = none). */
int gr_cli_report_build(const json_t *cert, const json_t *workflows, const json_t *jobs,
                        const json_t *bandwidth, json_t **report, gr_err *err);
/* Render: "text", "json", "junit" or "html" (self-contained: inline CSS,
 * SVG and script, no network fetches). */
int gr_cli_report_render(const json_t *report, const char *format, FILE *out, gr_err *err);

/* A YAML rendering of any JSON value (block style; strings quoted when
 * needed), for `catalog show -o yaml`. */
void gr_cli_put_yaml(FILE *f, const json_t *v);

#endif
