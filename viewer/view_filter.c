/* view_filter.c: see view_filter.h. */
#include "viewer/view_filter.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool vw_filter_active(const struct vw_filter *f)
{
    return f->decisions || f->cls >= 0 || f->proc || f->text;
}

void vw_filter_clear(struct vw_filter *f)
{
    free(f->text);
    *f = (struct vw_filter){.cls = -1};
}

bool vw_text_match(const char *hay, const char *needle)
{
    for (const char *p = needle; *p; p++)
        if (isupper((unsigned char)*p))
            return strstr(hay, needle) != NULL;
    return strcasestr(hay, needle) != NULL;
}

static bool proc_match(const struct vw_meta *mt, const struct vw_filter *f)
{
    if (mt->type == VG_REC_NOTE)
        return mt->pid == f->pid;
    return (mt->type == VG_REC_SYSCALL || mt->type == VG_REC_PROC) && mt->proc == f->proc;
}

bool vw_filter_match(const struct vw_model *m, const struct vw_filter *f, size_t i)
{
    const struct vw_meta *mt = &m->meta[i];
    bool sys = mt->type == VG_REC_SYSCALL;
    if (f->decisions && !(vw_meta_decided(mt) && (f->decisions & VW_DEC_BIT(mt->decision))))
        return false;
    if (f->cls >= 0 && !(sys && mt->cls == f->cls))
        return false;
    if (f->proc && !proc_match(mt, f))
        return false;
    return !f->text || vw_text_match(vw_model_summary(m, i), f->text);
}

static void addf(char *buf, size_t n, const char *fmt, const char *a)
{
    size_t len = strlen(buf);
    if (len < n)
        snprintf(buf + len, n - len, fmt, len ? " " : "", a);
}

void vw_filter_describe(const struct vw_filter *f, char *buf, size_t n)
{
    if (!n)
        return;
    buf[0] = 0;
    if (f->decisions == VW_REFUSED_MASK)
        addf(buf, n, "%s%s", "denials");
    else if (f->decisions)
        addf(buf, n, "%s%s", "decisions");
    if (f->cls >= 0)
        addf(buf, n, "%sclass=%s", vg_class_name((enum vg_class)f->cls));
    if (f->proc) {
        char pid[24];
        snprintf(pid, sizeof pid, "%d", f->pid);
        addf(buf, n, "%spid=%s", pid);
    }
    if (f->text)
        addf(buf, n, "%stext='%s'", f->text);
    if (!buf[0])
        snprintf(buf, n, "none");
}

static void push(struct vw_rows *r, size_t i)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4096;
        r->v = vg_xrealloc(r->v, r->cap * sizeof *r->v);
    }
    r->v[r->n++] = (uint32_t)i;
}

void vw_rows_extend(struct vw_rows *r, const struct vw_model *m, const struct vw_filter *f)
{
    for (size_t i = r->scanned; i < m->n; i++)
        if (vw_filter_match(m, f, i))
            push(r, i);
    r->scanned = m->n;
}

void vw_rows_rebuild(struct vw_rows *r, const struct vw_model *m, const struct vw_filter *f)
{
    r->n = 0;
    r->scanned = 0;
    vw_rows_extend(r, m, f);
}

void vw_rows_free(struct vw_rows *r)
{
    free(r->v);
    *r = (struct vw_rows){0};
}

size_t vw_rows_lower(const struct vw_rows *r, size_t rec)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->v[mid] < rec)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t vw_rows_upto(const struct vw_rows *r, size_t limit)
{
    return vw_rows_lower(r, limit);
}

/* Walk nrows rows once, starting next to `from`, wrapping around. */
static long find(const struct vw_model *m, const struct vw_rows *r, size_t nrows, size_t from,
                 int dir, bool (*hit)(const struct vw_model *, size_t, const void *),
                 const void *arg)
{
    if (!nrows)
        return -1;
    if (from >= nrows)
        from = dir > 0 ? nrows - 1 : 0;
    size_t row = from;
    for (size_t k = 0; k < nrows; k++) {
        row = dir > 0 ? (row + 1) % nrows : (row + nrows - 1) % nrows;
        if (hit(m, r->v[row], arg))
            return (long)row;
    }
    return -1;
}

static bool text_hit(const struct vw_model *m, size_t i, const void *needle)
{
    return vw_text_match(vw_model_summary(m, i), needle);
}

static bool refused_hit(const struct vw_model *m, size_t i, const void *unused)
{
    (void)unused;
    const struct vw_meta *mt = &m->meta[i];
    return vw_meta_decided(mt) && vw_refused(mt->decision);
}

long vw_find_text(const struct vw_model *m, const struct vw_rows *r, size_t nrows,
                  size_t from, int dir, const char *needle)
{
    return find(m, r, nrows, from, dir, text_hit, needle);
}

long vw_find_refused(const struct vw_model *m, const struct vw_rows *r, size_t nrows,
                     size_t from, int dir)
{
    return find(m, r, nrows, from, dir, refused_hit, NULL);
}
