/* proctree.c: see proctree.h. */
#include "viewer/proctree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static uint64_t hash_id(uint64_t id)
{
    return (id * 0x9E3779B97F4A7C15ull) >> 17;
}

static uint64_t hash_of(const void *ctx, size_t i)
{
    return hash_id(((const struct vw_proctree *)ctx)->v[i].id);
}

static size_t lookup(const struct vw_proctree *t, uint64_t id)
{
    const struct vw_slots *s = &t->slots;
    for (size_t j = vw_slots_first(s, hash_id(id)); s->n && s->v[j]; j = vw_slots_next(s, j))
        if (t->v[s->v[j] - 1].id == id)
            return s->v[j] - 1;
    return SIZE_MAX;
}

/* A process is created the first time anything mentions it: a log that
 * starts mid-way, or the first process (which nobody forks), still shows. */
static struct vw_proc *get(struct vw_proctree *t, uint64_t id, int32_t pid)
{
    size_t i = lookup(t, id);
    if (i != SIZE_MAX)
        return &t->v[i];
    vw_slots_reserve(&t->slots, t->n, hash_of, t);
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 32;
        t->v = vg_xrealloc(t->v, t->cap * sizeof *t->v);
    }
    struct vw_proc *p = &t->v[t->n];
    memset(p, 0, sizeof *p);
    p->id = id;
    p->pid = pid;
    vw_slots_put(&t->slots, hash_id(id), t->n++);
    return p;
}

static const char *intern(struct vw_proctree *t, const char *s)
{
    return vw_strtab_intern(&t->strings, s)->s;
}

static const char *join_argv(struct vw_proctree *t, const char *const *argv, uint32_t argc)
{
    struct vg_buf b = {0};
    for (uint32_t i = 0; i < argc; i++) {
        if (i)
            vg_buf_puts(&b, " ");
        vg_buf_puts(&b, argv[i] ? argv[i] : "");
    }
    const char *s = intern(t, b.data ? b.data : "");
    vg_buf_free(&b);
    return s;
}

static void on_start(struct vw_proctree *t, const struct vg_proc_ev *e)
{
    const char *inherited = NULL;
    if (e->parent) {
        size_t pi = lookup(t, e->parent);
        if (pi != SIZE_MAX)
            inherited = vw_proc_cmd(&t->v[pi]);
    }
    struct vw_proc *p = get(t, e->proc, e->pid);
    p->parent = e->parent;
    p->ppid = e->ppid;
    p->thread = e->thread;
    p->started = true;
    p->start_ns = e->ts_ns;
    p->inherited = inherited;
}

static void on_exec(struct vw_proctree *t, const struct vg_proc_ev *e)
{
    struct vw_exec x = {
        .exe = intern(t, e->exe ? e->exe : ""),
        .cmd = join_argv(t, e->argv, e->argc),
        .ts_ns = e->ts_ns,
    };
    struct vw_proc *p = get(t, e->proc, e->pid);
    p->execs = vg_xrealloc(p->execs, (p->nexec + 1) * sizeof *p->execs);
    p->execs[p->nexec++] = x;
}

static void on_exitrec(struct vw_proctree *t, const struct vg_proc_ev *e)
{
    struct vw_proc *p = get(t, e->proc, e->pid);
    p->exited = true;
    p->exit_ns = e->ts_ns;
    p->exit_code = e->exit_code;
    p->sig = e->signal;
    p->core = e->core;
}

/* A refused exec; the same command tried again right after (the next
 * directory of PATH) is the same attempt. */
static void on_refused_exec(struct vw_proctree *t, struct vw_proc *p, const struct vg_syscall_ev *s)
{
    const char *cmd = s->args.argc ? join_argv(t, s->args.argv, s->args.argc)
                                   : intern(t, s->args.path ? s->args.path : "?");
    if (p->ntried && p->tried[p->ntried - 1].cmd == cmd) {
        p->tried[p->ntried - 1].tries++;
        return;
    }
    p->tried = vg_xrealloc(p->tried, (p->ntried + 1) * sizeof *p->tried);
    p->tried[p->ntried++] = (struct vw_tried){.cmd = cmd, .tries = 1};
}

void vw_tree_add(struct vw_proctree *t, const struct vg_record *r)
{
    if (r->type == VG_REC_SYSCALL) {
        const struct vg_syscall_ev *s = &r->u.sys;
        struct vw_proc *p = get(t, s->proc, s->pid);
        p->events++;
        if (vw_refused(s->decision))
            p->denials++;
        if (vw_refused(s->decision) && s->cls == VG_CLASS_EXEC)
            on_refused_exec(t, p, s);
        return;
    }
    if (r->type != VG_REC_PROC)
        return;
    switch (r->u.proc.kind) {
    case VG_PROC_START: on_start(t, &r->u.proc); break;
    case VG_PROC_EXEC: on_exec(t, &r->u.proc); break;
    case VG_PROC_EXIT: on_exitrec(t, &r->u.proc); break;
    default: break;
    }
}

const struct vw_proc *vw_tree_find(const struct vw_proctree *t, uint64_t id)
{
    size_t i = lookup(t, id);
    return i == SIZE_MAX ? NULL : &t->v[i];
}

const char *vw_proc_cmd(const struct vw_proc *p)
{
    if (p->nexec)
        return p->execs[p->nexec - 1].cmd;
    return p->inherited ? p->inherited : "";
}

/* ---- rendering ---- */

struct glyphs {
    const char *branch, *last, *pipe, *space, *exec;
};
static const struct glyphs utf8_glyphs = {"├─ ", "└─ ", "│  ", "   ", "↳ "};
static const struct glyphs ascii_glyphs = {"|- ", "`- ", "|  ", "   ", "-> "};

struct render {
    const struct vw_proctree *t;
    struct vw_lines *out;
    const struct glyphs *g;
    size_t *first_child, *next_sibling; /* index+1, 0 = none */
    bool *done;                         /* guards against parent cycles */
    struct vg_buf prefix;
};

static void fmt_status(const struct vw_proc *p, char *buf, size_t n)
{
    if (!p->exited)
        snprintf(buf, n, "running");
    else if (p->sig)
        snprintf(buf, n, "signal %d%s", p->sig, p->core ? " (core)" : "");
    else
        snprintf(buf, n, "exit %d", p->exit_code);
}

static void render_one(struct render *r, size_t i, bool last, bool root)
{
    const struct vw_proc *p = &r->t->v[i];
    if (r->done[i])
        return;
    r->done[i] = true;
    const char *head = root ? "" : last ? r->g->last : r->g->branch;
    char status[64], life[64];
    fmt_status(p, status, sizeof status);
    if (p->exited)
        snprintf(life, sizeof life, "+%.3f..%.3fs", p->start_ns / 1e9, p->exit_ns / 1e9);
    else
        snprintf(life, sizeof life, "+%.3f..", p->start_ns / 1e9);
    enum vw_style st = p->denials ? VW_ST_DENY : VW_ST_NORMAL;
    vw_lines_add(r->out, st, p->id, "%s%s%s %d  %s  %s  %llu/%llu denied  %s",
                 r->prefix.data ? r->prefix.data : "", head, p->thread ? "thread" : "pid",
                 p->pid, status, life, (unsigned long long)p->denials,
                 (unsigned long long)p->events, vw_proc_cmd(p));
    size_t plen = r->prefix.len;
    if (!root)
        vg_buf_puts(&r->prefix, last ? r->g->space : r->g->pipe);
    /* The exec chain: every image but the last, which heads the line. */
    const char *cont = r->first_child[i] ? r->g->pipe : r->g->space;
    for (uint32_t k = 0; k + 1 < p->nexec; k++)
        vw_lines_add(r->out, VW_ST_DIM, p->id, "%s%s%sexec %s  (+%.3fs, replaced)",
                     r->prefix.data ? r->prefix.data : "", cont, r->g->exec,
                     p->execs[k].cmd, p->execs[k].ts_ns / 1e9);
    for (uint32_t k = 0; k < p->ntried; k++)
        vw_lines_add(r->out, VW_ST_DENY, p->id, "%s%s%stried: %s  (refused%s)",
                     r->prefix.data ? r->prefix.data : "", cont, r->g->exec, p->tried[k].cmd,
                     p->tried[k].tries > 1 ? ", a PATH search" : "");
    for (size_t c = r->first_child[i]; c; c = r->next_sibling[c - 1])
        render_one(r, c - 1, !r->next_sibling[c - 1], false);
    r->prefix.len = plen;
    if (r->prefix.data)
        r->prefix.data[plen] = 0;
}

void vw_tree_lines(const struct vw_proctree *t, struct vw_lines *out, bool utf8)
{
    struct render r = {
        .t = t, .out = out, .g = utf8 ? &utf8_glyphs : &ascii_glyphs,
        .first_child = vg_xcalloc(t->n, sizeof(size_t)),
        .next_sibling = vg_xcalloc(t->n, sizeof(size_t)),
        .done = vg_xcalloc(t->n, sizeof(bool)),
    };
    size_t *last_child = vg_xcalloc(t->n, sizeof(size_t));
    size_t first_root = 0, last_root = 0;
    /* Link children in order of appearance; a parent we never saw makes
     * its child a root rather than losing it. */
    for (size_t i = 0; i < t->n; i++) {
        size_t pi = t->v[i].parent ? lookup(t, t->v[i].parent) : SIZE_MAX;
        if (pi == i)
            pi = SIZE_MAX;
        size_t *first = pi == SIZE_MAX ? &first_root : &r.first_child[pi];
        size_t *lastp = pi == SIZE_MAX ? &last_root : &last_child[pi];
        if (*lastp)
            r.next_sibling[*lastp - 1] = i + 1;
        else
            *first = i + 1;
        *lastp = i + 1;
    }
    for (size_t c = first_root; c; c = r.next_sibling[c - 1])
        render_one(&r, c - 1, !r.next_sibling[c - 1], true);
    /* Processes whose parents form a cycle (a corrupt log) are reachable
     * from no root: show them anyway. */
    for (size_t i = 0; i < t->n; i++)
        render_one(&r, i, true, true);
    free(r.done);
    vg_buf_free(&r.prefix);
    free(last_child);
    free(r.first_child);
    free(r.next_sibling);
}

void vw_tree_free(struct vw_proctree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].execs);
        free(t->v[i].tried);
    }
    free(t->v);
    vw_slots_free(&t->slots);
    vw_strtab_free(&t->strings);
    memset(t, 0, sizeof *t);
}
