/* html.h: text from outside in an HTML page (vigil report -o).  First the
 * terminal form of util/escape.h (controls and every non-ASCII byte as
 * \xNN: a page shows exactly what `vigil report` shows a terminal, and no
 * bidi override or invisible character can reorder or hide a name), then
 * the five characters HTML gives a meaning to as entities, so a string is
 * only ever text: in an element or in a quoted attribute value alike. */
#ifndef VG_UTIL_HTML_H
#define VG_UTIL_HTML_H
#include <stddef.h>

#include "util/util.h"

/* Append s (NUL-terminated; "?" when NULL), escaped for HTML. */
void vg_html_puts(struct vg_buf *b, const char *s);
/* The same for n bytes of s. */
void vg_html_put(struct vg_buf *b, const char *s, size_t n);
#endif
