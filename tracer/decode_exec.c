/* decode_exec.c: execve/execveat.  The log gets the resolved executable,
 * argv, and the *names* of the environment variables: values often hold
 * tokens and passwords and must never reach the log.
 *
 * argv is read whole, every argument of it (tracer/argv_rec.h decides what
 * the record keeps and how it says what it left out).  An argv or envp
 * that cannot be read whole (an unmapped pointer array or string, or a
 * page another thread made PROT_NONE, or longer than the kernel takes) is
 * marked argv_unreadable and the call is refused (core/decide.c): no
 * exec is released with an argv the log could not show.  What the kernel
 * copies a moment later may still differ (another thread can rewrite the
 * strings after this read): the exec proc record, read from the new
 * image at its exec event, is the authoritative argv. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "tracer/argv_rec.h"
#include "tracer/decode_impl.h"

/* The kernel's own limits (fs/exec.c): an argument longer than
 * MAX_ARG_STRLEN (32 pages, NUL included) fails E2BIG, and argv + envp
 * together never exceed 3/4 of _STK_LIM (8 MiB).  Reading stops there:
 * a call past them is refused with E2BIG, as the kernel would (each array
 * is held to the joint limit alone, so nothing refused here would run). */
#define VG_PAGE_SIZE 4096u
#define VG_ARG_STRLEN_MAX (32u * VG_PAGE_SIZE)
#define VG_ARG_TOTAL_MAX (6u << 20)
#define VG_ARG_FIRST_READ VG_PAGE_SIZE /* most arguments fit one read this size */
#define VG_ENV_MAX_NAMES 1024u  /* names kept; the list ends in "..." past it */
#define VG_MORE "..."
#define VG_PTR_BATCH (VG_PAGE_SIZE / sizeof(uint64_t)) /* pointers per read: one page */

/* One string of the tracee read whole into scratch; NULL and *err set
 * (EFAULT unreadable, E2BIG longer than the kernel takes) otherwise. */
static const char *read_whole(struct vg_tracee *t, uint64_t addr, struct vg_arena *scratch,
                              size_t *len, int *err)
{
    bool cut;
    char *s = vg_tracee_read_str_trunc(t, addr, VG_ARG_FIRST_READ, scratch, &cut);
    if (s && cut)
        s = vg_tracee_read_str_trunc(t, addr, VG_ARG_STRLEN_MAX, scratch, &cut);
    if (!s || cut) {
        *err = s ? E2BIG : EFAULT;
        return NULL;
    }
    *len = strlen(s);
    return s;
}

/* Most arguments and environment strings are short: the strings of a
 * batch of pointers are read ahead together, VG_AHEAD bytes of each (never
 * past the end of its page, which may be the last mapped), in one
 * process_vm_readv instead of one each.  A string whose NUL is not in what
 * was read ahead (longer, or running on into the next page, or not read)
 * is read alone, as before. */
#define VG_AHEAD 256u
#define VG_AHEAD_MAX 64u /* strings per read ahead */

struct ahead {
    char buf[VG_AHEAD_MAX][VG_AHEAD];
    size_t got[VG_AHEAD_MAX]; /* bytes of each read (0: none) */
};

static void read_ahead(struct vg_tracee *t, const uint64_t *ptrs, uint32_t n, struct ahead *a)
{
    struct iovec local[VG_AHEAD_MAX], remote[VG_AHEAD_MAX];
    uint32_t k = 0;
    for (; k < n && ptrs[k]; k++) {
        size_t in_page = VG_PAGE_SIZE - (size_t)(ptrs[k] % VG_PAGE_SIZE);
        local[k] = (struct iovec){a->buf[k], in_page < VG_AHEAD ? in_page : VG_AHEAD};
        remote[k] = (struct iovec){(void *)(uintptr_t)ptrs[k], local[k].iov_len};
    }
    long left = vg_tracee_read_ahead(t, local, remote, k);
    for (uint32_t i = 0; i < n; i++) {
        bool whole = i < k && left >= (long)local[i].iov_len;
        a->got[i] = whole ? local[i].iov_len : 0;
        if (whole)
            left -= (long)local[i].iov_len;
    }
}

/* The string at ptrs[i] from what was read ahead, or NULL. */
static const char *from_ahead(struct ahead *a, uint32_t i, size_t *len)
{
    const char *nul = a->got[i] ? memchr(a->buf[i], '\0', a->got[i]) : NULL;
    if (!nul)
        return NULL;
    *len = (size_t)(nul - a->buf[i]);
    return a->buf[i];
}

/* Walks a NULL-terminated pointer array of the tracee and hands each
 * string to a consumer.  Pointers are read a page-bounded batch at a time
 * (the array may end right before an unmapped page). */
typedef void (*strv_fn)(void *ctx, const char *s, size_t len);

static int walk_strv(struct vg_tracee *t, uint64_t addr, strv_fn fn, void *ctx)
{
    uint64_t ptrs[VG_PTR_BATCH];
    struct ahead *a = vg_xmalloc(sizeof *a);
    uint64_t total = 0;
    int err = 0;
    while (addr != 0 && !err) {
        uint32_t want = (uint32_t)((VG_PAGE_SIZE - addr % VG_PAGE_SIZE) / sizeof(uint64_t));
        if (want == 0 || want > VG_PTR_BATCH)
            want = 1; /* a misaligned array: one pointer at a time */
        if (vg_tracee_read(t, addr, ptrs, want * sizeof(uint64_t)) < 0) {
            err = EFAULT;
            break;
        }
        for (uint32_t i = 0; i < want && !err; i++) {
            if (ptrs[i] == 0) {
                addr = 0;
                break;
            }
            if (i % VG_AHEAD_MAX == 0)
                read_ahead(t, ptrs + i, want - i < VG_AHEAD_MAX ? want - i : VG_AHEAD_MAX, a);
            struct vg_arena scratch = {0};
            size_t len = 0;
            const char *s = from_ahead(a, i % VG_AHEAD_MAX, &len);
            if (!s)
                s = read_whole(t, ptrs[i], &scratch, &len, &err);
            total += len + 1 + sizeof(uint64_t);
            if (s && total <= VG_ARG_TOTAL_MAX)
                fn(ctx, s, len);
            vg_arena_free(&scratch);
            if (s && total > VG_ARG_TOTAL_MAX)
                err = E2BIG;
        }
        if (addr)
            addr += want * sizeof(uint64_t);
    }
    free(a);
    return err;
}

static void add_arg(void *ctx, const char *s, size_t len)
{
    vg_argv_rec_add(ctx, s, len);
}

/* Environment names: only the part before '=' is ever copied. */
struct env_names {
    struct vg_arena *arena;
    const char **v;     /* in the arena, doubled as it fills */
    uint32_t n, cap;
};

static void add_env(void *ctx, const char *s, size_t len)
{
    struct env_names *e = ctx;
    if (e->n > VG_ENV_MAX_NAMES)
        return;
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 16;
        const char **v = vg_arena_alloc(e->arena, (e->cap + 1) * sizeof *v);
        if (e->n)
            memcpy(v, e->v, e->n * sizeof *v);
        e->v = v;
    }
    if (e->n == VG_ENV_MAX_NAMES) {
        e->v[e->n++] = VG_MORE;
        return;
    }
    const char *eq = memchr(s, '=', len);
    size_t keep = eq ? (size_t)(eq - s) : len;
    char *name = vg_arena_alloc(e->arena, keep + 1);
    memcpy(name, s, keep);
    name[keep] = 0;
    e->v[e->n++] = name;
}

/* The call's argv/envp into c->args; 0, or the errno the kernel would
 * have failed it with. */
static int read_argv_envp(struct vg_tracee *t, struct vg_call *c, uint64_t argv, uint64_t envp)
{
    struct vg_argv_rec rec;
    vg_argv_rec_init(&rec, &c->arena);
    int err = walk_strv(t, argv, add_arg, &rec);
    vg_argv_rec_done(&rec, &c->args.argv, &c->args.argc, &c->args.argv_full);
    struct env_names env = {.arena = &c->arena};
    if (!err)
        err = walk_strv(t, envp, add_env, &env);
    c->args.env_names = env.v;
    c->args.nenv = env.n;
    return err;
}

int vg_dec_exec(struct vg_tracee *t, struct vg_call *c)
{
    const struct vg_argpos *p = &c->ent->pos;
    uint64_t flags = 0;
    if (p->flags) {
        flags = vg_arg(c, p->flags);
        vg_set_flags(c, flags, p->names);
    }
    bool ok = vg_decode_paths(t, c, vg_follows(p->follow, flags)) == 0;
    c->args.exe = c->args.resolved;
    /* argv and envp follow the path: execve(path, argv, envp),
     * execveat(dirfd, path, argv, envp, flags). */
    int err = read_argv_envp(t, c, vg_arg(c, p->path + 1), vg_arg(c, p->path + 2));
    if (err) {
        c->args.argv_unreadable = true;
        c->deny_errno = err;
    }
    return ok && !err ? 0 : -1;
}
