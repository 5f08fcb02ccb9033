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
    {"render", "offline: a Workflow or Certification + nodes -> what the controllers create",
     gr_cli_render},
};

static int usage(FILE *f)
{
    fputs("usage: gpuready [cluster flags] COMMAND [flags]   (also: kubectl gpuready COMMAND)\n\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].help);
    fputs("\ncluster flags: --kubeconfig PATH, --context NAME, -n/--namespace NS\n", f);
    return 2;
}

/* kubectl takes its cluster flags before the command too (`kubectl -n ns
 * get …`): how many leading argv entries from argv[1] are cluster flags
 * (--kubeconfig/--context/-n/--namespace, with "=value" or the next
 * argument as value); 0 when none. */
static int leading_cluster_flags(int argc, char **argv)
{
    static const char *const names[] = {"--kubeconfig", "--context", "-n", "--namespace"};
    int i = 1;
    while (i < argc) {
        int n = 0;
        for (size_t k = 0; k < sizeof names / sizeof names[0] && n == 0; k++) {
            size_t l = strlen(names[k]);
            if (!strcmp(argv[i], names[k]))
                n = 2;
            else if (!strncmp(argv[i], names[k], l) && argv[i][l] == '=')
                n = 1;
        }
        if (n == 0 || i + n > argc)
            break;
        i += n;
    }
    return i - 1;
}

int main(int argc, char **argv)
{
    /* Move leading cluster flags after the command, where the commands
     * parse them: `gpuready -n ns status c1` = `gpuready status -n ns c1`. */
    int lead = leading_cluster_flags(argc, argv);
    if (lead > 0 && 1 + lead < argc) {
        char *cmd = argv[1 + lead];
        memmove(&argv[2], &argv[1], (size_t)lead * sizeof argv[0]);
        argv[1] = cmd;
    }
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
