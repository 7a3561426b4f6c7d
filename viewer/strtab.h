/* strtab.h: a set of interned strings, each with two counters.  The viewer
 * uses it for "how often did we see this path / destination / program"
 * tables and to give the process tree stable copies of argv text.  Strings
 * are stored once and never move, so callers may keep the pointers for the
 * life of the table. */
#ifndef VW_STRTAB_H
#define VW_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "viewer/slots.h"

struct vw_strent {
    const char *s;
    uint64_t n;       /* times added */
    uint64_t denied;  /* of which refused (deny, kill, would-*) */
};

struct vw_strtab {
    struct vw_strent *ents;  /* in order of first appearance */
    size_t n, cap;
    struct vw_slots slots;   /* hash of the string -> index into ents */
    struct vw_chunk *chunks; /* string storage */
};

/* Find or insert s; returns its entry (counters untouched).  The entry
 * pointer is valid until the next insertion; entry->s for ever. */
struct vw_strent *vw_strtab_intern(struct vw_strtab *t, const char *s);
/* Intern and count one occurrence. */
void vw_strtab_add(struct vw_strtab *t, const char *s, int denied);
/* Entries sorted by n (then denied) descending, then first appearance;
 * an array of pointers the caller frees. */
const struct vw_strent **vw_strtab_sorted(const struct vw_strtab *t, int by_denied);
void vw_strtab_free(struct vw_strtab *t);

#endif
