/* utf8.h: is a byte string well-formed UTF-8?  The log writer uses it to
 * choose between msgpack str and bin; the JSON reader refuses text that
 * is not (a task file is UTF-8, RFC 8259). */
#ifndef VG_UTIL_UTF8_H
#define VG_UTIL_UTF8_H
#include <stdbool.h>
#include <stddef.h>
/* How many of the first n bytes of s are well-formed UTF-8 (n: all). */
size_t vg_utf8_prefix(const char *s, size_t n);
bool vg_utf8_valid(const char *s, size_t n);
#endif
