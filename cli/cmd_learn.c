/* cmd_learn.c: `vigil learn LOG [-o POLICY] [--diff POLICY]`: the policy
 * that would have allowed what a run did (insight/learn.h).  Exit 0, 1
 * when the log or a policy cannot be read or the output not written, 2
 * for usage errors, 3 when the log is truncated or corrupt (the policy is
 * written all the same, for what its complete records did). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/write_out.h"
#include "insight/learn.h"
#include "util/outfile.h"
#include "util/escape.h"

static const char usage_text[] =
    "usage: vigil learn LOG [-o POLICY] [--diff POLICY]\n"
    "Write a policy that would have allowed what the run of LOG did (make the\n"
    "run a --dry-run to see everything it tries), generalised as a person\n"
    "would write it: the workdir, /tmp and the home directory as $WORK, $TMP\n"
    "and ~, system trees as globs (/usr/lib/**, /etc/**), programs by their\n"
    "path, connections as proto host:port.  Lookups that found nothing\n"
    "(probes) and secrets (~/.ssh, /etc/shadow, tokens...) never become\n"
    "rules.  When the run's policy was a shipped one, the result includes it\n"
    "and adds only what it did not allow.  The output passes 'vigil check':\n"
    "a line the checker would warn about is written as a comment saying why\n"
    "(a rule an earlier one covers is left out).\n";

static const char usage_tail[] =
    "Exit status: 0; 3 when LOG is truncated or corrupt (the policy covers its\n"
    "complete records); 1 when LOG or a policy cannot be read; 2 usage.\n";

#define EXIT_INCOMPLETE 3 /* as `vigil log`: a truncated or corrupt log */

static const struct vg_outfile_kind policy_kind = {
    .what = "-o", .signature = "# vigil learn:", .siglen = 14, .within = 1,
};

struct learn_args {
    const char *log, *out, *diff;
};

static int usage_error(const char *fmt, const char *arg)
{
    /* arg is what the caller typed: escaped with the rest of the line */
    char *what = vg_xasprintf(fmt, arg);
    vg_say(stderr, "vigil learn: %s (try 'vigil learn --help')", what);
    free(what);
    return 2;
}

#define AT(field) offsetof(struct learn_args, field)

static const struct vg_opt rows[] = {
    {"output", 'o', "POLICY", "write it to POLICY (a new file, or one vigil wrote\n"
     "before) instead of stdout", .kind = VG_OPT_STRING, .off = AT(out)},
    {"diff", 0, "POLICY", "print only the rules POLICY lacks for this run",
     .kind = VG_OPT_STRING, .off = AT(diff)},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil learn run.msgpack -o needed.policy",
     "write the policy the run needed"},
    {"vigil learn run.msgpack --diff python",
     "show only what the run needed beyond the shipped python policy"},
};

const struct vg_optcmd vg_learn_optcmd = {
    .name = "learn", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows),
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

/* 0 to go on, 1 for --help, 2 for a usage error. */
static int parse_args(int argc, char **argv, struct learn_args *a)
{
    struct vg_err err;
    int first, rc = vg_opts_parse(&vg_learn_optcmd, argc, argv, a, &first, &err);
    if (rc == VG_OPTS_HELP)
        return 1;
    if (rc < 0)
        return usage_error("%s", err.msg);
    if (first != argc - 1)
        return usage_error("%s", "give exactly one LOG");
    if (a->out && a->diff)
        return usage_error("%s", "-o writes a policy, --diff prints rules: give one of them");
    a->log = argv[first];
    return 0;
}

static int write_out(const char *path, const struct vg_buf *b)
{
    struct vg_err err;
    if (vg_write_out(path, &policy_kind, b, &err) < 0) {
        vg_say(stderr, "vigil: %s", err.msg);
        return 1;
    }
    return 0;
}

int vg_cmd_learn(int argc, char **argv)
{
    struct learn_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc == 1) {
        vg_opts_help(&vg_learn_optcmd, stdout);
        return 0;
    }
    if (rc)
        return rc;
    struct vg_learn_opts o = {.log = a.log, .diff = a.diff, .name = a.out,
                              .home = getenv("HOME")};
    struct vg_buf b = {0};
    struct vg_err err;
    int learned = vg_learn(&o, &b, &err);
    if (learned < 0) {
        vg_say(stderr, "vigil: learn: %s", err.msg);
        vg_buf_free(&b);
        return 1;
    }
    if (a.out)
        rc = write_out(a.out, &b);
    else
        rc = fwrite(b.data, 1, b.len, stdout) == b.len && fflush(stdout) == 0 ? 0 : 1;
    vg_buf_free(&b);
    if (learned > 0)
        vg_say(stderr, "vigil: learn: warning: %s", err.msg);
    return rc ? rc : learned > 0 ? EXIT_INCOMPLETE : 0;
}
