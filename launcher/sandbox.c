/* sandbox.c: see sandbox.h.
 *
 * Process layout:
 *   vigil (supervisor, host) --clone(NEWUSER|NEWPID|NEWNS|...)--> init
 *   init (pid 1 inside): builds the mounts, forks the candidate, then only
 *        waits; when the candidate exits, init exits and the kernel kills
 *        whatever is left in the pid namespace (daemons included).
 *   candidate (pid 2): drops every privilege, installs Landlock and the
 *        seccomp filter, execs the command.
 * init is traced from the start with PTRACE_O_EXITKILL, so the candidate
 * and all its descendants are traced too and die with the supervisor. */
#include "launcher/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "launcher/hostuid.h"
#include "launcher/landlock.h"
#include "launcher/late.h"
#include "net/dns.h"
#include "net/net.h"

struct pipes {
    int out[2], err[2], go[2], report[2];
    /* notify engine only (else -1): the candidate tells the supervisor
     * its listener's and its Landlock ruleset's fd numbers here (the
     * kernel adds its pid) */
    int chan[2];
    /* held only (else -1): pid 1 says "r" here once built, and reads the
     * late plan (launcher/late.h) */
    int late[2];
    unsigned long filter_flags;
    /* --host-uid only (else -1): pid 1 says "k" here once it is uid 0 again */
    int ids[2];
    /* plan->dns only (else -1): pid 1 sends the resolver's socket here */
    int dns[2];
};

/* ---- inside the sandbox ---- */

static _Noreturn void report_exit(int fd, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static _Noreturn void report_exit(int fd, int code, const char *fmt, ...)
{
    struct vg_report r = {.code = code};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r.msg, sizeof r.msg, fmt, ap);
    va_end(ap);
    (void)!write(fd, &r, sizeof r);
    _exit(code);
}

static int set_limit(int res, uint64_t v)
{
    struct rlimit rl = {.rlim_cur = v, .rlim_max = v};
    return setrlimit(res, &rl);
}

/* Only the limits no cgroup holds (limits.c decided which): RLIMIT_AS
 * under a memory cgroup would only break threads and JIT runtimes. */
static int apply_rlimits(const struct vg_limits *l, const struct vg_enforce *e)
{
    for (int i = 0; i < VG_LIM_COUNT; i++) {
        int res = vg_limit_rlimit(i);
        uint64_t v;
        if (res < 0 || e->how[i] != VG_MECH_RLIMIT || !vg_enforce_rlimit(e, l, res, &v))
            continue;
        /* CPU: SIGXCPU at the limit, SIGKILL one second later. */
        struct rlimit rl = {.rlim_cur = v, .rlim_max = v + (res == RLIMIT_CPU)};
        if (setrlimit(res, &rl) < 0)
            return -1;
    }
    return set_limit(RLIMIT_CORE, 0);
}

/* Empty the bounding and ambient sets: needs CAP_SETPCAP, so it runs
 * before the uid changes. */
static int drop_bounding_caps(void)
{
    for (int c = 0; c <= CAP_LAST_CAP; c++)
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
            return -1;
    return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ? -1 : 0;
}

/* No capability left in any set, and no way back to one. */
static int drop_caps(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2] = {{0}};
    return (int)syscall(VG_NR_capset, &h, d);
}

/* PATH lookup done before the filter is in place, so that the audited
 * execve is the one real attempt rather than one per PATH entry. */
static char *find_program(const char *name, char *const envp[], int *code)
{
    *code = 0;
    if (strchr(name, '/')) {
        if (access(name, F_OK) < 0) {
            *code = VG_EXIT_NOTFOUND;
            return NULL;
        }
        return vg_xstrdup(name);
    }
    const char *path = "/usr/bin:/bin";
    for (char *const *e = envp; *e; e++)
        if (!strncmp(*e, "PATH=", 5))
            path = *e + 5;
    char *copy = vg_xstrdup(path), *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char *cand = vg_xasprintf("%s/%s", dir, name);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            free(copy);
            return cand;
        }
        free(cand);
    }
    free(copy);
    *code = VG_EXIT_NOTFOUND;
    return NULL;
}

/* The supervisor blocks and ignores signals for itself; the candidate must
 * start as any program does: nothing blocked, every disposition default
 * (exec resets handlers but keeps "ignore" and the mask). */
static void default_signals(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* The raw call: libc refuses to touch its own reserved real-time
     * signals (32, 33), which an ignoring parent may have passed on. */
    struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
    } dfl = {.handler = SIG_DFL};
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            syscall(VG_NR_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
}

/* The candidate's identity and restrictions: no capabilities, uid/gid
 * VG_SANDBOX_*, no_new_privs, Landlock.  *ruleset keeps the Landlock
 * ruleset (or -1): the notify engine's crew threads restrict themselves
 * with it, so what they open for the candidate the candidate could open. */
static int lock_down(const struct vg_plan *plan, int *ruleset, struct vg_err *err)
{
    if (drop_bounding_caps() < 0)
        return vg_errf(err, "drop capabilities: %s", strerror(errno)), -1;
    if (plan->root_caller && setgroups(0, NULL) < 0)
        return vg_errf(err, "setgroups: %s", strerror(errno)), -1;
    if (setresgid(VG_SANDBOX_GID, VG_SANDBOX_GID, VG_SANDBOX_GID) < 0 ||
        setresuid(VG_SANDBOX_UID, VG_SANDBOX_UID, VG_SANDBOX_UID) < 0)
        return vg_errf(err, "drop to uid %d: %s", VG_SANDBOX_UID, strerror(errno)), -1;
    if (drop_caps() < 0)
        return vg_errf(err, "drop capabilities: %s", strerror(errno)), -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return vg_errf(err, "no_new_privs: %s", strerror(errno)), -1;
    struct vg_err lerr = {{0}};
    *ruleset = -1;
    if (plan->landlock_abi > 0 &&
        vg_landlock_apply(&plan->landlock, plan->landlock_abi, ruleset, &lerr) < 0)
        return vg_errf(err, "landlock: %s", lerr.msg), -1;
    return 0;
}

/* Notify engine: install the filter with a listener and let the
 * supervisor take a copy of it and of the Landlock ruleset (pidfd_getfd)
 * before exec closes ours.  Only write and read from here on: neither is
 * audited, so nothing waits on a listener nobody holds yet. */
static void hand_over_listener(const struct vg_bpf *cand, const struct pipes *p, int ruleset,
                               int rep)
{
    int fds[2] = {vg_filter_install_flags(cand, p->filter_flags), ruleset};
    if (fds[0] < 0)
        report_exit(rep, VG_EXIT_SETUP, "seccomp listener: %s", strerror(errno));
    char ack;
    if (write(p->chan[1], fds, sizeof fds) != (ssize_t)sizeof fds || read(p->chan[1], &ack, 1) != 1)
        report_exit(rep, VG_EXIT_SETUP, "hand the listener to vigil: %s", strerror(errno));
    close(fds[0]);
    close(p->chan[1]);
}

static _Noreturn void candidate_main(const struct vg_plan *plan, const struct vg_bpf *cand,
                                     struct pipes *p)
{
    int rep = p->report[1];
    struct vg_err err = {{0}};
    default_signals();
    if (setsid() < 0)
        report_exit(rep, VG_EXIT_SETUP, "setsid: %s", strerror(errno));
    if (dup2(p->out[1], 1) < 0 || dup2(p->err[1], 2) < 0)
        report_exit(rep, VG_EXIT_SETUP, "dup2: %s", strerror(errno));
    /* Every inherited descriptor but 0, 1, 2 is gone at exec; the report
     * pipe among them, which is how the supervisor learns exec happened. */
    if (syscall(VG_NR_close_range, 3, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
        report_exit(rep, VG_EXIT_SETUP, "close_range: %s", strerror(errno));
    if (chdir(plan->cwd) < 0)
        report_exit(rep, VG_EXIT_SETUP, "chdir %s: %s", plan->cwd, strerror(errno));
    int ruleset;
    if (lock_down(plan, &ruleset, &err) < 0)
        report_exit(rep, VG_EXIT_SETUP, "%s", err.msg);

    int code;
    char *prog = find_program(plan->argv[0], plan->envp, &code);
    if (!prog)
        report_exit(rep, code, "%s: command not found in the sandbox", plan->argv[0]);
    if (p->chan[1] >= 0)
        hand_over_listener(cand, p, ruleset, rep);
    else if (vg_filter_install(cand) < 0)
        report_exit(rep, VG_EXIT_SETUP, "seccomp: %s", strerror(errno));
    if (ruleset >= 0)
        close(ruleset);
    /* Last, so that nothing of ours has to live within the candidate's
     * address-space and file limits (a sanitizer build could not). */
    if (apply_rlimits(&plan->limits, plan->enforce) < 0)
        report_exit(rep, VG_EXIT_SETUP, "setrlimit: %s", strerror(errno));
    execve(prog, plan->argv, plan->envp);
    int e = errno;
    report_exit(rep, e == ENOENT ? VG_EXIT_NOTFOUND : VG_EXIT_NOEXEC, "%s: cannot execute: %s",
                plan->argv[0], strerror(e));
}

/* What /proc/PID/cmdline shows of a process of ours in the sandbox: not
 * vigil's command line, which names the log, the result and the task. */
static void set_name(const struct vg_plan *plan, const char *name)
{
    size_t n = strlen(name);
    if (!plan->argv_area || plan->argv_area_len <= n)
        return;
    memset(plan->argv_area, 0, plan->argv_area_len);
    memcpy(plan->argv_area, name, n);
}

/* pid 1 never execs, so it held every file vigil had open at the clone:
 * the log being written, the result, vigil's sockets and pipes.  Only
 * Landlock's ptrace scoping kept pidfd_getfd off them for a candidate of an
 * unprivileged vigil, which has init's uid (a run without Landlock,
 * --allow-degraded, had nothing else).  init needs one of them: the cgroup
 * reaper's pipe, whose EOF must come only once the sandbox is gone
 * (launcher/cgroup.c); 0-2 stay too (vigil's own stdin, stdout, stderr). */
static int close_inherited(const struct vg_plan *plan)
{
    const struct vg_cgroup *cg = plan->enforce ? &plan->enforce->cg : NULL;
    int keep = cg && cg->reaper ? cg->to_reaper : -1;
    if (keep < 3)
        return (int)syscall(VG_NR_close_range, 3, ~0u, 0);
    if (keep > 3 && syscall(VG_NR_close_range, 3, (unsigned)keep - 1, 0) < 0)
        return -1;
    return (int)syscall(VG_NR_close_range, (unsigned)keep + 1, ~0u, 0);
}

/* A held pid 1, built: say so, then wait for the command (EOF: the
 * supervisor gave up, and so do we).  held is our copy of the plan with
 * the late part in it; the candidate's stdin becomes our 0, which it
 * inherits as it does vigil's in a run that never waited. */
static const struct vg_plan *take_late(const struct vg_plan *plan, struct vg_plan *held,
                                       int sock, int rep)
{
    *held = *plan;
    if (write(sock, "r", 1) != 1)
        _exit(VG_EXIT_SETUP);
    int fd = vg_late_recv(sock, held);
    if (fd < 0)
        _exit(VG_EXIT_SETUP);
    if (fd != 0 && (dup2(fd, 0) < 0 || close(fd) < 0))
        report_exit(rep, VG_EXIT_SETUP, "the candidate's stdin: %s", strerror(errno));
    close(sock);
    return held;
}

/* pid 1: reap until the candidate is gone, then leave (which ends every
 * other process in the namespace). */
static _Noreturn void init_wait(pid_t cand)
{
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, __WALL);
        if (w == cand)
            _exit(0);
        if (w < 0 && errno == ECHILD)
            _exit(0);
    }
}

/* --host-uid: pid 1 is born with the run's uid as its effective uid (so
 * that the namespace is that uid's).  Once its maps are written it takes
 * uid 0 back, and says so: until then its /proc/PID/ns is closed to
 * pasta, which the supervisor starts only then. */
static void take_back_root(const struct vg_plan *plan, struct pipes *p, int rep)
{
    char maps;
    if (read(p->go[0], &maps, 1) != 1)
        _exit(VG_EXIT_SETUP);
    if (vg_host_uid_child(plan->userns_owner) < 0)
        report_exit(rep, VG_EXIT_SETUP, "take back uid 0 in the sandbox: %s", strerror(errno));
    if (write(p->ids[1], "k", 1) != 1)
        _exit(VG_EXIT_SETUP);
    close(p->ids[1]);
}

static _Noreturn void init_main(const struct vg_plan *plan, const struct vg_bpf *cand,
                                const struct vg_bpf *init, struct pipes *p)
{
    int rep = p->report[1];
    char go;
    close(p->go[1]);
    /* First: a change of credentials clears the death signal. */
    if (p->ids[1] >= 0)
        take_back_root(plan, p, rep);
    /* The supervisor writes one byte once our id maps are in place; EOF
     * means it died before that. */
    if (read(p->go[0], &go, 1) != 1)
        _exit(VG_EXIT_SETUP);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        report_exit(rep, VG_EXIT_SETUP, "pdeathsig: %s", strerror(errno));
    if (sethostname(plan->hostname, strlen(plan->hostname)) < 0)
        report_exit(rep, VG_EXIT_SETUP, "sethostname: %s", strerror(errno));
    if (vg_loopback_up() < 0)
        report_exit(rep, VG_EXIT_SETUP, "bring up loopback: %s", strerror(errno));
    /* the resolver's socket, from here, where its namespace is ours */
    if (p->dns[1] >= 0 && vg_dns_socket_send(p->dns[1], vg_dns_bind()) < 0)
        _exit(VG_EXIT_SETUP);
    if (p->dns[1] >= 0)
        close(p->dns[1]);
    struct vg_err err = {{0}};
    /* Before pasta connects the namespace and before the candidate
     * exists: no packet leaves for the host unfiltered. */
    if (plan->net.egress && vg_nft_block(&plan->net, &err) < 0)
        report_exit(rep, VG_EXIT_SETUP, "%s", err.msg);
    if (vg_setup_execute(plan, &err) < 0)
        report_exit(rep, VG_EXIT_SETUP, "sandbox setup: %s", err.msg);
    /* A second byte: we are in the run's cgroups.  The supervisor moves us
     * while we set up (a move into a v1 cgroup waits for an RCU grace
     * period, milliseconds on a VM), and nothing of the candidate starts
     * before it is done. */
    if (read(p->go[0], &go, 1) != 1)
        _exit(VG_EXIT_SETUP);
    close(p->go[0]);
    struct vg_plan held;
    if (p->late[1] >= 0)
        plan = take_late(plan, &held, p->late[1], rep);

    pid_t c = fork();
    if (c < 0)
        report_exit(rep, VG_EXIT_SETUP, "fork: %s", strerror(errno));
    if (c == 0)
        candidate_main(plan, cand, p);
    /* The plan's argv lives in this memory: blank it once the candidate
     * has its copy. */
    set_name(plan, "vigil-init");
    if (p->chan[1] >= 0)
        close(p->chan[1]);

    close(p->out[1]);
    close(p->err[1]);
    close(rep);
    if (close_inherited(plan) < 0)
        _exit(VG_EXIT_SETUP);
    /* pid 1 never execs, so its bounding set does not matter: emptying
     * its capability sets is enough. */
    if (drop_caps() < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || vg_filter_install(init) < 0)
        _exit(VG_EXIT_SETUP); /* the supervisor sees init die and stops */
    init_wait(c);
}

/* ---- in the supervisor ---- */

static int write_file(pid_t pid, const char *name, const char *text, struct vg_err *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || vg_write_all(fd, text, strlen(text)) < 0) {
        vg_errf(err, "write %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* Inside uid 1000 is the candidate.  For a root caller it maps to an
 * unprivileged host uid, and inside 0 (init, which builds the mounts and
 * must own what it creates) maps to host root. */
static int write_id_maps(const struct vg_plan *plan, pid_t pid, struct vg_err *err)
{
    char map[128];
    if (!plan->root_caller && write_file(pid, "setgroups", "deny", err) < 0)
        return -1;
    if (plan->root_caller)
        snprintf(map, sizeof map, "0 0 1\n%d %u 1\n", VG_SANDBOX_UID, (unsigned)plan->outside_uid);
    else
        snprintf(map, sizeof map, "%d %u 1\n", VG_SANDBOX_UID, (unsigned)plan->outside_uid);
    if (write_file(pid, "uid_map", map, err) < 0)
        return -1;
    if (plan->root_caller)
        snprintf(map, sizeof map, "0 0 1\n%d %u 1\n", VG_SANDBOX_GID, (unsigned)plan->outside_gid);
    else
        snprintf(map, sizeof map, "%d %u 1\n", VG_SANDBOX_GID, (unsigned)plan->outside_gid);
    return write_file(pid, "gid_map", map, err);
}

static void close_pair(int fd[2])
{
    for (int i = 0; i < 2; i++)
        if (fd[i] >= 0) {
            close(fd[i]);
            fd[i] = -1;
        }
}

static const char *userns_hint(int e)
{
    if (e == EPERM || e == ENOSPC || e == EUSERS)
        return " (user namespaces are disabled or exhausted: check sysctl "
               "user.max_user_namespaces and kernel.unprivileged_userns_clone)";
    if (e == EINVAL)
        return " (this kernel lacks a namespace type vigil needs: user, pid, mount, net, ipc, uts, cgroup)";
    return "";
}

/* The notify engine's socket.  SO_PASSCRED on the supervisor's end
 * of chan: the kernel then says which process sent the listener's number,
 * as a pid of the supervisor's own namespace. */
static int notify_channels(struct pipes *p, struct vg_err *err)
{
    int one = 1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p->chan) < 0 ||
        setsockopt(p->chan[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0) {
        vg_errf(err, "notify engine sockets: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* pid 1 is dead (killed and reaped): a report it wrote before is the
 * cause of what failed here (no resolver socket comes from a pid 1 that
 * failed its setup and exited), and the message the user needs. */
static void own_report(int fd, struct vg_err *err)
{
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    struct vg_report r;
    if (poll(&pf, 1, 0) == 1 && read(fd, &r, sizeof r) == (ssize_t)sizeof r) {
        r.msg[sizeof r.msg - 1] = 0;
        vg_errf(err, "%s", r.msg);
    }
}

/* --host-uid: pid 1 may take uid 0 back now that its maps are there; wait
 * until it has (take_back_root).  Nothing to do without. */
static int root_again(struct pipes *p, struct vg_err *err)
{
    char k;
    if (p->ids[0] < 0)
        return 0;
    if (write(p->go[1], "u", 1) != 1 || read(p->ids[0], &k, 1) != 1) {
        vg_errf(err, "the sandbox's pid 1 did not take uid 0 back");
        return -1;
    }
    close_pair(p->ids);
    return 0;
}

int vg_sandbox_start(const struct vg_plan *plan, const struct vg_bpf *cand,
                     const struct vg_bpf *init, vg_attach_fn attach,
                     struct vg_sandbox *sb, struct vg_err *err)
{
    struct pipes p = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1},
                      sb->filter_flags, {-1, -1}, {-1, -1}};
    sb->late_fd = -1;
    if (pipe2(p.out, O_CLOEXEC) < 0 || pipe2(p.err, O_CLOEXEC) < 0 ||
        pipe2(p.go, O_CLOEXEC) < 0 || pipe2(p.report, O_CLOEXEC) < 0) {
        vg_errf(err, "pipe: %s", strerror(errno));
        goto fail;
    }
    vg_egress_init(&sb->egress);
    if (sb->notify && notify_channels(&p, err) < 0)
        goto fail;
    if (plan->userns_owner && pipe2(p.ids, O_CLOEXEC) < 0) {
        vg_errf(err, "pipe: %s", strerror(errno));
        goto fail;
    }
    if (plan->dns && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p.dns) < 0) {
        vg_errf(err, "resolver socket: %s", strerror(errno));
        goto fail;
    }
    if (sb->hold && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p.late) < 0) {
        vg_errf(err, "held sandbox socket: %s", strerror(errno));
        goto fail;
    }
    /* A network namespace of its own whatever the policy says: its own
     * loopback, nothing of the host's (net/net.h). */
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
                          CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWNET | SIGCHLD;
    fflush(NULL);
    /* Born in the run's v2 group where it has one (no move, no wait); a
     * kernel that refuses that clone3 gets a plain clone and the move. */
    int v2 = vg_cgroup_v2_open(&plan->enforce->cg);
    pid_t pid = v2 >= 0 ? vg_clone_owned(flags, plan->userns_owner, v2) : -1;
    bool born_in_v2 = pid >= 0;
    if (pid < 0)
        pid = vg_clone_owned(flags, plan->userns_owner, -1);
    if (v2 >= 0)
        close(v2);  /* in pid 1 too: nothing of it is the sandbox's */
    if (pid < 0) {
        int e = errno;
        vg_errf(err, "cannot create the sandbox's namespaces: %s%s", strerror(e), userns_hint(e));
        goto fail;
    }
    if (pid == 0) {
        close(p.out[0]);
        close(p.err[0]);
        close(p.report[0]);
        if (p.late[0] >= 0)
            close(p.late[0]);
        if (p.ids[0] >= 0)
            close(p.ids[0]);
        if (p.dns[0] >= 0)
            close(p.dns[0]);
        init_main(plan, cand, init, &p);
    }
    close(p.go[0]);
    p.go[0] = -1;
    if (p.late[1] >= 0)
        close(p.late[1]);
    p.late[1] = -1;
    if (p.ids[1] >= 0)
        close(p.ids[1]);
    p.ids[1] = -1;
    if (p.dns[1] >= 0)
        close(p.dns[1]);
    p.dns[1] = -1;
    if (write_id_maps(plan, pid, err) < 0 || root_again(&p, err) < 0)
        goto kill;
    if (attach(pid, err) < 0)
        goto kill;
    /* pasta connects the namespace while pid 1 builds the mounts */
    uid_t owner = plan->userns_owner ? plan->userns_owner : geteuid();
    if (plan->net.egress &&
        vg_egress_start(&sb->egress, pid, owner, vg_cgroup_bill_self, err) < 0)
        goto kill;
    if (write(p.go[1], "g", 1) != 1) {
        vg_errf(err, "start the sandbox: %s", strerror(errno));
        goto kill;
    }
    /* While pid 1 sets up its mounts; it forks the candidate only after
     * the second byte, so nothing of the candidate runs outside its groups,
     * nor before its way out is there. */
    if (vg_cgroup_join(&plan->enforce->cg, pid, born_in_v2, err) < 0)
        goto kill;
    /* Before the candidate can ask: its first query finds the socket. */
    if (plan->dns && (sb->dns_fd = vg_dns_socket_recv(p.dns[0], err)) < 0)
        goto kill;
    if (plan->net.egress && vg_egress_ready(&sb->egress, err) < 0)
        goto kill;
    if (write(p.go[1], "c", 1) != 1) {
        vg_errf(err, "start the sandbox: %s", strerror(errno));
        goto kill;
    }
    /* Held: once pid 1 says it is built, nothing of the sandbox is left
     * to make but the candidate; EOF is a setup that failed (its report). */
    char built;
    if (sb->hold && read(p.late[0], &built, 1) != 1) {
        vg_errf(err, "the held sandbox did not get ready");
        goto kill;
    }
    close_pair(p.go);
    close_pair(p.dns);
    close(p.out[1]);
    close(p.err[1]);
    close(p.report[1]);
    if (sb->notify)
        close(p.chan[1]);
    sb->late_fd = p.late[0];
    sb->listener_chan = p.chan[0];
    sb->init_pid = pid;
    sb->out_fd = p.out[0];
    sb->err_fd = p.err[0];
    sb->report_fd = p.report[0];
    return 0;
kill:
    if (sb->dns_fd >= 0)
        close(sb->dns_fd);
    sb->dns_fd = -1;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
        ;
    own_report(p.report[0], err);
    vg_egress_stop(&sb->egress);
fail:
    close_pair(p.out);
    close_pair(p.err);
    close_pair(p.go);
    close_pair(p.report);
    close_pair(p.chan);
    close_pair(p.late);
    close_pair(p.ids);
    close_pair(p.dns);
    return -1;
}

int vg_sandbox_go(struct vg_sandbox *sb, const struct vg_plan *plan, int stdin_fd,
                  struct vg_err *err)
{
    int rc = vg_late_send(sb->late_fd, plan, stdin_fd, err);
    close(sb->late_fd);
    sb->late_fd = -1;
    return rc;
}

void vg_sandbox_abort(struct vg_sandbox *sb)
{
    kill(sb->init_pid, SIGKILL);
    while (waitpid(sb->init_pid, NULL, __WALL) < 0 && errno == EINTR)
        ;
    vg_egress_stop(&sb->egress);
    vg_sandbox_close(sb);
}

void vg_sandbox_close(struct vg_sandbox *sb)
{
    int *fds[] = {&sb->out_fd, &sb->err_fd, &sb->report_fd, &sb->listener_chan, &sb->dns_fd,
                  &sb->late_fd};
    for (size_t i = 0; i < VG_ARRAY_LEN(fds); i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}
