/* filter.c: see filter.h.  The rules that depend on an argument (ioctl
 * request, socket family, clone flags) are data in the tables below. */
#include "tracer/filter.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <unistd.h>

#include "tracer/syscalls.h"

/* The int-typed arguments are compared on their low 32 bits only: the
 * kernel ignores the upper half, so a filter must too. */
#define LOW32 0xffffffffull

static const unsigned long tty_ioctls[] = {TIOCSTI, TIOCLINUX};

/* Families other than these are refused; the filter traces the rest. */
static const int bad_family_eq[] = {AF_UNSPEC, 3, 4, 5, 6, 7, 8, 9};
#define LAST_GOOD_FAMILY AF_INET6

static const unsigned long clone_ns_flags[] = {
    CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
    CLONE_NEWNET, CLONE_NEWCGROUP,
};

/* What an audited call (and a baseline refusal, which is recorded too)
 * returns: a ptrace stop, or a user notification on the listener. */
#define TRACE_AUDIT SCMP_ACT_TRACE(0)
#define TRACE_BASELINE SCMP_ACT_TRACE(1)
#define audit_act(notify) ((notify) ? SCMP_ACT_NOTIFY : TRACE_AUDIT)
#define baseline_act(notify) ((notify) ? SCMP_ACT_NOTIFY : TRACE_BASELINE)

static int add(scmp_filter_ctx ctx, uint32_t act, int nr, unsigned n,
               const struct scmp_arg_cmp *cmp, struct vg_err *err)
{
    int r = seccomp_rule_add_array(ctx, act, nr, n, cmp);
    if (r < 0) {
        char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
        vg_errf(err, "seccomp rule for %s: %s", name ? name : "?", strerror(-r));
        free(name);
        return -1;
    }
    return 0;
}

static int add_conditional(scmp_filter_ctx ctx, uint32_t baseline, struct vg_err *err)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(tty_ioctls); i++) {
        struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, tty_ioctls[i]);
        if (add(ctx, baseline, SCMP_SYS(ioctl), 1, &c, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < VG_ARRAY_LEN(bad_family_eq); i++) {
        struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, (uint64_t)bad_family_eq[i]);
        if (add(ctx, baseline, SCMP_SYS(socket), 1, &c, err) < 0)
            return -1;
    }
    struct scmp_arg_cmp gt = SCMP_A0(SCMP_CMP_GT, LAST_GOOD_FAMILY);
    if (add(ctx, baseline, SCMP_SYS(socket), 1, &gt, err) < 0)
        return -1;
    for (size_t i = 0; i < VG_ARRAY_LEN(clone_ns_flags); i++) {
        struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns_flags[i], clone_ns_flags[i]);
        if (add(ctx, baseline, SCMP_SYS(clone), 1, &c, err) < 0)
            return -1;
    }
    /* A filter of the candidate's own with a listener would take every
     * call it returns SECCOMP_RET_USER_NOTIF for away from vigil (that
     * action outranks RET_TRACE, and the newest filter's listener wins):
     * its own supervisor answers CONTINUE and vigil never sees the call.
     * Filters without a listener only restrict the candidate further. */
    struct scmp_arg_cmp listener[] = {
        SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER),
        SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                SECCOMP_FILTER_FLAG_NEW_LISTENER),
    };
    if (add(ctx, baseline, SCMP_SYS(seccomp), VG_ARRAY_LEN(listener), listener, err) < 0)
        return -1;
    /* clone3 passes its flags in memory the filter cannot read; libc falls
     * back to clone on ENOSYS, where the flags are visible. */
    return add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0, NULL, err);
}

scmp_filter_ctx vg_filter_candidate(const bool audited[VG_CLASS_NCLASSES], bool notify,
                                    struct vg_err *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        vg_errf(err, "seccomp_init failed");
        return NULL;
    }
    /* Only the native ABI: 32-bit (int 0x80) and x32 calls are refused. */
    if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS)) < 0 ||
        seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0)
        goto fail_attr;

    int nrs[512];
    unsigned n = vg_sys_audited(audited, nrs, VG_ARRAY_LEN(nrs));
    for (unsigned i = 0; i < n; i++) {
        if (nrs[i] == SCMP_SYS(sendto)) {
            /* sendto without an address is a plain send on a connected
             * socket: nothing to decide. */
            struct scmp_arg_cmp c = SCMP_A4(SCMP_CMP_NE, 0);
            if (add(ctx, audit_act(notify), nrs[i], 1, &c, err) < 0)
                goto fail;
        } else if (add(ctx, audit_act(notify), nrs[i], 0, NULL, err) < 0) {
            goto fail;
        }
    }
    n = vg_sys_baseline(nrs, VG_ARRAY_LEN(nrs));
    for (unsigned i = 0; i < n; i++)
        if (add(ctx, baseline_act(notify), nrs[i], 0, NULL, err) < 0)
            goto fail;
    if (add_conditional(ctx, baseline_act(notify), err) < 0)
        goto fail;
    return ctx;
fail_attr:
    vg_errf(err, "seccomp: cannot set filter attributes");
fail:
    seccomp_release(ctx);
    return NULL;
}

scmp_filter_ctx vg_filter_init(struct vg_err *err)
{
    static const int allowed[] = {
        SCMP_SYS(wait4), SCMP_SYS(waitid), SCMP_SYS(exit), SCMP_SYS(exit_group),
        SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask),
        SCMP_SYS(restart_syscall), SCMP_SYS(getpid), SCMP_SYS(close), SCMP_SYS(write),
        /* memory and thread housekeeping of the C runtime (and of a
         * sanitizer build): harmless, and failing them only hides bugs */
        SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect), SCMP_SYS(madvise), SCMP_SYS(brk),
        SCMP_SYS(sigaltstack), SCMP_SYS(futex), SCMP_SYS(gettid), SCMP_SYS(prlimit64),
        SCMP_SYS(sched_yield),
    };
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx) {
        vg_errf(err, "seccomp_init failed");
        return NULL;
    }
    if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0) {
        vg_errf(err, "seccomp: cannot set filter attributes");
        seccomp_release(ctx);
        return NULL;
    }
    for (size_t i = 0; i < VG_ARRAY_LEN(allowed); i++)
        if (add(ctx, SCMP_ACT_ALLOW, allowed[i], 0, NULL, err) < 0) {
            seccomp_release(ctx);
            return NULL;
        }
    return ctx;
}

int vg_filter_export(scmp_filter_ctx ctx, struct vg_bpf *out, struct vg_err *err)
{
    memset(out, 0, sizeof *out);
    int fd = memfd_create("vigil-bpf", MFD_CLOEXEC);
    if (fd < 0) {
        vg_errf(err, "memfd_create: %s", strerror(errno));
        return -1;
    }
    int r = seccomp_export_bpf(ctx, fd);
    off_t size = r < 0 ? -1 : lseek(fd, 0, SEEK_END);
    if (r < 0 || size <= 0 || size % (off_t)sizeof(struct sock_filter) ||
        size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
        vg_errf(err, "seccomp: cannot compile the filter (%s)", r < 0 ? strerror(-r) : "bad size");
        close(fd);
        return -1;
    }
    out->insns = vg_xmalloc((size_t)size);
    if (pread(fd, out->insns, (size_t)size, 0) != size) {
        vg_errf(err, "seccomp: read the compiled filter: %s", strerror(errno));
        close(fd);
        vg_bpf_free(out);
        return -1;
    }
    close(fd);
    out->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
    return 0;
}

int vg_filter_install(const struct vg_bpf *bpf)
{
    return vg_filter_install_flags(bpf, 0);
}

int vg_filter_install_flags(const struct vg_bpf *bpf, unsigned long flags)
{
    struct sock_fprog prog = {.len = bpf->len, .filter = bpf->insns};
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

void vg_bpf_free(struct vg_bpf *bpf)
{
    free(bpf->insns);
    bpf->insns = NULL;
    bpf->len = 0;
}
