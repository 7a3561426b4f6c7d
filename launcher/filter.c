/* filter.c: see filter.h.  The rules that depend on an argument (ioctl
 * request, socket family, clone flags, seccomp flags, sendto's address)
 * are data in the table below, read both to build the filter and to
 * answer vg_filter_classify. */
#include "launcher/filter.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
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

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1u << 3)
#endif

/* One comparison on a register argument, with libseccomp's meaning on a
 * 64-bit ABI (whole registers, unsigned). */
enum cmp_op { CMP_MASKED_EQ, CMP_GT, CMP_NE };
struct argcmp {
    unsigned arg;             /* 0..5 */
    enum cmp_op op;
    uint64_t mask, value;     /* (a & mask) == value; a > value; a != value */
};

/* A call the filter acts on only when every comparison holds.  A row with
 * conditions here is left alone when none of them matches; what the filter
 * does when one matches is the row's (baseline refusal, or a stop). */
#define MAX_CMPS 2
struct cond {
    int nr;
    unsigned ncmp;
    struct argcmp cmp[MAX_CMPS];
};

#define IS(n, v) { (n), CMP_MASKED_EQ, LOW32, (uint64_t)(v) }    /* int argument == v */
#define HAS(n, bit) { (n), CMP_MASKED_EQ, (bit), (bit) }         /* flag bit set */
#define ABOVE(n, v) { (n), CMP_GT, 0, (uint64_t)(v) }
#define NONZERO(n) { (n), CMP_NE, 0, 0 }
#define WHEN(sys, ...) { SYS_##sys, VG_ARRAY_LEN(((struct argcmp[]){__VA_ARGS__})), {__VA_ARGS__} }

static const struct cond conds[] = {
    /* pushing input into a terminal (TIOCSTI), the console's own requests */
    WHEN(ioctl, IS(1, TIOCSTI)), WHEN(ioctl, IS(1, TIOCLINUX)),
    /* socket families other than unix, inet and inet6 */
    WHEN(socket, IS(0, AF_UNSPEC)), WHEN(socket, IS(0, 3)), WHEN(socket, IS(0, 4)),
    WHEN(socket, IS(0, 5)), WHEN(socket, IS(0, 6)), WHEN(socket, IS(0, 7)),
    WHEN(socket, IS(0, 8)), WHEN(socket, IS(0, 9)), WHEN(socket, ABOVE(0, AF_INET6)),
    /* new namespaces, and children the tracer would not follow (the kernel
     * takes clone's flags on their low 32 bits, where all of these are) */
    WHEN(clone, HAS(0, CLONE_NEWNS)), WHEN(clone, HAS(0, CLONE_NEWUTS)),
    WHEN(clone, HAS(0, CLONE_NEWIPC)), WHEN(clone, HAS(0, CLONE_NEWUSER)),
    WHEN(clone, HAS(0, CLONE_NEWPID)), WHEN(clone, HAS(0, CLONE_NEWNET)),
    WHEN(clone, HAS(0, CLONE_NEWCGROUP)), WHEN(clone, HAS(0, CLONE_UNTRACED)),
    /* a filter with a user-notification listener: its RET_USER_NOTIF would
     * outrank RET_TRACE and hide calls from vigil (prctl(PR_SET_SECCOMP)
     * cannot ask for one) */
    WHEN(seccomp, IS(0, SECCOMP_SET_MODE_FILTER), HAS(1, SECCOMP_FILTER_FLAG_NEW_LISTENER)),
    /* sendto without an address is a plain send on a connected socket:
     * nothing to decide */
    WHEN(sendto, NONZERO(4)),
};

static bool cmp_holds(const struct argcmp *c, const uint64_t args[6])
{
    uint64_t a = args[c->arg];
    switch (c->op) {
    case CMP_MASKED_EQ:
        return (a & c->mask) == c->value;
    case CMP_GT:
        return a > c->value;
    case CMP_NE:
        return a != c->value;
    }
    return false;
}

static bool cond_holds(const struct cond *c, const uint64_t args[6])
{
    for (unsigned i = 0; i < c->ncmp; i++)
        if (!cmp_holds(&c->cmp[i], args))
            return false;
    return true;
}

/* What the filter does with a row's calls when its conditions (if any)
 * match. */
static enum vg_filter_act row_act(const struct vg_sysent *e, const struct vg_audit_set *audit)
{
    if (e->flags & VG_SF_BASELINE)
        return VG_FILTER_BASELINE;
    return vg_sys_row_traced(e, audit) ? VG_FILTER_AUDIT : VG_FILTER_ALLOW;
}

enum vg_filter_act vg_filter_classify(const struct vg_audit_set *audit, int nr,
                                      const uint64_t args[6])
{
    if (nr == SYS_clone3)
        return VG_FILTER_ENOSYS;
    const struct vg_sysent *e = vg_sys_lookup(nr);
    enum vg_filter_act act = e ? row_act(e, audit) : VG_FILTER_ALLOW;
    if (act == VG_FILTER_ALLOW)
        return act;
    bool conditional = false;
    for (size_t i = 0; i < VG_ARRAY_LEN(conds); i++) {
        if (conds[i].nr != nr)
            continue;
        if (cond_holds(&conds[i], args))
            return act;
        conditional = true;
    }
    return conditional ? VG_FILTER_ALLOW : act;
}

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

static struct scmp_arg_cmp to_scmp(const struct argcmp *c)
{
    if (c->op == CMP_MASKED_EQ)
        return (struct scmp_arg_cmp){c->arg, SCMP_CMP_MASKED_EQ, c->mask, c->value};
    return (struct scmp_arg_cmp){c->arg, c->op == CMP_GT ? SCMP_CMP_GT : SCMP_CMP_NE, c->value, 0};
}

/* The rules of one row: one per condition, or one for every call. */
static int add_row(scmp_filter_ctx ctx, const struct vg_sysent *e, uint32_t act, struct vg_err *err)
{
    unsigned n = 0;
    for (size_t i = 0; i < VG_ARRAY_LEN(conds); i++) {
        if (conds[i].nr != e->nr)
            continue;
        struct scmp_arg_cmp cmp[MAX_CMPS];
        for (unsigned k = 0; k < conds[i].ncmp; k++)
            cmp[k] = to_scmp(&conds[i].cmp[k]);
        if (add(ctx, act, e->nr, conds[i].ncmp, cmp, err) < 0)
            return -1;
        n++;
    }
    /* A conditional row without conditions is refused whole: a slip in
     * the data fails closed. */
    return n ? 0 : add(ctx, act, e->nr, 0, NULL, err);
}

static uint32_t action_of(enum vg_filter_act act, enum vg_baseline_how how, bool notify,
                          int deny_errno)
{
    /* TRACE's data is never read: the engine goes by number */
    if (act == VG_FILTER_AUDIT)
        return notify ? SCMP_ACT_NOTIFY : SCMP_ACT_TRACE(0);
    return how == VG_BASELINE_TRAP ? SCMP_ACT_TRAP : SCMP_ACT_ERRNO((uint32_t)deny_errno);
}

scmp_filter_ctx vg_filter_candidate(const struct vg_audit_set *audit, enum vg_baseline_how how,
                                    bool notify, struct vg_err *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        vg_errf(err, "seccomp_init failed");
        return NULL;
    }
    /* Only the native ABI: 32-bit (int 0x80) and x32 calls are refused. */
    if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS)) < 0 ||
        seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0) {
        vg_errf(err, "seccomp: cannot set filter attributes");
        goto fail;
    }
    for (unsigned i = 0; i < vg_sys_count; i++) {
        const struct vg_sysent *e = &vg_sys_table[i];
        enum vg_filter_act act = row_act(e, audit);
        if (act != VG_FILTER_ALLOW && add_row(ctx, e, action_of(act, how, notify, e->deny_errno), err) < 0)
            goto fail;
    }
    /* clone3 passes its flags in memory the filter cannot read; libc falls
     * back to clone on ENOSYS, where the flags are visible. */
    if (add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0, NULL, err) < 0)
        goto fail;
    return ctx;
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
