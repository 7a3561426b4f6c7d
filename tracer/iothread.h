/* iothread.h: everything the supervisor does besides ptrace, on a thread of
 * its own so that the tracing thread can block in waitpid: forward and
 * capture the candidate's stdout/stderr, watch the wall-clock limit, catch
 * the setup failure report, and catch SIGINT/SIGTERM/SIGHUP to vigil. */
#ifndef VG_IOTHREAD_H
#define VG_IOTHREAD_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/sandbox.h"

/* The last cap bytes of a stream, and how much went by. */
struct vg_capture {
    char *ring;
    uint64_t cap, total;
    bool forward_ok;   /* forwarding to our own fd still works */
};
/* The tail, in order, malloc'd (len in *n). */
char *vg_capture_tail(const struct vg_capture *c, size_t *n);

struct vg_io {
    pid_t init_pid;
    int out_fd, err_fd, report_fd;
    int wake_fd;           /* eventfd: the tracer says "the sandbox is gone" */
    int signal_fd;         /* SIGINT/SIGTERM/SIGHUP to vigil */
    int timer_fd;          /* the wall-clock limit */
    uint64_t timeout_ms;
    struct vg_capture out, err;
    struct vg_report report;
    bool have_report;
    atomic_bool timed_out;
    atomic_int interrupted; /* signal number that asked us to stop */
    pthread_t thread;
};

/* Starts the thread.  Signals SIGINT/TERM/HUP/PIPE must already be blocked
 * in every thread (the caller does it before creating threads). */
int vg_io_start(struct vg_io *io, const struct vg_sandbox *sb, uint64_t timeout_ms,
                uint64_t capture_cap, struct vg_err *err);
/* After the sandbox is gone: drain what is left and join. */
void vg_io_finish(struct vg_io *io);
void vg_io_free(struct vg_io *io);
#endif
