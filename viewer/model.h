/* model.h: an open run log as the viewer sees it, without any terminal.
 *
 * Opening maps the file and walks it once with vg_mp_skip to find every
 * record; each record is decoded once, right then, to fill a compact
 * vw_meta (type, class, decision, pid, process, time), its one-line
 * summary (kept in one arena, so filtering and searching never decode
 * again), the summary statistics and the process tree.  The full decoded
 * record is only rebuilt on demand, for the detail pane, through a small
 * cache.  Follow mode re-reads the file size and indexes what was
 * appended; an incomplete record at the end waits for its remaining bytes.
 * Bench and unit tests drive this API directly. */
#ifndef VW_MODEL_H
#define VW_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "event/reader.h"
#include "util/util.h"
#include "viewer/proctree.h"
#include "viewer/stats.h"

/* meta.type of a record that is msgpack but not a vigil record. */
#define VW_TYPE_BAD 0xffu

struct vw_meta {
    uint64_t off;      /* where the record starts in the file */
    uint64_t ts_ns;    /* since the start of the run (0 for the header) */
    uint64_t proc;     /* process identity for syscall and proc records */
    uint64_t sum;      /* offset of its summary in the arena */
    uint32_t len;      /* encoded length */
    int32_t pid;       /* 0 when the record has none */
    uint8_t type;      /* enum vg_rec_type, or VW_TYPE_BAD */
    uint8_t cls;       /* enum vg_class (syscall records) */
    uint8_t decision;  /* enum vg_decision (syscall records) */
    uint8_t probe;     /* a syscall record marked probe: shown dim */
    uint8_t kind;      /* enum vg_svc_kind (service records) */
};

/* A record that is a decision: a syscall, a dns query, or a request vigil
 * serve refused (its decision then is deny), for the denial filter and
 * the ] [ keys alike. */
static inline bool vw_meta_decided(const struct vw_meta *mt)
{
    return mt->type == VG_REC_SYSCALL || mt->type == VG_REC_DNS ||
           (mt->type == VG_REC_SERVICE && mt->kind == VG_SVC_REFUSED);
}

enum vw_tail {
    VW_TAIL_CLEAN,    /* the data ends on a record boundary */
    VW_TAIL_PARTIAL,  /* an incomplete record follows the last one */
    VW_TAIL_CORRUPT,  /* unreadable data: indexing stopped for good */
};

#define VW_CACHE_SLOTS 16

struct vw_cached {
    size_t idx;
    bool used;
    struct vg_decoded d;
};

struct vw_model {
    char *path;
    int fd;
    const uint8_t *map;
    size_t maplen;
    uint64_t size;          /* file size when last looked at */
    uint64_t end;           /* first byte not yet indexed */
    struct vw_meta *meta;
    size_t n, cap;
    char *sums;             /* NUL-terminated summaries, back to back */
    size_t sumlen, sumcap;
    struct vg_decoded header, trailer;
    bool has_header, has_trailer;
    enum vw_tail tail;
    char why[600];          /* what was wrong at `end` (corrupt tail) */
    uint64_t nbad, first_bad;  /* records that are msgpack but not ours */
    uint64_t nskipped;         /* records of a type newer than this build */
    char bad_why[520];
    bool shrank;            /* the file got shorter: stop reading it */
    size_t max_records;     /* index no further (vw_model_check) */
    struct vw_stats stats;
    struct vw_proctree tree;
    struct vg_buf scratch;
    struct vw_cached cache[VW_CACHE_SLOTS];
};

/* Open and index path.  Fails (NULL, err set) when the file cannot be read
 * or does not start with a vigil header; with follow, an empty file or an
 * incomplete header is accepted: the run may have just begun. */
struct vw_model *vw_model_open(const char *path, bool follow, struct vg_err *err);
/* The same verdict as vw_model_open, from the first record only: cheap,
 * for complaining about a wrong file before anything else. */
int vw_model_check(const char *path, bool follow, struct vg_err *err);
/* Index whatever was appended since the last look.  Returns the number of
 * new records, or -1 with err set when the file cannot be examined. */
long vw_model_refresh(struct vw_model *m, struct vg_err *err);
void vw_model_close(struct vw_model *m);

static inline const char *vw_model_summary(const struct vw_model *m, size_t i)
{
    return m->sums + m->meta[i].sum;
}
/* Record i, decoded; valid until the next call.  NULL (err set) for an
 * undecodable record or one that is no longer in the file. */
const struct vg_record *vw_model_record(struct vw_model *m, size_t i, struct vg_err *err);
/* What is wrong with the log, for the status bar ("" if nothing): corrupt
 * data, undecodable records, and, unless following, a missing trailer. */
void vw_model_warning(const struct vw_model *m, bool following, char *buf, size_t n);

#endif
