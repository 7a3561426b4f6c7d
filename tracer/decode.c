/* decode.c: the decoding entry point, tracee memory access and the path
 * helpers every family decoder uses.  Decoding runs on every tracer stop,
 * so it avoids stdio and keeps to the syscalls it needs: one memory read
 * (mem.h) per string page, a readlink for a relative path's base,
 * one readlinkat per path component. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tracer/mem.h"
#include "tracer/canon.h"
#include "tracer/decode_impl.h"

#define VG_PAGE 4096u

/* Read a string of at most max bytes into buf (max + 1 bytes), a page at a
 * time so that a string ending just before an unmapped page reads fine.
 * Returns its length, or -1; *trunc tells whether max cut it. */
static ssize_t read_cstr(struct vg_tracee *t, uint64_t addr, char *buf,
                         size_t max, bool *trunc)
{
    size_t got = 0;
    *trunc = false;
    if (addr == 0) {
        errno = EFAULT;
        return -1;
    }
    while (got < max) {
        size_t in_page = VG_PAGE - (size_t)((addr + got) % VG_PAGE);
        size_t want = in_page < max - got ? in_page : max - got;
        if (vg_tracee_read(t, addr + got, buf + got, want) < 0)
            return -1;
        char *nul = memchr(buf + got, '\0', want);
        if (nul)
            return nul - buf;
        got += want;
    }
    buf[max] = '\0';
    *trunc = true;
    return (ssize_t)max;
}

char *vg_tracee_read_str_trunc(struct vg_tracee *t, uint64_t addr, size_t max,
                               struct vg_arena *a, bool *trunc)
{
    char stackbuf[PATH_MAX + 1];
    char *buf = max <= PATH_MAX ? stackbuf : vg_xmalloc(max + 1);
    ssize_t n = read_cstr(t, addr, buf, max, trunc);
    char *s = n < 0 ? NULL : vg_arena_strdup(a, buf);
    if (buf != stackbuf)
        free(buf);
    return s;
}

char *vg_tracee_read_str(struct vg_tracee *t, uint64_t addr, size_t max,
                         struct vg_arena *a)
{
    bool trunc;
    return vg_tracee_read_str_trunc(t, addr, max, a, &trunc);
}

const char *vg_read_path_arg(struct vg_tracee *t, struct vg_call *c, uint8_t pos,
                             bool *ok)
{
    uint64_t addr = vg_arg(c, pos);
    *ok = true;
    if (addr == 0)
        return NULL;
    /* A path longer than PATH_MAX makes the kernel fail ENAMETOOLONG, so
     * the truncated text is as good as any for the record. */
    const char *s = vg_tracee_read_str(t, addr, PATH_MAX, &c->arena);
    if (s == NULL) {
        *ok = false;
        return VG_UNREADABLE;
    }
    return s;
}

static const char *bad_fd(struct vg_call *c, int fd)
{
    char buf[48];
    snprintf(buf, sizeof(buf), "(bad fd %d)", fd);
    return vg_arena_strdup(&c->arena, buf);
}

/* Copy a malloc'd string into the arena and free it. */
static const char *to_arena(struct vg_call *c, char *s)
{
    const char *r = vg_arena_strdup(&c->arena, s);
    free(s);
    return r;
}

const char *vg_fd_path(struct vg_tracee *t, struct vg_call *c, int fd)
{
    char *p = vg_canon_link(t->tid, fd, t->pivoted);
    return p ? to_arena(c, p) : bad_fd(c, fd);
}

static const char *canon_error(struct vg_call *c)
{
    return vg_arena_strdup(&c->arena, errno == ELOOP ? "(too many links)"
                                                     : "(name too long)");
}

const char *vg_resolve_at(struct vg_tracee *t, struct vg_call *c, int dirfd,
                          const char *path, bool follow)
{
    if (path == NULL || path[0] == '\0')
        return vg_fd_path(t, c, dirfd);
    char *base = NULL;
    if (path[0] != '/') {
        base = vg_canon_link(t->tid, dirfd, t->pivoted);
        if (base == NULL)
            return bad_fd(c, dirfd);
        if (base[0] != '/') {
            /* Not a directory ("socket:[7]"): the kernel fails ENOTDIR. */
            const char *r = vg_arena_strdup(&c->arena, base);
            free(base);
            return r;
        }
    }
    /* Only a lookup can be a probe (core/decide.c): a write's walk is
     * not asked, which spares it a stat of a last component it does not
     * follow. */
    bool lookup = c->cls == VG_CLASS_READ || c->cls == VG_CLASS_EXEC;
    struct vg_canon_ctx cx = {.root_fd = t->root_fd, .cache = t->cache, .nspid = t->nspid,
                              .nstid = t->nstid, .missing = lookup ? &c->missing : NULL};
    char *r = vg_canon_at(&cx, base, path, follow);
    free(base);
    return r ? to_arena(c, r) : canon_error(c);
}

void vg_set_flags(struct vg_call *c, uint64_t flags, enum vg_flagset set)
{
    c->args.flags = (int64_t)flags;
    c->args.nflags = vg_flag_names(set, flags, &c->arena, &c->args.flag_names);
}

int vg_undecidable(struct vg_call *c, const char *why, int err)
{
    if (c->undecidable == NULL) {  /* the first reason found is the one told */
        c->undecidable = why;
        c->deny_errno = err;
    }
    return -1;
}

int vg_tracee_dup_fd(struct vg_tracee *t, int fd)
{
    return vg_thread_getfd(t->tid, t->pid, fd); /* the calling thread's table */
}

/* The decoder of each kind a row can name (core/syscalls.h). */
#define VG_DEC_FN(k) [VG_DEC_##k] = vg_dec_##k,
static const vg_decoder_fn decoders[VG_DEC_N] = {VG_DECODERS(VG_DEC_FN)};
#undef VG_DEC_FN

int vg_decode_call(struct vg_tracee *t, int nr, const uint64_t a[6],
                   struct vg_call *call)
{
    memset(call, 0, sizeof(*call));
    call->nr = nr;
    memcpy(call->a, a, sizeof(call->a));
    call->args.flags = -1;
    call->args.mode = -1;
    call->args.port = -1;
    call->ent = vg_sys_lookup(nr);
    if (call->ent == NULL) {
        char name[32];
        snprintf(name, sizeof(name), "syscall_%d", nr);
        call->name = vg_arena_strdup(&call->arena, name);
        call->cls = call->check_cls2 = VG_CLASS_SYSTEM;
        call->deny_errno = ENOSYS;
        return 0;
    }
    call->name = call->ent->name;
    call->cls = call->check_cls2 = call->ent->cls;
    call->deny_errno = call->ent->deny_errno;
    int r = decoders[call->ent->decode](t, call);
    if (r < 0)  /* fail closed: what could not be read cannot be judged */
        vg_undecidable(call, VG_WHY_UNREADABLE, EFAULT);
    return r;
}
