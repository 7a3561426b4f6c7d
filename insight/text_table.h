/* text_table.h: a table in plain columns for a terminal (vigil report):
 * cells appended row by row, then laid out, each column as wide as its
 * widest cell, numbers right-aligned, a cell past MAX_CELL cut with "..."
 * (never the last column, nor inside a \xNN escape).  Text from outside
 * goes in escaped (util/escape.h), so a cell never holds a control byte. */
#ifndef VG_INSIGHT_TEXT_TABLE_H
#define VG_INSIGHT_TEXT_TABLE_H
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

struct vg_table {
    size_t ncols, ncells, cap;
    char **cells;        /* row-major; the first row the headings */
    const char *align;   /* a letter per column: 'r' right-aligned (a number), 'l' */
};

/* align's length is the number of columns; heads the headings. */
void vg_table_start(struct vg_table *t, const char *align, const char *const *heads);
/* A string from outside, escaped. */
void vg_table_text(struct vg_table *t, const char *s);
void vg_table_num(struct vg_table *t, uint64_t n);
/* Text of vigil's own (a decision, "-"), as it is. */
void vg_table_own(struct vg_table *t, const char *s);
/* Lays the table out into out, and frees its cells. */
void vg_table_finish(struct vg_table *t, struct vg_buf *out);
#endif
