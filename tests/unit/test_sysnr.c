/* test_sysnr.c: default-deny at the kernel, for every number.  The
 * candidate's filter is exported for a few audit sets and both engines'
 * ways, and its BPF program is run here, in a small classic-BPF
 * interpreter, on every number 0..1023 of the native ABI, of x32
 * (nr | 0x40000000) and of i386, with argument vectors that hit each
 * conditional rule.  Each answer must be the one the syscall table's row
 * gives (no row: ERRNO(ENOSYS)) and the one vg_filter_classify gives.  The
 * table itself: every row has a reason or a decoder, numbers and names are
 * unique, it covers every number this kernel has (an embedded list, and
 * numbers past the table's end are ENOSYS on the running kernel). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launcher/filter.h"
#include "core/syscalls.h"
#include "tests/unit/check.h"

#define NR_SWEEP 1024        /* every number checked, past any table */
#define X32_BIT 0x40000000u  /* __X32_SYSCALL_BIT */
#define HIGH 0xdead000000000000ull
#define NEW_LISTENER (1u << 3)
#define MAX_STEPS 8192       /* a classic BPF program only jumps forward */
#define BPF_MEMWORDS_N 16
#define COMMON_CALL_MAX_STEPS 24 /* read/write/futex/mmap: a few comparisons */

/* ---- a classic BPF interpreter (the subset seccomp accepts) ---- */

struct run {
    uint32_t ret;
    unsigned steps;
    bool ok; /* false: bad opcode, jump out of the program, no return */
};

static uint32_t load_abs(const struct seccomp_data *d, uint32_t k, bool *ok)
{
    uint32_t v = 0;
    if (k % 4 || k + 4 > sizeof *d) {
        *ok = false;
        return 0;
    }
    memcpy(&v, (const char *)d + k, 4);
    return v;
}

static uint32_t alu(uint16_t op, uint32_t a, uint32_t x, bool *ok)
{
    switch (op) {
    case BPF_ADD: return a + x;
    case BPF_SUB: return a - x;
    case BPF_MUL: return a * x;
    case BPF_DIV: if (!x) *ok = false; return x ? a / x : 0;
    case BPF_AND: return a & x;
    case BPF_OR: return a | x;
    case BPF_XOR: return a ^ x;
    case BPF_LSH: return x < 32 ? a << x : 0;
    case BPF_RSH: return x < 32 ? a >> x : 0;
    case BPF_NEG: return -a;
    }
    *ok = false;
    return 0;
}

static bool jump_taken(uint16_t op, uint32_t a, uint32_t v, bool *ok)
{
    switch (op) {
    case BPF_JEQ: return a == v;
    case BPF_JGT: return a > v;
    case BPF_JGE: return a >= v;
    case BPF_JSET: return (a & v) != 0;
    }
    *ok = false;
    return false;
}

static struct run bpf_run(const struct vg_bpf *bpf, const struct seccomp_data *d)
{
    const struct sock_filter *p = bpf->insns;
    uint32_t a = 0, x = 0, mem[BPF_MEMWORDS_N] = {0};
    struct run r = {.ok = true};
    for (unsigned pc = 0; pc < bpf->len && r.ok && r.steps < MAX_STEPS; pc++) {
        const struct sock_filter *i = &p[pc];
        r.steps++;
        uint32_t src = BPF_SRC(i->code) == BPF_X ? x : i->k;
        switch (BPF_CLASS(i->code)) {
        case BPF_LD:
            if (BPF_MODE(i->code) == BPF_ABS && BPF_SIZE(i->code) == BPF_W)
                a = load_abs(d, i->k, &r.ok);
            else if (BPF_MODE(i->code) == BPF_IMM)
                a = i->k;
            else if (BPF_MODE(i->code) == BPF_MEM && i->k < BPF_MEMWORDS_N)
                a = mem[i->k];
            else if (BPF_MODE(i->code) == BPF_LEN)
                a = sizeof *d;
            else
                r.ok = false;
            break;
        case BPF_LDX:
            if (BPF_MODE(i->code) == BPF_IMM)
                x = i->k;
            else if (BPF_MODE(i->code) == BPF_MEM && i->k < BPF_MEMWORDS_N)
                x = mem[i->k];
            else if (BPF_MODE(i->code) == BPF_LEN)
                x = sizeof *d;
            else
                r.ok = false;
            break;
        case BPF_ST:
        case BPF_STX:
            if (i->k >= BPF_MEMWORDS_N)
                r.ok = false;
            else
                mem[i->k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
            break;
        case BPF_ALU:
            a = alu(BPF_OP(i->code), a, src, &r.ok);
            break;
        case BPF_JMP:
            if (BPF_OP(i->code) == BPF_JA)
                pc += i->k;
            else
                pc += jump_taken(BPF_OP(i->code), a, src, &r.ok) ? i->jt : i->jf;
            break;
        case BPF_RET:
            r.ret = BPF_RVAL(i->code) == BPF_A ? a : i->k;
            return r;
        case BPF_MISC:
            if (BPF_MISCOP(i->code) == BPF_TAX)
                x = a;
            else
                a = x;
            break;
        default:
            r.ok = false;
        }
    }
    r.ok = false; /* fell off the end, or looped */
    return r;
}

/* ---- what the table says ---- */

struct setup {
    const char *what;
    bool all_audited;
    enum vg_baseline_how how;
    bool notify;
};

static const struct setup setups[] = {
    {"nothing audited, trap", false, VG_BASELINE_TRAP, false},
    {"everything audited, trap", true, VG_BASELINE_TRAP, false},
    {"nothing audited, errno", false, VG_BASELINE_ERRNO, false},
    {"everything audited, notify", true, VG_BASELINE_ERRNO, true},
};

/* The return value the filter must give for an action classify reports. */
static uint32_t ret_of(const struct setup *s, enum vg_filter_act act, int nr)
{
    const struct vg_sysrow *r = vg_sys_row(nr);
    switch (act) {
    case VG_FILTER_ALLOW: return SECCOMP_RET_ALLOW;
    case VG_FILTER_AUDIT: return s->notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_TRACE;
    case VG_FILTER_BASELINE:
        return s->how == VG_BASELINE_TRAP ? SECCOMP_RET_TRAP
                                          : SECCOMP_RET_ERRNO | (uint32_t)r->deny_errno;
    case VG_FILTER_ENOSYS: return SECCOMP_RET_ERRNO | ENOSYS;
    case VG_FILTER_REFUSED: return SECCOMP_RET_ERRNO | (uint32_t)r->deny_errno;
    }
    return 0xffffffffu;
}

/* Whether an action fits the row's kind at all (whatever the arguments). */
static bool fits_kind(int nr, enum vg_filter_act act)
{
    const struct vg_sysrow *r = vg_sys_row(nr);
    if (!r)
        return act == VG_FILTER_ENOSYS;
    switch (r->kind) {
    case VG_SK_HARMLESS: return act == VG_FILTER_ALLOW;
    case VG_SK_REFUSED:
        return act == (r->deny_errno == ENOSYS ? VG_FILTER_ENOSYS : VG_FILTER_REFUSED);
    case VG_SK_DECODED:
        return act == VG_FILTER_ALLOW || act == VG_FILTER_AUDIT ||
               (act == VG_FILTER_BASELINE && (r->ent->flags & VG_SF_BASELINE));
    }
    return false;
}

/* Arguments that make each conditional rule hold, or not, for any number. */
static const uint64_t argv_set[][6] = {
    {0},
    {(uint64_t)-1, (uint64_t)-1, (uint64_t)-1, (uint64_t)-1, (uint64_t)-1, (uint64_t)-1},
    {AF_NETLINK}, {AF_INET}, {HIGH | AF_INET6}, {CLONE_NEWUSER}, {CLONE_UNTRACED | CLONE_VM},
    {3, TIOCSTI}, {3, HIGH | TIOCLINUX}, {3, FIONREAD},
    {SECCOMP_SET_MODE_FILTER, NEW_LISTENER}, {SECCOMP_SET_MODE_FILTER, 0},
    {3, 0, 0, 0, 1, 0}, {3, 0, 0, 0, 0, 16},
    {3, IPPROTO_IPV6, IPV6_RTHDR}, {3, IPPROTO_IPV6, IPV6_2292PKTOPTIONS},
    {3, HIGH | IPPROTO_IPV6, HIGH | IPV6_HOPOPTS}, {3, IPPROTO_IPV6, IPV6_V6ONLY},
    {3, IPPROTO_IP, IP_OPTIONS}, {3, IPPROTO_IP, IP_TOS}, {3, SOL_SOCKET, SO_MARK},
    {3, SOL_SOCKET, SO_BINDTODEVICE}, {3, SOL_SOCKET, SO_REUSEADDR},
    {3, IPPROTO_IP, IP_TRANSPARENT}, {3, IPPROTO_IPV6, IPV6_TRANSPARENT},
};
#define NARGV (sizeof argv_set / sizeof argv_set[0])

static bool build(const struct setup *s, struct vg_audit_set *audit, struct vg_bpf *bpf)
{
    memset(audit, 0, sizeof *audit);
    audit->lookups = s->all_audited;
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        audit->cls[c] = s->all_audited;
    struct vg_err err = {0};
    return vg_filter_candidate(audit, s->how, s->notify, bpf, &err) == 0;
}

static struct seccomp_data data_of(uint32_t arch, uint32_t nr, const uint64_t args[6])
{
    struct seccomp_data d = {.nr = (int)nr, .arch = arch};
    memcpy(d.args, args, sizeof d.args);
    return d;
}

/* Every native number with every argument vector: the row's answer,
 * classify's answer and the program's are one. */
static void sweep_native(const struct setup *s, const struct vg_audit_set *audit,
                         const struct vg_bpf *bpf, unsigned *max_steps)
{
    char what[96];
    for (int nr = 0; nr < NR_SWEEP; nr++) {
        for (size_t k = 0; k < NARGV; k++) {
            struct seccomp_data d = data_of(AUDIT_ARCH_X86_64, (uint32_t)nr, argv_set[k]);
            struct run r = bpf_run(bpf, &d);
            enum vg_filter_act act = vg_filter_classify(audit, nr, argv_set[k]);
            snprintf(what, sizeof what, "%s: nr %d args #%zu", s->what, nr, k);
            check(r.ok, what, "program runs", 0);
            check(fits_kind(nr, act), what, "row kind", 0);
            check(r.ret == ret_of(s, act, nr), what, "filter == classify", 0);
            if (r.steps > *max_steps)
                *max_steps = r.steps;
        }
    }
}

/* x32 and i386 calls of every number are refused ENOSYS, whatever the row. */
static void sweep_other_abis(const struct setup *s, const struct vg_bpf *bpf)
{
    char what[96];
    for (uint32_t nr = 0; nr < NR_SWEEP; nr++) {
        for (size_t k = 0; k < NARGV; k += 4) {
            struct seccomp_data x32 = data_of(AUDIT_ARCH_X86_64, nr | X32_BIT, argv_set[k]);
            struct seccomp_data i386 = data_of(AUDIT_ARCH_I386, nr, argv_set[k]);
            struct run a = bpf_run(bpf, &x32), b = bpf_run(bpf, &i386);
            snprintf(what, sizeof what, "%s: x32/i386 nr %u", s->what, nr);
            check(a.ok && a.ret == (SECCOMP_RET_ERRNO | ENOSYS), what, "x32 refused", 0);
            check(b.ok && b.ret == (SECCOMP_RET_ERRNO | ENOSYS), what, "i386 refused", 0);
        }
        int x32nr = (int)(nr | X32_BIT);
        check(vg_filter_classify(&(struct vg_audit_set){0}, x32nr, argv_set[0]) ==
                  VG_FILTER_ENOSYS, "classify x32", s->what, 0);
    }
}

/* Under the notify engine with everything audited, every row the table
 * gives a carrier reaches the listener (for arguments that make each of
 * its conditions hold: all ones), so its carrier sees it; a row left to
 * the kernel (CONT) that is stopped is decided and continued. */
static void check_carried_notified(const struct setup *s, const struct vg_bpf *bpf)
{
    if (!s->notify || !s->all_audited)
        return;
    for (unsigned i = 0; i < vg_sys_count; i++) {
        const struct vg_sysent *e = &vg_sys_table[i];
        if (vg_sys_carrier(e) == VG_CARRIER_CONTINUE)
            continue;
        struct seccomp_data d = data_of(AUDIT_ARCH_X86_64, (uint32_t)e->nr, argv_set[1]);
        struct run r = bpf_run(bpf, &d);
        check(r.ok && r.ret == SECCOMP_RET_USER_NOTIF, e->name, "a carried row is notified", 0);
    }
}

/* Steps the program takes for a call (all zero arguments). */
static unsigned steps_of(const struct vg_bpf *bpf, int nr)
{
    struct seccomp_data d = data_of(AUDIT_ARCH_X86_64, (uint32_t)nr, argv_set[0]);
    return bpf_run(bpf, &d).steps;
}

static void test_filters(void)
{
    static const int common[] = {VG_NR_read, VG_NR_write, VG_NR_futex, VG_NR_mmap,
                                 VG_NR_close, VG_NR_fstat};
    for (size_t i = 0; i < VG_ARRAY_LEN(setups); i++) {
        const struct setup *s = &setups[i];
        struct vg_audit_set audit;
        struct vg_bpf bpf;
        if (!check(build(s, &audit, &bpf), s->what, "build", 0))
            continue;
        unsigned max_steps = 0;
        sweep_native(s, &audit, &bpf, &max_steps);
        sweep_other_abis(s, &bpf);
        check_carried_notified(s, &bpf);
        printf("%s: %u instructions, at most %u run; read %u, write %u, futex %u, mmap %u,"
               " openat %u\n",
               s->what, bpf.len, max_steps, steps_of(&bpf, VG_NR_read),
               steps_of(&bpf, VG_NR_write), steps_of(&bpf, VG_NR_futex),
               steps_of(&bpf, VG_NR_mmap), steps_of(&bpf, VG_NR_openat));
        CHECK(bpf.len < BPF_MAXINSNS);
        for (size_t k = 0; k < VG_ARRAY_LEN(common); k++)
            CHECK(steps_of(&bpf, common[k]) <= COMMON_CALL_MAX_STEPS);
        vg_bpf_free(&bpf);
    }
}

/* ---- the table ---- */

static void test_rows(void)
{
    CHECK(vg_sys_nrows > vg_sys_count);
    for (unsigned i = 0; i < vg_sys_nrows; i++) {
        const struct vg_sysrow *r = &vg_sys_rows[i];
        if (i)
            check(vg_sys_rows[i - 1].nr < r->nr, r->name, "numbers in order, each once", 0);
        for (unsigned j = 0; j < i; j++)
            check(strcmp(vg_sys_rows[j].name, r->name) != 0, r->name, "name given once", 0);
        check(vg_sys_row(r->nr) == r, r->name, "vg_sys_row finds it", 0);
        check(r->deny_errno > 0 || r->kind == VG_SK_HARMLESS, r->name, "errno", 0);
        if (r->kind == VG_SK_DECODED) {
            check(r->ent && r->ent->nr == r->nr && !strcmp(r->ent->name, r->name) &&
                      r->ent->deny_errno == r->deny_errno && vg_sys_lookup(r->nr) == r->ent,
                  r->name, "decoded row", 0);
        } else {
            check(r->reason && strlen(r->reason) > 8, r->name, "has a reason", 0);
            check(vg_sys_lookup(r->nr) == NULL, r->name, "not a decoded row", 0);
        }
    }
}

/* The conditions (core/syscalls_conds.h) and the rows agree: a
 * conditional baseline row (CO) has conditions, and every condition is on
 * a decoded row, either a conditional baseline one or an audited one
 * stopped only when it holds (sendto with an address); its comparisons
 * name register arguments. */
static void test_conds(void)
{
    for (unsigned i = 0; i < vg_sys_count; i++) {
        const struct vg_sysent *e = &vg_sys_table[i];
        if (e->flags & VG_SF_COND)
            check(vg_sys_has_conds(e->nr) && (e->flags & VG_SF_BASELINE), e->name,
                  "a conditional baseline row with conditions", 0);
    }
    for (unsigned i = 0; i < vg_sys_nconds; i++) {
        const struct vg_cond *c = &vg_sys_conds[i];
        const struct vg_sysrow *r = vg_sys_row(c->nr);
        const char *name = r ? r->name : "?";
        if (!check(r && r->kind == VG_SK_DECODED, name, "a condition on a decoded row", 0))
            continue;
        bool baseline = (r->ent->flags & VG_SF_BASELINE) != 0;
        check(baseline == ((r->ent->flags & VG_SF_COND) != 0), name,
              "conditions on a baseline row only with CO", 0);
        check(c->ncmp >= 1 && c->ncmp <= VG_COND_MAX_CMPS, name, "comparisons", 0);
        for (unsigned k = 0; k < c->ncmp && k < VG_COND_MAX_CMPS; k++)
            check(c->cmp[k].arg < 6, name, "a register argument", 0);
    }
}

/* The x86_64 numbers 0..334 and 424..469 are the kernel's (6.18), none in
 * between (x86_64 skipped them to line up with the other architectures);
 * the names of the ones newer than Debian 12's headers. */
#define LAST_CLASSIC 334
#define FIRST_SHARED 424
static const struct { int nr; const char *name; } newer[] = {
    {451, "cachestat"}, {452, "fchmodat2"}, {453, "map_shadow_stack"}, {454, "futex_wake"},
    {455, "futex_wait"}, {456, "futex_requeue"}, {457, "statmount"}, {458, "listmount"},
    {459, "lsm_get_self_attr"}, {460, "lsm_set_self_attr"}, {461, "lsm_list_modules"},
    {462, "mseal"}, {463, "setxattrat"}, {464, "getxattrat"}, {465, "listxattrat"},
    {466, "removexattrat"}, {467, "open_tree_attr"}, {468, "file_getattr"},
    {469, "file_setattr"},
};
#define KERNEL_LAST 469

static void test_coverage(void)
{
    for (int nr = 0; nr <= KERNEL_LAST; nr++) {
        bool assigned = nr <= LAST_CLASSIC || nr >= FIRST_SHARED;
        char what[32];
        snprintf(what, sizeof what, "nr %d", nr);
        check((vg_sys_row(nr) != NULL) == assigned, what, "a row iff the kernel has it", 0);
    }
    for (size_t i = 0; i < VG_ARRAY_LEN(newer); i++) {
        const struct vg_sysrow *r = vg_sys_row(newer[i].nr);
        check(r && !strcmp(r->name, newer[i].name), newer[i].name, "number", 0);
    }
    CHECK(vg_sys_max_nr() == KERNEL_LAST);
    /* Numbers past the table are not the running kernel's: a kernel that
     * has one the table lacks answers something else than ENOSYS here.
     * Only numbers past the end are called: no argument means anything to
     * a call that does not exist. */
    for (int nr = vg_sys_max_nr() + 1; nr < 512; nr++) {
        errno = 0;
        long r = syscall(nr, 0, 0, 0, 0, 0, 0);
        char what[48];
        snprintf(what, sizeof what, "kernel nr %d", nr);
        check(r == -1 && errno == ENOSYS, what, "unknown to the kernel", 0);
    }
}

/* The xattr calls by path that have no decoder are refused; so are new
 * calls callers fall back from. */
static void test_attacker_rows(void)
{
    static const int enosys[] = {VG_NR_getxattrat, VG_NR_setxattrat, VG_NR_listxattrat,
                                 VG_NR_removexattrat, VG_NR_file_getattr, VG_NR_file_setattr,
                                 VG_NR_statmount, VG_NR_listmount, VG_NR_clone3,
                                 VG_NR_lsm_set_self_attr};
    for (size_t i = 0; i < VG_ARRAY_LEN(enosys); i++) {
        const struct vg_sysrow *r = vg_sys_row(enosys[i]);
        check(r && r->kind == VG_SK_REFUSED && r->deny_errno == ENOSYS, r ? r->name : "?",
              "refused ENOSYS", 0);
    }
    static const int eperm[] = {VG_NR_acct, VG_NR_swapon, VG_NR_swapoff, VG_NR_syslog,
                                VG_NR_vhangup, VG_NR_quotactl, VG_NR_quotactl_fd,
                                VG_NR_open_tree_attr, VG_NR_fanotify_mark};
    for (size_t i = 0; i < VG_ARRAY_LEN(eperm); i++) {
        const struct vg_sysrow *r = vg_sys_row(eperm[i]);
        check(r && r->kind == VG_SK_REFUSED && r->deny_errno == EPERM, r ? r->name : "?",
              "refused EPERM", 0);
    }
    CHECK(vg_sys_row(VG_NR_read)->kind == VG_SK_HARMLESS);
    CHECK(vg_sys_row(VG_NR_name_to_handle_at)->kind == VG_SK_DECODED);
    CHECK(vg_sys_row(VG_NR_chdir)->kind == VG_SK_DECODED);
    CHECK(vg_sys_row(VG_NR_statfs)->kind == VG_SK_DECODED);
    CHECK(vg_sys_row(-1) == NULL && vg_sys_row(1 << 30) == NULL);
}

int main(void)
{
    test_rows();
    test_conds();
    test_coverage();
    test_attacker_rows();
    test_filters();
    return check_done();
}
