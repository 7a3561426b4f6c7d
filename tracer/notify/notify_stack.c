/* notify_stack.c: native stacks under the notify engine.
 *
 * libunwind walks a thread stopped under ptrace; a caller of the notify
 * engine waits in its notification instead, where its registers cannot be
 * read.  So a call whose record wants a stack (a refusal; every call with
 * --stacks) is bounced once through a ptrace stop:
 *   1. the lifecycle thread, the tracer (ptrace requests must come from
 *      it), PTRACE_INTERRUPTs the caller; after NOTIF_RECV the caller's
 *      wait is killable only (WAIT_KILLABLE_RECV), so it stays in the call;
 *   2. the notification thread answers ERESTARTNOINTR: nothing of the call
 *      happens and nothing is recorded;
 *   3. on its way out of the kernel the caller stops for the interrupt,
 *      before any instruction of its own, with the registers of the call;
 *      the tracer unwinds it there, keeps the stack with the call it
 *      belongs to (number, arguments, instruction pointer) and lets it go;
 *   4. the kernel restarts the call (ERESTARTNOINTR restarts always, after
 *      a signal handler if one was due): a new notification, decoded and
 *      decided afresh on a new copy, whose record carries the stack.
 * Without WAIT_KILLABLE_RECV the interrupt ends the wait instead and the
 * kernel restarts the call itself (our answer then finds no call: ENOENT);
 * the rest is the same.  The candidate sees one call, one outcome. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <time.h>

#include "tracer/notify/notify_int.h"
#include "util/util.h"

/* How long a notification thread waits for the tracer to take its ask
 * before it interrupts the tracer's waitpid again (the first signal may
 * come just before the tracer sleeps). */
#define ASK_RETRY_NS 2000000L

void vg_nt_stacks_init(struct nt_stacks *s)
{
    memset(s, 0, sizeof *s);
    atomic_init(&s->nbusy, 0);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->tracer = pthread_self();
}

/* mu held (or the engine ending): the slot free again. */
static void slot_clear(struct nt_stacks *s, struct nt_stack *slot)
{
    if (slot->tid)
        atomic_fetch_sub_explicit(&s->nbusy, 1, memory_order_release);
    vg_arena_free(&slot->arena);
    memset(slot, 0, sizeof *slot);
}

/* Nothing bounced now: the common case, told without the lock (every
 * notification and every ptrace event asks). */
static bool none_busy(struct nt_stacks *s)
{
    return atomic_load_explicit(&s->nbusy, memory_order_acquire) == 0;
}

void vg_nt_stacks_free(struct nt_stacks *s)
{
    for (size_t i = 0; i < VG_NT_STACK_SLOTS; i++)
        slot_clear(s, &s->slot[i]);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
}

/* mu held */
static struct nt_stack *slot_of(struct nt_stacks *s, pid_t tid)
{
    for (size_t i = 0; i < VG_NT_STACK_SLOTS; i++)
        if (s->slot[i].tid == tid)
            return &s->slot[i];
    return NULL;
}

static bool same_call(const struct nt_stack *slot, const struct seccomp_data *d)
{
    return slot->nr == d->nr && slot->ip == d->instruction_pointer &&
           !memcmp(slot->args, d->args, sizeof slot->args);
}

bool vg_nt_stack_take(struct nt *n, const struct seccomp_notif *req, struct nt_stack *out)
{
    struct nt_stacks *s = &n->stacks;
    if (none_busy(s))
        return false;
    pthread_mutex_lock(&s->mu);
    struct nt_stack *slot = slot_of(s, (pid_t)req->pid);
    bool hit = slot && slot->state == VG_NT_STACK_READY && same_call(slot, &req->data);
    if (hit) {
        *out = *slot; /* the frames and their strings (the arena) move out */
        slot->arena = (struct vg_arena){0};
        slot_clear(s, slot);
    }
    pthread_mutex_unlock(&s->mu);
    return hit;
}

void vg_nt_stack_forget(struct nt *n, pid_t tid)
{
    if (none_busy(&n->stacks))
        return;
    pthread_mutex_lock(&n->stacks.mu);
    struct nt_stack *slot = slot_of(&n->stacks, tid);
    if (slot && slot->state != VG_NT_STACK_ASKED) /* an ask is the asker's to clear */
        slot_clear(&n->stacks, slot);
    pthread_mutex_unlock(&n->stacks.mu);
}

/* mu held: wait for the tracer to take tid's ask, waking it from waitpid. */
static void wait_for_tracer(struct nt *n, struct nt_stack *slot, pid_t tid)
{
    struct nt_stacks *s = &n->stacks;
    while (slot->tid == tid && slot->state == VG_NT_STACK_ASKED &&
           !atomic_load_explicit(&n->stopping, memory_order_acquire)) {
        pthread_kill(s->tracer, VG_NT_WAKE_SIG);
        struct timespec until = vg_realtime_in(ASK_RETRY_NS);
        pthread_cond_timedwait(&s->cv, &s->mu, &until);
    }
}

enum vg_nt_bounce vg_nt_stack_bounce(struct nt *n, struct nt_rx *rx)
{
    struct nt_stacks *s = &n->stacks;
    pid_t tid = (pid_t)rx->req->pid;
    pthread_mutex_lock(&s->mu);
    struct nt_stack *slot = slot_of(s, tid);
    if (slot && slot->tries >= VG_NT_BOUNCE_MAX) {
        /* its call never came back as bounced (a signal handler's calls
         * in between, each time): this record goes without a stack */
        slot_clear(s, slot);
        pthread_mutex_unlock(&s->mu);
        return VG_NT_NO_STACK;
    }
    if (!slot)
        slot = slot_of(s, 0);
    if (!slot) { /* every slot in flight: no stack rather than a wait */
        pthread_mutex_unlock(&s->mu);
        return VG_NT_NO_STACK;
    }
    unsigned tries = slot->tries + 1;
    slot_clear(s, slot);
    atomic_fetch_add_explicit(&s->nbusy, 1, memory_order_release);
    *slot = (struct nt_stack){.tid = tid, .nr = rx->req->data.nr, .tries = tries,
                              .ip = rx->req->data.instruction_pointer,
                              .state = VG_NT_STACK_ASKED};
    memcpy(slot->args, rx->req->data.args, sizeof slot->args);
    /* the tracer takes n->lock for each ptrace event: not held meanwhile */
    pthread_mutex_unlock(&n->lock);
    wait_for_tracer(n, slot, tid);
    /* Without WAIT_KILLABLE_RECV the caller may have stopped, been
     * unwound and even come back (the slot READY, or taken and reused)
     * before this thread runs again: only an ask still open or failed is
     * ours to clear. */
    bool mine = slot->tid == tid;
    bool interrupted = !mine || (slot->state != VG_NT_STACK_ASKED &&
                                 slot->state != VG_NT_STACK_FAILED);
    if (!interrupted)
        slot_clear(s, slot);
    pthread_mutex_unlock(&s->mu);
    if (interrupted) {
        memset(rx->resp, 0, n->sizes.seccomp_notif_resp);
        rx->resp->id = rx->req->id;
        rx->resp->error = -VG_ERESTARTNOINTR;
        /* ENOENT: the interrupt ended the wait (no WAIT_KILLABLE_RECV), or
         * the caller is gone; either way nothing of the call happened */
        if (ioctl(n->listener, SECCOMP_IOCTL_NOTIF_SEND, rx->resp) < 0 && errno != ENOENT) {
            pthread_mutex_lock(&n->lock);
            vg_nt_fail(n, "notify engine: cannot answer a call", 0);
            return VG_NT_BOUNCED;
        }
    }
    pthread_mutex_lock(&n->lock);
    if (n->sup.ending)
        return VG_NT_BOUNCED; /* nothing more is decided or answered */
    return interrupted ? VG_NT_BOUNCED : VG_NT_NO_STACK;
}

void vg_nt_stack_serve(struct nt *n)
{
    struct nt_stacks *s = &n->stacks;
    bool took = false;
    if (none_busy(s))
        return;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < VG_NT_STACK_SLOTS; i++) {
        struct nt_stack *slot = &s->slot[i];
        if (!slot->tid || slot->state != VG_NT_STACK_ASKED)
            continue;
        bool ok = ptrace(PTRACE_INTERRUPT, slot->tid, 0, 0) == 0;
        slot->state = ok ? VG_NT_STACK_INTERRUPTED : VG_NT_STACK_FAILED;
        took = true;
    }
    if (took)
        pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

bool vg_nt_stack_on_interrupt(struct vg_sup *e, struct vg_task *t)
{
    struct nt *n = (struct nt *)((char *)e - offsetof(struct nt, sup));
    struct nt_stacks *s = &n->stacks;
    pthread_mutex_lock(&s->mu);
    struct nt_stack *slot = slot_of(s, t->tid);
    bool ours = slot && slot->state == VG_NT_STACK_INTERRUPTED;
    if (ours) {
        slot->n = vg_unwind(e->unw, t->tgid, t->tid, slot->frames, VG_STACK_MAX, &slot->arena);
        slot->state = VG_NT_STACK_READY;
    }
    pthread_mutex_unlock(&s->mu);
    return ours;
}
