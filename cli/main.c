/* main.c: dispatch `vigil SUBCOMMAND ...` to its handler. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "util/util.h"
#include "util/escape.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"run", vg_cmd_run, "run a command in a fresh sandbox under a policy"},
    {"check", vg_cmd_check, "validate policies and print their rules"},
    {"log", vg_cmd_log, "print a run log as text or JSON Lines"},
    {"view", vg_cmd_view, "replay a run log in the terminal"},
    {"batch", vg_cmd_batch, "run many candidates, each in its own sandbox"},
    {"learn", vg_cmd_learn, "write the policy a run needed, from its log"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: vigil COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < VG_ARRAY_LEN(commands); i++)
        fprintf(f, "  %-6s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'vigil COMMAND --help' describes each.\n");
}

/* Run the command argv[0] names with its arguments. */
static int dispatch(int argc, char **argv)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(commands); i++)
        if (!strcmp(argv[0], commands[i].name))
            return commands[i].fn(argc, argv);
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
        char *cmd_argv[] = {argv[2], help_flag, NULL};
        return dispatch(2, cmd_argv);
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
