/* decode_impl.h: what the decoder files share among themselves and with
 * the table (core/syscalls.c): the per-family decoders the rows name, the
 * flag-name tables (tracer/flags.c) and the path helpers (tracer/decode.c).
 * Not for use outside the tracer's decoding. */
#ifndef VG_DECODE_IMPL_H
#define VG_DECODE_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "tracer/decode.h"
#include "core/syscalls.h"

/* A decoder fills call->args, call->cls and call->check_path* from the
 * registers (call->a) and the tracee's memory.  0 on success; -1 when the
 * arguments cannot be read (bad pointer): the call is then decided on
 * what could be read, with the path recorded as "(unreadable)". */
typedef int (*vg_decoder_fn)(struct vg_tracee *t, struct vg_call *call);

/* Decoders named by the rows (ROW(..., decoder, ...) -> vg_dec_<decoder>). */
int vg_dec_path(struct vg_tracee *t, struct vg_call *c);    /* generic: paths, fd, flags, mode */
int vg_dec_open(struct vg_tracee *t, struct vg_call *c);    /* open, openat, creat */
int vg_dec_openat2(struct vg_tracee *t, struct vg_call *c);
int vg_dec_symlink(struct vg_tracee *t, struct vg_call *c);
int vg_dec_lookup(struct vg_tracee *t, struct vg_call *c);  /* stat family */
int vg_dec_exec(struct vg_tracee *t, struct vg_call *c);
int vg_dec_net(struct vg_tracee *t, struct vg_call *c);     /* connect, bind, send* */
int vg_dec_listen(struct vg_tracee *t, struct vg_call *c);
int vg_dec_socket(struct vg_tracee *t, struct vg_call *c);

/* Flag names (tracer/flags.c): the names of flags in set, allocated in a;
 * unknown bits come last as one hex string.  Returns the count. */
uint32_t vg_flag_names(enum vg_flagset set, uint64_t flags, struct vg_arena *a,
                       const char *const **names);
/* "inet", "inet6", "unix", "netlink", ... or NULL. */
const char *vg_family_name(int af);

/* Argument n of the call as the row's VG_ARG* position (pos != 0). */
static inline uint64_t vg_arg(const struct vg_call *c, uint8_t pos)
{
    return c->a[pos - 1];
}

/* Text shown for a path that could not be read from the tracee.  Not
 * absolute, so no policy rule about "/..." can match it. */
#define VG_UNREADABLE "(unreadable)"
/* The reason recorded for a call refused because of it. */
#define VG_WHY_UNREADABLE "unreadable: an argument could not be read from the candidate"

/* Resolve a path argument the way the kernel would for thread t:
 * path == NULL or "" names the directory fd itself (AT_EMPTY_PATH, a NULL
 * utimensat path); a relative path is taken from dirfd (AT_FDCWD: the
 * cwd).  Returns the canonical path in c->arena; never NULL (a dirfd that
 * cannot be read gives a non-absolute "(bad fd N)"). */
const char *vg_resolve_at(struct vg_tracee *t, struct vg_call *c, int dirfd,
                          const char *path, bool follow);
/* The sandbox-view path of one of t's fds, in c->arena ("(bad fd N)"). */
const char *vg_fd_path(struct vg_tracee *t, struct vg_call *c, int fd);
/* Read the path at argument position pos (VG_ARG*); "(unreadable)" and
 * *ok = false when the pointer is bad, NULL when the pointer is NULL. */
const char *vg_read_path_arg(struct vg_tracee *t, struct vg_call *c, uint8_t pos,
                             bool *ok);
/* vg_tracee_read_str that also says whether max cut the string. */
char *vg_tracee_read_str_trunc(struct vg_tracee *t, uint64_t addr, size_t max,
                               struct vg_arena *a, bool *trunc);
/* Decode the row's path (and path2) arguments into args.path/resolved
 * (path2/resolved2) and check_path (check_path2, class cls); follow is for
 * the first path, the second is never followed.  -1 if one was unreadable. */
int vg_decode_paths(struct vg_tracee *t, struct vg_call *c, bool follow);
/* Does the kernel follow a symlink in the last component, given the row's
 * rule and the call's flags? */
bool vg_follows(enum vg_follow how, uint64_t flags);
/* Set args.flags/flag_names from a raw value and a name set. */
void vg_set_flags(struct vg_call *c, uint64_t flags, enum vg_flagset set);
/* Mark the call undecidable: refused with err, recorded with why (static
 * or in c->arena).  Returns -1, what a decoder returns for it. */
int vg_undecidable(struct vg_call *c, const char *why, int err);
/* Duplicate fd of thread t into the supervisor (pidfd_getfd); -1 on error. */
int vg_tracee_dup_fd(struct vg_tracee *t, int fd);
#endif
