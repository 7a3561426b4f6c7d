/* uring.h: opens carried out with the candidate's credentials without a
 * thread switch.  A crew thread, once it has become the candidate
 * (crew.h: its ids, no capabilities, the candidate's Landlock domain,
 * all of which Linux keeps in the thread's credentials), registers those
 * credentials with a small io_uring as a "personality"; the notification
 * thread then submits an openat2 under that personality, and the kernel
 * runs it with exactly those credentials: the same DAC and Landlock
 * checks as the crew thread's own openat2, but in the caller's thread,
 * which saves the two context switches of a hand-over.
 *
 * Only opens that can be done without sleeping are sent this way: the
 * kernel runs an io_uring open inline with O_NONBLOCK and, asked with
 * RESOLVE_CACHED, fails with EAGAIN rather than handing it to a worker
 * thread.  O_CREAT, O_TRUNC and O_TMPFILE never run inline, and the
 * forced O_NONBLOCK changes what opening a FIFO or a device does: those
 * are jobs for the crew thread (crew.c decides). */
#ifndef VG_NOTIFY_URING_H
#define VG_NOTIFY_URING_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct open_how;

struct vg_uring {
    int fd;              /* -1: none (no io_uring here; every open is a crew job) */
    int personality;     /* -1 until the crew thread registered its credentials */
    int linger;          /* an fd of vigil's to close with the next open, or -1 */
    void *sq_map, *cq_map, *sqe_map;
    size_t sq_len, cq_len, sqe_len;
    unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
    void *cqes, *sqes;
};

/* Make the ring (in any thread; its fd is the process's).  -1 (errno)
 * when the kernel has no io_uring or refuses it: r->fd stays -1. */
int vg_uring_init(struct vg_uring *r);
/* In the thread that has become the candidate: register its credentials.
 * -1 (errno) when it cannot (r->personality stays -1). */
int vg_uring_take_creds(struct vg_uring *r);
/* Can opens be carried out here? */
bool vg_uring_ready(const struct vg_uring *r);
/* openat2(dirfd, path, how) with the registered credentials, run inline
 * (how->resolve gets RESOLVE_CACHED).  The fd, or -errno; -EAGAIN when it
 * would have had to sleep. */
int vg_uring_openat2(struct vg_uring *r, int dirfd, const char *path, const struct open_how *how);
/* Close fd, vigil's own, in the next openat2's submission (or when the
 * ring is freed) instead of now: one system call fewer per open.  Only for
 * files whose being held open a while longer nobody can notice (see
 * notify_open.c).  At most one waits; another is closed at once. */
void vg_uring_close_later(struct vg_uring *r, int fd);
void vg_uring_free(struct vg_uring *r);
#endif
