/* summary.c: see summary.h.  Each syscall record falls into at most one
 * category or is noise (classify.c), each dns record vigil's resolver
 * refused is a network attempt; items are found by their text, so memory
 * is bounded by VG_SUM_MAX_ITEMS per category. */
#include "insight/summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/reader.h"
#include "insight/source.h"

static bool is_refusal(enum vg_decision d) { return d != VG_DEC_ALLOW; }

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
 * the first source line and host name known (from its record, e). */
struct attempt {
    uint64_t ts;
    unsigned decisions;
    bool found, net;
    const struct vg_syscall_ev *e; /* NULL for a PATH search (its own source) */
    const struct vg_dns_ev *dns;   /* a name refused */
};

/* A malloc'd copy of the record's source line (insight/source.h), or NULL. */
static char *source_of(const struct attempt *a)
{
    struct vg_buf b = {0};
    if (!a->e || !vg_sum_source(a->e, &b)) {
        vg_buf_free(&b);
        return NULL;
    }
    vg_buf_put(&b, "", 1);
    return b.data;
}

/* The name vigil's resolver handed the address out for, or NULL. */
static const char *host_of(const struct attempt *a)
{
    return a->e && a->e->args.host && a->e->args.host[0] ? a->e->args.host : NULL;
}

/* Is word one of the words of b, separated by sep (one character)? */
static bool listed(const struct vg_buf *b, const char *word, const char *sep)
{
    size_t n = strlen(word);
    for (const char *p = b->data; p && p < b->data + b->len;) {
        const char *e = memchr(p, sep[0], (size_t)(b->data + b->len - p));
        size_t len = e ? (size_t)(e - p) : (size_t)(b->data + b->len - p);
        if (len == n && !memcmp(p, word, n))
            return true;
        p += len + 1;
    }
    return false;
}

/* Append word to b's sep-separated words, once. */
static void add_word(struct vg_buf *b, const char *word, const char *sep)
{
    if (listed(b, word, sep))
        return;
    if (b->len)
        vg_buf_puts(b, sep);
    vg_buf_puts(b, word);
}

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
    if (!it->source)
        it->source = source_of(a);
    if (!it->host && a->net && host_of(a))
        it->host = vg_xstrdup(host_of(a));
    if (a->dns) {
        it->dns = true;
        if (!it->host)
            it->host = vg_xstrdup(a->dns->name ? a->dns->name : "");
        add_word(&it->rcodes, a->dns->rcode ? a->dns->rcode : "?", "/");
    }
}

/* ---- PATH searches: execve tries of one name in a row, one attempt ---- */

struct vg_exec_try {
    uint64_t proc;
    char *base;          /* the program's name */
    struct attempt a;
    char *source;
    struct vg_buf paths;
    unsigned npaths;
    bool refused;        /* a try that found the program was refused */
    bool probe_refused;  /* a try of a path that does not exist was */
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
        if (it && !it->source) {
            it->source = t->source;
            t->source = NULL;
        }
    } else if (t->probe_refused) {
        /* only lookups of what does not exist were refused: a PATH search
         * (gcc's for as, in every PATH directory) that found its program,
         * or found none: nothing could have run */
        s->noise[VG_NOISE_PROBE]++;
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


static void add_exec(struct vg_summary *s, const struct vg_syscall_ev *e, const struct attempt *a)
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
    bool probe = vg_sum_noise_of(&s->places, e) == VG_NOISE_PROBE;
    t->refused |= is_refusal(e->decision) && !probe;
    t->probe_refused |= is_refusal(e->decision) && probe;
    if (!t->source)
        t->source = source_of(a);
    if (t->npaths < VG_SUM_MAX_PATHS && path && !listed(&t->paths, path, " ")) {
        t->npaths++;
        add_word(&t->paths, path, " ");
    }
}

/* ---- one record ---- */

static void add_syscall(struct vg_summary *s, const struct vg_syscall_ev *e)
{
    struct vg_buf what = {0};
    int c = vg_sum_category(&s->places, e, &what);
    enum vg_sum_noise noise = c >= 0 ? vg_sum_noise_of(&s->places, e) : VG_NOISE_NONE;
    if (c >= 0) {
        vg_buf_put(&what, "", 1);
        struct attempt a = {.ts = e->ts_ns, .decisions = 1u << e->decision, .found = !e->probe,
                            .net = c == VG_SUM_NETWORK, .e = e};
        if (c == VG_SUM_EXEC)
            add_exec(s, e, &a); /* a PATH search is judged whole, when it ends */
        else if (noise != VG_NOISE_NONE)
            s->noise[noise]++;
        else
            count(&s->cat[c], what.data, &a);
    }
    vg_buf_free(&what);
}

/* A name vigil's resolver refused (any decision but allow): what the
 * candidate tried to reach, though no connect followed. */
static void add_dns(struct vg_summary *s, const struct vg_dns_ev *e)
{
    if (!is_refusal(e->decision))
        return;
    struct vg_buf what = {0};
    vg_buf_printf(&what, "dns %s", e->name ? e->name : "");
    struct attempt a = {.ts = e->ts_ns, .decisions = 1u << e->decision, .net = true, .dns = e};
    count(&s->cat[VG_SUM_NETWORK], what.data, &a);
    vg_buf_free(&what);
}

void vg_summary_add(struct vg_summary *s, const struct vg_record *r)
{
    switch (r->type) {
    case VG_REC_HEADER:
        vg_sum_places_set(&s->places, &r->u.header);
        break;
    case VG_REC_SYSCALL:
        add_syscall(s, &r->u.sys);
        break;
    case VG_REC_DNS:
        add_dns(s, &r->u.dns);
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
            vg_buf_free(&l->items[i].rcodes);
        }
        free(l->items);
    }
    free(s->tries);
    vg_sum_places_free(&s->places);
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
    bool trailer = false;
    int rc;
    while ((rc = vg_reader_next(rd, &d)) > 0) {
        trailer |= d.rec.type == VG_REC_TRAILER;
        if (n++ == 0 && d.rec.type != VG_REC_HEADER) {
            vg_decoded_free(&d);
            vg_reader_close(rd);
            vg_errf(err, "%s: not a vigil log (no header)", path);
            return -1;
        }
        vg_summary_add(s, &d.rec);
        vg_decoded_free(&d);
    }
    if (rc < 0 && n == 0) {
        vg_errf(err, "%s: not a vigil log (%s)", path, vg_reader_error(rd));
        vg_reader_close(rd);
        return -1;
    }
    int done = 0;
    if (rc < 0 || !trailer || vg_reader_status(rd) == VG_MP_TRUNCATED) {
        vg_errf(err, "%s: %s at byte %llu (%s): the summary covers the records before it", path,
                rc < 0 ? "corrupt" : "truncated", (unsigned long long)vg_reader_offset(rd),
                rc < 0 ? vg_reader_error(rd) : "no trailer");
        done = 1;
    }
    vg_reader_close(rd);
    vg_summary_finish(s);
    return done;
}
