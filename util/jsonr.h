/* jsonr.h: a small JSON reader (batch task lines, result records).  It
 * parses one value into a tree, with limits on depth and size, and says
 * what is wrong and at which byte (counted from 1).  The text must be
 * well-formed UTF-8 (util/utf8.c); strings have their \u escapes
 * decoded (a \u0000 or an unpaired surrogate is an error: these strings
 * become paths and argv).  Numbers keep their text. */
#ifndef VG_JSONR_H
#define VG_JSONR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/json.h"
#include "util/util.h"

enum vg_jt { VG_JNULL, VG_JBOOL, VG_JNUM, VG_JSTR, VG_JARR, VG_JOBJ };

struct vg_jv {
    enum vg_jt type;
    bool b;
    char *s;                 /* JNUM: its text; JSTR: the string */
    size_t n;                /* JARR, JOBJ: number of items */
    struct vg_jv *items;     /* JARR: values; JOBJ: values, keys[] beside */
    char **keys;             /* JOBJ */
};

#define VG_JSON_MAX_DEPTH 32

/* Parses text[0..len) as exactly one JSON value (white space around it is
 * fine).  NULL with err ("byte N: ...") on anything else. */
struct vg_jv *vg_jv_parse(const char *text, size_t len, struct vg_err *err);
/* The same, with VG_JV_* flags. */
#define VG_JV_NUL_AS_FFFD 1u   /* an escaped NUL (\u0000) is read as U+FFFD, not refused:
                                * for vigil's own records, whose output tails may hold
                                * one, where only other members are wanted */
struct vg_jv *vg_jv_parse_flags(const char *text, size_t len, unsigned flags, struct vg_err *err);
void vg_jv_free(struct vg_jv *v);

/* The member key of an object, or NULL (also when v is not an object). */
const struct vg_jv *vg_jv_get(const struct vg_jv *v, const char *key);
/* A string member's value, or NULL when absent or not a string. */
const char *vg_jv_str(const struct vg_jv *v, const char *key);

/* Writes v back out through a JSON writer. */
void vg_jv_write(const struct vg_jv *v, struct vg_json *j);
#endif
