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

#include "launcher/sandbox.h"
#include "launcher/cpuwatch.h"
#include "launcher/usage.h"

/* The result's tails: the last bytes of each stream, unless --tail. */
#define VG_TAIL_DEFAULT 4096

/* One of the candidate's streams: its first `limit` bytes are passed on to
 * vigil's own fd, the rest is counted and discarded; the last `cap` bytes
 * are kept for the result's tail. */
struct vg_capture {
    char *ring;
    uint64_t cap, total;
    uint64_t limit;     /* the output limit: at most this much is passed on */
    uint64_t forwarded; /* passed on so far */
    bool forward_ok;    /* pass on at all (--no-forward, or our fd went away) */
    int to;             /* where it is passed on */
};

/* What vg_io_start needs to know about the output. */
struct vg_io_caps {
    uint64_t timeout_ms;
    uint64_t output;    /* per stream, forwarded (and so captured) */
    uint64_t tail;      /* per stream, kept for the result */
    bool forward;
    int out_to, err_to; /* where stdout and stderr are passed on: vigil's own 1 and 2,
                         * or a held run's request's (run/hold.c) */
    const char *host_workdir; /* to watch for the disk limit; NULL: none */
    uint64_t disk;      /* bytes the run may add to it */
    const struct vg_cgroup *cg; /* the run's groups: where its CPU time is counted */
    uint64_t cputotal_ms; /* the whole run's CPU time (launcher/cpuwatch.h); 0: none */
    unsigned ncpus;     /* the CPUs the sandbox may run on */
};
/* The tail, in order, malloc'd (len in *n). */
char *vg_capture_tail(const struct vg_capture *c, size_t *n);

struct vg_io {
    pid_t init_pid;
    int out_fd, err_fd, report_fd;
    int wake_fd;           /* eventfd: the tracer says "the sandbox is gone" */
    int signal_fd;         /* SIGINT/SIGTERM/SIGHUP to vigil */
    int timer_fd;          /* the wall-clock limit */
    int sample_fd;         /* periodic: the usage watch */
    int cpu_fd;            /* one-shot, armed anew after each reading: the CPU watch */
    struct vg_cpu_watch cpu; /* read by others only after vg_io_finish */
    atomic_bool cpu_over;  /* the run spent its whole-run CPU time: killed */
    struct vg_usage usage; /* read by others only after vg_io_finish */
    atomic_bool disk_over; /* the host workdir outgrew the disk limit: killed */
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
int vg_io_start(struct vg_io *io, const struct vg_sandbox *sb, const struct vg_io_caps *caps,
                struct vg_err *err);
/* After the sandbox is gone: drain what is left and join. */
void vg_io_finish(struct vg_io *io);
void vg_io_free(struct vg_io *io);
#endif
