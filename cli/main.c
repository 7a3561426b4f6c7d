/* main.c: dispatch `vigil SUBCOMMAND ...` to its handler. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "util/util.h"
#include "util/escape.h"

static const struct vg_example examples[] = {
    {"vigil run -p python -o run.msgpack -- python3 cand.py",
     "run a candidate under the shipped python policy"},
    {"vigil log --deny", "what the latest run was refused"},
    {"vigil view", "browse the latest run in the terminal"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: vigil COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < vg_ncommands; i++)
        fprintf(f, "  %-10s %s\n", vg_commands[i].name, vg_commands[i].help);
    fprintf(f, "\n'vigil COMMAND --help' (or 'vigil help COMMAND') describes each;\n"
               "the manual pages vigil-COMMAND(1), vigil-policy(5), vigil-log(5) and\n"
               "vigil-security(7) describe them and the policy, the log and the guarantees.\n");
    vg_opts_examples(examples, VG_ARRAY_LEN(examples), f);
}

/* Run the command argv[0] names with its arguments. */
static int dispatch(int argc, char **argv)
{
    for (size_t i = 0; i < vg_ncommands; i++)
        if (!strcmp(argv[0], vg_commands[i].name))
            return vg_commands[i].fn(argc, argv);
    vg_say(stderr, "vigil: unknown command '%s' (try 'vigil --help')", argv[0]);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    /* `vigil help CMD` is `vigil CMD --help`, as git and systemctl do. */
    static char help_flag[] = "--help";
    if (!strcmp(argv[1], "help") && argc > 2) {
        /* argv[0] first: a command may look one before its own name. */
        char *cmd_argv[] = {argv[0], argv[2], help_flag, NULL};
        return dispatch(2, cmd_argv + 1);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("vigil %s\n", VG_VERSION);
        return 0;
    }
    return dispatch(argc - 1, argv + 1);
}
