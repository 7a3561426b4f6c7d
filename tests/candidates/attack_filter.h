/* attack_filter.h: what the attack_filter_* candidates share: a seccomp
 * filter of their own, raw system calls, and one result line per attempt
 * ("NAME ret=R errno=E", errno 0 when the call succeeded). */
#ifndef ATTACK_FILTER_H
#define ATTACK_FILTER_H
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The file the test's policy denies, relative to the workdir (a path on
 * the command line would be an artifact, readable whatever the policy). */
#define SECRET "private/token.txt"

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
/* if the loaded value is v return act, else go on */
#define IF_EQ_RET(v, act) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (v), 0, 1), RET(act)
/* calls of another ABI are let through (vigil's own filter refuses them) */
#define NATIVE_ONLY LOAD(arch), IF_EQ_RET(AUDIT_ARCH_I386, SECCOMP_RET_ALLOW)

static inline void report(const char *name, long r)
{
    printf("%s ret=%ld errno=%s\n", name, r, r < 0 ? strerrorname_np(errno) : "0");
}

/* seccomp(SECCOMP_SET_MODE_FILTER, flags, prog): the listener fd with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER, else 0; -1 + errno. */
static inline long install_filter(struct sock_filter *insns, unsigned short n, unsigned flags)
{
    struct sock_fprog prog = {.len = n, .filter = insns};
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

#define INSTALL(insns, flags) \
    install_filter((insns), (unsigned short)(sizeof(insns) / sizeof((insns)[0])), (flags))
#endif
