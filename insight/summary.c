/* summary.c: see summary.h.  Each syscall record falls into at most one
 * category, by tables below (data, not conditions); items are found by
 * their text, so memory is bounded by VG_SUM_MAX_ITEMS per category. */
#include "insight/summary.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/reader.h"
#include "insight/extra.h"

/* Secrets and home directories, as the sandbox names them (fnmatch
 * without FNM_PATHNAME: `*` crosses '/').  The sandbox's HOME is its
 * workdir, so ~/.ssh of the candidate is $WORK/.ssh: `*` in front. */
static const char *const secret_globs[] = {
    "/root", "/root/*", "/home", "/home/*",
    "*/.ssh", "*/.ssh/*", "*/.gnupg", "*/.gnupg/*", "*/.aws", "*/.aws/*",
    "*/.config/gcloud/*", "*/.azure/*", "*/.kube/config", "*/.docker/config.json",
    "*/.netrc", "*/.git-credentials", "*/.npmrc", "*/.pypirc", "*/.pgpass",
    "*/.env", "*/*token", "*/.*token*", "*/id_rsa*", "*/id_ed25519*", "/etc/ssl/private/*",
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
    "/etc/sudoers.d/*", "/etc/ssh/ssh_host_*", "/proc/*/environ",
    "/run/secrets/*", "/var/run/secrets/*",
};

/* Writes nobody needs to review: the sandbox's own devices and ttys. */
static const char *const harmless_write_globs[] = {
    "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts/*", "/dev/stdout", "/dev/stderr",
    "/proc/self/fd/[12]",
};

/* Calls that take a name away (rename moves it: a write, not a deletion). */
static const char *const delete_calls[] = {"unlink", "unlinkat", "rmdir"};

static bool matches_any(const char *const *globs, size_t n, const char *path)
{
    for (size_t i = 0; path && i < n; i++)
        if (fnmatch(globs[i], path, 0) == 0)
            return true;
    return false;
}

bool vg_sum_is_secret(const char *path)
{
    return matches_any(secret_globs, VG_ARRAY_LEN(secret_globs), path);
}

static bool is_delete(const char *name)
{
    for (size_t i = 0; name && i < VG_ARRAY_LEN(delete_calls); i++)
        if (!strcmp(name, delete_calls[i]))
            return true;
    return false;
}

static bool is_refusal(enum vg_decision d) { return d != VG_DEC_ALLOW; }

/* Inside the workdir (or its own name)? */
static bool in_workdir(const struct vg_summary *s, const char *path)
{
    if (!s->workdir || !path)
        return false;
    size_t n = strlen(s->workdir);
    return !strncmp(path, s->workdir, n) && (path[n] == 0 || path[n] == '/' || n == 1);
}

void vg_summary_init(struct vg_summary *s) { memset(s, 0, sizeof *s); }

static struct vg_sum_item *find_item(struct vg_sum_list *l, const char *what)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].what, what))
            return &l->items[i];
    if (l->n == VG_SUM_MAX_ITEMS)
        return NULL;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->items = vg_xrealloc(l->items, l->cap * sizeof *l->items);
    }
    struct vg_sum_item *it = &l->items[l->n++];
    memset(it, 0, sizeof *it);
    it->what = vg_xstrdup(what);
    return it;
}

/* What every attempt adds to its item: count, first time, decision, and
 * the first source line and host name known. */
struct attempt {
    uint64_t ts;
    unsigned decisions;
    bool found;
    const char *source, *host;
};

static void count(struct vg_sum_list *l, const char *what, const struct attempt *a)
{
    l->total++;
    struct vg_sum_item *it = find_item(l, what);
    if (!it) {
        l->more++;
        return;
    }
    if (it->count++ == 0)
        it->first_ts = a->ts;
    it->decisions |= a->decisions;
    it->found |= a->found;
    if (!it->source && a->source)
        it->source = vg_xstrdup(a->source);
    if (!it->host && a->host)
        it->host = vg_xstrdup(a->host);
}

/* ---- PATH searches: execve tries of one name in a row, one attempt ---- */

struct vg_exec_try {
    uint64_t proc;
    char *base;          /* the program's name */
    struct attempt a;
    char *source;
    struct vg_buf paths;
    unsigned npaths;
    bool refused;
};

#define VG_SUM_MAX_PATHS 8

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p ? p : "?";
}

static void close_try(struct vg_summary *s, size_t i)
{
    struct vg_exec_try *t = &s->tries[i];
    if (t->refused) {
        struct vg_sum_list *l = &s->cat[VG_SUM_EXEC];
        count(l, t->base, &t->a);
        struct vg_sum_item *it = find_item(l, t->base);
        if (it && it->paths.len == 0 && t->paths.len)
            vg_buf_put(&it->paths, t->paths.data, t->paths.len);
    }
    free(t->base);
    free(t->source);
    vg_buf_free(&t->paths);
    s->tries[i] = s->tries[--s->ntries];
}

static size_t try_of(const struct vg_summary *s, uint64_t proc)
{
    for (size_t i = 0; i < s->ntries; i++)
        if (s->tries[i].proc == proc)
            return i;
    return SIZE_MAX;
}

static void end_try(struct vg_summary *s, uint64_t proc)
{
    size_t i = try_of(s, proc);
    if (i != SIZE_MAX)
        close_try(s, i);
}

static void add_exec(struct vg_summary *s, const struct vg_syscall_ev *e, const char *source)
{
    const char *path = e->args.exe ? e->args.exe : e->args.resolved;
    const char *base = base_name(e->args.path ? e->args.path : path);
    size_t i = try_of(s, e->proc);
    if (i != SIZE_MAX && strcmp(s->tries[i].base, base)) {
        close_try(s, i);
        i = SIZE_MAX;
    }
    if (i == SIZE_MAX) {
        if (s->ntries == s->captries) {
            s->captries = s->captries ? 2 * s->captries : 8;
            s->tries = vg_xrealloc(s->tries, s->captries * sizeof *s->tries);
        }
        i = s->ntries++;
        s->tries[i] = (struct vg_exec_try){.proc = e->proc, .base = vg_xstrdup(base),
                                           .a.ts = e->ts_ns};
    }
    struct vg_exec_try *t = &s->tries[i];
    t->a.decisions |= 1u << e->decision;
    t->a.found |= !e->probe;
    t->refused |= is_refusal(e->decision);
    if (!t->source && source)
        t->a.source = t->source = vg_xstrdup(source);
    if (t->npaths++ < VG_SUM_MAX_PATHS && path) {
        if (t->paths.len)
            vg_buf_puts(&t->paths, " ");
        vg_buf_puts(&t->paths, path);
    }
}

/* ---- one record ---- */

static void net_what(const struct vg_args *a, struct vg_buf *b)
{
    bool v6 = a->family && !strcmp(a->family, "inet6");
    vg_buf_printf(b, "%s %s%s%s", a->proto ? a->proto : a->family ? a->family : "?",
                  v6 ? "[" : "", a->addr ? a->addr : "?", v6 ? "]" : "");
    if (a->port >= 0)
        vg_buf_printf(b, ":%d", a->port);
}

static void add_syscall(struct vg_summary *s, const struct vg_syscall_ev *e, const uint8_t *raw,
                        size_t rawlen)
{
    struct vg_buf src = {0}, host = {0}, what = {0};
    if (raw && vg_extra_source(raw, rawlen, &src))
        vg_buf_put(&src, "", 1);
    struct attempt a = {.ts = e->ts_ns, .decisions = 1u << e->decision, .found = !e->probe,
                        .source = src.len ? src.data : NULL};
    const char *path = e->args.resolved;
    bool file = e->cls == VG_CLASS_READ || e->cls == VG_CLASS_WRITE || e->cls == VG_CLASS_EXEC;
    if (file && (vg_sum_is_secret(path) || vg_sum_is_secret(e->args.resolved2)))
        count(&s->cat[VG_SUM_SECRETS], path ? path : e->args.resolved2, &a);
    if (e->cls == VG_CLASS_EXEC)
        add_exec(s, e, a.source);
    else if (e->cls == VG_CLASS_CONNECT || e->cls == VG_CLASS_SEND || e->cls == VG_CLASS_BIND) {
        if (raw && vg_extra_host(raw, rawlen, &host))
            vg_buf_put(&host, "", 1);
        a.host = host.len ? host.data : NULL;
        net_what(&e->args, &what);
        vg_buf_put(&what, "", 1);
        count(&s->cat[VG_SUM_NETWORK], what.data, &a);
    } else if (e->cls == VG_CLASS_WRITE && path && path[0] == '/' && !in_workdir(s, path)) {
        if (is_delete(e->name))
            count(&s->cat[VG_SUM_DELETIONS], path, &a);
        else if (!matches_any(harmless_write_globs, VG_ARRAY_LEN(harmless_write_globs), path))
            count(&s->cat[VG_SUM_WRITES], path, &a);
    }
    vg_buf_free(&src);
    vg_buf_free(&host);
    vg_buf_free(&what);
}

void vg_summary_add(struct vg_summary *s, const struct vg_record *r, const uint8_t *raw,
                    size_t rawlen)
{
    switch (r->type) {
    case VG_REC_HEADER:
        free(s->workdir);
        s->workdir = r->u.header.cwd ? vg_xstrdup(r->u.header.cwd) : NULL;
        break;
    case VG_REC_SYSCALL:
        add_syscall(s, &r->u.sys, raw, rawlen);
        break;
    case VG_REC_PROC:
        /* a new image or the end of the process ends its PATH search */
        if (r->u.proc.kind != VG_PROC_START)
            end_try(s, r->u.proc.proc);
        break;
    default:
        break;
    }
}

void vg_summary_finish(struct vg_summary *s)
{
    while (s->ntries)
        close_try(s, s->ntries - 1);
}

void vg_summary_free(struct vg_summary *s)
{
    vg_summary_finish(s);
    for (int c = 0; c < VG_SUM_NCATS; c++) {
        struct vg_sum_list *l = &s->cat[c];
        for (size_t i = 0; i < l->n; i++) {
            free(l->items[i].what);
            free(l->items[i].host);
            free(l->items[i].source);
            vg_buf_free(&l->items[i].paths);
        }
        free(l->items);
    }
    free(s->tries);
    free(s->workdir);
    memset(s, 0, sizeof *s);
}

int vg_summary_of_log(const char *path, struct vg_summary *s, struct vg_err *err)
{
    vg_summary_init(s);
    struct vg_reader *rd = vg_reader_open(path, err);
    if (!rd)
        return -1;
    struct vg_decoded d;
    uint64_t n = 0;
    int rc;
    while ((rc = vg_reader_next(rd, &d)) > 0) {
        if (n++ == 0 && d.rec.type != VG_REC_HEADER) {
            vg_decoded_free(&d);
            vg_reader_close(rd);
            vg_errf(err, "%s: not a vigil log (no header)", path);
            return -1;
        }
        const uint8_t *raw;
        size_t len;
        vg_reader_raw(rd, &raw, &len);
        vg_summary_add(s, &d.rec, raw, len);
        vg_decoded_free(&d);
    }
    if (rc < 0 && n == 0) {
        vg_errf(err, "%s: not a vigil log (%s)", path, vg_reader_error(rd));
        vg_reader_close(rd);
        return -1;
    }
    vg_reader_close(rd);
    vg_summary_finish(s);
    return 0;
}
