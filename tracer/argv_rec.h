/* argv_rec.h: the argv of an exec record, built one argument at a time.
 * The log keeps argv whole up to a budget (VG_ARGV_KEEP_*: a record must
 * stay a size a reader can hold); past it the record keeps the prefix that
 * fits and says so, with the full argument count, byte count and sha256
 * (struct vg_argv_full), so nothing is cut without a word and the whole
 * can be checked against a copy.  The hash covers every argument followed
 * by its NUL: the bytes of /proc/PID/cmdline. */
#ifndef VG_ARGV_REC_H
#define VG_ARGV_REC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "tracer/decode.h"
#include "util/sha256.h"

#define VG_ARGV_KEEP_BYTES (64u * 1024) /* argument text kept in one record */
#define VG_ARGV_KEEP_STRS 1024u         /* arguments kept in one record */

struct vg_argv_rec {
    struct vg_arena *arena; /* where the kept strings end up */
    const char **kept;      /* malloc'd while building */
    uint32_t nkept, cap;
    size_t budget;          /* bytes of text still to keep */
    bool cut;
    uint32_t argc;
    uint64_t bytes;
    struct vg_sha256 sha;
};

void vg_argv_rec_init(struct vg_argv_rec *r, struct vg_arena *a);
/* One argument of len bytes (no NUL needed at s[len]). */
void vg_argv_rec_add(struct vg_argv_rec *r, const char *s, size_t len);
/* The record's argv (in the arena) and, when cut, what the whole was;
 * releases what the builder holds. */
void vg_argv_rec_done(struct vg_argv_rec *r, const char *const **argv, uint32_t *argc,
                      struct vg_argv_full *full);
#endif
