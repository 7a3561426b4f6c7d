/* opener.c: the opener thread and its hand-over (see opener.h).
 *
 * One request at a time (the notification thread waits for each): the
 * request lives in struct vg_opener, and one futex word says whose turn
 * it is.  Both sides spin briefly before sleeping, as the ptrace engine
 * does: the requester hands over and the answer comes within a few
 * microseconds, which a sleep and a wake-up would double. */
#include "tracer/notify/opener.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/util.h"

enum {
    OP_IDLE,    /* nothing asked: the opener sleeps */
    OP_ASKED,   /* a request is in: the opener's turn */
    OP_DONE,    /* result is set: the requester's turn */
    OP_QUIT,    /* the engine is ending */
    OP_READY,   /* start-up: the thread is the candidate */
    OP_FAILED,  /* start-up: it could not become the candidate (why) */
};

/* /dev/tty is "the caller's controlling terminal": opened by the opener
 * it would be the supervisor's (the user's terminal), never the
 * candidate's, which has none of its own (setsid in the sandbox). */
#define TTY_MAJOR_AUX 5
#define TTY_MINOR_CTTY 0

static void futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wait while *w == v; returns the new value. */
static uint32_t wait_change(_Atomic uint32_t *w, uint32_t v)
{
    uint32_t now;
    while ((now = atomic_load_explicit(w, memory_order_acquire)) == v)
        syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0); /* EAGAIN/EINTR: look again */
    return now;
}

static void set_state(struct vg_opener *op, uint32_t v)
{
    atomic_store_explicit(&op->state, v, memory_order_release);
    futex_wake(&op->state);
}

/* The open itself, in the opener thread.  RESOLVE_IN_ROOT: "/" and ".."
 * stay in the sandbox; RESOLVE_NO_SYMLINKS (magic links included): the
 * path is canonical, so a symlink in it now is one the candidate swapped
 * in after the decision, and is refused (ELOOP) rather than followed.
 * O_NOCTTY: a terminal opened here must not become the supervisor's. */
static int do_open(const struct vg_opener *op)
{
    struct open_how how = {
        .flags = (uint64_t)op->flags | O_CLOEXEC | O_NOCTTY,
        .mode = op->mode,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    int fd = (int)syscall(SYS_openat2, op->root_fd, op->path, &how, sizeof how);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (S_ISCHR(st.st_mode) && major(st.st_rdev) == TTY_MAJOR_AUX &&
        minor(st.st_rdev) == TTY_MINOR_CTTY) {
        close(fd);
        return -ENXIO; /* what the candidate, without a terminal, would get */
    }
    return fd;
}

static void *opener_main(void *arg)
{
    struct vg_opener *op = arg;
    if (vg_ident_take(&op->id, op->ruleset, op->why, sizeof op->why) < 0) {
        set_state(op, OP_FAILED);
        return NULL;
    }
    set_state(op, OP_READY);
    uint32_t s = OP_READY;
    for (;;) {
        s = wait_change(&op->state, s);
        if (s == OP_QUIT)
            return NULL;
        if (s != OP_ASKED)
            continue; /* our own IDLE/READY written back: wait on */
        op->result = do_open(op);
        set_state(op, OP_DONE);
        s = OP_DONE;
    }
}

int vg_opener_start(struct vg_opener *op, int root_fd, const struct vg_ident *id, int ruleset,
                    char *why, size_t n)
{
    *op = (struct vg_opener){.root_fd = root_fd, .id = *id, .ruleset = ruleset, .cpu = -1};
    atomic_init(&op->state, OP_IDLE);
    int e = pthread_create(&op->th, NULL, opener_main, op);
    if (e) {
        snprintf(why, n, "notify engine: cannot start the opener thread: %s", strerror(e));
        return -1;
    }
    op->started = true;
    uint32_t s = wait_change(&op->state, OP_IDLE);
    if (s != OP_READY) {
        snprintf(why, n, "%s", op->why);
        pthread_join(op->th, NULL);
        op->started = false;
        return -1;
    }
    return 0;
}

/* Keep the opener on the requester's CPU: the hand-over is then two
 * context switches on one CPU, where a wake-up on another costs an
 * interrupt between CPUs, and the requester, with sync wake-up, is on the
 * candidate's CPU already. */
static void follow_cpu(struct vg_opener *op)
{
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu == op->cpu)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(op->th, sizeof set, &set) == 0)
        op->cpu = cpu;
}

int vg_opener_open(struct vg_opener *op, const char *path, uint32_t flags, uint32_t mode)
{
    if (!op->started)
        return -EIO;
    op->path = path;
    op->flags = flags;
    op->mode = mode;
    follow_cpu(op);
    set_state(op, OP_ASKED);
    wait_change(&op->state, OP_ASKED);
    return op->result;
}

void vg_opener_stop(struct vg_opener *op)
{
    if (!op->started)
        return;
    set_state(op, OP_QUIT);
    pthread_join(op->th, NULL);
    op->started = false;
}
