/* ptrace_engine.c: the ptrace engine.  The seccomp filter stops audited
 * calls (PTRACE_EVENT_SECCOMP), which the shared core decides at the stop
 * (tracer/stop_call.c), as it does the baseline's calls the filter
 * refuses itself (RET_TRAP), which reach us as the kernel's SIGSYS.
 * Fork/clone/exec/exit events go to lifecycle.c.  Everything runs on one
 * thread that waits in waitpid. */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/limits.h"
#include "tracer/engine.h"
#include "tracer/supervisor.h"
#include "tracer/tasks.h"
#include "tracer/unwind.h"
#include "tracer/py/pyframes.h"

static int supervise(struct vg_engine_ctx *ctx)
{
    struct vg_sup e = {.ctx = ctx, .root_fd = -1};
    /* The run's quota pays for the tracer's work; its spinning would then
     * be the candidate's CPU time: it sleeps at once instead. */
    (void)vg_cgroup_bill_self();
    vg_tasks_init(&e.tasks);
    e.unw = vg_unwinder_new();
    vg_py_plug(&e);
    e.canon = vg_canon_cache_new(ctx->immutable, ctx->nimmutable);
    uint64_t spin_ns = vg_cgroup_billed() ? 0 : vg_sup_spin_ns();
    struct vg_task *init = vg_tasks_add(&e.tasks, ctx->init_pid);
    init->attached = true;
    init->tgid = ctx->init_pid;
    init->identified = true;

    for (;;) {
        int status;
        /* Blocking even after pid 1 is gone: every traced task is being
         * killed and will report; ECHILD says the last one did. */
        pid_t tid = vg_sup_wait_next(spin_ns, &status);
        if (tid < 0 && errno == EINTR)
            continue;
        if (tid <= 0)
            break;
        if (WIFSTOPPED(status)) {
            vg_sup_on_stop(&e, tid, status);
            continue;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status))
            vg_sup_on_exit(&e, tid, status);
    }
    if (e.root_fd >= 0)
        close(e.root_fd);
    vg_unwinder_free(e.unw);
    vg_py_unplug(&e);
    vg_canon_cache_free(e.canon);
    char note[256];
    if (vg_unwind_budget_note(note, sizeof note))
        vg_sup_note(&e, "warning", note, 0);
    vg_tasks_free(&e.tasks);
    (void)vg_cgroup_unbill_self();
    return 0;
}

const struct vg_engine vg_engine_ptrace = {
    .name = "ptrace",
    .baseline = VG_BASELINE_TRAP,
    .supervise = supervise,
};
