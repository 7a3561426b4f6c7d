/* call.h: one system call as vigil decides it: the data the decoders
 * (tracer/decode*.c) fill from registers and the candidate's memory, and
 * the decider (core/decide.h) judges.  Only the data: the decoders, which
 * read a tracee, stay in tracer/. */
#ifndef VG_CORE_CALL_H
#define VG_CORE_CALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "event/event.h"
#include "core/syscalls.h"
#include "util/util.h"

/* Small bump allocator: every string of one decoded call lives here and is
 * released at once by vg_call_free. */
struct vg_arena {
    char *chunks[64];
    unsigned n;
    size_t used, cap;
};
void *vg_arena_alloc(struct vg_arena *a, size_t n);
char *vg_arena_strdup(struct vg_arena *a, const char *s);
void vg_arena_free(struct vg_arena *a);

/* One socket address, as the kernel will read it. */
struct vg_sockaddr_copy {
    struct sockaddr_storage sa;
    socklen_t len;
};

#define VG_NO_DEST UINT32_MAX

struct vg_call {
    int nr;
    const struct vg_sysent *ent;   /* NULL for unknown numbers */
    const char *name;              /* ent->name, or "syscall_<nr>" */
    uint64_t a[6];                 /* raw arguments */
    enum vg_class cls;
    struct vg_args args;           /* what goes into the log */
    /* What the policy is asked about.  A call that touches two paths
     * (rename, link) is checked on both; the stricter verdict wins. */
    const char *check_path;        /* canonical path, or NULL */
    enum vg_class check_cls2;
    const char *check_path2;
    /* Network calls.  has_sa is false when the call names no address
     * (send on a connected socket: sendto with a NULL address, msg_name
     * NULL or msg_namelen 0, sendmmsg with vlen 0 or no message naming
     * one; listen on a bound socket); args.addr is then NULL.  An address
     * that cannot be read makes the call undecidable (below).  For a
     * pathname AF_UNIX address, sa holds the canonical path (when it fits
     * in sun_path) and check_path holds it too.  listen on an unbound
     * socket names the address the kernel binds it to (its family's
     * wildcard, port 0). */
    bool has_sa;
    struct sockaddr_storage sa;
    socklen_t salen;
    const char *proto;             /* "tcp", "udp", "unix", "icmp", "sctp", "raw" */
    ino_t sock_ino;                /* the socket examined (its inode), and its type */
    int sock_type;
    /* sendmmsg: every distinct destination of its messages, ndests of
     * them, the first one also in sa.  dest_sa[i] is what the policy
     * judges, dests[i] (args.dests) describes it and gets its decision. */
    struct vg_sockaddr_copy *dest_sa;
    struct vg_dest *dests;
    uint32_t ndests;
    /* sendmmsg: for each of its nmsgs messages, the index in dest_sa of
     * the destination decided for it, or VG_NO_DEST (to the peer) */
    uint32_t *msg_dest;
    uint32_t nmsgs;
    /* sendmsg, sendmmsg: some message carries control data (judged by the
     * decoder, core/cmsg.h; the notify engine carries such a send
     * out even without an address, so that the kernel never reads the
     * control data again) */
    bool has_control;
    /* Why the call cannot be decided, NULL when it can: an argument that
     * cannot be read (another thread unmapped it), an address longer than
     * the kernel takes or of a family vigil does not decode, a socket it
     * cannot examine.  Such a call is refused with deny_errno in every
     * mode, and recorded with this text as its reason. */
    const char *undecidable;
    int deny_errno;
    bool on_open_fd;               /* a lookup on an fd (fstat): decided at open */
    bool missing;                  /* the first path names nothing in the sandbox
                                    * (its canonical walk found a component
                                    * missing): what makes a lookup a probe */
    struct vg_arena arena;
};
/* Release what a call holds (its arena); it may be filled again. */
void vg_call_free(struct vg_call *call);
#endif
