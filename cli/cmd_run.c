/* cmd_run.c: `vigil run [OPTIONS] -- COMMAND [ARGS...]`: parse the command
 * line into a vg_run_opts and hand it to the tracer. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "tracer/run.h"
#include "tracer/sandbox.h"

static const char usage_text[] =
    "usage: vigil run [OPTIONS] [--] COMMAND [ARGS...]\n"
    "\n"
    "Run COMMAND in a fresh sandbox, decide every file, network and exec attempt\n"
    "against a policy, and record each decision in a msgpack log.\n"
    "\n"
    "  -p, --policy FILE|NAME policy file, or a shipped policy by name (python, c, ...:\n"
    "                         'vigil check --list'); default: the built-in default.policy\n"
    "  -o, --log FILE         event log (default: vigil-DATE-PID.msgpack here)\n"
    "      --result FILE      write a JSON result record\n"
    "      --task-id ID       recorded in the log and the result\n"
    "      --mode MODE        enforce (default) or dry-run: record, refuse nothing\n"
    "      --dry-run          same as --mode dry-run\n"
    "      --stacks           record a stack for every audited call, not only refusals\n"
    "      --workdir DIR      the candidate's writable cwd (default: fresh scratch dir)\n"
    "      --keep             keep the scratch dir after the run\n"
    "      --bind SRC[:DST]   make SRC visible read-only (at DST)\n"
    "      --bind-rw SRC[:DST] make SRC visible writable (at DST)\n"
    "      --env NAME[=VALUE] pass NAME through, or set it\n"
    "      --artifact PATH    hash PATH as an executed artifact (repeatable;\n"
    "                         default: every argument naming a regular file)\n"
    "  limits (override the policy's):\n"
    "      --timeout DUR      wall clock (default 60s)\n"
    "      --cpu DUR          CPU time (default 60s)\n"
    "      --memory SIZE      address space (default 1G)\n"
    "      --procs N          processes and threads (default 128)\n"
    "      --files N          open files (default 256)\n"
    "      --fsize SIZE       largest file written (default 64M)\n"
    "      --output SIZE      captured output per stream (default 1M)\n"
    "      --tmpfs SIZE       size of /tmp (default 64M)\n"
    "      --cpus N           run the sandbox and vigil on N of the CPUs vigil may\n"
    "                         use (1: audited calls cost about half on VMs)\n"
    "      --allow-degraded   run even if Landlock is unavailable\n"
    "      --engine ENGINE    ptrace (default) or notify: seccomp user notification,\n"
    "                         opens carried out by vigil (falls back to ptrace,\n"
    "                         with a note, on a kernel without what it needs)\n"
    "  -q, --quiet            no summary line\n"
    "\n"
    "Exit status: the candidate's; 124 timeout; 125 vigil failed; 126 cannot\n"
    "execute; 127 not found; 128+N killed by signal N.\n";

enum {
    OPT_RESULT = 256, OPT_TASK, OPT_MODE, OPT_DRY, OPT_STACKS, OPT_WORKDIR, OPT_KEEP,
    OPT_BIND, OPT_BIND_RW, OPT_ENV, OPT_ARTIFACT, OPT_DEGRADED, OPT_CPUS, OPT_ENGINE,
    OPT_LIMIT_BASE = 512, /* + enum vg_limit */
};

static const struct option options[] = {
    {"policy", required_argument, NULL, 'p'},
    {"log", required_argument, NULL, 'o'},
    {"result", required_argument, NULL, OPT_RESULT},
    {"task-id", required_argument, NULL, OPT_TASK},
    {"mode", required_argument, NULL, OPT_MODE},
    {"dry-run", no_argument, NULL, OPT_DRY},
    {"stacks", no_argument, NULL, OPT_STACKS},
    {"workdir", required_argument, NULL, OPT_WORKDIR},
    {"keep", no_argument, NULL, OPT_KEEP},
    {"bind", required_argument, NULL, OPT_BIND},
    {"bind-rw", required_argument, NULL, OPT_BIND_RW},
    {"env", required_argument, NULL, OPT_ENV},
    {"artifact", required_argument, NULL, OPT_ARTIFACT},
    {"allow-degraded", no_argument, NULL, OPT_DEGRADED},
    {"cpus", required_argument, NULL, OPT_CPUS},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"timeout", required_argument, NULL, OPT_LIMIT_BASE + VG_LIM_TIME},
    {"cpu", required_argument, NULL, OPT_LIMIT_BASE + VG_LIM_CPU},
    {"memory", required_argument, NULL, OPT_LIMIT_BASE + VG_LIM_MEMORY},
    {"procs", required_argument, NULL, OPT_LIMIT_BASE + VG_LIM_PROCS},
    {"files", required_argument, NULL, OPT_LIMIT_BASE + VG_LIM_FILES},
    {"fsize", required_argument, NULL, OPT_LIMIT_BASE + VG_LIM_FSIZE},
    {"output", required_argument, NULL, OPT_LIMIT_BASE + VG_LIM_OUTPUT},
    {"tmpfs", required_argument, NULL, OPT_LIMIT_BASE + VG_LIM_TMPFS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The long name the user typed for an option value c. */
static const char *option_name(int c)
{
    for (const struct option *o = options; o->name; o++)
        if (o->val == c)
            return o->name;
    return "?";
}

static int bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "vigil run: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'vigil run --help')\n");
    return VG_EXIT_SETUP;
}

/* Parse a limit flag's value in the unit the limit is kept in. */
static bool parse_limit(enum vg_limit l, const char *s, uint64_t *v)
{
    switch (l) {
    case VG_LIM_TIME:
        return vg_parse_duration(s, v) && *v > 0;
    case VG_LIM_CPU: {
        uint64_t ms;
        if (!vg_parse_duration(s, &ms) || ms == 0)
            return false;
        *v = (ms + 999) / 1000;
        return true;
    }
    case VG_LIM_PROCS:
    case VG_LIM_FILES:
        return vg_parse_u64(s, v) && *v > 0 && *v < (1u << 30);
    default:
        return vg_parse_size(s, v) && *v > 0;
    }
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

static int parse(struct vg_run_opts *o, int argc, char **argv)
{
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+p:o:qh", options, NULL)) != -1) {
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
                return bad("--mode must be 'enforce' or 'dry-run', not '%s'", optarg);
            break;
        case OPT_DRY: o->mode = VG_MODE_DRY_RUN; break;
        case OPT_STACKS: o->stacks_all = true; break;
        case OPT_WORKDIR: o->workdir = optarg; break;
        case OPT_KEEP: o->keep = true; break;
        case OPT_BIND: add_bind(o, optarg, false); break;
        case OPT_BIND_RW: add_bind(o, optarg, true); break;
        case OPT_ENV:
            if (!optarg[0] || optarg[0] == '=')
                return bad("--env needs NAME or NAME=VALUE, not '%s'", optarg);
            add_env(o, optarg);
            break;
        case OPT_ARTIFACT:
            o->artifacts = vg_xrealloc((void *)o->artifacts, (o->nartifacts + 1) * sizeof(char *));
            o->artifacts[o->nartifacts++] = optarg;
            break;
        case OPT_DEGRADED: o->allow_no_landlock = true; break;
        case OPT_CPUS: {
            uint64_t n;
            if (!vg_parse_u64(optarg, &n) || n == 0 || n > 4096)
                return bad("--cpus: '%s' is not a number of CPUs", optarg);
            o->cpus = (unsigned)n;
            break;
        }
        case OPT_ENGINE:
            if (!strcmp(optarg, "ptrace"))
                o->engine = VG_ENGINE_PTRACE;
            else if (!strcmp(optarg, "notify"))
                o->engine = VG_ENGINE_NOTIFY;
            else
                return bad("--engine: '%s' is neither notify nor ptrace", optarg);
            break;
        case 'q': o->quiet = true; break;
        case 'h': fputs(usage_text, stdout); return -1;
        case '?':
            if (optopt)
                return bad("option '-%c' is unknown or needs a value", (char[]){(char)optopt, 0});
            return bad("option '%s' is unknown or needs a value", argv[optind - 1]);
        default: {
            enum vg_limit l = (enum vg_limit)(c - OPT_LIMIT_BASE);
            uint64_t v;
            if (!parse_limit(l, optarg, &v)) {
                char msg[96];
                snprintf(msg, sizeof msg, "--%s: '%%s' is not a valid %s", option_name(c),
                         l == VG_LIM_TIME || l == VG_LIM_CPU ? "duration (e.g. 30s, 500ms)"
                         : l == VG_LIM_PROCS || l == VG_LIM_FILES ? "count" : "size (e.g. 64M)");
                return bad(msg, optarg);
            }
            o->limits.v[l] = v;
            o->limits.set[l] = true;
        }
        }
    }
    if (optind >= argc)
        return bad("%s", "missing COMMAND: usage is vigil run [OPTIONS] -- COMMAND [ARGS...]");
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
    int r = parse(&o, argc, argv);
    if (r != 0) {
        free_opts(&o);
        return r < 0 ? 0 : r;
    }
    r = vg_run(&o);
    free_opts(&o);
    return r;
}
