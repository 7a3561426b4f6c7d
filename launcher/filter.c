/* filter.c: see filter.h.  The rules that depend on an argument (ioctl
 * request, socket family, clone flags, seccomp flags, sendto's address,
 * socket options) are the syscall table's conditions
 * (core/syscalls_conds.h), read both to build the filter and to answer
 * vg_filter_classify.
 *
 * The candidate's program is two parts, run one after the other:
 *  - the gate (built here): the native ABI only, and only the numbers the
 *    syscall table has a row for; every other call, x32 and i386 included,
 *    fails ENOSYS.  This is the default-deny: a call a newer kernel adds
 *    is refused until a row names it.  Table numbers are a few contiguous
 *    runs, so the gate is a few range comparisons.
 *  - the decisions (libseccomp, a binary tree over the numbers): audited
 *    rows stop, baseline rows and refused rows are refused, conditional
 *    rows are refused when a condition holds; what is left, which the gate
 *    has shown to be a table row, runs.  libseccomp cannot say "allow this
 *    call unless a condition holds" under a refusing default (a rule
 *    without conditions replaces a call's conditional ones), hence the
 *    default-deny lives in the gate. */
#include "launcher/filter.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <unistd.h>

#include "core/syscalls.h"

/* What the filter does with a row's calls when its conditions (if any)
 * match. */
static enum vg_filter_act row_act(const struct vg_sysent *e, const struct vg_audit_set *audit)
{
    if (e->flags & VG_SF_BASELINE)
        return VG_FILTER_BASELINE;
    return vg_sys_row_traced(e, audit) ? VG_FILTER_AUDIT : VG_FILTER_ALLOW;
}

/* What the filter does with a row that is not decoded, or a number
 * without a row (r NULL). */
static enum vg_filter_act plain_act(const struct vg_sysrow *r)
{
    if (r && r->kind == VG_SK_HARMLESS)
        return VG_FILTER_ALLOW;
    return !r || r->deny_errno == ENOSYS ? VG_FILTER_ENOSYS : VG_FILTER_REFUSED;
}

enum vg_filter_act vg_filter_classify(const struct vg_audit_set *audit, int nr,
                                      const uint64_t args[6])
{
    const struct vg_sysrow *r = vg_sys_row(nr);
    if (!r || r->kind != VG_SK_DECODED)
        return plain_act(r);
    enum vg_filter_act act = row_act(r->ent, audit);
    if (act == VG_FILTER_ALLOW)
        return act;
    bool conditional = false;
    for (unsigned i = 0; i < vg_sys_nconds; i++) {
        if (vg_sys_conds[i].nr != nr)
            continue;
        if (vg_cond_holds(&vg_sys_conds[i], args))
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

static struct scmp_arg_cmp to_scmp(const struct vg_argcmp *c)
{
    if (c->op == VG_CMP_MASKED_EQ)
        return (struct scmp_arg_cmp){c->arg, SCMP_CMP_MASKED_EQ, c->mask, c->value};
    return (struct scmp_arg_cmp){c->arg, c->op == VG_CMP_GT ? SCMP_CMP_GT : SCMP_CMP_NE,
                                 c->value, 0};
}

/* The rules of one row: one per condition, or one for every call. */
static int add_row(scmp_filter_ctx ctx, const struct vg_sysent *e, uint32_t act, struct vg_err *err)
{
    unsigned n = 0;
    for (unsigned i = 0; i < vg_sys_nconds; i++) {
        const struct vg_cond *c = &vg_sys_conds[i];
        if (c->nr != e->nr)
            continue;
        struct scmp_arg_cmp cmp[VG_COND_MAX_CMPS];
        for (unsigned k = 0; k < c->ncmp; k++)
            cmp[k] = to_scmp(&c->cmp[k]);
        if (add(ctx, act, e->nr, c->ncmp, cmp, err) < 0)
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

/* libseccomp's binary tree over the numbers: a call is found in a few
 * comparisons instead of one per rule. */
#define OPTIMIZE_BINARY_TREE 2

/* Every condition is on a decoded row: one on a harmless or refused row,
 * or a number without a row, would be dropped without a word. */
static int conds_on_rows(struct vg_err *err)
{
    for (unsigned i = 0; i < vg_sys_nconds; i++) {
        const struct vg_sysrow *r = vg_sys_row(vg_sys_conds[i].nr);
        if (!r || r->kind != VG_SK_DECODED) {
            vg_errf(err, "seccomp: a condition on syscall %d, which has no decoded row",
                    vg_sys_conds[i].nr);
            return -1;
        }
    }
    return 0;
}

/* The decisions part: every row that is not simply let run. */
static scmp_filter_ctx decisions(const struct vg_audit_set *audit, enum vg_baseline_how how,
                                 bool notify, struct vg_err *err)
{
    if (conds_on_rows(err) < 0)
        return NULL;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW); /* only rows get here: the gate */
    if (!ctx) {
        vg_errf(err, "seccomp_init failed");
        return NULL;
    }
    /* Only the native ABI (the gate refuses the others already). */
    if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS)) < 0 ||
        seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0 ||
        seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, OPTIMIZE_BINARY_TREE) < 0) {
        vg_errf(err, "seccomp: cannot set filter attributes");
        goto fail;
    }
    for (unsigned i = 0; i < vg_sys_nrows; i++) {
        const struct vg_sysrow *r = &vg_sys_rows[i];
        int rc = 0;
        if (r->kind == VG_SK_REFUSED) {
            rc = add(ctx, SCMP_ACT_ERRNO((uint32_t)r->deny_errno), r->nr, 0, NULL, err);
        } else if (r->kind == VG_SK_DECODED) {
            enum vg_filter_act act = row_act(r->ent, audit);
            if (act != VG_FILTER_ALLOW)
                rc = add_row(ctx, r->ent, action_of(act, how, notify, r->deny_errno), err);
        }
        if (rc < 0)
            goto fail;
    }
    return ctx;
fail:
    seccomp_release(ctx);
    return NULL;
}

/* The gate's instructions: load the arch, refuse another; load the
 * number; per run of row numbers [lo, hi], two comparisons; then the
 * refusal, then (the next instruction) the decisions part. */
#define GATE_HEAD 3
#define GATE_PER_RUN 2
#define GATE_MAX_RUNS 32 /* keeps every jump within a BPF jump's 255 */
#define REFUSE_ENOSYS (SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))

/* The runs of consecutive row numbers: how many (up to max are written). */
static unsigned row_runs(uint32_t lo[], uint32_t hi[], unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < vg_sys_nrows; i++) {
        uint32_t nr = (uint32_t)vg_sys_rows[i].nr;
        if (n && nr == hi[n - 1] + 1) {
            hi[n - 1] = nr;
            continue;
        }
        if (n++ >= max)
            return n;
        lo[n - 1] = hi[n - 1] = nr;
    }
    return n;
}

/* Writes the gate to out (room for GATE_HEAD + GATE_PER_RUN * GATE_MAX_RUNS
 * + 1 instructions); returns how many, or 0 when the table has too many
 * runs. */
static unsigned build_gate(struct sock_filter *out)
{
    uint32_t lo[GATE_MAX_RUNS], hi[GATE_MAX_RUNS];
    unsigned n = row_runs(lo, hi, GATE_MAX_RUNS);
    if (n == 0 || n > GATE_MAX_RUNS)
        return 0;
    unsigned refuse = GATE_HEAD + GATE_PER_RUN * n, pass = refuse + 1, k = 0;
    out[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                            offsetof(struct seccomp_data, arch));
    out[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0,
                                          (uint8_t)(refuse - k - 1));
    k++;
    out[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                            offsetof(struct seccomp_data, nr));
    for (unsigned i = 0; i < n; i++) {
        /* above this run: try the next (or the refusal after the last) */
        out[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, hi[i], 1, 0);
        k++;
        /* the runs are in order: not above it and not below it is in it */
        out[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, lo[i],
                                              (uint8_t)(pass - k - 1), (uint8_t)(refuse - k - 1));
        k++;
    }
    out[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, REFUSE_ENOSYS);
    return k;
}

/* The gate followed by the exported decisions. */
static int prepend_gate(struct vg_bpf *bpf, struct vg_err *err)
{
    struct sock_filter gate[GATE_HEAD + GATE_PER_RUN * GATE_MAX_RUNS + 1];
    unsigned n = build_gate(gate);
    if (n == 0 || n + bpf->len > BPF_MAXINSNS) {
        vg_errf(err, "seccomp: the syscall table does not fit the filter");
        return -1;
    }
    struct sock_filter *all = vg_xmalloc((n + bpf->len) * sizeof *all);
    memcpy(all, gate, n * sizeof *all);
    memcpy(all + n, bpf->insns, bpf->len * sizeof *all);
    free(bpf->insns);
    bpf->insns = all;
    bpf->len = (unsigned short)(n + bpf->len);
    return 0;
}

int vg_filter_candidate(const struct vg_audit_set *audit, enum vg_baseline_how how, bool notify,
                        struct vg_bpf *out, struct vg_err *err)
{
    memset(out, 0, sizeof *out);
    scmp_filter_ctx ctx = decisions(audit, how, notify, err);
    if (!ctx)
        return -1;
    int rc = vg_filter_export(ctx, out, err);
    seccomp_release(ctx);
    if (rc == 0 && prepend_gate(out, err) < 0) {
        vg_bpf_free(out);
        rc = -1;
    }
    return rc;
}

scmp_filter_ctx vg_filter_init(struct vg_err *err)
{
    static const int allowed[] = {
        VG_NR_wait4, VG_NR_waitid, VG_NR_exit, VG_NR_exit_group,
        VG_NR_rt_sigreturn, VG_NR_rt_sigaction, VG_NR_rt_sigprocmask,
        VG_NR_restart_syscall, VG_NR_getpid, VG_NR_close, VG_NR_write,
        /* memory and thread housekeeping of the C runtime (and of a
         * sanitizer build): harmless, and failing them only hides bugs */
        VG_NR_mmap, VG_NR_munmap, VG_NR_mprotect, VG_NR_madvise, VG_NR_brk,
        VG_NR_sigaltstack, VG_NR_futex, VG_NR_gettid, VG_NR_prlimit64,
        VG_NR_sched_yield,
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
    return (int)syscall(VG_NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

void vg_bpf_free(struct vg_bpf *bpf)
{
    free(bpf->insns);
    bpf->insns = NULL;
    bpf->len = 0;
}
