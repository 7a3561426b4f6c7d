/* crew.c: the crew's thread and its hand-over (see crew.h).
 *
 * One job at a time (the requester waits for each): the job lives in
 * struct vg_crew, and one futex word says whose turn it is. */
#include "tracer/notify/crew.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "util/util.h"

enum {
    ST_IDLE,    /* nothing asked: the crew sleeps */
    ST_ASKED,   /* a job is in: the crew's turn */
    ST_DONE,    /* result is set: the requester's turn */
    ST_QUIT,    /* the engine is ending */
    ST_READY,   /* start-up: the thread is the candidate */
    ST_FAILED,  /* start-up: it could not become the candidate (why) */
};

#define CHECK_NS 5000000L /* how often a waiting requester asks wanted(): how soon a
                             * blocked job ends for its caller's signal or death */
#define INTERRUPT_RETRY_NS 10000000L /* re-sent until the job is seen to end */
#define JOB_END_POLL_NS 1000000L /* 1 ms: how often vg_crew_job_end looks */

/* /dev/tty is "the caller's controlling terminal": opened by the crew it
 * would be the supervisor's (the user's terminal), never the candidate's,
 * which has none of its own (setsid in the sandbox). */
#define TTY_MAJOR_AUX 5
#define TTY_MINOR_CTTY 0

/* Opens the kernel never runs inline in io_uring (they may sleep). */
#define SLEEPING_FLAGS (O_CREAT | O_TRUNC | VG_O_TMPFILE_BIT)

static void futex_wake(_Atomic uint32_t *w)
{
    syscall(VG_NR_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wait while *w == v, at most timeout (NULL: for ever); returns the
 * value then. */
static uint32_t wait_change_for(_Atomic uint32_t *w, uint32_t v, const struct timespec *timeout)
{
    uint32_t now;
    while ((now = atomic_load_explicit(w, memory_order_acquire)) == v)
        if (syscall(VG_NR_futex, w, FUTEX_WAIT_PRIVATE, v, timeout, NULL, 0) < 0 &&
            errno == ETIMEDOUT)
            return atomic_load_explicit(w, memory_order_acquire);
    return now; /* EAGAIN/EINTR: looked again */
}

static uint32_t wait_change(_Atomic uint32_t *w, uint32_t v)
{
    return wait_change_for(w, v, NULL);
}

static void set_state(struct vg_crew *c, uint32_t v)
{
    atomic_store_explicit(&c->state, v, memory_order_release);
    futex_wake(&c->state);
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

/* What O_NONBLOCK, which the ring adds (uring.h), leaves as it is. */
static bool plain_kind(mode_t m)
{
    return S_ISREG(m) || S_ISDIR(m);
}

long vg_crew_open_job(void *arg)
{
    const struct vg_crew_open *o = arg;
    struct open_how how = how_of(o->flags, o->mode);
    int fd = (int)syscall(VG_NR_openat2, o->root_fd, o->path, &how, sizeof how);
    struct stat st;
    return fd < 0 ? -errno : check_opened(fd, &st);
}

int vg_crew_open_inline(struct vg_crew *c, const struct vg_crew_open *o)
{
    struct stat st;
    /* a look as vigil, as tracer/canon.c's readlinkat: it only picks the
     * way; what is opened is what openat2 finds beneath the root.  Not in
     * the system's read-only trees: the check after the open suffices */
    if (!o->unchanging && fstatat(o->root_fd, o->path[1] ? o->path + 1 : ".", &st,
                AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0 && !plain_kind(st.st_mode))
        return -EAGAIN;
    if (!c->started || !vg_uring_ready(&c->ring) || (o->flags & SLEEPING_FLAGS))
        return -EAGAIN;
    struct open_how how = how_of(o->flags, 0);
    int fd = vg_uring_openat2(&c->ring, o->root_fd, o->path, &how);
    if (fd == -EAGAIN || fd == -ENXIO) /* would sleep; a FIFO swapped in */
        return -EAGAIN;
    if (fd < 0 || o->plain)
        return fd;
    fd = check_opened(fd, &st);
    if (fd >= 0 && !plain_kind(st.st_mode)) {
        /* swapped in after the look: closed before anybody saw it */
        close(fd);
        return -EAGAIN;
    }
    return fd;
}

static void *crew_main(void *arg)
{
    struct vg_crew *c = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, VG_CREW_SIG);
    if (pthread_sigmask(SIG_UNBLOCK, &set, NULL) != 0 ||
        vg_ident_take(c->id, c->ruleset, c->why, sizeof c->why) < 0) {
        if (!c->why[0])
            snprintf(c->why, sizeof c->why, "notify engine: crew thread signal mask");
        set_state(c, ST_FAILED);
        return NULL;
    }
    /* Lend these credentials to the ring; without it every open is a job
     * (as before Linux 5.12, or where io_uring is disabled) */
    (void)vg_uring_take_creds(&c->ring);
    set_state(c, ST_READY);
    uint32_t s = ST_READY;
    for (;;) {
        s = wait_change(&c->state, s);
        if (s == ST_QUIT)
            return NULL;
        if (s != ST_ASKED)
            continue; /* our own IDLE/READY written back: wait on */
        c->result = c->fn(c->arg);
        atomic_fetch_add_explicit(&c->jobs, 1, memory_order_release);
        set_state(c, ST_DONE);
        s = ST_DONE;
    }
}

int vg_crew_start(struct vg_crew *c, const struct vg_ident *id, int ruleset, char *why, size_t n)
{
    *c = (struct vg_crew){.id = id, .ruleset = ruleset, .cpu = -1};
    atomic_init(&c->state, ST_IDLE);
    atomic_init(&c->jobs, 0);
    (void)vg_uring_init(&c->ring); /* none: every open is a job */
    int e = pthread_create(&c->th, NULL, crew_main, c);
    if (e) {
        snprintf(why, n, "notify engine: cannot start a crew thread: %s", strerror(e));
        vg_uring_free(&c->ring);
        return -1;
    }
    c->started = true;
    if (wait_change(&c->state, ST_IDLE) != ST_READY) {
        snprintf(why, n, "%s", c->why);
        pthread_join(c->th, NULL);
        c->started = false;
        vg_uring_free(&c->ring);
        return -1;
    }
    return 0;
}

/* Keep the crew on the requester's CPU: the hand-over is then two context
 * switches on one CPU, where a wake-up on another costs an interrupt
 * between CPUs, and the requester, with sync wake-up, is on the
 * candidate's CPU already. */
static void follow_cpu(struct vg_crew *c)
{
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu == c->cpu)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(c->th, sizeof set, &set) == 0)
        c->cpu = cpu;
}

long vg_crew_run(struct vg_crew *c, long (*fn)(void *), void *arg, bool (*wanted)(void *),
                 void *warg)
{
    if (!c->started)
        return -EIO;
    c->fn = fn;
    c->arg = arg;
    follow_cpu(c);
    set_state(c, ST_ASKED);
    struct timespec check = {0, CHECK_NS}, pause = {0, INTERRUPT_RETRY_NS};
    while (wait_change_for(&c->state, ST_ASKED, &check) == ST_ASKED) {
        if (wanted(warg))
            continue;
        /* the caller is gone: interrupt the job (the signal may come
         * before the call in it starts: sent again until it ends) */
        while (atomic_load_explicit(&c->state, memory_order_acquire) == ST_ASKED &&
               pthread_kill(c->th, VG_CREW_SIG) == 0)
            nanosleep(&pause, NULL);
    }
    return c->result;
}

uint32_t vg_crew_jobs_done(struct vg_crew *c)
{
    return atomic_load_explicit(&c->jobs, memory_order_acquire);
}

bool vg_crew_job_end(struct vg_crew *c, uint32_t done_before, long ns, long *result)
{
    struct timespec step = {0, JOB_END_POLL_NS};
    for (long waited = 0; c->started; waited += JOB_END_POLL_NS) {
        if (atomic_load_explicit(&c->jobs, memory_order_acquire) != done_before) {
            *result = c->result; /* written before jobs (release) */
            return true;
        }
        if (waited >= ns)
            break;
        nanosleep(&step, NULL);
    }
    return false;
}

void vg_crew_interrupt(struct vg_crew *c)
{
    if (c->started && atomic_load_explicit(&c->state, memory_order_acquire) == ST_ASKED)
        pthread_kill(c->th, VG_CREW_SIG);
}

void vg_crew_stop(struct vg_crew *c)
{
    if (!c->started)
        return;
    set_state(c, ST_QUIT);
    pthread_join(c->th, NULL);
    c->started = false;
    vg_uring_free(&c->ring);
}
