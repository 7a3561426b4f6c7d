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
#include <signal.h>
#include <time.h>
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

/* An open can block for good (a FIFO with no peer, whose peer's own open
 * waits behind it for the notification thread; the run's timeout kills
 * the caller, but the open would go on).  The requester looks every
 * CHECK_NS whether the caller still waits; once it does not, the opener
 * is interrupted with ABORT_SIG, which it alone takes: its handler does
 * nothing, and without SA_RESTART the open fails EINTR. */
#define ABORT_SIG SIGUSR2
#define CHECK_NS 50000000L
#define ABORT_RETRY_NS 10000000L /* re-sent until the open is seen to end */

/* /dev/tty is "the caller's controlling terminal": opened by the opener
 * it would be the supervisor's (the user's terminal), never the
 * candidate's, which has none of its own (setsid in the sandbox). */
#define TTY_MAJOR_AUX 5
#define TTY_MINOR_CTTY 0

#define VG_O_TMPFILE_BIT 020000000u /* __O_TMPFILE, without O_DIRECTORY */
/* Opens the kernel never runs inline in io_uring (they may sleep). */
#define SLEEPING_FLAGS (O_CREAT | O_TRUNC | VG_O_TMPFILE_BIT)

static void futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wait while *w == v, at most timeout (NULL: for ever); returns the
 * value then. */
static uint32_t wait_change_for(_Atomic uint32_t *w, uint32_t v, const struct timespec *timeout)
{
    uint32_t now;
    while ((now = atomic_load_explicit(w, memory_order_acquire)) == v)
        if (syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, timeout, NULL, 0) < 0 &&
            errno == ETIMEDOUT)
            return atomic_load_explicit(w, memory_order_acquire);
    return now; /* EAGAIN/EINTR: looked again */
}

static uint32_t wait_change(_Atomic uint32_t *w, uint32_t v)
{
    return wait_change_for(w, v, NULL);
}

static void set_state(struct vg_opener *op, uint32_t v)
{
    atomic_store_explicit(&op->state, v, memory_order_release);
    futex_wake(&op->state);
}

/* How every open is made.  RESOLVE_IN_ROOT: "/" and ".." stay in the
 * sandbox; RESOLVE_NO_SYMLINKS (magic links included): the path is
 * canonical, so a symlink in it now is one the candidate swapped in after
 * the decision, and is refused (ELOOP) rather than followed.  O_NOCTTY: a
 * terminal opened here must not become the supervisor's. */
static struct open_how how_of(uint32_t flags, uint32_t mode)
{
    return (struct open_how){
        .flags = (uint64_t)flags | O_CLOEXEC | O_NOCTTY,
        .mode = mode,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
}

/* The file fd opened (closed and -errno when it must not be handed over);
 * *st is its stat. */
static int check_opened(int fd, struct stat *st)
{
    if (fstat(fd, st) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (S_ISCHR(st->st_mode) && major(st->st_rdev) == TTY_MAJOR_AUX &&
        minor(st->st_rdev) == TTY_MINOR_CTTY) {
        close(fd);
        return -ENXIO; /* what the candidate, without a terminal, would get */
    }
    return fd;
}

/* The open itself, in the opener thread. */
static int do_open(const struct vg_opener *op)
{
    struct open_how how = how_of(op->flags, op->mode);
    int fd = (int)syscall(SYS_openat2, op->root_fd, op->path, &how, sizeof how);
    struct stat st;
    return fd < 0 ? -errno : check_opened(fd, &st);
}

static void on_abort(int sig)
{
    (void)sig;
}

/* Take ABORT_SIG in this thread only (the others keep it blocked). */
static int take_abort_signal(void)
{
    struct sigaction sa = {.sa_handler = on_abort}; /* no SA_RESTART */
    sigset_t set;
    sigemptyset(&sa.sa_mask);
    sigemptyset(&set);
    sigaddset(&set, ABORT_SIG);
    if (sigaction(ABORT_SIG, &sa, NULL) < 0)
        return -1;
    return pthread_sigmask(SIG_UNBLOCK, &set, NULL) == 0 ? 0 : -1;
}

static void *opener_main(void *arg)
{
    struct vg_opener *op = arg;
    if (take_abort_signal() < 0) {
        snprintf(op->why, sizeof op->why, "notify engine: opener thread signal: %s",
                 strerror(errno));
        set_state(op, OP_FAILED);
        return NULL;
    }
    if (vg_ident_take(&op->id, op->ruleset, op->why, sizeof op->why) < 0) {
        set_state(op, OP_FAILED);
        return NULL;
    }
    /* Lend these credentials to the ring; without it every open is
     * handed over to this thread, as before Linux 5.12 */
    (void)vg_uring_take_creds(&op->ring);
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
    (void)vg_uring_init(&op->ring); /* none: every open is handed over */
    /* blocked in this thread, and so in the opener until it unblocks it */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, ABORT_SIG);
    int e = pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (!e)
        e = pthread_create(&op->th, NULL, opener_main, op);
    if (e) {
        snprintf(why, n, "notify engine: cannot start the opener thread: %s", strerror(e));
        vg_uring_free(&op->ring);
        return -1;
    }
    op->started = true;
    uint32_t s = wait_change(&op->state, OP_IDLE);
    if (s != OP_READY) {
        snprintf(why, n, "%s", op->why);
        pthread_join(op->th, NULL);
        op->started = false;
        vg_uring_free(&op->ring);
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

/* What O_NONBLOCK, which the ring adds (uring.h), leaves as it is. */
static bool plain_kind(mode_t m)
{
    return S_ISREG(m) || S_ISDIR(m);
}

/* The open carried out in this thread through the ring, with the opener's
 * credentials; -EAGAIN when it must go to the opener thread instead: it
 * creates or truncates, it would sleep, or it names a FIFO or a device
 * (looked at first; and if one was swapped in meanwhile, it is closed
 * again before anybody saw it and opened by the opener thread). */
static int open_inline(struct vg_opener *op, const char *path, uint32_t flags)
{
    if (!vg_uring_ready(&op->ring) || (flags & SLEEPING_FLAGS))
        return -EAGAIN;
    struct stat st;
    /* a look as vigil, as tracer/canon.c's readlinkat: it only picks the
     * way; what is opened is what openat2 finds beneath the root */
    if (fstatat(op->root_fd, path[1] ? path + 1 : ".", &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0 &&
        !plain_kind(st.st_mode))
        return -EAGAIN;
    struct open_how how = how_of(flags, 0);
    int fd = vg_uring_openat2(&op->ring, op->root_fd, path, &how);
    if (fd == -EAGAIN || fd == -ENXIO) /* would sleep; a FIFO swapped in */
        return -EAGAIN;
    if (fd < 0)
        return fd;
    fd = check_opened(fd, &st);
    if (fd >= 0 && !plain_kind(st.st_mode)) {
        close(fd);
        return -EAGAIN;
    }
    return fd;
}

int vg_opener_open(struct vg_opener *op, const char *path, uint32_t flags, uint32_t mode,
                   bool (*wanted)(void *), void *arg)
{
    if (!op->started)
        return -EIO;
    int fd = open_inline(op, path, flags);
    if (fd != -EAGAIN)
        return fd;
    op->path = path;
    op->flags = flags;
    op->mode = mode;
    follow_cpu(op);
    set_state(op, OP_ASKED);
    struct timespec check = {0, CHECK_NS}, pause = {0, ABORT_RETRY_NS};
    while (wait_change_for(&op->state, OP_ASKED, &check) == OP_ASKED) {
        if (wanted(arg))
            continue;
        /* the caller is gone: interrupt the open (the signal may come
         * before the open starts: sent again until it ends) */
        while (atomic_load_explicit(&op->state, memory_order_acquire) == OP_ASKED &&
               pthread_kill(op->th, ABORT_SIG) == 0)
            nanosleep(&pause, NULL);
    }
    return op->result;
}

void vg_opener_stop(struct vg_opener *op)
{
    if (!op->started)
        return;
    set_state(op, OP_QUIT);
    pthread_join(op->th, NULL);
    op->started = false;
    vg_uring_free(&op->ring);
}
