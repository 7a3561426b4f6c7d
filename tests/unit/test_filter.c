/* test_filter.c: the candidate's seccomp filter, judged by the kernel.
 * Each probe makes one system call in a child that installed the filter
 * and has no tracer, so what happens is the BPF program's doing alone:
 * a baseline call must die in a SIGSYS (RET_TRAP) without running, an
 * audited one fails ENOSYS (RET_TRACE with no tracer), as does a number
 * without a row or of another ABI (default-deny), a refused row fails with
 * its errno, anything else runs.  (tests/unit/test_sysnr.c checks every
 * number in a BPF interpreter; these probes are the kernel's word.)
 * vg_filter_classify, which the supervisor uses to tell its own stops and
 * signals from a candidate's, must say the same for every probe.  The
 * probes' arguments are invalid, so a call that does run fails harmlessly. */
#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "launcher/filter.h"
#include "core/syscalls.h"
#include "tests/unit/check.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a SIGSYS from RET_TRAP */
#endif
#define NEW_LISTENER (1u << 3) /* SECCOMP_FILTER_FLAG_NEW_LISTENER */
#define TSYNC 1u               /* SECCOMP_FILTER_FLAG_TSYNC */
#define HIGH 0xdead000000000000ull /* bits the kernel drops from an int argument */
#define X32 0x40000000 /* __X32_SYSCALL_BIT */

struct probe {
    const char *what;
    int nr;
    uint64_t a[6];
    enum vg_filter_act want;
};

static const struct probe probes[] = {
    {"getpid", VG_NR_getpid, {0}, VG_FILTER_ALLOW},
    {"ioctl FIONREAD", VG_NR_ioctl, {(uint64_t)-1, FIONREAD}, VG_FILTER_ALLOW},
    {"ioctl TIOCSTI", VG_NR_ioctl, {(uint64_t)-1, TIOCSTI}, VG_FILTER_BASELINE},
    {"ioctl TIOCSTI, high bits", VG_NR_ioctl, {(uint64_t)-1, HIGH | TIOCSTI}, VG_FILTER_BASELINE},
    {"ioctl TIOCLINUX", VG_NR_ioctl, {(uint64_t)-1, TIOCLINUX}, VG_FILTER_BASELINE},
    {"socket inet, bad type", VG_NR_socket, {AF_INET, 12345}, VG_FILTER_ALLOW},
    {"socket unix, bad type", VG_NR_socket, {AF_UNIX, 12345}, VG_FILTER_ALLOW},
    {"socket netlink", VG_NR_socket, {AF_NETLINK, 12345}, VG_FILTER_BASELINE},
    {"socket unspec", VG_NR_socket, {AF_UNSPEC, 12345}, VG_FILTER_BASELINE},
    {"socket inet, high bits", VG_NR_socket, {HIGH | AF_INET, 12345}, VG_FILTER_BASELINE},
    {"clone SIGHAND (EINVAL)", VG_NR_clone, {CLONE_SIGHAND}, VG_FILTER_ALLOW},
    {"clone NEWUSER|FS", VG_NR_clone, {CLONE_NEWUSER | CLONE_FS}, VG_FILTER_BASELINE},
    {"clone NEWNET|SIGHAND", VG_NR_clone, {CLONE_NEWNET | CLONE_SIGHAND}, VG_FILTER_BASELINE},
    {"clone UNTRACED|SIGHAND", VG_NR_clone, {CLONE_UNTRACED | CLONE_SIGHAND}, VG_FILTER_BASELINE},
    {"clone3", VG_NR_clone3, {0}, VG_FILTER_ENOSYS},
    {"seccomp filter", VG_NR_seccomp, {SECCOMP_SET_MODE_FILTER, TSYNC, 0}, VG_FILTER_ALLOW},
    {"seccomp listener", VG_NR_seccomp, {SECCOMP_SET_MODE_FILTER, NEW_LISTENER, 0},
     VG_FILTER_BASELINE},
    {"seccomp listener+tsync", VG_NR_seccomp, {SECCOMP_SET_MODE_FILTER, NEW_LISTENER | TSYNC, 0},
     VG_FILTER_BASELINE},
    {"seccomp listener, high bits", VG_NR_seccomp,
     {HIGH | SECCOMP_SET_MODE_FILTER, HIGH | NEW_LISTENER, 0}, VG_FILTER_BASELINE},
    {"seccomp action avail", VG_NR_seccomp, {SECCOMP_GET_ACTION_AVAIL, NEW_LISTENER, 0},
     VG_FILTER_ALLOW},
    {"io_uring_setup", VG_NR_io_uring_setup, {0}, VG_FILTER_BASELINE},
    {"ptrace", VG_NR_ptrace, {PTRACE_PEEKDATA, 0}, VG_FILTER_BASELINE},
    {"unshare", VG_NR_unshare, {0}, VG_FILTER_BASELINE},
    {"openat", VG_NR_openat, {(uint64_t)-1, 0}, VG_FILTER_AUDIT},
    {"sendto, no address", VG_NR_sendto, {(uint64_t)-1, 0, 0, 0, 0, 0}, VG_FILTER_ALLOW},
    {"sendto, address", VG_NR_sendto, {(uint64_t)-1, 0, 0, 0, 1, 0}, VG_FILTER_AUDIT},
    /* default-deny: a number without a row, the xattr calls by path that
     * have no decoder, another ABI */
    {"number 470 (no row)", 470, {0}, VG_FILTER_ENOSYS},
    {"number 1000 (no row)", 1000, {0}, VG_FILTER_ENOSYS},
    {"getxattrat", VG_NR_getxattrat, {(uint64_t)-1, 0}, VG_FILTER_ENOSYS},
    {"setxattrat", VG_NR_setxattrat, {(uint64_t)-1, 0}, VG_FILTER_ENOSYS},
    {"x32 getpid", X32 | VG_NR_getpid, {0}, VG_FILTER_ENOSYS},
    /* a no-op for root if it ran */
    {"settimeofday (refused row)", VG_NR_settimeofday, {0, 0}, VG_FILTER_REFUSED},
    /* socket options that reroute a packet */
    {"setsockopt IPV6_RTHDR", VG_NR_setsockopt, {(uint64_t)-1, IPPROTO_IPV6, IPV6_RTHDR},
     VG_FILTER_BASELINE},
    {"setsockopt IPV6_HOPOPTS, high bits", VG_NR_setsockopt,
     {(uint64_t)-1, HIGH | IPPROTO_IPV6, HIGH | IPV6_HOPOPTS}, VG_FILTER_BASELINE},
    {"setsockopt IP_OPTIONS", VG_NR_setsockopt, {(uint64_t)-1, IPPROTO_IP, IP_OPTIONS},
     VG_FILTER_BASELINE},
    {"setsockopt SO_MARK", VG_NR_setsockopt, {(uint64_t)-1, SOL_SOCKET, SO_MARK},
     VG_FILTER_BASELINE},
    {"setsockopt IPV6_V6ONLY", VG_NR_setsockopt, {(uint64_t)-1, IPPROTO_IPV6, IPV6_V6ONLY},
     VG_FILTER_ALLOW},
    {"setsockopt SO_REUSEADDR", VG_NR_setsockopt, {(uint64_t)-1, SOL_SOCKET, SO_REUSEADDR},
     VG_FILTER_ALLOW},
    {"setsockopt IP_TOS", VG_NR_setsockopt, {(uint64_t)-1, IPPROTO_IP, IP_TOS}, VG_FILTER_ALLOW},
};

/* What the kernel did, as the child's exit status says. */
enum outcome { RAN = 10, TRAPPED, NOSYS, REFUSED, CHILD_FAILED };

static volatile sig_atomic_t trapped_nr = -1;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code == SYS_SECCOMP)
        trapped_nr = si->si_syscall;
}

/* In a child: install the filter, make the call, report (exit status), or
 * with how == ERRNO exit with the call's errno. */
static int run_probe(const struct vg_bpf *bpf, const struct probe *p, enum vg_baseline_how how)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
        if (sigaction(SIGSYS, &sa, NULL) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            vg_filter_install(bpf) < 0)
            _exit(CHILD_FAILED);
        errno = 0;
        long r = syscall(p->nr, p->a[0], p->a[1], p->a[2], p->a[3], p->a[4], p->a[5]);
        if (how == VG_BASELINE_ERRNO)
            _exit(r < 0 ? errno : 0);
        if (trapped_nr == p->nr)
            _exit(TRAPPED);
        if (r < 0 && errno == ENOSYS)
            _exit(NOSYS);
        const struct vg_sysrow *row = vg_sys_row(p->nr);
        _exit(r < 0 && row && row->kind == VG_SK_REFUSED && errno == row->deny_errno ? REFUSED
                                                                                     : RAN);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static const enum outcome expected[] = {
    [VG_FILTER_ALLOW] = RAN, [VG_FILTER_AUDIT] = NOSYS,
    [VG_FILTER_BASELINE] = TRAPPED, [VG_FILTER_ENOSYS] = NOSYS, [VG_FILTER_REFUSED] = REFUSED,
};

static bool build(const struct vg_audit_set *audit, enum vg_baseline_how how, struct vg_bpf *bpf)
{
    struct vg_err err = {0};
    return vg_filter_candidate(audit, how, false, bpf, &err) == 0;
}

/* What the table says for a probe with every class audited, or none. */
static enum vg_filter_act want_of(const struct probe *p, bool all_audited)
{
    return p->want == VG_FILTER_AUDIT && !all_audited ? VG_FILTER_ALLOW : p->want;
}

/* Every probe: the table's answer, and the kernel's (an allowed call is
 * only made where it fails harmlessly: with everything audited). */
static void probe_all(bool all_audited, enum vg_baseline_how how)
{
    struct vg_audit_set audit = {.lookups = all_audited};
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        audit.cls[c] = all_audited;
    struct vg_bpf bpf;
    if (!CHECK(build(&audit, how, &bpf)))
        return;
    for (size_t i = 0; i < VG_ARRAY_LEN(probes); i++) {
        const struct probe *p = &probes[i];
        enum vg_filter_act want = want_of(p, all_audited);
        check(vg_filter_classify(&audit, p->nr, p->a) == want, p->what, "classify", 0);
        if (how == VG_BASELINE_ERRNO && want == VG_FILTER_BASELINE && p->nr == VG_NR_setsockopt)
            check(run_probe(&bpf, p, how) == EPERM, p->what, "errno", 0);
        else if (how == VG_BASELINE_ERRNO && want == VG_FILTER_BASELINE)
            check(run_probe(&bpf, p, how) == vg_sys_lookup(p->nr)->deny_errno, p->what,
                  "errno", 0);
        else if (how == VG_BASELINE_TRAP && (all_audited || want != VG_FILTER_ALLOW))
            check(run_probe(&bpf, p, how) == (int)expected[want], p->what, "kernel", 0);
    }
    vg_bpf_free(&bpf);
}

int main(void)
{
    probe_all(true, VG_BASELINE_TRAP);
    probe_all(false, VG_BASELINE_TRAP); /* only the baseline is left */
    probe_all(false, VG_BASELINE_ERRNO); /* the kernel answers the row's errno itself */
    return check_done();
}
