/* pyrecord.c: Python frames plugged into the shared core (struct vg_sup's
 * py hooks): an engine calls vg_py_plug, and the core then adds the
 * caller's Python stack to the records --py-frames asks for, and forgets
 * a process that execs or exits, without including tracer/py/. */
#include "launcher/limits.h"
#include "tracer/py/pyframes.h"
#include "tracer/supervisor.h"

/* One unwind of the budget (launcher/limits.h) per record: a record
 * that has its native stack paid for its Python frames too, and one whose
 * native stack the budget refused gets none. */
static bool py_budget(const struct vg_sup *e, const struct vg_syscall_ev *ev)
{
    if (ev->decision == VG_DEC_ALLOW && !e->ctx->opts->stacks_all)
        return vg_unwind_budget_take(); /* no native stack wanted */
    return ev->stack || vg_unwind_budget_refused() == 0;
}

/* The frames live in a, with the record's other strings. */
static void record_frames(struct vg_sup *e, const struct vg_task *t, struct vg_syscall_ev *ev,
                          struct vg_arena *a)
{
    enum vg_py_frames m = e->ctx->opts->py_frames;
    if (m == VG_PYF_OFF || (m == VG_PYF_REFUSED && ev->decision == VG_DEC_ALLOW) ||
        !py_budget(e, ev))
        return;
    struct vg_pyframe *buf = vg_arena_alloc(a, VG_PY_STACK_MAX * sizeof *buf);
    struct vg_tracee tr = {.tid = t->tid, .pid = t->tgid, .nspid = t->nspid,
                           .nstid = t->nstid, .root_fd = e->root_fd};
    ev->npy = vg_py_stack(e->py, &tr, t->proc, buf, VG_PY_STACK_MAX, &ev->py_trunc, a);
    ev->py = buf;
}

static void forget(struct vg_sup *e, uint64_t proc)
{
    vg_py_forget(e->py, proc);
}

void vg_py_plug(struct vg_sup *e)
{
    e->py = vg_py_new();
    e->py_frames = record_frames;
    e->py_forget = forget;
}

void vg_py_unplug(struct vg_sup *e)
{
    vg_py_free(e->py);
    e->py = NULL;
    e->py_frames = NULL;
    e->py_forget = NULL;
}
