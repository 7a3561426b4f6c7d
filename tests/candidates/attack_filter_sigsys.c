/* attack_filter_sigsys.c MODE: the SIGSYS side of the baseline's refusals.
 *   handler, ignore, block   SIGSYS caught / ignored / blocked; two threads
 *       make N baseline calls each (io_uring_setup, also with junk in the
 *       upper half of the number register, which the kernel ignores).
 *       Prints "calls=C refused=R handled=H": every call must fail EPERM
 *       (the kernel refused it, vigil turned the trap into the errno) and
 *       no SIGSYS may reach the candidate.
 *   forge    SIGSYS caught; the candidate forges "baseline" SIGSYSes:
 *       to its own thread (rt_tgsigqueueinfo, N times: "forged=N sent=S
 *       handled=H faithful=F": each must arrive untouched), to the process
 *       while a worker makes real io_uring_setup calls ("raced calls=C
 *       refused=R ..."), and a 32-bit call its own filter traps (int 0x80,
 *       io_uring_setup and lchown with ioctl-looking registers): "i386
 *       handled=H"; vigil must record none of those as its own.  Last, a
 *       baseline call made while a forged SIGSYS is pending ("pending ...")
 *       must still fail EPERM, be recorded, and not kill the candidate. */
#include "attack_filter.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>

#define N 500
#define NR_JUNK 0xdead000000000000L /* upper half: the kernel reads 32 bits */
#define SYS_SECCOMP_CODE 1          /* si_code of a SIGSYS from RET_TRAP */
#define SYS_USER_DISPATCH_CODE 2    /* ... from syscall user dispatch */
#define I386_IO_URING_SETUP 425
#define I386_LCHOWN 16 /* and x86_64's ioctl */

static atomic_int handled, faithful, arch_i386;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    atomic_fetch_add(&handled, 1);
    if (si->si_code == SYS_SECCOMP_CODE && si->si_syscall == SYS_io_uring_setup &&
        si->si_arch == AUDIT_ARCH_X86_64)
        atomic_fetch_add(&faithful, 1);
    if (si->si_arch == AUDIT_ARCH_I386)
        atomic_fetch_add(&arch_i386, 1);
}

static long raw_syscall(long nr, long a0, long a1)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a0), "S"(a1) : "rcx", "r11", "memory");
    return ret;
}

/* N baseline calls; how many failed EPERM. */
static void *baseline_calls(void *arg)
{
    atomic_int *refused = arg;
    char params[120] = {0};
    for (int i = 0; i < N; i++) {
        long nr = i % 2 ? SYS_io_uring_setup : NR_JUNK | SYS_io_uring_setup;
        if (raw_syscall(nr, 8, (long)params) == -EPERM)
            atomic_fetch_add(refused, 1);
    }
    return NULL;
}

static void two_threads_calls(void)
{
    atomic_int refused = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, baseline_calls, &refused) != 0)
        exit(2);
    baseline_calls(&refused);
    pthread_join(t, NULL);
    printf("calls=%d refused=%d handled=%d\n", 2 * N, (int)refused, (int)handled);
}

static siginfo_t forged_info(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGSYS;
    si.si_code = SYS_SECCOMP_CODE;
    si.si_syscall = SYS_io_uring_setup;
    si.si_arch = AUDIT_ARCH_X86_64;
    si.si_call_addr = (void *)raw_syscall;
    return si;
}

static void forge_to_thread(void)
{
    int sent = 0;
    for (int i = 0; i < N; i++) {
        siginfo_t si = forged_info();
        sent += syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), SIGSYS, &si) == 0;
    }
    printf("forged=%d sent=%d handled=%d faithful=%d\n", N, sent, (int)handled, (int)faithful);
}

/* A worker makes real baseline calls for RACE_NS while the main thread,
 * SIGSYS blocked, aims forged ones at the process: they can only land on
 * the worker, often while it is stopped at a trap of its own (the kernel
 * queues its own next to the forged one).  Each forged one is waited for
 * a moment, so that they do not merge into one pending signal. */
#define RACE_NS 1500000000L
#define WAIT_NS 2000000L

static atomic_int stop;

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void *calls_until_stopped(void *arg)
{
    atomic_int *count = arg; /* [0] calls, [1] refused */
    char params[120] = {0};
    while (!stop) {
        atomic_fetch_add(&count[0], 1);
        if (raw_syscall(SYS_io_uring_setup, 8, (long)params) == -EPERM)
            atomic_fetch_add(&count[1], 1);
    }
    return NULL;
}

static void forge_against_calls(void)
{
    atomic_int count[2] = {0, 0};
    sigset_t sys;
    sigemptyset(&sys);
    sigaddset(&sys, SIGSYS);
    pthread_t t;
    if (pthread_create(&t, NULL, calls_until_stopped, count) != 0)
        exit(2);
    pthread_sigmask(SIG_BLOCK, &sys, NULL); /* after: the worker keeps it unblocked */
    int sent = 0, before_all = handled;
    for (long end = now_ns() + RACE_NS; now_ns() < end; sent++) {
        int before = handled;
        siginfo_t si = forged_info();
        syscall(SYS_rt_sigqueueinfo, getpid(), SIGSYS, &si);
        long give_up = now_ns() + WAIT_NS;
        while (handled == before && now_ns() < give_up)
            ;
    }
    stop = 1;
    pthread_join(t, NULL);
    pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
    printf("raced calls=%d refused=%d forged=%d handled=%d\n", (int)count[0], (int)count[1],
           sent, (int)handled - before_all);
}

static long int80(long nr, long rsi)
{
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(0), "c"(0), "d"(0), "S"(rsi)
                     : "memory");
    return ret;
}

/* Its own filter traps every 32-bit call: the registers of such a trap
 * look like a native one to anyone who does not ask the kernel the ABI. */
static void trap_i386(void)
{
    struct sock_filter f[] = {LOAD(arch), IF_EQ_RET(AUDIT_ARCH_I386, SECCOMP_RET_TRAP),
                              RET(SECCOMP_RET_ALLOW)};
    if (INSTALL(f, 0) < 0)
        exit(2);
    int before = arch_i386;
    int80(I386_IO_URING_SETUP, 0);
    int80(I386_LCHOWN, TIOCSTI);
    printf("i386 handled=%d\n", (int)arch_i386 - before);
}

/* A forged SIGSYS pending (blocked) when the thread makes a baseline call:
 * the kernel drops its own SIGSYS (one of a kind is pending already), so
 * the stop shows the forged siginfo over the real trap's registers.  Only
 * the registers say what happened; the forged siginfo even claims to come
 * from syscall user dispatch.  (The trap also reset the blocked SIGSYS to
 * its default action: a SIGSYS delivered now would kill.) */
static void forged_pending(void)
{
    sigset_t sys;
    sigemptyset(&sys);
    sigaddset(&sys, SIGSYS);
    pthread_sigmask(SIG_BLOCK, &sys, NULL);
    siginfo_t si = forged_info();
    si.si_code = SYS_USER_DISPATCH_CODE;
    syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), SIGSYS, &si);
    int before = handled;
    char params[120] = {0};
    long r = syscall(SYS_io_uring_setup, 8, params);
    int err = errno;
    pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
    printf("pending ret=%ld errno=%s handled=%d\n", r, r < 0 ? strerrorname_np(err) : "0",
           (int)handled - before);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2)
        return 2;
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
    if (!strcmp(argv[1], "ignore"))
        sa = (struct sigaction){.sa_handler = SIG_IGN};
    if (sigaction(SIGSYS, &sa, NULL) < 0)
        return 2;
    if (!strcmp(argv[1], "block")) {
        sigset_t sys;
        sigemptyset(&sys);
        sigaddset(&sys, SIGSYS);
        sigprocmask(SIG_BLOCK, &sys, NULL);
    }
    if (strcmp(argv[1], "forge")) {
        two_threads_calls();
        return 0;
    }
    forge_to_thread();
    forge_against_calls();
    trap_i386();
    forged_pending();
    return 0;
}
