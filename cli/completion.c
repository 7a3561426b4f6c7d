/* completion.c: `vigil completion bash`: a bash completion script made
 * from the commands' option rows (cli/options.h), so it completes exactly
 * the options each command parses, the values of those that take a fixed
 * set, and the shipped policies' names after --policy.  Installed by
 * `make install` to bash-completion's directory. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "policy/policy.h"
#include "util/escape.h"
#include "util/util.h"

/* The option whose value is a policy: a shipped name or a file. */
#define POLICY_OPT "policy"

static void print_name(const char *name, const char *path, void *arg)
{
    (void)path;
    fprintf(arg, " %s", name);
}

/* The words of one command's options: --name and -L. */
static void print_words(const struct vg_optcmd *c, FILE *f)
{
    for (size_t k = 0, n = vg_opts_count(c); k < n; k++) {
        struct vg_opt_view v;
        vg_opts_view(c, k, &v);
        fprintf(f, " --%s", v.name);
        if (v.letter)
            fprintf(f, " -%c", v.letter);
    }
}

/* Does the help's name for a value say it is a path? */
static bool names_a_file(const char *arg)
{
    static const char *const words[] = {"FILE", "DIR", "PATH", "SRC", "LOG", "POLICY", "TASKS"};
    for (size_t i = 0; i < VG_ARRAY_LEN(words); i++)
        if (strstr(arg, words[i]))
            return true;
    return false;
}

/* A case arm per option that takes a value: what its value completes to. */
static void print_values(const struct vg_optcmd *c, FILE *f)
{
    for (size_t k = 0, n = vg_opts_count(c); k < n; k++) {
        struct vg_opt_view v;
        vg_opts_view(c, k, &v);
        if (!v.arg)
            continue;
        fprintf(f, "            --%s", v.name);
        if (v.letter)
            fprintf(f, "|-%c", v.letter);
        if (!strcmp(v.name, POLICY_OPT)) {
            fputs(") _vigil_words \"$cur\"", f);
            vg_policy_list(print_name, f);
            fputs("; _vigil_files \"$cur\"; return ;;\n", f);
        } else if (v.choices) {
            fputs(") _vigil_words \"$cur\"", f);
            for (const char *const *ch = v.choices; *ch; ch++)
                fprintf(f, " %s", *ch);
            fputs("; return ;;\n", f);
        } else if (names_a_file(v.arg)) {
            fputs(") _vigil_files \"$cur\"; return ;;\n", f);
        } else { /* a number, a size, a name: nothing to offer */
            fputs(") return ;;\n", f);
        }
    }
}

static const char head[] =
    "# bash completion for vigil, made by `vigil completion bash` from its option rows\n"
    "_vigil_words() { local cur=$1; shift; COMPREPLY+=($(compgen -W \"$*\" -- \"$cur\")); }\n"
    "_vigil_files() { COMPREPLY+=($(compgen -f -- \"$1\")); }\n"
    "_vigil() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts=\n"
    "    COMPREPLY=()\n"
    "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
    "        _vigil_words \"$cur\" help";

static void print_script(FILE *f)
{
    fputs(head, f);
    for (size_t i = 0; i < vg_ncommands; i++)
        fprintf(f, " %s", vg_commands[i].name);
    fputs("; return\n    fi\n    case ${COMP_WORDS[1]} in\n", f);
    for (size_t i = 0; i < vg_ncommands; i++) {
        const struct vg_optcmd *c = vg_commands[i].opts;
        if (!c)
            continue;
        fprintf(f, "    %s)\n        case $prev in\n", vg_commands[i].name);
        print_values(c, f);
        fputs("        esac\n        opts=\"", f);
        print_words(c, f);
        fputs("\" ;;\n", f);
    }
    fputs("    completion) _vigil_words \"$cur\" bash; return ;;\n"
          "    help) [ \"$COMP_CWORD\" -eq 2 ] && _vigil_words \"$cur\"", f);
    for (size_t i = 0; i < vg_ncommands; i++)
        fprintf(f, " %s", vg_commands[i].name);
    fputs("; return ;;\n    esac\n"
          "    if [[ $cur == -* ]]; then _vigil_words \"$cur\" $opts; else _vigil_files \"$cur\"; fi\n"
          "}\n"
          "complete -o filenames -F _vigil vigil\n", f);
}

int vg_cmd_completion(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "bash")) {
        print_script(stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs("usage: vigil completion bash\n\n"
              "Print a bash completion script for vigil, made from its option rows:\n"
              "  source <(vigil completion bash)\n"
              "(make install puts it where bash-completion finds it.)\n",
              stdout);
        return 0;
    }
    vg_say(stderr, "vigil completion: say which shell: 'vigil completion bash' (the only one)");
    return 2;
}
