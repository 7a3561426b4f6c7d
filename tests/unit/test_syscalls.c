/* test_syscalls.c: the system call table.  Every row's number must be the
 * number the C library gives its name (checked against an independent list
 * here: the one file besides the table that spells SYS_<name>), lookups
 * must find each row and nothing else, the lists the seccomp filter is
 * built from must follow the audited classes, and the notify engine's
 * carriers must take exactly the calls the rows give them. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "core/syscalls.h"
#include "tracer/notify/notify_int.h"
#include "tests/unit/check.h"

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

struct known { int nr; const char *name; };
#define K(n) { SYS_##n, #n }
static const struct known known[] = {
    K(open), K(openat), K(openat2), K(creat), K(unlink), K(unlinkat), K(rename),
    K(renameat), K(renameat2), K(mkdir), K(mkdirat), K(rmdir), K(link), K(linkat),
    K(symlink), K(symlinkat), K(chmod), K(fchmod), K(fchmodat), K(fchmodat2),
    K(chown), K(fchown), K(lchown), K(fchownat), K(truncate), K(ftruncate),
    K(utime), K(utimes), K(utimensat), K(futimesat), K(mknod), K(mknodat),
    K(setxattr), K(lsetxattr), K(fsetxattr), K(removexattr), K(lremovexattr),
    K(fremovexattr), K(execve), K(execveat), K(connect), K(bind), K(sendto),
    K(sendmsg), K(sendmmsg), K(listen), K(io_uring_setup), K(io_uring_enter),
    K(io_uring_register), K(ptrace), K(process_vm_readv), K(process_vm_writev),
    K(bpf), K(perf_event_open), K(userfaultfd), K(keyctl), K(add_key),
    K(request_key), K(mount), K(umount2), K(pivot_root), K(chroot), K(move_mount),
    K(open_tree), K(fsopen), K(fsconfig), K(fsmount), K(fspick), K(mount_setattr),
    K(unshare), K(setns), K(open_by_handle_at), K(name_to_handle_at),
    K(kexec_load), K(kexec_file_load), K(init_module), K(finit_module),
    K(delete_module), K(ioctl), K(socket), K(clone), K(seccomp), K(setsockopt),
    /* lookups */
    K(readlink), K(readlinkat), K(getxattr), K(lgetxattr), K(fgetxattr), K(listxattr),
    K(llistxattr), K(flistxattr), K(stat), K(lstat), K(newfstatat), K(statx), K(access),
    K(faccessat), K(faccessat2), K(inotify_add_watch), K(getdents), K(getdents64),
    K(chdir), K(statfs),
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

static void test_rows(void)
{
    CHECK(vg_sys_count == NKNOWN);
    for (size_t i = 0; i < NKNOWN; i++) {
        const struct vg_sysent *e = vg_sys_by_name(known[i].name);
        if (!check(e && e->nr == known[i].nr, known[i].name, __FILE__, __LINE__))
            continue;
        CHECK(vg_sys_lookup(known[i].nr) == e);
        CHECK(e->decode < VG_DEC_N);
    }
    for (unsigned i = 1; i < vg_sys_count; i++)
        CHECK(vg_sys_table[i - 1].nr < vg_sys_table[i].nr);
}

static void test_unknown(void)
{
    CHECK(vg_sys_lookup(SYS_getpid) == NULL);
    CHECK(vg_sys_lookup(SYS_read) == NULL);
    CHECK(vg_sys_lookup(-1) == NULL);
    CHECK(vg_sys_lookup(100000) == NULL);
    CHECK(vg_sys_lookup(0x40000000 | SYS_openat) == NULL);  /* x32 */
    CHECK(vg_sys_by_name("getpid") == NULL);
}

static void test_semantics(void)
{
    const struct vg_sysent *e;
    e = vg_sys_lookup(SYS_openat);
    CHECK(e->cls == VG_CLASS_READ && (e->flags & VG_SF_CLASS_BY_ARGS) && e->deny_errno == EACCES);
    e = vg_sys_lookup(SYS_creat);
    CHECK(e->cls == VG_CLASS_WRITE);
    e = vg_sys_lookup(SYS_unlink);
    CHECK(e->cls == VG_CLASS_WRITE && e->deny_errno == EACCES && e->pos.follow == VG_FOLLOW_NO);
    e = vg_sys_lookup(SYS_fchownat);
    CHECK(e->cls == VG_CLASS_WRITE && e->deny_errno == EPERM && e->pos.flags == VG_ARG4);
    CHECK(vg_sys_lookup(SYS_chmod)->deny_errno == EPERM);
    CHECK(vg_sys_lookup(SYS_execve)->cls == VG_CLASS_EXEC);
    CHECK(vg_sys_lookup(SYS_connect)->deny_errno == ECONNREFUSED);
    CHECK(vg_sys_lookup(SYS_bind)->cls == VG_CLASS_BIND);
    CHECK(vg_sys_lookup(SYS_sendmmsg)->cls == VG_CLASS_SEND);
    CHECK(vg_sys_lookup(SYS_socket)->deny_errno == EAFNOSUPPORT);
    CHECK(vg_sys_lookup(SYS_io_uring_register)->deny_errno == ENOSYS);
    e = vg_sys_lookup(SYS_ptrace);
    CHECK(e->cls == VG_CLASS_SYSTEM && (e->flags & VG_SF_BASELINE) && e->deny_errno == EPERM);
    CHECK(vg_sys_lookup(SYS_clone)->flags & VG_SF_COND);
    for (unsigned i = 0; i < vg_sys_count; i++) {
        const struct vg_sysent *r = &vg_sys_table[i];
        /* system rows are exactly the baseline rows */
        CHECK((r->cls == VG_CLASS_SYSTEM) == ((r->flags & VG_SF_BASELINE) != 0));
        CHECK(r->deny_errno > 0);
    }
}

static bool has(const int *v, unsigned n, int nr)
{
    for (unsigned i = 0; i < n; i++)
        if (v[i] == nr)
            return true;
    return false;
}

/* vg_sys_audited for a set of classes, with or without `audit lookups`. */
static unsigned audited(const bool *cls, bool lookups, int *nrs, unsigned max)
{
    struct vg_audit_set set = {.lookups = lookups};
    memcpy(set.cls, cls, sizeof set.cls);
    return vg_sys_audited(&set, nrs, max);
}

static void test_lists(void)
{
    int nrs[256];
    bool cls[VG_CLASS_NCLASSES] = { false };
    CHECK(audited(cls, false, nrs, 256) == 0);

    cls[VG_CLASS_WRITE] = true;
    unsigned n = audited(cls, false, nrs, 256);
    CHECK(has(nrs, n, SYS_unlink) && has(nrs, n, SYS_renameat2) && has(nrs, n, SYS_fchmodat2));
    CHECK(has(nrs, n, SYS_openat) && has(nrs, n, SYS_openat2));   /* class by flags */
    CHECK(!has(nrs, n, SYS_connect) && !has(nrs, n, SYS_execve) && !has(nrs, n, SYS_ptrace));

    cls[VG_CLASS_WRITE] = false;
    cls[VG_CLASS_CONNECT] = true;
    n = audited(cls, false, nrs, 256);
    /* the sends too: TCP fast open connects */
    CHECK(n == 4 && has(nrs, n, SYS_connect) && has(nrs, n, SYS_sendto));
    cls[VG_CLASS_SEND] = true;
    n = audited(cls, false, nrs, 256);
    CHECK(n == 4 && has(nrs, n, SYS_sendto) && has(nrs, n, SYS_sendmsg) && has(nrs, n, SYS_sendmmsg));
    CHECK(audited(cls, false, nrs, 2) == 4);   /* count even when cut */

    /* read: the link and xattr rows always, the stat family only with
     * `audit lookups`. */
    memset(cls, 0, sizeof cls);
    cls[VG_CLASS_READ] = true;
    n = audited(cls, false, nrs, 256);
    CHECK(has(nrs, n, SYS_readlink) && has(nrs, n, SYS_readlinkat) && has(nrs, n, SYS_lgetxattr) &&
          has(nrs, n, SYS_flistxattr));
    CHECK(!has(nrs, n, SYS_newfstatat) && !has(nrs, n, SYS_statx) && !has(nrs, n, SYS_getdents64));
    n = audited(cls, true, nrs, 256);
    CHECK(has(nrs, n, SYS_newfstatat) && has(nrs, n, SYS_statx) && has(nrs, n, SYS_getdents64) &&
          has(nrs, n, SYS_access) && has(nrs, n, SYS_inotify_add_watch));
    /* chdir and statfs tell whether a path exists, as stat does */
    CHECK(has(nrs, n, SYS_chdir) && has(nrs, n, SYS_statfs));

    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        cls[c] = true;
    n = audited(cls, true, nrs, 256);
    unsigned nb = vg_sys_baseline(nrs + n, 256 - n);
    unsigned ncond = 0;
    for (unsigned i = 0; i < vg_sys_count; i++)
        ncond += (vg_sys_table[i].flags & VG_SF_COND) != 0;
    CHECK(ncond == 5); /* ioctl, socket, clone, seccomp, setsockopt */
    CHECK(n + nb + ncond == vg_sys_count);
    CHECK(has(nrs + n, nb, SYS_ptrace) && has(nrs + n, nb, SYS_io_uring_setup) &&
          has(nrs + n, nb, SYS_mount));
    CHECK(!has(nrs + n, nb, SYS_ioctl) && !has(nrs + n, nb, SYS_socket) &&
          !has(nrs + n, nb, SYS_clone) && !has(nrs + n, nb, SYS_seccomp) &&
          !has(nrs + n, nb, SYS_openat));
}

/* The arguments each file op copies, which its rows must place. */
#define POS(f) (offsetof(struct vg_argpos, f) + 1) /* 0: none */
static const struct {
    enum vg_carry op;
    size_t pos[4];
} copies[] = {
    {VG_CARRY_MKNOD, {POS(dev)}},
    {VG_CARRY_CHOWN, {POS(uid), POS(gid)}},
    {VG_CARRY_TRUNCATE, {POS(length)}},
    {VG_CARRY_UTIMENS, {POS(times)}},
    {VG_CARRY_UTIMES, {POS(times)}},
    {VG_CARRY_UTIME, {POS(times)}},
    {VG_CARRY_SETXATTR, {POS(xname), POS(buf), POS(size), POS(xflags)}},
    {VG_CARRY_RMXATTR, {POS(xname)}},
    {VG_CARRY_GETXATTR, {POS(xname), POS(buf), POS(size)}},
    {VG_CARRY_LISTXATTR, {POS(buf), POS(size)}},
    {VG_CARRY_READLINK, {POS(buf), POS(size)}},
};

static void check_copies(const struct vg_sysent *e)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(copies); i++) {
        if (copies[i].op != e->carry)
            continue;
        for (size_t k = 0; k < VG_ARRAY_LEN(copies[i].pos) && copies[i].pos[k]; k++) {
            uint8_t at = ((const uint8_t *)&e->pos)[copies[i].pos[k] - 1];
            check(at >= VG_ARG0 && at <= VG_ARG5, e->name, "the carrier's argument placed", 0);
        }
    }
}

/* A call of row e as a carrier sees it once allowed: an inet address (a
 * unix bind stays the kernel's), one message, flags that are no O_PATH. */
static void check_carrier(const struct vg_sysent *e)
{
    struct vg_call c;
    memset(&c, 0, sizeof c);
    c.nr = e->nr;
    c.ent = e;
    c.has_sa = true;
    c.sa.ss_family = AF_INET;
    c.nmsgs = 1;
    enum vg_carrier k = vg_sys_carrier(e);
    check(vg_nt_fs_takes(&c) == (k == VG_CARRIER_FS), e->name, "the file carrier's iff its row's", 0);
    check(vg_nt_net_takes(&c) == (k == VG_CARRIER_NET), e->name, "the net carrier's iff its row's", 0);
    check(vg_nt_carried_out(e->nr, 0) == (k == VG_CARRIER_OPEN), e->name,
          "the open carrier's iff its row's", 0);
    /* a call that changes a file or reaches out is never left to the
     * kernel, which would read its path or address again
     * (docs/SECURITY.md lists what is: lookups, exec) */
    bool changes = e->cls == VG_CLASS_WRITE || e->cls == VG_CLASS_CONNECT ||
                   e->cls == VG_CLASS_BIND || e->cls == VG_CLASS_SEND;
    if (changes && !(e->flags & VG_SF_BASELINE))
        check(k != VG_CARRIER_CONTINUE, e->name, "carried out", 0);
    /* the filter refuses these: no carrier ever sees one */
    if (e->flags & VG_SF_BASELINE)
        check(k == VG_CARRIER_CONTINUE, e->name, "a baseline row has no carrier", 0);
    /* the flags a carrier checks are the row's flags argument's */
    if (e->pos.valid)
        check(e->pos.flags && k == VG_CARRIER_FS, e->name, "valid flags of a carried flags argument", 0);
    check_copies(e);
}

/* Every row's carry column against the carriers; every op of the carry
 * list is some row's, and has its carrier's case. */
static void test_carriers(void)
{
    bool used[VG_CARRY_N] = {false};
    for (unsigned i = 0; i < vg_sys_count; i++) {
        const struct vg_sysent *e = &vg_sys_table[i];
        if (check(e->carry < VG_CARRY_N, e->name, "a carry op", 0)) {
            used[e->carry] = true;
            check_carrier(e);
        }
    }
    for (int op = 0; op < VG_CARRY_N; op++) {
        char what[32];
        snprintf(what, sizeof what, "carry op %d", op);
        enum vg_carrier k = vg_carrier_of((enum vg_carry)op);
        check(used[op], what, "named by a row", 0);
        check(vg_nt_fs_knows((enum vg_carry)op) == (k == VG_CARRIER_FS), what, "file carrier", 0);
        check(vg_nt_net_knows((enum vg_carry)op) == (k == VG_CARRIER_NET), what, "net carrier", 0);
    }
    CHECK(vg_sys_carrier(vg_sys_lookup(SYS_openat)) == VG_CARRIER_OPEN);
    CHECK(vg_sys_carrier(vg_sys_lookup(SYS_renameat2)) == VG_CARRIER_FS);
    CHECK(vg_sys_carrier(vg_sys_lookup(SYS_sendmmsg)) == VG_CARRIER_NET);
    CHECK(vg_sys_carrier(vg_sys_lookup(SYS_execve)) == VG_CARRIER_CONTINUE);
    CHECK(vg_sys_carrier(vg_sys_lookup(SYS_newfstatat)) == VG_CARRIER_CONTINUE);
    CHECK(vg_sys_carrier(NULL) == VG_CARRIER_CONTINUE);
}

int main(void)
{
    test_rows();
    test_unknown();
    test_semantics();
    test_lists();
    test_carriers();
    return check_done();
}
