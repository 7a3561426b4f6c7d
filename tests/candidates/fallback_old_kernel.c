/* fallback_old_kernel.c: run a program (vigil) as if on an older kernel.
 *
 *   fallback_old_kernel LACKS PROGRAM [ARG...]
 *
 * installs a seccomp filter (with no_new_privs, so any caller may) that
 * answers EINVAL, as an older kernel does, for the seccomp features it
 * does not have (or EPERM, as an outer filter of a container's may), then
 * execs PROGRAM.  The filter is inherited by everything PROGRAM starts
 * (vigil's probe, its sandbox, the candidate): the whole run sees the
 * older kernel's seccomp.  LACKS names one of the rows of kernels[] below.
 * Only seccomp is made old: the other calls vigil needs (mount_setattr,
 * Landlock, pidfd_getfd, close_range) still work.
 *
 * The filter sees only a call's registers: "ADDFD without
 * SECCOMP_ADDFD_FLAG_SEND" cannot be told from ADDFD with it (the flag is
 * in memory), so 5.9 is shown as refusing every ADDFD.  Only the native
 * ABI is filtered (vigil makes no call of another). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "fallback_old_kernel: unknown native architecture"
#endif

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif

/* The filter flags every kernel before 5.0 knows (3.17, 4.14, 4.17). */
#define FLAGS_BEFORE_5_0 \
    (SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW)

/* One refusal: call NR whose first argument is ARG0 (unless ANY_ARG0)
 * and whose second has a bit of MASK (TEST_SET) or equals VALUE (TEST_EQ)
 * fails with the row's errno.  Arguments are compared on their low 32 bits, all
 * that the kernel reads of these (unsigned int op, flags, cmd). */
enum test { TEST_SET, TEST_EQ };
#define ANY_ARG0 (~0u)
struct refusal {
    unsigned nr, arg0;
    enum test test;
    unsigned arg1;
};

#define MAX_REFUSALS 3
struct kernel {
    const char *name; /* the LACKS argument */
    int err;          /* what the refused calls fail with */
    struct refusal refuse[MAX_REFUSALS];
    unsigned n;
};

#define SET_FILTER_WITH(mask) {SYS_seccomp, SECCOMP_SET_MODE_FILTER, TEST_SET, (mask)}
#define IOCTL(cmd) {SYS_ioctl, ANY_ARG0, TEST_EQ, (unsigned)(cmd)}

static const struct kernel kernels[] = {
    /* before 5.0: no listener at all, nor the call that sizes its messages */
    {"no-listener", EINVAL, {SET_FILTER_WITH(~(unsigned)FLAGS_BEFORE_5_0),
                     {SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, TEST_EQ, 0}}, 2},
    /* 5.9 to 5.13: ADDFD but no SECCOMP_ADDFD_FLAG_SEND (5.14), no
     * WAIT_KILLABLE_RECV (5.19), no SET_FLAGS (6.6) */
    {"no-addfd-send", EINVAL, {SET_FILTER_WITH(SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV),
                       IOCTL(SECCOMP_IOCTL_NOTIF_ADDFD), IOCTL(SECCOMP_IOCTL_NOTIF_SET_FLAGS)}, 3},
    /* 5.14 to 5.18: ADDFD_FLAG_SEND, but no WAIT_KILLABLE_RECV nor SET_FLAGS */
    {"no-wait-killable", EINVAL, {SET_FILTER_WITH(SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV),
                          IOCTL(SECCOMP_IOCTL_NOTIF_SET_FLAGS)}, 2},
    /* 5.19 to 6.5: everything but SET_FLAGS (FD_SYNC_WAKE_UP) */
    {"no-sync-wake-up", EINVAL, {IOCTL(SECCOMP_IOCTL_NOTIF_SET_FLAGS)}, 1},
    /* any kernel, under a container's filter that refuses listeners */
    {"listener-refused", EPERM, {SET_FILTER_WITH(SECCOMP_FILTER_FLAG_NEW_LISTENER)}, 1},
};

#define LOAD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define ARG_LO(i) offsetof(struct seccomp_data, args[i]) /* little-endian */
#define MAX_INSNS (3 + MAX_REFUSALS * 7)

/* Append one refusal's block; every "no" jumps past its RET. */
static unsigned emit(struct sock_filter *f, unsigned n, const struct refusal *r, int err)
{
    unsigned start = n, len = r->arg0 == ANY_ARG0 ? 5 : 7;
    unsigned end = start + len; /* the next block */
    f[n++] = (struct sock_filter)LOAD(offsetof(struct seccomp_data, nr));
    f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->nr, 0, 0);
    f[n].jf = (unsigned char)(end - n - 1), n++;
    if (r->arg0 != ANY_ARG0) {
        f[n++] = (struct sock_filter)LOAD(ARG_LO(0));
        f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->arg0, 0, 0);
        f[n].jf = (unsigned char)(end - n - 1), n++;
    }
    f[n++] = (struct sock_filter)LOAD(ARG_LO(1));
    unsigned op = r->test == TEST_SET ? BPF_JSET : BPF_JEQ;
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | op | BPF_K, r->arg1, 0, 1);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err);
    return n;
}

static int install(const struct kernel *k)
{
    struct sock_filter f[MAX_INSNS];
    unsigned n = 0;
    f[n++] = (struct sock_filter)LOAD(offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    for (unsigned i = 0; i < k->n; i++)
        n = emit(f, n, &k->refuse[i], k->err);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s LACKS PROGRAM [ARG...]\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        if (strcmp(argv[1], kernels[i].name) != 0)
            continue;
        if (install(&kernels[i]) < 0) {
            perror("fallback_old_kernel: seccomp");
            return 2;
        }
        execv(argv[2], argv + 2);
        perror("fallback_old_kernel: exec");
        return 2;
    }
    fprintf(stderr, "fallback_old_kernel: no row %s\n", argv[1]);
    return 2;
}
