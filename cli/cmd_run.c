/* cmd_run.c: `vigil run [OPTIONS] -- COMMAND [ARGS...]`: parse the command
 * line into a vg_run_opts and hand it to the tracer. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "run/run.h"
#include "launcher/sandbox.h"
#include "util/escape.h"

static const char usage_text[] =
    "usage: vigil run [OPTIONS] [--] COMMAND [ARGS...]\n"
    "\n"
    "Run COMMAND in a fresh sandbox, decide every file, network and exec attempt\n"
    "against a policy, and record each decision in a msgpack log.\n"
    "\n"
    "  -p, --policy FILE|NAME policy file, or a shipped policy by name (python, c, ...:\n"
    "                         'vigil check --list'); default: the built-in default.policy\n"
    "  -o, --log FILE         event log (default: a new file in $XDG_STATE_HOME/vigil\n"
    "                         or ~/.local/state/vigil)\n"
    "      --result FILE      write a JSON result record (also when vigil fails)\n"
    "      --task-id ID       recorded in the log and the result\n"
    "      --mode MODE        enforce (default) or dry-run: record, refuse nothing\n"
    "      --dry-run          same as --mode dry-run\n"
    "      --stacks           record a stack for every audited call, not only refusals\n"
    "      --py-frames WHICH  the Python stack of a CPython caller: refused (default:\n"
    "                         refusals, would-deny/would-kill included), all, off\n"
    "      --workdir DIR      the candidate's writable cwd (default: fresh scratch dir)\n"
    "      --keep             keep the scratch dir after the run\n"
    "      --bind SRC[:DST]   make SRC visible read-only (at DST)\n"
    "      --bind-rw SRC[:DST] make SRC visible writable (at DST)\n"
    "      --env NAME[=VALUE] pass NAME through, or set it\n"
    "      --artifact PATH    hash PATH as an executed artifact (repeatable;\n"
    "                         default: every argument naming a regular file)\n"
    "      --tail SIZE        output kept in the result's tails, per stream (default 4k)\n"
    "      --no-forward       do not pass the candidate's output on (still captured)\n"
    "      --dns-upstream IP[:PORT]  where vigil's resolver asks the names the policy\n"
    "                         allows (default: the host's /etc/resolv.conf)\n"
    "  limits (override the policy's; one table, docs/POLICY.md):\n";

static const char usage_tail[] =
    "      --cpuset LIST      run the sandbox and vigil on these CPUs (0-3,6; one CPU\n"
    "                         halves the cost of audited calls on VMs)\n"
    "      --no-cgroups       hold every limit by rlimits, as for an unprivileged\n"
    "                         caller (memory: address space)\n"
    "      --allow-degraded   run even if Landlock is unavailable\n"
    "      --engine ENGINE    notify (default): seccomp user notification, opens\n"
    "                         carried out by vigil (falls back to ptrace, with a\n"
    "                         note, on a kernel without what it needs); ptrace:\n"
    "                         seccomp RET_TRACE + ptrace stops\n"
    "  -q, --quiet            no summary line\n"
    "\n"
    "Exit status: the candidate's; 124 time limit; 125 vigil failed; 126 cannot\n"
    "execute; 127 not found; 128+N killed by signal N (a CPU limit: 152, SIGXCPU;\n"
    "a memory limit under a cgroup: 137, SIGKILL).\n";

enum {
    OPT_RESULT = 256, OPT_TASK, OPT_MODE, OPT_DRY, OPT_STACKS, OPT_WORKDIR, OPT_KEEP,
    OPT_BIND, OPT_BIND_RW, OPT_ENV, OPT_ARTIFACT, OPT_DEGRADED, OPT_CPUSET, OPT_DNS_UPSTREAM, OPT_TAIL,
    OPT_NO_FORWARD, OPT_NO_CGROUPS, OPT_ENGINE, OPT_PY_FRAMES,
    OPT_LIMIT_BASE = 512, /* + enum vg_limit */
};

static const char *const py_frames_names[] = {
    [VG_PYF_REFUSED] = "refused", [VG_PYF_ALL] = "all", [VG_PYF_OFF] = "off",
};

static int parse_py_frames(const char *s, enum vg_py_frames *out)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(py_frames_names); i++)
        if (strcmp(s, py_frames_names[i]) == 0) {
            *out = (enum vg_py_frames)i;
            return 0;
        }
    return -1;
}

/* The fixed options; the limits' flags are added from the table. */
static const struct option fixed_options[] = {
    {"policy", required_argument, NULL, 'p'},
    {"log", required_argument, NULL, 'o'},
    {"result", required_argument, NULL, OPT_RESULT},
    {"task-id", required_argument, NULL, OPT_TASK},
    {"mode", required_argument, NULL, OPT_MODE},
    {"dry-run", no_argument, NULL, OPT_DRY},
    {"stacks", no_argument, NULL, OPT_STACKS},
    {"py-frames", required_argument, NULL, OPT_PY_FRAMES},
    {"workdir", required_argument, NULL, OPT_WORKDIR},
    {"keep", no_argument, NULL, OPT_KEEP},
    {"bind", required_argument, NULL, OPT_BIND},
    {"bind-rw", required_argument, NULL, OPT_BIND_RW},
    {"env", required_argument, NULL, OPT_ENV},
    {"artifact", required_argument, NULL, OPT_ARTIFACT},
    {"allow-degraded", no_argument, NULL, OPT_DEGRADED},
    {"cpuset", required_argument, NULL, OPT_CPUSET},
    {"dns-upstream", required_argument, NULL, OPT_DNS_UPSTREAM},
    {"tail", required_argument, NULL, OPT_TAIL},
    {"no-forward", no_argument, NULL, OPT_NO_FORWARD},
    {"no-cgroups", no_argument, NULL, OPT_NO_CGROUPS},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
};

struct all_options {
    struct option o[VG_ARRAY_LEN(fixed_options) + VG_LIM_COUNT + 1];
};

static void build_options(struct all_options *all)
{
    size_t n = 0;
    for (size_t i = 0; i < VG_ARRAY_LEN(fixed_options); i++)
        all->o[n++] = fixed_options[i];
    for (int l = 0; l < VG_LIM_COUNT; l++)
        all->o[n++] = (struct option){vg_limit_row(l)->flag, required_argument, NULL,
                                      OPT_LIMIT_BASE + l};
    all->o[n] = (struct option){NULL, 0, NULL, 0};
}

/* One line per limit, from the table: flag, value, what, default. */
static void print_usage(void)
{
    static const char *const metavar[] = {
        [VG_LK_MS] = "DUR", [VG_LK_SECONDS] = "DUR", [VG_LK_SIZE] = "SIZE",
        [VG_LK_COUNT] = "N", [VG_LK_CPUS] = "CPUS",
    };
    fputs(usage_text, stdout);
    for (int l = 0; l < VG_LIM_COUNT; l++) {
        const struct vg_limit_row *row = vg_limit_row(l);
        char def[32], opt[32];
        if (row->def)
            vg_limit_format(l, row->def, def, sizeof def);
        else
            snprintf(def, sizeof def, "none");
        snprintf(opt, sizeof opt, "--%s %s", row->flag, metavar[row->kind]);
        printf("      %-18s %s (default %s)\n", opt, row->what, def);
    }
    fputs(usage_tail, stdout);
}

/* A usage error: the message goes into err (printed once by the caller,
 * and into the result record when --result came before it). */
static int bad(struct vg_err *err, const char *fmt, const char *arg)
{
    char what[sizeof err->msg];
    snprintf(what, sizeof what, fmt, arg);
    vg_errf(err, "%s (see 'vigil run --help')", what);
    return VG_EXIT_SETUP;
}

static int bad_limit(struct vg_err *err, enum vg_limit l, const char *arg)
{
    char syntax[160];
    vg_limit_syntax(l, syntax, sizeof syntax);
    vg_errf(err, "--%s: '%s' is not %s (see 'vigil run --help')", vg_limit_row(l)->flag, arg,
            syntax);
    return VG_EXIT_SETUP;
}

static void add_bind(struct vg_run_opts *o, const char *arg, bool rw)
{
    o->binds = vg_xrealloc(o->binds, (o->nbinds + 1) * sizeof *o->binds);
    const char *colon = strchr(arg, ':');
    struct vg_bind b = {.rw = rw};
    b.src = colon ? vg_xstrndup(arg, (size_t)(colon - arg)) : vg_xstrdup(arg);
    b.dst = colon ? vg_xstrdup(colon + 1) : NULL;
    o->binds[o->nbinds++] = b;
}

static void add_env(struct vg_run_opts *o, const char *arg)
{
    o->env = vg_xrealloc(o->env, (o->nenv + 1) * sizeof *o->env);
    const char *eq = strchr(arg, '=');
    struct vg_env e;
    e.name = eq ? vg_xstrndup(arg, (size_t)(eq - arg)) : vg_xstrdup(arg);
    e.value = eq ? vg_xstrdup(eq + 1) : NULL;
    o->env[o->nenv++] = e;
}

static void free_opts(struct vg_run_opts *o)
{
    for (unsigned i = 0; i < o->nbinds; i++) {
        free((char *)o->binds[i].src);
        free((char *)o->binds[i].dst);
    }
    free(o->binds);
    for (unsigned i = 0; i < o->nenv; i++) {
        free((char *)o->env[i].name);
        free((char *)o->env[i].value);
    }
    free(o->env);
    free((void *)o->artifacts);
}

static int parse(struct vg_run_opts *o, int argc, char **argv, struct vg_err *err)
{
    struct all_options all;
    build_options(&all);
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+p:o:qh", all.o, NULL)) != -1) {
        switch (c) {
        case 'p': o->policy_path = optarg; break;
        case 'o': o->log_path = optarg; break;
        case OPT_RESULT: o->result_path = optarg; break;
        case OPT_TASK: o->task_id = optarg; break;
        case OPT_MODE:
            if (!strcmp(optarg, "enforce"))
                o->mode = VG_MODE_ENFORCE;
            else if (!strcmp(optarg, "dry-run"))
                o->mode = VG_MODE_DRY_RUN;
            else
                return bad(err, "--mode must be 'enforce' or 'dry-run', not '%s'", optarg);
            break;
        case OPT_DRY: o->mode = VG_MODE_DRY_RUN; break;
        case OPT_STACKS: o->stacks_all = true; break;
        case OPT_PY_FRAMES:
            if (parse_py_frames(optarg, &o->py_frames) < 0)
                return bad(err, "--py-frames must be 'refused', 'all' or 'off', not '%s'", optarg);
            break;
        case OPT_WORKDIR: o->workdir = optarg; break;
        case OPT_KEEP: o->keep = true; break;
        case OPT_BIND: add_bind(o, optarg, false); break;
        case OPT_BIND_RW: add_bind(o, optarg, true); break;
        case OPT_ENV:
            if (!optarg[0] || optarg[0] == '=')
                return bad(err, "--env needs NAME or NAME=VALUE, not '%s'", optarg);
            add_env(o, optarg);
            break;
        case OPT_ARTIFACT:
            o->artifacts = vg_xrealloc((void *)o->artifacts, (o->nartifacts + 1) * sizeof(char *));
            o->artifacts[o->nartifacts++] = optarg;
            break;
        case OPT_DEGRADED: o->allow_no_landlock = true; break;
        case OPT_CPUSET: o->cpuset = optarg; break;
        case OPT_DNS_UPSTREAM: o->dns_upstream = optarg; break;
        case OPT_TAIL:
            if (!vg_parse_size(optarg, &o->tail))
                return bad(err, "--tail: '%s' is not a size (e.g. 4k, 0 for none)", optarg);
            o->tail_set = true;
            break;
        case OPT_NO_FORWARD: o->no_forward = true; break;
        case OPT_NO_CGROUPS: o->no_cgroups = true; break;
        case OPT_ENGINE:
            if (!strcmp(optarg, "ptrace"))
                o->engine = VG_ENGINE_PTRACE;
            else if (!strcmp(optarg, "notify"))
                o->engine = VG_ENGINE_NOTIFY;
            else
                return bad(err, "--engine: '%s' is neither notify nor ptrace", optarg);
            break;
        case 'q': o->quiet = true; break;
        case 'h': print_usage(); return -1;
        case '?':
            if (optopt)
                return bad(err, "option '-%s' is unknown or needs a value", (char[]){(char)optopt, 0});
            return bad(err, "option '%s' is unknown or needs a value", argv[optind - 1]);
        default: {
            enum vg_limit l = (enum vg_limit)(c - OPT_LIMIT_BASE);
            uint64_t v;
            if (!vg_limit_parse(l, optarg, &v))
                return bad_limit(err, l, optarg);
            o->limits.v[l] = v;
            o->limits.set[l] = true;
        }
        }
    }
    if (optind >= argc)
        return bad(err, "%s", "missing COMMAND: usage is vigil run [OPTIONS] -- COMMAND [ARGS...]");
    o->argv = argv + optind;
    o->argc = argc - optind;
    return 0;
}

int vg_cmd_run(int argc, char **argv)
{
    struct vg_run_opts o = {0};
    /* main's argv[0] comes right before ours: the strings are contiguous
     * from it to the end of our last argument. */
    o.argv_area = argv[-1];
    o.argv_area_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[-1]);
    struct vg_err err = {{0}};
    /* First, before anything is opened: the log must never become fd 1. */
    if (vg_std_fds() < 0) {
        vg_say(stderr, "vigil run: cannot open /dev/null on a closed fd 0-2: %s",
               strerror(errno));
        return VG_EXIT_SETUP;
    }
    int r = parse(&o, argc, argv, &err);
    if (r > 0) {
        vg_say(stderr, "vigil run: %s", err.msg);
        vg_run_error_result(&o, err.msg);
    }
    if (r != 0) {
        free_opts(&o);
        return r < 0 ? 0 : r;
    }
    r = vg_run(&o);
    free_opts(&o);
    return r;
}
