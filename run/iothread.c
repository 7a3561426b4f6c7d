/* iothread.c: see iothread.h. */
#include "run/iothread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull

static void capture_put(struct vg_capture *c, const char *p, size_t n)
{
    if (c->cap == 0) {
        c->total += n;
        return;
    }
    /* Only the tail matters: skip what would be overwritten anyway. */
    if (n > c->cap) {
        c->total += n - c->cap;
        p += n - c->cap;
        n = (size_t)c->cap;
    }
    size_t pos = (size_t)(c->total % c->cap);
    size_t first = n < c->cap - pos ? n : (size_t)(c->cap - pos);
    memcpy(c->ring + pos, p, first);
    memcpy(c->ring, p + first, n - first);
    c->total += n;
}

char *vg_capture_tail(const struct vg_capture *c, size_t *n)
{
    size_t len = c->total < c->cap ? (size_t)c->total : (size_t)c->cap;
    char *out = vg_xmalloc(len + 1);
    if (len) {
        size_t start = c->total <= c->cap ? 0 : (size_t)(c->total % c->cap);
        size_t first = (size_t)c->cap - start < len ? (size_t)c->cap - start : len;
        memcpy(out, c->ring + start, first);
        memcpy(out + first, c->ring, len - first);
    }
    out[len] = 0;
    *n = len;
    return out;
}

/* Read what is there from one stream; 0 at EOF, 1 otherwise. */
static int pump(int fd, struct vg_capture *c)
{
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0)
        return (errno == EINTR || errno == EAGAIN) ? 1 : 0;
    if (n == 0)
        return 0;
    capture_put(c, buf, (size_t)n);
    /* Up to the output limit, then nothing: a flood reaches the caller
     * only as far as the cap, and the result says how much more there was. */
    uint64_t room = c->limit - c->forwarded;
    size_t pass = (uint64_t)n < room ? (size_t)n : (size_t)room;
    if (c->forward_ok && pass) {
        if (vg_write_all(c->to, buf, pass) < 0)
            c->forward_ok = false; /* caller's terminal went away: keep capturing */
        else
            c->forwarded += pass;
    }
    return 1;
}

static void kill_sandbox(struct vg_io *io)
{
    kill(io->init_pid, SIGKILL);
}

static void read_report(struct vg_io *io, int *fd)
{
    struct vg_report r;
    ssize_t n = read(*fd, &r, sizeof r);
    if (n == (ssize_t)sizeof r) {
        io->report = r;
        io->report.msg[sizeof r.msg - 1] = 0;
        io->have_report = true;
        kill_sandbox(io);
        return;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    close(*fd); /* EOF: the candidate exec'd, the sandbox is set up */
    *fd = -1;
    vg_usage_attach(&io->usage, io->init_pid);
}

static void sample(struct vg_io *io)
{
    uint64_t ticks;
    if (read(io->sample_fd, &ticks, sizeof ticks) > 0 && vg_usage_sample(&io->usage, false) &&
        !atomic_exchange(&io->disk_over, true))
        kill_sandbox(io);
}

/* The run's CPU time: stop it past its budget, else read it again when
 * it could be spent at the earliest (launcher/cpuwatch.h). */
static void cpu_sample(struct vg_io *io)
{
    uint64_t ticks;
    if (read(io->cpu_fd, &ticks, sizeof ticks) <= 0)
        return;
    if (vg_cpu_watch_sample(&io->cpu)) {
        if (!atomic_exchange(&io->cpu_over, true))
            kill_sandbox(io);
        return;
    }
    uint64_t ns = vg_cpu_watch_next_ns(&io->cpu);
    struct itimerspec next = {.it_value = {.tv_sec = (time_t)(ns / NS_PER_S),
                                           .tv_nsec = (long)(ns % NS_PER_S)}};
    if (timerfd_settime(io->cpu_fd, 0, &next, NULL) < 0 && !atomic_exchange(&io->cpu_over, true))
        kill_sandbox(io); /* no watch left: the limit would not hold */
}

static void *io_main(void *arg)
{
    struct vg_io *io = arg;
    int sfd = io->signal_fd, tfd = io->timer_fd;
    bool draining = false;
    for (;;) {
        struct pollfd pf[8] = {
            {.fd = io->out_fd, .events = POLLIN}, {.fd = io->err_fd, .events = POLLIN},
            {.fd = io->report_fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN},
            {.fd = tfd, .events = POLLIN}, {.fd = io->wake_fd, .events = POLLIN},
            {.fd = io->sample_fd, .events = POLLIN}, {.fd = io->cpu_fd, .events = POLLIN},
        };
        /* Keep watching the clock even after the candidate closed its
         * output: only the tracer's word ends this loop. */
        if (draining && io->out_fd < 0 && io->err_fd < 0)
            break;
        int r = poll(pf, VG_ARRAY_LEN(pf), draining ? 0 : -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || (r == 0 && draining))
            break;
        if (pf[0].revents && !pump(io->out_fd, &io->out)) {
            close(io->out_fd);
            io->out_fd = -1;
        }
        if (pf[1].revents && !pump(io->err_fd, &io->err)) {
            close(io->err_fd);
            io->err_fd = -1;
        }
        if (pf[2].revents)
            read_report(io, &io->report_fd);
        if (pf[3].revents) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                atomic_store(&io->interrupted, (int)si.ssi_signo);
                kill_sandbox(io);
            }
        }
        if (pf[4].revents) {
            uint64_t ticks;
            if (read(tfd, &ticks, sizeof ticks) > 0) {
                atomic_store(&io->timed_out, true);
                kill_sandbox(io);
            }
        }
        if (pf[5].revents)
            draining = true; /* the sandbox is gone; take what's buffered */
        if (pf[6].revents)
            sample(io);
        if (pf[7].revents)
            cpu_sample(io);
    }
    return NULL;
}

/* The descriptors vg_io_start made (not the sandbox's pipes). */
static void close_own(struct vg_io *io)
{
    int *fds[] = {&io->wake_fd, &io->signal_fd, &io->timer_fd, &io->sample_fd, &io->cpu_fd};
    for (size_t i = 0; i < VG_ARRAY_LEN(fds); i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}

static struct vg_capture capture_new(const struct vg_io_caps *caps, int to)
{
    /* The tail is part of what was captured: never more than the limit. */
    uint64_t cap = caps->tail < caps->output ? caps->tail : caps->output;
    return (struct vg_capture){.ring = vg_xmalloc(cap ? cap : 1), .cap = cap,
                               .limit = caps->output, .forward_ok = caps->forward,
                               .to = to};
}

int vg_io_start(struct vg_io *io, const struct vg_sandbox *sb, const struct vg_io_caps *caps,
                struct vg_err *err)
{
    uint64_t timeout_ms = caps->timeout_ms;
    io->init_pid = sb->init_pid;
    io->out_fd = sb->out_fd;
    io->err_fd = sb->err_fd;
    io->report_fd = sb->report_fd;
    io->timeout_ms = timeout_ms;
    io->out = capture_new(caps, caps->out_to);
    io->err = capture_new(caps, caps->err_to);
    vg_usage_init(&io->usage, caps->host_workdir, caps->disk);
    atomic_init(&io->disk_over, false);
    atomic_init(&io->cpu_over, false);
    vg_cpu_watch_init(&io->cpu, caps->cg, caps->cputotal_ms, caps->ncpus);
    atomic_init(&io->timed_out, false);
    atomic_init(&io->interrupted, 0);
    /* Everything the thread needs is created here, so that a missing
     * timer (no time limit!) stops the run instead of going unnoticed. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    io->wake_fd = eventfd(0, EFD_CLOEXEC);
    io->signal_fd = signalfd(-1, &set, SFD_CLOEXEC);
    io->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    io->sample_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    io->cpu_fd = io->cpu.fd >= 0 ? timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC) : -1;
    uint64_t first = vg_cpu_watch_next_ns(&io->cpu);
    struct itimerspec cpu_at = {.it_value = {.tv_sec = (time_t)(first / NS_PER_S),
                                             .tv_nsec = (long)(first % NS_PER_S)}};
    struct itimerspec its = {.it_value = {.tv_sec = (time_t)(timeout_ms / 1000),
                                          .tv_nsec = (long)(timeout_ms % 1000) * 1000000}};
    struct timespec every = {.tv_sec = 0, .tv_nsec = VG_USAGE_PERIOD_MS * 1000000L};
    struct itimerspec period = {.it_interval = every, .it_value = every};
    if (io->wake_fd < 0 || io->signal_fd < 0 || io->timer_fd < 0 || io->sample_fd < 0 ||
        (timeout_ms && timerfd_settime(io->timer_fd, 0, &its, NULL) < 0) ||
        timerfd_settime(io->sample_fd, 0, &period, NULL) < 0 ||
        (io->cpu.fd >= 0 && (io->cpu_fd < 0 || timerfd_settime(io->cpu_fd, 0, &cpu_at, NULL) < 0))) {
        vg_errf(err, "supervisor set-up (eventfd, signalfd, timerfd): %s", strerror(errno));
        close_own(io);
        vg_cpu_watch_close(&io->cpu);
        return -1;
    }
    int r = pthread_create(&io->thread, NULL, io_main, io);
    if (r) {
        vg_errf(err, "pthread_create: %s", strerror(r));
        close_own(io);
        vg_cpu_watch_close(&io->cpu);
        return -1;
    }
    return 0;
}

void vg_io_finish(struct vg_io *io)
{
    uint64_t one = 1;
    (void)!write(io->wake_fd, &one, sizeof one);
    pthread_join(io->thread, NULL);
    /* Once more, now that nothing writes any more: a candidate that filled
     * /tmp and ended at once is seen here (the O_PATH fd keeps it). */
    vg_usage_sample(&io->usage, true);
    vg_usage_close(&io->usage);
    (void)vg_cpu_watch_sample(&io->cpu); /* what the whole run used, for the result */
    vg_cpu_watch_close(&io->cpu);
    int *fds[] = {&io->out_fd, &io->err_fd, &io->report_fd};
    for (size_t i = 0; i < VG_ARRAY_LEN(fds); i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
    close_own(io);
}

void vg_io_free(struct vg_io *io)
{
    free(io->out.ring);
    free(io->err.ring);
    io->out.ring = io->err.ring = NULL;
}
