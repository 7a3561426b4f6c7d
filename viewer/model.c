/* model.c: see model.h. */
#include "viewer/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void put_summary(struct vw_model *m, struct vw_meta *mt, const char *s, size_t len)
{
    if (m->sumlen + len + 1 > m->sumcap) {
        size_t cap = m->sumcap ? m->sumcap : 1 << 16;
        while (m->sumlen + len + 1 > cap)
            cap *= 2;
        m->sums = vg_xrealloc(m->sums, cap);
        m->sumcap = cap;
    }
    memcpy(m->sums + m->sumlen, s, len);
    m->sums[m->sumlen + len] = 0;
    mt->sum = m->sumlen;
    m->sumlen += len + 1;
}

static void fill_meta(struct vw_meta *mt, const struct vg_record *r)
{
    mt->type = (uint8_t)r->type;
    switch (r->type) {
    case VG_REC_SYSCALL:
        mt->ts_ns = r->u.sys.ts_ns;
        mt->pid = r->u.sys.pid;
        mt->proc = r->u.sys.proc;
        mt->cls = (uint8_t)r->u.sys.cls;
        mt->decision = (uint8_t)r->u.sys.decision;
        mt->probe = r->u.sys.probe;
        break;
    case VG_REC_PROC:
        mt->ts_ns = r->u.proc.ts_ns;
        mt->pid = r->u.proc.pid;
        mt->proc = r->u.proc.proc;
        break;
    case VG_REC_NOTE:
        mt->ts_ns = r->u.note.ts_ns;
        mt->pid = r->u.note.pid;
        break;
    case VG_REC_TRAILER:
        mt->ts_ns = r->u.trailer.ts_ns;
        break;
    case VG_REC_DNS:
        mt->ts_ns = r->u.dns.ts_ns;
        mt->decision = (uint8_t)r->u.dns.decision;
        break;
    case VG_REC_SERVICE:
        mt->ts_ns = r->u.svc.ts_ns;
        mt->pid = r->u.svc.pid;
        mt->kind = (uint8_t)r->u.svc.kind;
        mt->decision = r->u.svc.kind == VG_SVC_REFUSED ? VG_DEC_DENY : VG_DEC_ALLOW;
        break;
    default:
        break;
    }
}

static struct vw_meta *push_meta(struct vw_model *m, uint64_t off, size_t len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 4096;
        m->meta = vg_xrealloc(m->meta, m->cap * sizeof *m->meta);
    }
    struct vw_meta *mt = &m->meta[m->n++];
    memset(mt, 0, sizeof *mt);
    mt->off = off;
    mt->len = (uint32_t)len;
    return mt;
}

static void stop_corrupt(struct vw_model *m, const char *fmt, const char *what)
{
    m->tail = VW_TAIL_CORRUPT;
    snprintf(m->why, sizeof m->why, fmt, what);
}

/* A record that is msgpack but not ours: keep a row for it and go on, so
 * one odd record does not hide the rest of the run. */
static void add_bad(struct vw_model *m, struct vw_meta *mt, const char *why)
{
    mt->type = VW_TYPE_BAD;
    if (!m->nbad++) {
        m->first_bad = mt->off;
        snprintf(m->bad_why, sizeof m->bad_why, "%s", why);
    }
    char line[320];
    int len = snprintf(line, sizeof line, "undecodable record: %s", why);
    put_summary(m, mt, line, len < 0 ? 0 : (size_t)len >= sizeof line ? sizeof line - 1 : (size_t)len);
}

/* Keep the header and the last trailer decoded for the summary view. */
static void keep_or_free(struct vw_model *m, struct vg_decoded *d)
{
    if (d->rec.type == VG_REC_HEADER && !m->has_header) {
        m->header = *d;
        m->has_header = true;
    } else if (d->rec.type == VG_REC_TRAILER) {
        if (m->has_trailer)
            vg_decoded_free(&m->trailer);
        m->trailer = *d;
        m->has_trailer = true;
    } else {
        vg_decoded_free(d);
    }
}

/* Returns false when indexing must stop (the first record is no header). */
static bool add_record(struct vw_model *m, uint64_t off, size_t len)
{
    struct vg_decoded d;
    struct vg_err e = {{0}};
    int rc = vg_record_decode(m->map + off, len, &d, &e);
    if (m->n == 0 && (rc < 0 || d.rec.type != VG_REC_HEADER)) {
        if (rc < 0)
            stop_corrupt(m, "not a vigil log: %s", e.msg);
        else
            stop_corrupt(m, "not a vigil log: first record is a '%s', not a header",
                         vg_rec_type_name(d.rec.type));
        if (rc == 0)
            vg_decoded_free(&d);
        return false;
    }
    if (rc < 0 && d.unknown_type) {
        m->nskipped++;  /* a newer writer's record type: skip, as readers do */
        return true;
    }
    struct vw_meta *mt = push_meta(m, off, len);
    if (rc < 0) {
        add_bad(m, mt, e.msg[0] ? e.msg : "not a vigil record");
        return true;
    }
    fill_meta(mt, &d.rec);
    m->scratch.len = 0;
    vg_buf_put(&m->scratch, "", 0);
    vg_record_summary(&d.rec, &m->scratch);
    put_summary(m, mt, m->scratch.data, m->scratch.len);
    vw_stats_add(&m->stats, &d.rec);
    vw_tree_add(&m->tree, &d.rec);
    keep_or_free(m, &d);
    return true;
}

static void index_more(struct vw_model *m)
{
    if (m->tail == VW_TAIL_CORRUPT || m->shrank)
        return;
    m->tail = VW_TAIL_CLEAN;
    while (m->end < m->size && m->n < m->max_records) {
        size_t objlen = 0;
        enum vg_mp_status st = vg_mp_skip(m->map + m->end, m->size - m->end, &objlen);
        if (st == VG_MP_TRUNCATED) {
            m->tail = VW_TAIL_PARTIAL;
            return;
        }
        if (st != VG_MP_OK || objlen == 0 || objlen > UINT32_MAX) {
            stop_corrupt(m, "%s", "not msgpack");
            return;
        }
        if (!add_record(m, m->end, objlen))
            return;
        m->end += objlen;
    }
}

/* Map (or extend the map of) the first `size` bytes of the file. */
static int map_file(struct vw_model *m, uint64_t size, struct vg_err *err)
{
    if (size == m->maplen)
        return 0;
    void *p;
    if (m->maplen)
        p = mremap((void *)m->map, m->maplen, size, MREMAP_MAYMOVE);
    else
        p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, m->fd, 0);
    if (p == MAP_FAILED) {
        vg_errf(err, "%s: cannot map %llu bytes: %s", m->path, (unsigned long long)size,
                strerror(errno));
        return -1;
    }
    m->map = p;
    m->maplen = size;
    return 0;
}

long vw_model_refresh(struct vw_model *m, struct vg_err *err)
{
    struct stat st;
    if (fstat(m->fd, &st) < 0) {
        vg_errf(err, "%s: %s", m->path, strerror(errno));
        return -1;
    }
    uint64_t size = (uint64_t)st.st_size;
    if (size < m->size) {
        /* Rewritten under us: what we indexed may be gone.  Pages past
         * the new end would fault, so never read beyond it again. */
        m->shrank = true;
        m->size = size;
        return 0;
    }
    if (size == m->size || m->shrank)
        return 0;
    if (map_file(m, size, err) < 0)
        return -1;
    m->size = size;
    size_t before = m->n;
    index_more(m);
    return (long)(m->n - before);
}

static struct vw_model *open_upto(const char *path, bool follow, size_t max_records,
                                  struct vg_err *err)
{
    int fd = vg_open_regular(path, err);   /* a FIFO would block before any check */
    if (fd < 0)
        return NULL;
    struct vw_model *m = vg_xcalloc(1, sizeof *m);
    m->path = vg_xstrdup(path);
    m->fd = fd;
    m->max_records = max_records;
    if (vw_model_refresh(m, err) < 0)
        goto fail;
    if (m->n == 0 && m->tail == VW_TAIL_CORRUPT) {
        vg_errf(err, "%s: %s (byte %llu)", path, m->why, (unsigned long long)m->end);
        goto fail;
    }
    if (m->n == 0 && !follow) {
        vg_errf(err, "%s: not a vigil log: %s", path,
                m->size ? "no complete header record" : "empty file");
        goto fail;
    }
    return m;
fail:
    vw_model_close(m);
    return NULL;
}

struct vw_model *vw_model_open(const char *path, bool follow, struct vg_err *err)
{
    return open_upto(path, follow, SIZE_MAX, err);
}

int vw_model_check(const char *path, bool follow, struct vg_err *err)
{
    struct vw_model *m = open_upto(path, follow, 1, err);
    vw_model_close(m);
    return m ? 0 : -1;
}

const struct vg_record *vw_model_record(struct vw_model *m, size_t i, struct vg_err *err)
{
    if (i >= m->n) {
        vg_errf(err, "no record %zu", i);
        return NULL;
    }
    struct vw_cached *c = &m->cache[i % VW_CACHE_SLOTS];
    if (c->used && c->idx == i)
        return &c->d.rec;
    if (c->used)
        vg_decoded_free(&c->d);
    c->used = false;
    const struct vw_meta *mt = &m->meta[i];
    if (mt->off + mt->len > m->size) {
        vg_errf(err, "record at byte %llu is no longer in the file",
                (unsigned long long)mt->off);
        return NULL;
    }
    if (vg_record_decode(m->map + mt->off, mt->len, &c->d, err) < 0)
        return NULL;
    c->used = true;
    c->idx = i;
    return &c->d.rec;
}

void vw_model_warning(const struct vw_model *m, bool following, char *buf, size_t n)
{
    struct vg_buf b = {0};
    vg_buf_put(&b, "", 0);
    if (m->tail == VW_TAIL_CORRUPT)
        vg_buf_printf(&b, "; corrupt at byte %llu: %s", (unsigned long long)m->end, m->why);
    if (m->shrank)
        vg_buf_printf(&b, "; file shrank to %llu bytes", (unsigned long long)m->size);
    if (m->nbad)
        vg_buf_printf(&b, "; %llu undecodable (first at byte %llu: %s)",
                      (unsigned long long)m->nbad, (unsigned long long)m->first_bad,
                      m->bad_why);
    if (!m->has_trailer && !following && m->tail != VW_TAIL_CORRUPT)
        vg_buf_printf(&b, "; truncated at byte %llu: no trailer", (unsigned long long)m->end);
    if (n)
        snprintf(buf, n, "%s", b.len ? b.data + 2 : "");
    vg_buf_free(&b);
}

void vw_model_close(struct vw_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < VW_CACHE_SLOTS; i++)
        if (m->cache[i].used)
            vg_decoded_free(&m->cache[i].d);
    if (m->has_header)
        vg_decoded_free(&m->header);
    if (m->has_trailer)
        vg_decoded_free(&m->trailer);
    if (m->maplen)
        munmap((void *)m->map, m->maplen);
    close(m->fd);
    vw_stats_free(&m->stats);
    vw_tree_free(&m->tree);
    vg_buf_free(&m->scratch);
    free(m->meta);
    free(m->sums);
    free(m->path);
    free(m);
}
