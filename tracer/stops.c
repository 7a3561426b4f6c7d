/* stops.c: the ptrace stops both engines take.  Both attach ptrace to
 * every task of the sandbox for the life of processes (fork, clone,
 * exec, exit events: lifecycle.c), and both see the kernel's SIGSYS for
 * the baseline's refusals, which are recorded here.  Seccomp stops are
 * the ptrace engine's RET_TRACE (and, under either engine, a candidate's
 * own filter's): stop_call.c decides them. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <linux/audit.h>

#include "launcher/filter.h"
#include "tracer/supervisor.h"
#include "util/util.h"

/* The same for both engines.  TRACESECCOMP: the ptrace engine's RET_TRACE
 * stops; under notify vigil's filter never returns RET_TRACE (USER_NOTIF
 * outranks it), so a seccomp stop is a candidate's own filter's on a call
 * vigil lets run, continued as under ptrace rather than failed with ENOSYS
 * as it would be for a tracer that does not take the stops.  EXITKILL: the
 * sandbox dies with vigil. */
#define VG_PTRACE_OPTS                                                                     \
    (PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
     PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)

/* How long the supervisor polls for the next stop before sleeping (see
 * vg_sup_wait_next); measured on 2-CPU VMs: 50 us turns an audited open
 * under ptrace from ~65 to ~30 us, and longer windows gain nothing. */
#define SPIN_NS 50000

uint64_t vg_sup_spin_ns(void)
{
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 1)
        return SPIN_NS;
    return 0; /* on a single CPU spinning would starve the candidate */
}

/* A stop that has to wake a sleeping supervisor on another CPU costs more
 * than the rest of the stop on a VM (the wake-up is an inter-processor
 * interrupt and a halt exit), so after each event we poll briefly before
 * sleeping: a candidate making audited calls, or starting processes, back
 * to back is served without a wake-up; one that computes costs at most
 * the spin window of one CPU. */
pid_t vg_sup_wait_next(uint64_t spin_ns, int *status)
{
    uint64_t until = vg_now_mono_ns() + spin_ns;
    while (spin_ns) {
        pid_t tid = waitpid(-1, status, __WALL | WNOHANG);
        if (tid != 0)
            return tid;
        if (vg_now_mono_ns() >= until)
            break;
    }
    return waitpid(-1, status, __WALL);
}

int vg_sup_attach(pid_t pid, struct vg_err *err)
{
    if (ptrace(PTRACE_SEIZE, pid, 0, VG_PTRACE_OPTS) == 0)
        return 0;
    vg_errf(err, "ptrace the sandbox: %s (is ptrace restricted by Yama or a container?)",
            strerror(errno));
    return -1;
}

void vg_sup_regs_call(const struct user_regs_struct *regs, int *nr, uint64_t args[6])
{
    *nr = (int)regs->orig_rax; /* what the kernel and the filter go by: 32 bits */
    const uint64_t a[6] = {regs->rdi, regs->rsi, regs->rdx, regs->r10, regs->r8, regs->r9};
    memcpy(args, a, sizeof a);
}

/* Is tid stopped right after a call the candidate's filter refused as
 * baseline with SECCOMP_RET_TRAP?  Judged on what the kernel left in the
 * thread, never on the siginfo: a candidate may queue itself a SIGSYS with
 * any si_code (rt_sigqueueinfo allows SYS_SECCOMP to oneself).
 *  - the native ABI (the kernel's own flag, kept until the signal is dealt
 *    with: a candidate's filter may trap an int 0x80 call);
 *  - orig_rax is the number the thread entered the kernel with (an
 *    interrupt, or sigreturn, sets it to -1, which no row has), and rax
 *    still equals it: the trap rolls the return register back, where a
 *    call that ran holds its result;
 *  - vigil's filter refuses that number with those arguments.
 * Registers saying so mean the call was refused by the kernel and never
 * ran, so a forger can at most get a true record of its own refused call. */
static bool trapped_baseline(const struct vg_sup *e, pid_t tid, int *nr, uint64_t args[6])
{
    struct __ptrace_syscall_info info;
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof info, &info) <= 0 ||
        info.arch != AUDIT_ARCH_X86_64 || ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return false;
    vg_sup_regs_call(&regs, nr, args);
    return regs.rax == regs.orig_rax &&
           vg_filter_classify(e->ctx->audit, *nr, args) == VG_FILTER_BASELINE;
}

/* A SIGSYS.  The kernel's report of a baseline refusal is recorded, turned
 * into the row's errno and suppressed; any other (the candidate's own
 * filter trapping another call, one it sent itself) is left to be
 * delivered untouched.  If vigil could not read the thread, the signal is
 * delivered too: a refused call then kills the candidate, and never ran. */
static bool on_sigsys(struct vg_sup *e, struct vg_task *t)
{
    int nr;
    uint64_t args[6];
    if (!trapped_baseline(e, t->tid, &nr, args))
        return false;
    vg_sup_judge_stopped(e, t, nr, args);
    return true;
}

/* Under notify, a signal that arrives while an audited call waits for vigil
 * to receive its notification withdraws the notification: the call ends
 * with ERESTARTSYS before anything of it happened, and a handler without
 * SA_RESTART would turn that into EINTR, on an open or a stat of a plain
 * file where the kernel itself never fails so (under ptrace the call waits
 * in a ptrace stop, which signals do not interrupt).  At the signal's stop,
 * before the kernel decides on the restart, such a call is marked to be
 * restarted after the handler whatever its flags (ERESTARTNOINTR), as the
 * kernel does for calls that must not fail so.  A call vigil let run
 * (CONTINUE) that the kernel itself interrupts is the same number with the
 * same registers: it restarts too (docs/SECURITY.md). */
static void restart_withdrawn_call(struct vg_sup *e, struct vg_task *t)
{
    pid_t tid = t->tid;
    if (t->own_restart) { /* vigil's own answer: the kernel's code for it */
        t->own_restart = false;
        /* unless the call vigil carried out meanwhile did not block after
         * all (a plain file's open): then it is an open that must not fail
         * EINTR, withdrawn like any other */
        if (!e->own_restart_stays || e->own_restart_stays(e, t))
            return;
    }
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0 || regs.rax != (uint64_t)-VG_ERESTARTSYS ||
        (int64_t)regs.orig_rax < 0)
        return;
    const uint64_t args[6] = {regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9};
    if (vg_filter_classify(e->ctx->audit, (int)regs.orig_rax, args) != VG_FILTER_AUDIT)
        return;
    regs.rax = (uint64_t)-VG_ERESTARTNOINTR;
    ptrace(PTRACE_SETREGS, tid, 0, &regs); /* failing: the call fails EINTR, as before */
}

/* Did another process send the signal tid is stopped with (kill, tgkill,
 * sigqueue: si_code <= 0), rather than the kernel (a fault, SIGCHLD)?  A
 * task whose siginfo cannot be read is gone: nothing to pass on. */
static bool sent_by_a_process(pid_t tid)
{
    siginfo_t si;
    return ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0 || si.si_code <= 0;
}

static bool is_stop_signal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

void vg_sup_on_stop(struct vg_sup *e, pid_t tid, int status)
{
    struct vg_task *t = vg_tasks_get(&e->tasks, tid);
    int sig = WSTOPSIG(status), event = status >> 16;
    if (e->ending) {
        vg_sup_release(e, tid); /* which kills it */
        return;
    }
    if (!t) {
        /* A new task's first stop can come before its parent's event. */
        t = vg_tasks_add(&e->tasks, tid);
        if (!t) {
            vg_sup_fail(e, 0, "task table full: cannot follow host tid %d", (int)tid);
            vg_sup_release(e, tid); /* the run is ending: killed */
            return;
        }
        vg_task_identify(&e->tasks, t);
    }
    if (!t->attached) {
        t->attached = true;
        if (event == PTRACE_EVENT_STOP || sig == SIGSTOP) {
            /* A new task's first stop.  Until its creator's event is in,
             * it stays stopped: its records must follow its start record. */
            if (t->announced) {
                ptrace(PTRACE_CONT, tid, 0, 0);
            } else {
                t->held = true;
                e->nheld++;
            }
            return;
        }
    }
    switch (event) {
    case PTRACE_EVENT_SECCOMP:
        vg_sup_on_seccomp(e, t);
        return;
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
        vg_sup_on_new_task(e, t, event);
        break;
    case PTRACE_EVENT_EXEC:
        if (vg_sup_on_exec(e, t))
            return; /* killed where it stands */
        break;
    case PTRACE_EVENT_STOP:
        if (is_stop_signal(sig)) {
            ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop: stay stopped */
            return;
        }
        if (e->on_interrupt)
            e->on_interrupt(e, t); /* then on as from any other interrupt */
        break;
    case 0:
        /* Signal-delivery stop: pass the signal on, unless it is the
         * kernel's report of a baseline refusal. */
        if (tid == e->ctx->init_pid && sent_by_a_process(tid)) {
            /* vigil's init handles no signal, and untraced the kernel
             * would drop every one its own namespace sends it; traced,
             * each one stops it here, and a SIGSTOP passed on stopped it
             * for good (a candidate of an unprivileged vigil has init's
             * uid): the candidate exited, init could not end the run,
             * and its daemons ran on until the timeout. */
            ptrace(PTRACE_CONT, tid, 0, 0);
            return;
        }
        if (sig == SIGSYS && on_sigsys(e, t))
            return;
        if (sig == SIGXFSZ)
            e->ctx->out.fsize_signals++;
        if (e->notified_calls)
            restart_withdrawn_call(e, t);
        ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
        return;
    default:
        break;
    }
    ptrace(PTRACE_CONT, tid, 0, 0);
}
