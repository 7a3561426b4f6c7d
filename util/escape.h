/* escape.h: the one way vigil shows a string it did not write itself (a
 * path, an argv word, a host name, a task id, a policy file name) to a
 * person: nothing in it can reach a terminal as a control sequence, and
 * it never breaks the line.  The form (docs/FORMAT.md, "Escaped strings"):
 *   printable ASCII (0x20-0x7e)  as is
 *   newline, tab                 \n, \t
 *   every other byte             \xNN (two lowercase hex digits)
 * "every other byte" is C0 controls, ESC, DEL, and every byte >= 0x80: C1
 * controls (bytes or UTF-8), invalid UTF-8, bidi overrides, line and
 * paragraph separators, and all other non-ASCII.  Escaping all non-ASCII,
 * not a list of dangerous code points, means no terminal or locale can
 * read anything into the output but ASCII.  The field form also writes
 * '"' and '\' as \" and \\, so a quoted field reads back exactly; the text
 * form leaves them, for whole lines of vigil's that embed such strings. */
#ifndef VG_UTIL_ESCAPE_H
#define VG_UTIL_ESCAPE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <wchar.h>

#include "util/util.h"

enum vg_esc_form {
    VG_ESC_TEXT,  /* a line of vigil's: '"' and '\' as they are */
    VG_ESC_FIELD, /* one string: '"' and '\' escaped too */
};

/* Append n bytes of s, escaped. */
void vg_esc_put(struct vg_buf *b, const char *s, size_t n, enum vg_esc_form form);
/* Append s (NUL-terminated; "?" when NULL), escaped. */
void vg_esc_puts(struct vg_buf *b, const char *s, enum vg_esc_form form);
/* s in the field form, malloc'd. */
char *vg_esc_dup(const char *s);

/* One line of vigil's own for a person (stderr notes, errors, progress):
 * the formatted text in the text form, then '\n', written in one go.
 * Every message that may hold a name from outside goes out this way. */
void vg_say(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A code point that valid UTF-8 may hold but no terminal should get raw:
 * C1 controls (U+0080-U+009F: U+009B is CSI to some terminals), the bidi
 * controls, U+2028 and U+2029.  JSON output writes them \uXXXX. */
bool vg_esc_cp_unsafe(uint32_t cp);

/* For the viewer, which draws characters itself: may this decoded wide
 * character of `width` columns reach the screen as itself?  False for
 * controls (C0, C1, DEL, U+2028, U+2029), for anything of no width (bidi
 * overrides and isolates, zero-width characters) and for the bidi
 * controls whatever width a locale gives them; those are shown \xNN. */
bool vg_esc_wchar_shown(wint_t wc, int width);

#endif
