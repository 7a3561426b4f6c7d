/* decode_path.c: decoders for calls that name files: the generic one that
 * every path/fd row uses (driven by the row's argument layout), open-like
 * calls whose class follows their flags, and symlink. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/canon.h"
#include "tracer/decode_impl.h"

#define VG_O_TMPFILE_BIT 020000000u   /* __O_TMPFILE, without O_DIRECTORY */
#define VG_AT_FLAG_FOLLOW 0x400u       /* AT_SYMLINK_FOLLOW */
#define VG_AT_FLAG_NOFOLLOW 0x100u     /* AT_SYMLINK_NOFOLLOW */

/* Does the kernel follow a symlink in the last component? */
bool vg_follows(enum vg_follow how, uint64_t flags)
{
    switch (how) {
    case VG_FOLLOW_YES:
        return true;
    case VG_FOLLOW_UNLESS_AT_NOFOLLOW:
        return !(flags & VG_AT_FLAG_NOFOLLOW);
    case VG_FOLLOW_IF_AT_FOLLOW:
        return (flags & VG_AT_FLAG_FOLLOW) != 0;
    case VG_FOLLOW_OPEN:
        /* O_CREAT|O_EXCL fails on any existing last component, symlink
         * included, instead of following it. */
        return !(flags & O_NOFOLLOW) &&
               (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
    case VG_FOLLOW_NO:
        break;
    }
    return false;
}

/* One path argument (or, with no path position, the fd itself). */
static int decode_one(struct vg_tracee *t, struct vg_call *c, uint8_t fdpos,
                      uint8_t pathpos, bool follow, const char **raw,
                      const char **resolved)
{
    int dirfd = fdpos ? (int)vg_arg(c, fdpos) : AT_FDCWD;
    if (pathpos == VG_ARG_NONE) {
        if (fdpos != VG_ARG_NONE)
            *resolved = vg_fd_path(t, c, dirfd);
        return 0;
    }
    bool ok;
    *raw = vg_read_path_arg(t, c, pathpos, &ok);
    if (!ok) {
        *resolved = VG_UNREADABLE;
        return -1;
    }
    *resolved = vg_resolve_at(t, c, dirfd, *raw, follow);
    return 0;
}

int vg_decode_paths(struct vg_tracee *t, struct vg_call *c, bool follow)
{
    const struct vg_argpos *p = &c->ent->pos;
    int r = decode_one(t, c, p->fd, p->path, follow, &c->args.path, &c->args.resolved);
    c->check_path = c->args.resolved;
    if (p->path2 != VG_ARG_NONE) {
        bool missing = c->missing; /* of the first path: the second's is not asked */
        /* rename/link destinations are never followed. */
        r |= decode_one(t, c, p->fd2, p->path2, false, &c->args.path2,
                        &c->args.resolved2);
        c->missing = missing;
        c->check_path2 = c->args.resolved2;
        c->check_cls2 = c->cls;
    }
    return r ? -1 : 0;
}

int vg_dec_path(struct vg_tracee *t, struct vg_call *c)
{
    const struct vg_argpos *p = &c->ent->pos;
    uint64_t flags = p->flags ? vg_arg(c, p->flags) : 0;
    if (p->flags)
        vg_set_flags(c, flags, p->names);
    if (p->mode)
        c->args.mode = (int64_t)(uint32_t)vg_arg(c, p->mode);
    return vg_decode_paths(t, c, vg_follows(p->follow, flags));
}

#define VG_AT_FLAG_EMPTY_PATH 0x1000u   /* AT_EMPTY_PATH */

/* stat-like lookups (newfstatat, statx, faccessat2): with AT_EMPTY_PATH
 * and an empty path they act on the fd itself (that is how libc's fstat is
 * made), which was decided when it was opened: nothing new to decide. */
int vg_dec_lookup(struct vg_tracee *t, struct vg_call *c)
{
    int r = vg_dec_path(t, c);
    if (r == 0 && c->args.path && c->args.path[0] == '\0' && c->args.flags >= 0 &&
        (c->args.flags & VG_AT_FLAG_EMPTY_PATH))
        c->on_open_fd = true;
    return r;
}

/* Open flags that make an open a write: asking for write access, creating,
 * truncating, or an anonymous O_TMPFILE file in the directory. */
static bool open_writes(uint64_t flags)
{
    return (flags & O_ACCMODE) != O_RDONLY ||
           (flags & (O_CREAT | O_TRUNC | VG_O_TMPFILE_BIT)) != 0;
}

static void open_class(struct vg_call *c, uint64_t flags, uint64_t mode)
{
    c->cls = c->check_cls2 = open_writes(flags) ? VG_CLASS_WRITE : VG_CLASS_READ;
    /* The mode only means something when a file may be created. */
    if (flags & (O_CREAT | VG_O_TMPFILE_BIT))
        c->args.mode = (int64_t)(uint32_t)mode;
}

int vg_dec_open(struct vg_tracee *t, struct vg_call *c)
{
    const struct vg_argpos *p = &c->ent->pos;
    /* creat(path, mode) is open(path, O_CREAT|O_WRONLY|O_TRUNC, mode). */
    uint64_t flags = p->flags ? (uint32_t)vg_arg(c, p->flags)
                              : (uint64_t)(O_CREAT | O_WRONLY | O_TRUNC);
    vg_set_flags(c, flags, VG_FL_OPEN);
    open_class(c, flags, vg_arg(c, p->mode));
    return vg_decode_paths(t, c, vg_follows(VG_FOLLOW_OPEN, flags));
}

/* struct open_how of openat2 (linux/openat2.h), x86_64 layout. */
struct vg_open_how {
    uint64_t flags, mode, resolve;
};
#define VG_RESOLVE_NO_SYMLINKS 0x04u
#define VG_RESOLVE_IN_ROOT 0x10u

/* O_* names followed by RESOLVE_* names. */
static void openat2_names(struct vg_call *c, const struct vg_open_how *how)
{
    const char *const *o, *const *r;
    uint32_t no = vg_flag_names(VG_FL_OPEN, how->flags, &c->arena, &o);
    uint32_t nr = how->resolve ? vg_flag_names(VG_FL_RESOLVE, how->resolve, &c->arena, &r) : 0;
    const char **all = vg_arena_alloc(&c->arena, (no + nr) * sizeof(*all));
    memcpy(all, o, no * sizeof(*all));
    if (nr)
        memcpy(all + no, r, nr * sizeof(*all));
    c->args.flags = (int64_t)how->flags;
    c->args.flag_names = all;
    c->args.nflags = no + nr;
}

/* RESOLVE_IN_ROOT: the path is resolved as if dirfd were "/" (absolute
 * paths, "..", and symlinks all stay below it), so canonicalize inside that
 * directory and put its own path in front. */
static const char *resolve_in_root(struct vg_tracee *t, struct vg_call *c,
                                   int dirfd, const char *path, bool follow)
{
    char link[64];
    if (dirfd == AT_FDCWD)
        snprintf(link, sizeof(link), "/proc/%d/cwd", (int)t->tid);
    else
        snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)t->tid, dirfd);
    int dfd = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return vg_arena_strdup(&c->arena, "(bad fd)");
    struct vg_canon_ctx cx = {.root_fd = dfd, .nspid = t->nspid, .nstid = t->nstid};
    char *inner = vg_canon_at(&cx, "/", path, follow);
    close(dfd);
    if (inner == NULL)
        return vg_arena_strdup(&c->arena, "(too many links)");
    const char *top = vg_fd_path(t, c, dirfd);
    const char *out;
    if (inner[0] != '/')   /* unresolvable: the reason, never joined to a path */
        out = vg_arena_strdup(&c->arena, inner);
    else if (strcmp(inner, "/") == 0)
        out = top;
    else if (strcmp(top, "/") == 0)
        out = vg_arena_strdup(&c->arena, inner);
    else {
        size_t n = strlen(top) + strlen(inner) + 1;
        char *joined = vg_arena_alloc(&c->arena, n);
        snprintf(joined, n, "%s%s", top, inner);
        out = joined;
    }
    free(inner);
    return out;
}

int vg_dec_openat2(struct vg_tracee *t, struct vg_call *c)
{
    const struct vg_argpos *p = &c->ent->pos;
    struct vg_open_how how = { 0, 0, 0 };
    /* The struct may grow; its first 24 bytes keep this meaning. */
    if (vg_tracee_read(t, c->a[2], &how, sizeof(how)) < 0) {
        /* Unknown flags: judge it as the stricter class. */
        c->cls = c->check_cls2 = VG_CLASS_WRITE;
        vg_decode_paths(t, c, true);
        return -1;
    }
    openat2_names(c, &how);
    open_class(c, how.flags, how.mode);
    bool follow = vg_follows(VG_FOLLOW_OPEN, how.flags) &&
                  !(how.resolve & VG_RESOLVE_NO_SYMLINKS);
    if (!(how.resolve & VG_RESOLVE_IN_ROOT))
        return vg_decode_paths(t, c, follow);
    bool ok;
    c->args.path = vg_read_path_arg(t, c, p->path, &ok);
    if (!ok) {
        c->args.resolved = c->check_path = VG_UNREADABLE;
        return -1;
    }
    c->args.resolved = c->check_path =
        resolve_in_root(t, c, (int)vg_arg(c, p->fd), c->args.path ? c->args.path : "", follow);
    return 0;
}

/* symlink(target, linkpath): what gets created, and so checked, is
 * linkpath; the target is only text (it is resolved when used). */
int vg_dec_symlink(struct vg_tracee *t, struct vg_call *c)
{
    const struct vg_argpos *p = &c->ent->pos;
    int r = decode_one(t, c, p->fd, p->path, false, &c->args.path, &c->args.resolved);
    c->check_path = c->args.resolved;
    bool ok;
    c->args.path2 = vg_read_path_arg(t, c, p->path2, &ok);
    return (r < 0 || !ok) ? -1 : 0;
}
