/* glob.h: path patterns of the policy language.  A pattern is checked and
 * its braces expanded when the policy is parsed (vg_glob_check,
 * vg_glob_expand); each alternative is compiled once the places are known
 * (vg_glob_compile) and then matched against canonical paths, which the
 * caller splits into components once per decision (vg_spath_split).
 *
 *   *      any run of characters within one component (dotfiles included)
 *   ?      one character, not '/'
 *   [a-z]  one character of a set; [!..] or [^..] negates
 *   **     a whole component: any number of components, zero included, so
 *          D/ ** (written without the space) matches D itself and all below
 *   {a,b}  alternatives (not nested)
 *   \c     the character c itself */
#ifndef VG_POLICY_GLOB_H
#define VG_POLICY_GLOB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/path.h"

#define VG_GLOB_MAX_ALTS 64     /* brace alternatives of one pattern */
#define VG_SPATH_MAX 4096       /* longest path matched component-wise */
#define VG_SPATH_MAXC (VG_SPATH_MAX / 2 + 1)

struct vg_glob_comp {
    uint32_t off, len;  /* into vg_glob.text; len 0 with dstar */
    bool dstar;         /* a '**' component */
};

struct vg_glob {
    char *text;              /* normalized, absolute, brace-free */
    size_t prefix_len;       /* literal bytes every match starts with */
    bool exact;              /* no wildcard: text is the one path */
    struct vg_glob_comp *comps;
    uint32_t ncomps;
};

/* A canonical path split into components, computed once per decision. */
struct vg_spath {
    const char *s;
    size_t len;
    uint32_t n;
    uint16_t off[VG_SPATH_MAXC], clen[VG_SPATH_MAXC];
};

/* Syntax check of one pattern (braces included).  On error returns false,
 * *bad is the offset of the offending character and *msg says what. */
bool vg_glob_check(const char *pat, size_t *bad, const char **msg);
/* A set `[...]` of a pattern: the index just past the `]` closing the set
 * that opens at p[i] (within its component), or 0 if unclosed (the `[` is
 * then itself); and the bytes the set p[i, end) holds, bit c % 8 of
 * set[c / 8] (`!` or `^` first negates, `]` first is itself, `a-z` a
 * range, a `-` first or last itself): what matching answers a byte at a
 * time, for a matcher of its own (the kernel engine's, lsm/). */
#define VG_GLOB_SET_BYTES 32
size_t vg_glob_set_end(const char *p, size_t i, size_t len);
void vg_glob_set_bytes(const char *p, size_t i, size_t end, unsigned char set[VG_GLOB_SET_BYTES]);
/* Expand braces of a checked pattern: malloc'd array of *n malloc'd strings.
 * False (and nothing allocated) when there would be too many. */
bool vg_glob_expand(const char *pat, char ***out, uint32_t *n);
/* Offset of the first wildcard character (or strlen). */
size_t vg_glob_literal_len(const char *pat);

/* Append s to a buffer with the glob characters escaped, so that a place
 * such as a home directory is matched literally. */
struct vg_buf;
void vg_glob_put_literal(struct vg_buf *b, const char *s);

void vg_glob_compile(const char *text, struct vg_glob *g);
void vg_glob_free(struct vg_glob *g);

/* Squash path (vg_path_squash) into sp (using buf, of VG_SPATH_MAX+1
 * bytes).  False when the path is too long to split. */
bool vg_spath_split(struct vg_spath *sp, char *buf, const char *path);
bool vg_glob_match(const struct vg_glob *g, const struct vg_spath *sp);

/* How a pattern relates to the tree at a directory d (d itself and every
 * path below it), decided soundly from the pattern's shape: ALL and NONE
 * are certain, SOME means "may match part of it". */
enum vg_glob_rel { VG_GLOB_NONE, VG_GLOB_SOME, VG_GLOB_ALL };
enum vg_glob_rel vg_glob_tree_relation(const struct vg_glob *g, const struct vg_spath *d);
#endif
