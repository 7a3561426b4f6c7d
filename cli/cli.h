/* cli.h: the subcommands of the one vigil binary.  Each returns the process
 * exit status; usage errors print one line and return 2 (125 for run). */
#ifndef VG_CLI_H
#define VG_CLI_H
#include <stddef.h>

int vg_cmd_run(int argc, char **argv);
int vg_cmd_check(int argc, char **argv);
int vg_cmd_log(int argc, char **argv);
int vg_cmd_view(int argc, char **argv);
int vg_cmd_batch(int argc, char **argv);
int vg_cmd_learn(int argc, char **argv);
int vg_cmd_recheck(int argc, char **argv);
int vg_cmd_verify(int argc, char **argv);
int vg_cmd_report(int argc, char **argv);
int vg_cmd_image(int argc, char **argv);
int vg_cmd_serve(int argc, char **argv);
int vg_cmd_submit(int argc, char **argv);
int vg_cmd_completion(int argc, char **argv);

struct vg_optcmd;
/* The subcommands, in the order the help lists them (cli/main.c). */
struct vg_command {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
    const struct vg_optcmd *opts; /* its option rows, NULL: it has none */
};
extern const struct vg_command vg_commands[];
extern const size_t vg_ncommands;
#endif
