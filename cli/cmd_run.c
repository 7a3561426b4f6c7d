/* cmd_run.c: `vigil run [OPTIONS] -- COMMAND [ARGS...]`: parse the command
 * line into a vg_run_opts and hand it to the tracer. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "run/run.h"
#include "launcher/hostuid.h"
#include "launcher/sandbox.h"
#include "util/escape.h"

static const char usage_text[] =
    "usage: vigil run [OPTIONS] [--] COMMAND [ARGS...]\n"
    "       vigil run --hold FD [OPTIONS]\n"
    "\n"
    "Run COMMAND in a fresh sandbox, decide every file, network and exec attempt\n"
    "against a policy, and record each decision in a msgpack log.\n"
    "\n";

static const char usage_tail[] =
    "\n"
    "Exit status: the candidate's; 124 time limit; 125 vigil failed; 126 cannot\n"
    "execute; 127 not found; 128+N killed by signal N (a CPU limit: 152, SIGXCPU;\n"
    "a memory limit under a cgroup: 137, SIGKILL).\n";

/* VG_OPT_CHOICE and VG_OPT_SET write these enums as ints. */
_Static_assert(sizeof(enum vg_mode) == sizeof(int), "--mode is kept as an int");
_Static_assert(sizeof(enum vg_py_frames) == sizeof(int), "--py-frames is kept as an int");

static const char *const engine_names[] = {"notify", "ptrace", NULL};
static const char *const mode_names[] = {
    [VG_MODE_ENFORCE] = "enforce", [VG_MODE_DRY_RUN] = "dry-run", NULL,
};
static const char *const py_frames_names[] = {
    [VG_PYF_REFUSED] = "refused", [VG_PYF_ALL] = "all", [VG_PYF_OFF] = "off", NULL,
};

static int set_bind(void *dst, const char *arg, struct vg_err *err);
static int set_bind_rw(void *dst, const char *arg, struct vg_err *err);
static int set_env(void *dst, const char *arg, struct vg_err *err);
static int set_engine(void *dst, const char *arg, struct vg_err *err);
static int set_host_uid(void *dst, const char *arg, struct vg_err *err);

#define AT(field) offsetof(struct vg_run_opts, field)

static const struct vg_opt rows[] = {
    {"policy", 'p', "FILE|NAME", "policy file, or a shipped policy by name (python, c,\n"
     "...: 'vigil check --list')", .def_text = "the built-in default.policy",
     .kind = VG_OPT_STRING, .off = AT(policy_path)},
    {"image", 0, "IMAGE", "run on a stored image's tree (a name or digest:\n"
     "'vigil image ls'), read-only, for the host's /usr, /etc", .def_text = "the policy's 'image', else\n"
     "the host's trees", .kind = VG_OPT_STRING, .off = AT(image)},
    {"log", 'o', "FILE", "event log", .def_text = "a new file in\n"
     "$XDG_STATE_HOME/vigil or ~/.local/state/vigil", .kind = VG_OPT_STRING, .off = AT(log_path)},
    {"result", 0, "FILE", "write a JSON result record (also when vigil fails)",
     .kind = VG_OPT_STRING, .off = AT(result_path)},
    {"task-id", 0, "ID", "recorded in the log and the result",
     .kind = VG_OPT_STRING, .off = AT(task_id)},
    {"hold", 0, "FD", "a prepared sandbox, no COMMAND: build it, send \"ready\"\n"
     "on the AF_UNIX SOCK_SEQPACKET socket FD, and take the command,\n"
     "its stdin/stdout/stderr, log and result from it (vigil serve's pool)",
     .kind = VG_OPT_UINT, .off = AT(hold_fd), .min = 3, .max = INT_MAX,
     .seen = VG_OPT_SEEN(struct vg_run_opts, hold)},
    {"sign-key", 0, "KEY", "sign the log's seal with this ed25519 private key\n"
     "(openssl genpkey -algorithm ed25519 -out KEY): 'vigil verify --key'\n"
     "then shows the log is the one vigil wrote, whole",
     .kind = VG_OPT_STRING, .off = AT(sign_key)},
    {"mode", 0, "MODE", "enforce, or dry-run: record, refuse nothing", .def = "enforce",
     .kind = VG_OPT_CHOICE, .off = AT(mode), .choices = mode_names},
    {"dry-run", 0, NULL, "same as --mode dry-run",
     .kind = VG_OPT_SET, .off = AT(mode), .value = VG_MODE_DRY_RUN},
    {"stacks", 0, NULL, "record each audited call's stack, not just refusals'",
     .kind = VG_OPT_FLAG, .off = AT(stacks_all)},
    {"py-frames", 0, "WHICH", "the Python stack of a CPython caller: refused\n"
     "(refusals, would-deny/would-kill included), all, off", .def = "refused",
     .kind = VG_OPT_CHOICE, .off = AT(py_frames), .choices = py_frames_names},
    {"workdir", 0, "DIR", "the candidate's writable cwd: a host directory, kept",
     .def_text = "/tmp/work in the sandbox's own /tmp,\n"
     "gone with it; with --keep, a new host directory",
     .kind = VG_OPT_STRING, .off = AT(workdir)},
    {"keep", 0, NULL, "keep the working directory: without --workdir, make it\n"
     "on the host (in $TMPDIR or /tmp) and say its path",
     .kind = VG_OPT_FLAG, .off = AT(keep)},
    {"bind", 0, "SRC[:DST]", "make SRC visible read-only (at DST)",
     .kind = VG_OPT_CALL, .set = set_bind},
    {"bind-rw", 0, "SRC[:DST]", "make SRC visible writable (at DST)",
     .kind = VG_OPT_CALL, .set = set_bind_rw},
    {"env", 0, "NAME[=VALUE]", "pass NAME through, or set it",
     .kind = VG_OPT_CALL, .set = set_env},
    {"artifact", 0, "PATH", "hash and show PATH as an executed artifact (repeatable),\n"
     "besides every argument naming a regular file",
     .kind = VG_OPT_LIST, .off = AT(artifacts), .count = AT(nartifacts)},
    {"tail", 0, "SIZE", "how much of each stream the result keeps", .def = "4k",
     .kind = VG_OPT_SIZE, .off = AT(tail), .seen = VG_OPT_SEEN(struct vg_run_opts, tail_set)},
    {"no-forward", 0, NULL, "do not pass the candidate's output on (still captured)",
     .kind = VG_OPT_FLAG, .off = AT(no_forward)},
    {"dns-upstream", 0, "IP[:PORT]", "where vigil's resolver asks the names the policy\n"
     "allows", .def_text = "the host's /etc/resolv.conf",
     .kind = VG_OPT_STRING, .off = AT(dns_upstream)},
    {"allow-degraded", 0, NULL, "run even if Landlock is unavailable",
     .kind = VG_OPT_FLAG, .off = AT(allow_no_landlock)},
    {"engine", 0, "ENGINE", "notify: seccomp user notification, opens carried out\n"
     "by vigil; ptrace: seccomp RET_TRACE + ptrace stops", .def_text = "notify, or ptrace with a note where the\n"
     "kernel lacks what notify needs",
     .kind = VG_OPT_CALL, .set = set_engine, .choices = engine_names},
    {"quiet", 'q', NULL, "no summary line, only errors (without -o the log is\nthe latest, which 'vigil log' and 'vigil view' open)", .kind = VG_OPT_FLAG, .off = AT(quiet)},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
    {.heading = "limits (override the policy's; one table, vigil-policy(5)):",
     .kind = VG_OPT_LIMITS, .off = AT(limits)},
    {"cpuset", 0, "LIST", "run the sandbox and vigil on these CPUs (0-3,6; one\n"
     "CPU halves the cost of audited calls on VMs)", .kind = VG_OPT_STRING, .off = AT(cpuset)},
    {"no-cgroups", 0, NULL, "hold every limit by rlimits, as for an unprivileged\n"
     "caller (memory: address space)", .kind = VG_OPT_FLAG, .off = AT(no_cgroups)},
    {"host-uid", 0, "UID", "root only: the candidate's host uid and gid, one of\n"
     "this run's own (no account or process of the host has it)",
     .def_text = "65534 under root, else the caller", .kind = VG_OPT_CALL, .set = set_host_uid},
};

static const struct vg_example examples[] = {
    {"vigil run -p python -o run.msgpack --result r.json -- python3 cand.py",
     "run cand.py under the shipped python policy; log and result to files"},
    {"vigil run --image py312 -p python -- python3 cand.py",
     "grade cand.py on the stored image py312, not on the host's /usr"},
    {"vigil run --dry-run -p python -- python3 cand.py",
     "refuse nothing and record what the policy would have refused"},
    {"vigil run --timeout 10s --memory 256M -- ./a.out < input.txt",
     "run a compiled candidate on stdin with tighter limits than the policy's"},
};

const struct vg_optcmd vg_run_optcmd = {
    .name = "run", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows), .in_order = true,
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

/* A usage error: the message goes into err (printed once by the caller,
 * and into the result record when --result came before it). */
static int bad(struct vg_err *err, const char *what)
{
    char copy[sizeof err->msg];
    snprintf(copy, sizeof copy, "%s", what);
    vg_errf(err, "%s (see 'vigil run --help')", copy);
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

/* The sources are checked when the sandbox is planned: here, only split. */
static int set_bind(void *dst, const char *arg, struct vg_err *err)
{
    (void)err;
    add_bind(dst, arg, false);
    return 0;
}

static int set_bind_rw(void *dst, const char *arg, struct vg_err *err)
{
    (void)err;
    add_bind(dst, arg, true);
    return 0;
}

static int set_env(void *dst, const char *arg, struct vg_err *err)
{
    struct vg_run_opts *o = dst;
    if (!arg[0] || arg[0] == '=') {
        vg_errf(err, "--env needs NAME or NAME=VALUE, not '%s'", arg);
        return -1;
    }
    o->env = vg_xrealloc(o->env, (o->nenv + 1) * sizeof *o->env);
    const char *eq = strchr(arg, '=');
    struct vg_env e;
    e.name = eq ? vg_xstrndup(arg, (size_t)(eq - arg)) : vg_xstrdup(arg);
    e.value = eq ? vg_xstrdup(eq + 1) : NULL;
    o->env[o->nenv++] = e;
    return 0;
}

/* Not a VG_OPT_CHOICE: not giving it (VG_ENGINE_DEFAULT) differs from
 * giving notify, which says so when it cannot be had. */
static int set_engine(void *dst, const char *arg, struct vg_err *err)
{
    struct vg_run_opts *o = dst;
    if (!strcmp(arg, "ptrace"))
        o->engine = VG_ENGINE_PTRACE;
    else if (!strcmp(arg, "notify"))
        o->engine = VG_ENGINE_NOTIFY;
    else {
        vg_errf(err, "--engine must be 'notify' or 'ptrace', not '%s'", arg);
        return -1;
    }
    return 0;
}

/* The number only: who may give one, and which, is checked when the run
 * starts (launcher/hostuid.h), where the result record can tell it. */
static int set_host_uid(void *dst, const char *arg, struct vg_err *err)
{
    struct vg_run_opts *o = dst;
    return vg_host_uid_parse(arg, &o->host_uid, err);
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

/* 0 to run, -1 for --help, else the exit status of a usage error. */
static int parse(struct vg_run_opts *o, int argc, char **argv, struct vg_err *err)
{
    int first, rc = vg_opts_parse(&vg_run_optcmd, argc, argv, o, &first, err);
    if (rc == VG_OPTS_HELP) {
        vg_opts_help(&vg_run_optcmd, stdout);
        return -1;
    }
    if (rc < 0)
        return bad(err, err->msg);
    if (o->hold && first < argc)
        return bad(err, "--hold takes no COMMAND: the request on its socket names it");
    if (o->hold)
        return 0;
    if (first >= argc)
        return bad(err, "missing COMMAND: usage is vigil run [OPTIONS] -- COMMAND [ARGS...]");
    o->argv = argv + first;
    o->argc = argc - first;
    return 0;
}

/* The kernel's argv strings, from main's argv[0] (right before ours) to
 * the end of our last argument, if they lie end to end as the kernel put
 * them: the sandbox renames itself by writing there.  An argv built by
 * main (`vigil help run`) is not contiguous, and gets no area. */
static void argv_area(int argc, char **argv, struct vg_run_opts *o)
{
    for (int i = 0; i < argc; i++)
        if (argv[i] != argv[i - 1] + strlen(argv[i - 1]) + 1)
            return;
    o->argv_area = argv[-1];
    o->argv_area_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[-1]);
}

int vg_cmd_run(int argc, char **argv)
{
    struct vg_run_opts o = {0};
    argv_area(argc, argv, &o);
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
