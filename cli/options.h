/* options.h: a subcommand's options as data.  Each option is one row
 * (its name, letter, value, help, default and where it goes); the
 * getopt_long parsing, the --help text and with it the manual page
 * (scripts/man.py reads --help) are all made from the rows, so an option
 * cannot be parsed and left undocumented, or documented with a default it
 * does not have.  The rows live with their command (cli/cmd_*.c). */
#ifndef VG_CLI_OPTIONS_H
#define VG_CLI_OPTIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/util.h"

/* What giving the option does to the command's struct, at the row's off. */
enum vg_opt_kind {
    VG_OPT_FLAG,    /* bool := true */
    VG_OPT_SET,     /* int (an enum) := the row's value */
    VG_OPT_STRING,  /* const char * := the value (the last one given wins) */
    VG_OPT_LIST,    /* const char ** grows by the value; unsigned count at .count */
    VG_OPT_UINT,    /* unsigned := the value, from .min to .max */
    VG_OPT_SIZE,    /* uint64_t := the value as a size (4k, 1M) */
    VG_OPT_CHOICE,  /* int (an enum) := the value's index in .choices */
    VG_OPT_LIMITS,  /* one option per limit of policy/limit_table.c; struct vg_limits */
    VG_OPT_CALL,    /* .set(dst, value, err): the odd ones */
    VG_OPT_STOP,    /* parsing stops and returns the row's value (--help) */
};

struct vg_opt {
    const char *name;      /* --NAME; NULL for VG_OPT_LIMITS (the table names them) */
    char letter;           /* -L, or 0 */
    const char *arg;       /* what the help calls its value; NULL: it takes none */
    const char *help;      /* lines separated by \n */
    const char *def;       /* the default, written as the value would be: applied
                            * before parsing (not as given), and shown */
    const char *def_text;  /* a default decided elsewhere: only shown */
    enum vg_opt_kind kind;
    size_t off;            /* where it goes: offsetof the command's struct */
    size_t seen;           /* VG_OPT_SEEN(): a bool set when it is given; 0 none */
    size_t count;          /* VG_OPT_LIST: offsetof its unsigned count */
    const char *const *choices; /* VG_OPT_CHOICE: NULL-terminated; a VG_OPT_CALL row
                            * may name its values too (for the completion) */
    uint64_t min, max;     /* VG_OPT_UINT */
    int (*set)(void *dst, const char *value, struct vg_err *err); /* 0, or -1 with err */
    int value;             /* VG_OPT_SET: what it sets; VG_OPT_STOP: what parsing returns */
    const char *alias;     /* another spelling, accepted and not shown */
    const char *heading;   /* a line of its own before this row in the help */
};

/* Offsets start at 0, so the optional bool is kept one up. */
#define VG_OPT_SEEN(type, field) (offsetof(type, field) + 1)
/* What a VG_OPT_STOP row for --help returns. */
#define VG_OPTS_HELP 1

/* One example for the help's end and the manual page's EXAMPLES. */
struct vg_example {
    const char *cmd;       /* a command line that works as written */
    const char *what;      /* what it does, one line */
};

struct vg_optcmd {
    const char *name;      /* "run": for messages */
    const char *usage;     /* the help before the options */
    const char *epilog;    /* and after them */
    const struct vg_opt *rows;
    size_t n;
    bool in_order;         /* options end at the first operand (what follows is
                            * the candidate's), else they may come anywhere */
    const struct vg_example *examples;
    size_t nexamples;
};

/* Where the examples start in --help: scripts/man.py makes the manual
 * page's EXAMPLES section of what follows this line. */
#define VG_OPTS_EXAMPLES_HEAD "examples:\n"

/* Apply the defaults, then parse argv[1..] into dst.  0 with *first the
 * index of the first operand ("--" skipped); a VG_OPT_STOP row's value;
 * or -1 with a one-line err naming the option and what is wrong. */
int vg_opts_parse(const struct vg_optcmd *c, int argc, char **argv, void *dst, int *first,
                  struct vg_err *err);
/* The whole --help text: usage, one entry per option, epilog, examples. */
void vg_opts_help(const struct vg_optcmd *c, FILE *f);
/* One option as --help shows it (a limit row expanded into its options),
 * for text made from the rows, such as the shell completion. */
struct vg_opt_view {
    const char *name;            /* without the -- */
    char letter;                 /* or 0 */
    const char *arg;             /* NULL: takes no value */
    const char *const *choices;  /* the values it takes, NULL-terminated, or NULL */
};
size_t vg_opts_count(const struct vg_optcmd *c);
void vg_opts_view(const struct vg_optcmd *c, size_t k, struct vg_opt_view *v);

/* Only the examples part of it (also for the top-level help). */
void vg_opts_examples(const struct vg_example *ex, size_t n, FILE *f);

/* Every command's rows (cli/cmd_*.c), for the unit test. */
extern const struct vg_optcmd vg_run_optcmd, vg_batch_optcmd, vg_log_optcmd, vg_learn_optcmd,
    vg_check_optcmd, vg_view_optcmd, vg_image_optcmd, vg_report_optcmd, vg_verify_optcmd;
extern const struct vg_optcmd vg_recheck_optcmd, vg_serve_optcmd, vg_submit_optcmd;
#endif
