/*
 * gpuready — the command-line tool, also installed as kubectl-gpuready so
 * that `kubectl gpuready …` works. Subcommands are rows of `cmds` below;
 * each gets argc/argv with argv[0] = its name. The commands live in src/cli
 * (docs/cli.md).
 */
#include <stdio.h>
#include <string.h>

#include "gr_cli.h"

typedef int (*cmd_fn)(int argc, char **argv, FILE *out, FILE *errf);

static const struct {
    const char *name, *help;
    cmd_fn fn;
} cmds[] = {
    {"certify", "create a Certification (--category D/V ...; --wait follows it)", gr_cli_certify},
    {"report", "the certification report (-o text|json|junit|html)", gr_cli_report},
    {"status", "one Certification's progress", gr_cli_status},
    {"list", "the Certifications of a namespace (-A: all)", gr_cli_list},
    {"cleanup", "delete a Certification and wait until its GPU pods are gone", gr_cli_cleanup},
    {"catalog", "list | show DOMAIN/VARIANT: the certification categories", gr_cli_catalog},
    {"render", "offline: a Workflow + nodes -> the Jobs and TrainJobs the controller creates",
     gr_cli_render},
};

static int usage(FILE *f)
{
    fputs("usage: gpuready COMMAND [flags]   (also: kubectl gpuready COMMAND)\n\ncommands:\n", f);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].help);
    fputs("\ncluster flags: --kubeconfig PATH, --context NAME, -n/--namespace NS\n", f);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("gpuready %s\n", GR_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].fn(argc - 1, argv + 1, stdout, stderr);
    fprintf(stderr, "gpuready: unknown command %s\n", argv[1]);
    return usage(stderr);
}
