/* recheck_fs.c: the sandbox's files as far as the log tells
 * (recheck_int.h), for the decider's few questions about them: is the
 * object of a refused call missing (its errno is then ENOENT), does the
 * directory a kill rule's mkdir names exist (then it is refused EEXIST,
 * not killed), is a renamed object a directory (a tree moves)?
 *
 * What the log says: a read that found its object (not a probe), a probe
 * that did not, what a refusal's errno or a carried-out call's outcome
 * shows was there before it, and what an allowed call that worked made
 * or removed.  Each fact is kept with the order it was learned in: a
 * removal of a directory is newer than what was known below it.  What the
 * log does not say is unknown, which the decider reads as the stricter
 * case. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* RENAME_EXCHANGE */
#include <stdlib.h>
#include <string.h>

#include "core/syscalls.h"
#include "insight/recheck_int.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define FIRST_SLOTS 256   /* a power of two: slots are found by mask */
#define VG_FACT_EXISTS_KIND VG_FACT_DIR /* there, of unknown kind: the stricter (a tree) */

struct fact_slot {
    char *path;
    enum vg_fact fact;
    uint64_t gen;       /* when it was learned: later facts win */
};

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * FNV_PRIME;
    return h;
}

/* The slot of path[0..n), or the empty one it would go in. */
static struct fact_slot *find(const struct vg_recheck_fs *fs, const char *path, size_t n)
{
    size_t mask = fs->nslots - 1;
    for (size_t i = hash(path, n) & mask;; i = (i + 1) & mask) {
        struct fact_slot *s = &fs->slots[i];
        if (!s->path || (strlen(s->path) == n && !memcmp(s->path, path, n)))
            return s;
    }
}

static void grow(struct vg_recheck_fs *fs)
{
    struct fact_slot *old = fs->slots;
    size_t n = fs->nslots;
    fs->nslots = n ? 2 * n : FIRST_SLOTS;
    fs->slots = vg_xcalloc(fs->nslots, sizeof *fs->slots);
    for (size_t i = 0; i < n; i++)
        if (old[i].path)
            *find(fs, old[i].path, strlen(old[i].path)) = old[i];
    free(old);
}

static void put(struct vg_recheck_fs *fs, const char *path, size_t n, enum vg_fact fact)
{
    if (2 * (fs->used + 1) > fs->nslots)
        grow(fs);
    struct fact_slot *s = find(fs, path, n);
    if (!s->path) {
        s->path = vg_xstrndup(path, n);
        fs->used++;
    }
    s->fact = fact;
    s->gen = ++fs->gen;
}

/* Learn a fact of an absolute path; what exists has directories above it. */
static void learn(struct vg_recheck_fs *fs, const char *path, enum vg_fact fact)
{
    if (!path || path[0] != '/' || fact == VG_FACT_UNKNOWN)
        return;
    if (fact != VG_FACT_MISSING)
        for (const char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/'))
            put(fs, path, (size_t)(p - path), VG_FACT_DIR);
    put(fs, path, strlen(path), fact);
}

void vg_recheck_fs_init(struct vg_recheck_fs *fs, const char *cwd)
{
    memset(fs, 0, sizeof *fs);
    grow(fs);
    learn(fs, cwd, VG_FACT_DIR); /* the candidate starts in it */
}

void vg_recheck_fs_free(struct vg_recheck_fs *fs)
{
    for (size_t i = 0; i < fs->nslots; i++)
        free(fs->slots[i].path);
    free(fs->slots);
    memset(fs, 0, sizeof *fs);
}

enum vg_fact vg_recheck_fs_fact(const struct vg_recheck_fs *fs, const char *path)
{
    if (!path || path[0] != '/')
        return VG_FACT_UNKNOWN;
    size_t n = strlen(path);
    const struct fact_slot *own = find(fs, path, n);
    enum vg_fact fact = own->path ? own->fact : VG_FACT_UNKNOWN;
    uint64_t gen = own->path ? own->gen : 0;
    /* an ancestor missing, or not a directory, since: nothing is below it */
    for (size_t k = n; k > 1;) {
        while (k > 0 && path[--k] != '/')
            ;
        const struct fact_slot *up = k ? find(fs, path, k) : NULL;
        if (up && up->path && up->gen > gen &&
            (up->fact == VG_FACT_MISSING || up->fact == VG_FACT_FILE))
            return VG_FACT_MISSING;
    }
    return fact;
}

/* ---- what a record says ---- */

static bool refused(enum vg_decision d)
{
    return d == VG_DEC_DENY || d == VG_DEC_KILL;
}

/* The call ran and the kernel (or vigil, carrying it out) says it worked.
 * Without an outcome in the record (the ptrace engine) nothing is known. */
static bool worked(const struct vg_syscall_ev *e)
{
    return !refused(e->decision) && e->carried && !e->ret_errno && (e->installed || e->ret >= 0);
}

static bool failed_with(const struct vg_syscall_ev *e, int err)
{
    return (refused(e->decision) && e->err == err) || (e->carried && e->ret_errno == err);
}

static bool opens(const struct vg_sysent *ent)
{
    return ent && (ent->decode == VG_DEC_open || ent->decode == VG_DEC_openat2);
}

/* A call that makes its first path (mkdir, an open that creates). */
static bool creates(const struct vg_syscall_ev *e, const struct vg_sysent *ent)
{
    return ent && ((ent->flags & VG_SF_MKDIR) ||
                   (opens(ent) && e->args.flags >= 0 && (e->args.flags & O_CREAT)));
}

static void now(struct vg_recheck_fs *fs, const char *path, enum vg_fact fact)
{
    if (path && path[0] == '/' && fact != VG_FACT_UNKNOWN && fs->nnow < VG_ARRAY_LEN(fs->now))
        fs->now[fs->nnow++] = (typeof(fs->now[0])){.path = path, .fact = fact};
}

/* The parent of an absolute path, in buf; NULL for one in "/". */
static const char *parent(const char *path, char *buf, size_t cap)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!slash || slash == path || (size_t)(slash - path) >= cap)
        return NULL;
    memcpy(buf, path, (size_t)(slash - path));
    buf[slash - path] = 0;
    return buf;
}

void vg_recheck_fs_before(struct vg_recheck_fs *fs, const struct vg_syscall_ev *e)
{
    const struct vg_sysent *ent = vg_sys_lookup(e->nr);
    const char *path = e->args.resolved;
    fs->nnow = 0;
    if (e->cls == VG_CLASS_READ || e->cls == VG_CLASS_EXEC) {
        bool dir = opens(ent) && e->args.flags >= 0 && (e->args.flags & O_DIRECTORY);
        bool gone = e->probe || failed_with(e, ENOENT);
        now(fs, path, gone ? VG_FACT_MISSING : dir ? VG_FACT_DIR : VG_FACT_EXISTS_KIND);
        if (e->cls == VG_CLASS_EXEC && e->args.exe != path)
            now(fs, e->args.exe, gone ? VG_FACT_MISSING : VG_FACT_FILE);
        return;
    }
    if (e->cls != VG_CLASS_WRITE)
        return;
    const char *up = parent(path, fs->up, sizeof fs->up);
    if (failed_with(e, EEXIST))
        now(fs, path, VG_FACT_EXISTS_KIND);
    else if (refused(e->decision) && e->err == ENOENT)
        now(fs, up, VG_FACT_MISSING); /* the decider asked of the parent (core/decide.c) */
    else if (failed_with(e, ENOENT))
        now(fs, creates(e, ent) ? up : path, VG_FACT_MISSING);
    else if (worked(e) && creates(e, ent) && (ent->flags & VG_SF_MKDIR))
        now(fs, path, VG_FACT_MISSING); /* it was made: it was not there */
    if (worked(e))
        now(fs, up, VG_FACT_DIR);
}

/* What a call that worked left: made, removed, moved. */
static void effects(struct vg_recheck_fs *fs, const struct vg_syscall_ev *e,
                    const struct vg_sysent *ent)
{
    const char *path = e->args.resolved, *path2 = e->args.resolved2;
    switch (ent->carry) {
    case VG_CARRY_MKDIR:
        learn(fs, path, VG_FACT_DIR);
        break;
    case VG_CARRY_UNLINK:
    case VG_CARRY_RMDIR:
        learn(fs, path, VG_FACT_MISSING);
        break;
    case VG_CARRY_RENAME: {
        enum vg_fact was = vg_recheck_fs_fact(fs, path);
        bool exchange = e->args.flags > 0 && (e->args.flags & RENAME_EXCHANGE);
        learn(fs, path, exchange ? vg_recheck_fs_fact(fs, path2) : VG_FACT_MISSING);
        learn(fs, path2, was == VG_FACT_UNKNOWN ? VG_FACT_EXISTS_KIND : was);
        break;
    }
    case VG_CARRY_LINK:
    case VG_CARRY_MKNOD:
        learn(fs, path2 ? path2 : path, VG_FACT_FILE);
        break;
    case VG_CARRY_OPEN:
        if (vg_recheck_fs_fact(fs, path) != VG_FACT_DIR)
            learn(fs, path, VG_FACT_FILE);
        break;
    default:
        if (vg_recheck_fs_fact(fs, path) == VG_FACT_UNKNOWN)
            learn(fs, path, VG_FACT_EXISTS_KIND); /* chmod, truncate, a symlink made */
        break;
    }
}

void vg_recheck_fs_after(struct vg_recheck_fs *fs, const struct vg_syscall_ev *e)
{
    const struct vg_sysent *ent = vg_sys_lookup(e->nr);
    for (unsigned i = 0; i < fs->nnow; i++)
        learn(fs, fs->now[i].path, fs->now[i].fact);
    fs->nnow = 0;
    if (ent && e->cls == VG_CLASS_WRITE && worked(e))
        effects(fs, e, ent);
}

/* ---- the decider's view ---- */

static int fact_stat(void *arg, const char *path, bool follow, struct vg_fs_node *out)
{
    const struct vg_recheck_fs *fs = arg;
    (void)follow; /* a record's paths are canonical already: no link is left to follow */
    enum vg_fact fact = VG_FACT_UNKNOWN;
    for (unsigned i = 0; i < fs->nnow && fact == VG_FACT_UNKNOWN; i++)
        if (!strcmp(fs->now[i].path, path))
            fact = fs->now[i].fact;
    if (fact == VG_FACT_UNKNOWN)
        fact = vg_recheck_fs_fact(fs, path);
    switch (fact) {
    case VG_FACT_MISSING:
        return ENOENT;
    case VG_FACT_FILE:
    case VG_FACT_DIR:
        *out = (struct vg_fs_node){.dir = fact == VG_FACT_DIR, .dev = 1,
                                   .ino = (ino_t)hash(path, strlen(path))};
        return 0;
    default:
        return EIO;
    }
}

struct vg_fs_view vg_recheck_fs_view(struct vg_recheck_fs *fs)
{
    return (struct vg_fs_view){.stat = fact_stat, .arg = fs};
}
