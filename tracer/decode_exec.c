/* decode_exec.c: execve/execveat.  The log gets the resolved executable,
 * argv, and the *names* of the environment variables: values often hold
 * tokens and passwords and must never reach the log. */
#include <limits.h>
#include <string.h>

#include "tracer/decode_impl.h"

#define VG_EXEC_MAX_STRS 256
#define VG_EXEC_MAX_LEN 4096
#define VG_MORE "..."

/* "text..." when the tracee's string was cut at max. */
static const char *mark_cut(struct vg_call *c, const char *s)
{
    size_t n = strlen(s);
    char *out = vg_arena_alloc(&c->arena, n + sizeof(VG_MORE));
    memcpy(out, s, n);
    memcpy(out + n, VG_MORE, sizeof(VG_MORE));
    return out;
}

/* One entry of argv or envp; for envp only the part before '='. */
static const char *read_entry(struct vg_tracee *t, struct vg_call *c,
                              uint64_t addr, bool name_only, bool *ok)
{
    bool cut;
    char *s = vg_tracee_read_str_trunc(t, addr, VG_EXEC_MAX_LEN, &c->arena, &cut);
    if (s == NULL) {
        *ok = false;
        return VG_UNREADABLE;
    }
    if (name_only) {
        char *eq = strchr(s, '=');
        if (eq) {
            /* Wipe the value from the arena too, not just hide it. */
            memset(eq, 0, strlen(eq));
            cut = false;
        }
    }
    return cut ? mark_cut(c, s) : s;
}

/* Read pointers of a NULL-terminated array, a page-bounded batch at a time
 * (the array may end right before an unmapped page). */
static uint32_t read_ptrs(struct vg_tracee *t, uint64_t addr, uint64_t *ptrs,
                          uint32_t max, bool *more, bool *ok)
{
    uint32_t n = 0;
    *more = false;
    while (addr != 0 && n < max + 1) {
        uint64_t in_page = (4096 - addr % 4096) / sizeof(uint64_t);
        uint32_t want = (uint32_t)(in_page ? in_page : 1);
        if (want > max + 1 - n)
            want = max + 1 - n;
        if (vg_tracee_read(t, addr, ptrs + n, want * sizeof(uint64_t)) < 0) {
            *ok = false;
            return n;
        }
        for (uint32_t i = 0; i < want; i++, n++)
            if (ptrs[n] == 0)
                return n;
        addr += want * sizeof(uint64_t);
    }
    *more = n > max;
    return n > max ? max : n;
}

/* argv or envp into (*out, *count); a list cut at the cap ends in "...". */
static void read_strv(struct vg_tracee *t, struct vg_call *c, uint64_t addr,
                      bool name_only, const char *const **out, uint32_t *count,
                      bool *ok)
{
    uint64_t ptrs[VG_EXEC_MAX_STRS + 1];
    bool more;
    uint32_t n = read_ptrs(t, addr, ptrs, VG_EXEC_MAX_STRS, &more, ok);
    const char **v = vg_arena_alloc(&c->arena, (n + 1) * sizeof(*v));
    for (uint32_t i = 0; i < n; i++)
        v[i] = read_entry(t, c, ptrs[i], name_only, ok);
    if (more)
        v[n++] = VG_MORE;
    *out = v;
    *count = n;
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
    read_strv(t, c, vg_arg(c, p->path + 1), false, &c->args.argv, &c->args.argc, &ok);
    read_strv(t, c, vg_arg(c, p->path + 2), true, &c->args.env_names, &c->args.nenv, &ok);
    return ok ? 0 : -1;
}
