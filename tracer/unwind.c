/* unwind.c: the native stack of a stopped tracee thread, for the record of
 * a refused call.  libunwind walks the stack over ptrace; the module of
 * each pc comes from /proc/PID/maps, parsed once per process and kept
 * until the process execs or exits (vg_unwinder_forget).
 *
 * One libunwind address space serves every process.  Its global cache is
 * keyed by address only, and two processes can map different code at the
 * same address, so the cache is flushed whenever the unwound process
 * changes: repeated refusals in one process (the common case) still hit it.
 *
 * Naming a pc (unw_get_proc_name) costs about 120 us: libunwind reopens and
 * searches the ELF file every time.  Refusals tend to come from the same
 * few call sites, so names are cached by pc, under the same per-process
 * rule as libunwind's cache.  (Measured on the unit test: ~1 ms for an
 * 8-frame stack with every name looked up, ~60 us when the names are
 * cached.) */
#include <libunwind-ptrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/unwind.h"
#include "util/util.h"

#define VG_MAPS_MAX (16u << 20)

struct vg_mapping {
    uint64_t start, end;
    char *path;
};

struct vg_pmaps {            /* the file mappings of one process */
    pid_t pid;
    struct vg_mapping *v;
    size_t n;
    struct vg_pmaps *next;
};

#define VG_SYMCACHE 1024     /* power of two */

struct vg_symslot {          /* pc -> name, for last_pid */
    uint64_t pc;             /* 0: empty */
    char *name;              /* NULL: libunwind found none */
    uint64_t off;
};

struct vg_unwinder {
    unw_addr_space_t as;
    pid_t last_pid;          /* process whose unwind info the caches hold */
    struct vg_pmaps *maps;
    struct vg_symslot syms[VG_SYMCACHE];
};

static void symcache_clear(struct vg_unwinder *u)
{
    for (unsigned i = 0; i < VG_SYMCACHE; i++) {
        free(u->syms[i].name);
        u->syms[i] = (struct vg_symslot){ 0, NULL, 0 };
    }
}

/* Direct-mapped: a colliding pc simply replaces the older one. */
static const struct vg_symslot *symcache_get(struct vg_unwinder *u,
                                             unw_cursor_t *cur, uint64_t pc)
{
    struct vg_symslot *s = &u->syms[(pc ^ (pc >> 12)) & (VG_SYMCACHE - 1)];
    if (s->pc == pc)
        return s;
    char name[512];
    unw_word_t off = 0;
    free(s->name);
    s->pc = pc;
    s->name = unw_get_proc_name(cur, name, sizeof(name), &off) == 0 ? vg_xstrdup(name) : NULL;
    s->off = off;
    return s;
}

struct vg_unwinder *vg_unwinder_new(void)
{
    struct vg_unwinder *u = vg_xcalloc(1, sizeof(*u));
    u->as = unw_create_addr_space(&_UPT_accessors, 0);
    if (u->as == NULL) {
        free(u);
        return NULL;
    }
    unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
    return u;
}

static void pmaps_free(struct vg_pmaps *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    free(m->v);
    free(m);
}

void vg_unwinder_free(struct vg_unwinder *u)
{
    if (u == NULL)
        return;
    while (u->maps) {
        struct vg_pmaps *next = u->maps->next;
        pmaps_free(u->maps);
        u->maps = next;
    }
    symcache_clear(u);
    unw_destroy_addr_space(u->as);
    free(u);
}

void vg_unwinder_forget(struct vg_unwinder *u, pid_t pid)
{
    for (struct vg_pmaps **pp = &u->maps; *pp; pp = &(*pp)->next) {
        if ((*pp)->pid == pid) {
            struct vg_pmaps *dead = *pp;
            *pp = dead->next;
            pmaps_free(dead);
            break;
        }
    }
    if (u->last_pid == pid) {
        unw_flush_cache(u->as, 0, 0);
        symcache_clear(u);
        u->last_pid = 0;
    }
}

/* One maps line: "start-end perms offset dev inode   path".  Only mappings
 * with a name (a file, or [vdso] and the like) are kept. */
static bool parse_maps_line(char *line, struct vg_mapping *out)
{
    char *end;
    out->start = strtoull(line, &end, 16);
    if (*end != '-')
        return false;
    out->end = strtoull(end + 1, &end, 16);
    for (int field = 0; field < 4; field++) {   /* perms offset dev inode */
        while (*end == ' ')
            end++;
        while (*end && *end != ' ')
            end++;
    }
    while (*end == ' ')
        end++;
    if (*end == '\0')
        return false;
    out->path = vg_xstrdup(end);
    return true;
}

static struct vg_pmaps *pmaps_load(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    struct vg_err err;
    size_t len;
    char *text = vg_read_file(path, VG_MAPS_MAX, &len, &err);
    if (text == NULL)
        return NULL;
    struct vg_pmaps *m = vg_xcalloc(1, sizeof(*m));
    m->pid = pid;
    size_t cap = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        struct vg_mapping e;
        if (!parse_maps_line(line, &e))
            continue;
        if (m->n == cap) {
            cap = cap ? cap * 2 : 64;
            m->v = vg_xrealloc(m->v, cap * sizeof(*m->v));
        }
        m->v[m->n++] = e;
    }
    free(text);
    return m;
}

static const struct vg_mapping *pmaps_find(const struct vg_pmaps *m, uint64_t pc)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (pc >= m->v[i].start && pc < m->v[i].end)
            return &m->v[i];
    return NULL;
}

/* The mapping holding pc; the maps are re-read once when the cached copy
 * does not know pc (a library loaded since). */
static const struct vg_mapping *module_of(struct vg_unwinder *u, pid_t pid,
                                          uint64_t pc, bool *reloaded)
{
    struct vg_pmaps **pp = &u->maps;
    while (*pp && (*pp)->pid != pid)
        pp = &(*pp)->next;
    const struct vg_mapping *hit = *pp ? pmaps_find(*pp, pc) : NULL;
    if (hit || *reloaded)
        return hit;
    *reloaded = true;
    struct vg_pmaps *fresh = pmaps_load(pid);
    if (fresh == NULL)
        return NULL;
    if (*pp) {
        fresh->next = (*pp)->next;
        pmaps_free(*pp);
    }
    *pp = fresh;
    return pmaps_find(fresh, pc);
}

static void fill_frame(struct vg_unwinder *u, pid_t pid, unw_cursor_t *cur,
                       struct vg_frame *f, struct vg_arena *arena, bool *reloaded)
{
    unw_word_t pc = 0;
    unw_get_reg(cur, UNW_REG_IP, &pc);
    memset(f, 0, sizeof(*f));
    f->pc = pc;
    const struct vg_symslot *sym = symcache_get(u, cur, pc);
    if (sym->name) {
        f->symbol = vg_arena_strdup(arena, sym->name);
        f->offset = sym->off;
    }
    const struct vg_mapping *m = module_of(u, pid, pc, reloaded);
    if (m)
        f->module = vg_arena_strdup(arena, m->path);
}

unsigned vg_unwind(struct vg_unwinder *u, pid_t pid, pid_t tid,
                   struct vg_frame *frames, unsigned max, struct vg_arena *arena)
{
    if (max > VG_STACK_MAX)
        max = VG_STACK_MAX;
    if (u == NULL || max == 0)
        return 0;
    if (u->last_pid != pid) {
        unw_flush_cache(u->as, 0, 0);
        symcache_clear(u);
        u->last_pid = pid;
    }
    void *upt = _UPT_create(tid);
    if (upt == NULL)
        return 0;
    unw_cursor_t cur;
    unsigned n = 0;
    bool reloaded = false;
    if (unw_init_remote(&cur, u->as, upt) == 0) {
        do
            fill_frame(u, pid, &cur, &frames[n++], arena, &reloaded);
        while (n < max && unw_step(&cur) > 0);
    }
    _UPT_destroy(upt);
    return n;
}
