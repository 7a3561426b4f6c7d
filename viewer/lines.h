/* lines.h: a list of styled text lines.  The detail pane, the process tree,
 * the summary and the help screen are all built as lines by code that knows
 * nothing about the terminal; the UI only scrolls and paints them. */
#ifndef VW_LINES_H
#define VW_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "event/event.h"

enum vw_style {
    VW_ST_NORMAL,
    VW_ST_HEAD,   /* section heading */
    VW_ST_DIM,    /* secondary information */
    VW_ST_ALLOW,
    VW_ST_DENY,
    VW_ST_WOULD,  /* would-deny */
    VW_ST_KILL,
    VW_ST_WOULDKILL,
    VW_ST_WARN,
    VW_NSTYLES
};

struct vw_line {
    char *text;
    uint8_t style;
    uint64_t ref;  /* what the line is about (a process identity), or 0 */
};

struct vw_lines {
    struct vw_line *v;
    size_t n, cap;
};

void vw_lines_add(struct vw_lines *l, enum vw_style style, uint64_t ref,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void vw_lines_clear(struct vw_lines *l);

/* The style that shows a decision (allowed green, denied red, ...). */
enum vw_style vw_decision_style(enum vg_decision d);
/* deny, kill, would-deny, would-kill: everything but allow. */
static inline int vw_refused(enum vg_decision d) { return d != VG_DEC_ALLOW; }

#endif
