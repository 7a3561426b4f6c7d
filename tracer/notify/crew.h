/* crew.h: a crew, the thread of the supervisor that carries decided calls
 * out as the candidate for the notify engine.  It has the candidate's
 * identity and restrictions (uid, gid, groups, no capabilities,
 * no_new_privs, the candidate's very Landlock ruleset, a umask of its own)
 * and nothing else of the supervisor's privileges.  It opens the decided
 * (canonical, sandbox-view) path with openat2 beneath the sandbox's root
 * and no symlink followed, and the notify engine installs the file in the
 * candidate with SECCOMP_IOCTL_NOTIF_ADDFD; it runs the other calls vigil
 * carries out (notify_fs.c, notify_net.c) as jobs.  So the kernel never
 * reads the candidate's memory again for a call vigil decided, and what
 * is opened, created, changed or connected is exactly what was decided,
 * done as the candidate could have done it.
 *
 * It also lends its credentials to a ring (uring.h): most opens then run
 * in the notification thread itself, under those credentials, with no
 * hand-over at all.
 *
 * A thread, not a process in the sandbox: a job is a hand-over between
 * two threads of one process (one futex word; no socket, no SCM_RIGHTS,
 * no address-space switch), and the candidate cannot see, signal or kill
 * it (it is not in the sandbox's pid namespace).  Each notification
 * thread has a crew of its own (notify_engine.c): a job that blocks in
 * one never holds up the calls another serves. */
#ifndef VG_NOTIFY_CREW_H
#define VG_NOTIFY_CREW_H
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/notify/uring.h"

#define VG_IDENT_MAXGROUPS 64

/* Who the candidate is, as the host sees it (/proc/PID/status). */
struct vg_ident {
    uid_t uid[3];               /* real, effective, saved */
    gid_t gid[3];
    int ngroups;
    gid_t groups[VG_IDENT_MAXGROUPS];
};

/* Read pid's identity.  -1 (errno) when it cannot be read or has more
 * groups than we hold. */
int vg_ident_read(pid_t pid, struct vg_ident *id);

/* Make the CALLING THREAD the candidate: its own fs struct (umask 0: the
 * caller's umask is applied to the mode by the engine), the ids (raw
 * per-thread syscalls: glibc's wrappers would change every thread of the
 * supervisor), no capabilities, no_new_privs, then Landlock with ruleset
 * (when >= 0).  -1 with why filled when any step fails. */
int vg_ident_take(const struct vg_ident *id, int ruleset, char *why, size_t n);

/* Interrupts a crew's job blocked in the kernel.  Its handler, which the
 * engine installs, does nothing: without SA_RESTART the call fails EINTR.
 * vigil uses SIGURG for nothing else, and no descriptor of vigil's own
 * asks for it. */
#define VG_CREW_SIG SIGURG

#define VG_O_TMPFILE_BIT 020000000u /* __O_TMPFILE, without O_DIRECTORY */

struct vg_crew {
    pthread_t th;
    bool started;
    int cpu;                    /* the CPU it is kept on (-1: any) */
    const struct vg_ident *id;  /* the engine's, read at start */
    int ruleset;
    struct vg_uring ring;       /* its credentials, lent (uring.h) */
    /* the hand-over: a futex word (enum in crew.c) and the job */
    _Atomic uint32_t state;
    long (*fn)(void *);
    void *arg;
    long result;
    _Atomic uint32_t jobs;      /* done so far (vg_crew_job_end) */
    char why[640];              /* why it could not start */
};

/* Start the thread; it takes id and ruleset at once.  -1 with why when it
 * cannot start or cannot become the candidate (nothing may be carried out
 * then: the caller ends the run). */
int vg_crew_start(struct vg_crew *c, const struct vg_ident *id, int ruleset, char *why, size_t n);

/* Run fn(arg) in the crew's thread and return what it returns.  A job can
 * block for good (a FIFO with no peer, a connect nobody answers): every
 * few milliseconds (CHECK_NS) wanted(warg) is asked whether the caller
 * still wants it (not gone, no signal to handle); once it does not, the
 * job is interrupted (VG_CREW_SIG, again until it ends).  -EIO when the
 * crew is not started. */
long vg_crew_run(struct vg_crew *c, long (*fn)(void *), void *arg, bool (*wanted)(void *),
                 void *warg);
/* How many jobs the crew has done; and wait, at most ns, for the one
 * after done_before (so many done) to end: true with its result in
 * *result.  Any thread may ask (the one that asked for the job keeps
 * waiting in vg_crew_run). */
uint32_t vg_crew_jobs_done(struct vg_crew *c);
bool vg_crew_job_end(struct vg_crew *c, uint32_t done_before, long ns, long *result);
/* Interrupt whatever job runs (the run is ending). */
void vg_crew_interrupt(struct vg_crew *c);
void vg_crew_stop(struct vg_crew *c);

/* An open, as a job (vg_crew_open_job) or inline (vg_crew_open_inline):
 * the canonical path (absolute, sandbox view) beneath root_fd with the
 * call's O_* flags and, for O_CREAT/O_TMPFILE, the mode with the caller's
 * umask applied.  The result is the fd (O_CLOEXEC, the supervisor's) or
 * -errno. */
struct vg_crew_open {
    int root_fd;
    const char *path;
    uint32_t flags, mode;
    bool unchanging; /* in a tree nothing can change (tracer/canon.h): no FIFO
                      * or device the candidate made there, no look first */
    bool plain;      /* and opened before as a directory or a regular file
                      * (tracer/canon.h): no look at what it opens either */
};
long vg_crew_open_job(void *open);
/* The open carried out in the calling thread through the crew's ring;
 * -EAGAIN when it must be a job instead (it may sleep, or it names a FIFO
 * or a device). */
int vg_crew_open_inline(struct vg_crew *c, const struct vg_crew_open *o);
#endif
