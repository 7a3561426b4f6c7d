/* notify_msg.h: the messages of a send vigil carries out (notify_net.c),
 * copied once from the candidate: the payload (one buffer per message, at
 * most VG_NT_MAX_SEND bytes per call), the control data with the fds it
 * names replaced by vigil's copies of them, and the decided destination. */
#ifndef VG_NOTIFY_MSG_H
#define VG_NOTIFY_MSG_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "tracer/decode.h"
#include "tracer/tasks.h"

/* The most a carried-out send copies.  Beyond it a stream socket's send
 * is cut (a short count, which stream sends may return) and a datagram
 * fails EMSGSIZE (UDP's own limit is 64 KiB); sendmmsg sends the
 * messages that fit. */
#define VG_NT_MAX_SEND (1u << 20)

struct vg_nt_msg {
    struct sockaddr_storage sa; /* the decided destination; salen 0: the peer */
    socklen_t salen;
    const char *unix_path;      /* a pathname unix destination: its decided path */
    struct iovec iov;           /* the payload */
    void *control;
    size_t controllen;
};

struct vg_nt_msgs {
    pid_t pid;                  /* the caller's process */
    pid_t tid;                  /* and thread, whose fds control data names */
    struct vg_nt_msg *m;
    unsigned n;                 /* the messages copied (sendmmsg: those that fit) */
    int sock_type;              /* SOCK_STREAM: a payload may be cut */
    size_t budget;              /* payload bytes still allowed */
    int *fds;                   /* vigil's copies of the fds control data names */
    size_t nfds, fdcap;
};

/* Copy one message: the payload iov[0..iovlen) (already read from the
 * candidate, pointing into its memory) and control bytes at control.
 * 1 when it does not fit the budget any more (sendmmsg stops there). */
int vg_nt_msg_copy(struct vg_tracee *tr, struct vg_nt_msgs *ms, struct vg_nt_msg *out,
                   const struct iovec *iov, size_t iovlen, uint64_t control, size_t controllen);
/* The decided destination of a message: sa (len bytes), a unix pathname
 * one named by path. */
void vg_nt_msg_dest(struct vg_nt_msg *m, const struct sockaddr_storage *sa, socklen_t len,
                    const char *path);
void vg_nt_msgs_free(struct vg_nt_msgs *ms);
#endif
