/* reader.h: reading run logs back, for `vigil log`, the viewer and tests.
 * Nothing here trusts the input: every length is checked against the bytes
 * that are really there before anything is allocated, nesting is bounded,
 * and a truncated or corrupt log yields every complete record before it and
 * then a status that says where and what went wrong. */
#ifndef VG_READER_H
#define VG_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event/event.h"
#include "util/util.h"

enum vg_mp_status { VG_MP_OK, VG_MP_TRUNCATED, VG_MP_CORRUPT };

/* Length of the one msgpack object starting at p, without allocating.
 * TRUNCATED: p[0..len) is a proper prefix of an object; CORRUPT: not
 * msgpack, or nested deeper than 32, or an ext/bin/str too long to be
 * plausible. */
enum vg_mp_status vg_mp_skip(const uint8_t *p, size_t len, size_t *objlen);
/* The same, and on CORRUPT *why (if why) says what is wrong. */
enum vg_mp_status vg_mp_check(const uint8_t *p, size_t len, size_t *objlen,
                              const char **why);
/* Plausibility limits: deeper nesting, longer str/bin/ext, or a container
 * claiming more elements is CORRUPT even before the bytes run out. */
#define VG_MP_MAX_DEPTH 32
#define VG_MP_MAX_BYTES (64u << 20)
#define VG_MP_MAX_ITEMS (1u << 24)

/* A decoded record and the memory its strings live in. */
struct vg_decoded {
    struct vg_record rec;
    void *priv;
    /* After a failed decode: true when the only problem is a "type" this
     * build does not know (a newer log); readers skip such records. */
    bool unknown_type;
};
/* Decode exactly one object p[0..len) (as found by vg_mp_skip) into a
 * record.  -1 with err set when it is msgpack but not a vigil record
 * (unknown type, a field of the wrong type).  Unknown keys are ignored. */
int vg_record_decode(const uint8_t *p, size_t len, struct vg_decoded *out,
                     struct vg_err *err);
void vg_decoded_free(struct vg_decoded *d);

/* Sequential reader over a file.  Follow mode: at the end of the data,
 * vg_reader_next returns 0; calling it again later picks up records that
 * were appended meanwhile. */
struct vg_reader;
struct vg_reader *vg_reader_open(const char *path, struct vg_err *err);
/* 1: a record in out (free it with vg_decoded_free); 0: no more data (yet);
 * -1: the data at the current offset is corrupt (reader stops there). */
int vg_reader_next(struct vg_reader *r, struct vg_decoded *out);
/* After the last record: is there an incomplete record at the end? */
enum vg_mp_status vg_reader_status(const struct vg_reader *r);
/* Byte offset of the next unread record; description of the last problem. */
uint64_t vg_reader_offset(const struct vg_reader *r);
const char *vg_reader_error(const struct vg_reader *r);
void vg_reader_close(struct vg_reader *r);

/* ---- presentation shared by `vigil log` and the viewer ---- */
/* One-line summary of a record, no time/pid prefix, e.g.
 *   openat /home/u/.ssh/id_rsa O_RDONLY -> deny (default.policy:14)
 *   connect tcp 93.184.216.34:443 -> deny (default)
 *   exec /usr/bin/curl [curl -o x https://...] -> allow (python.policy:9) */
void vg_record_summary(const struct vg_record *r, struct vg_buf *out);
/* `vigil log` line: "+0.012345 [pid] read  openat ... -> deny (...)";
 * color adds ANSI colours to the decision. */
void vg_record_text(const struct vg_record *r, struct vg_buf *out, bool color);
/* One JSON object (no newline) with every field of the record. */
void vg_record_json(const struct vg_record *r, struct vg_buf *out);
/* s as `vigil log` prints strings: control and non-ASCII bytes as \xNN,
 * so nothing from a log can reach a terminal as an escape sequence. */
void vg_text_escaped(struct vg_buf *out, const char *s);
#endif
