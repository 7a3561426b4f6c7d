/* utf8.h (internal to event/): is a byte string well-formed UTF-8?  The
 * writer uses it to choose between msgpack str and bin. */
#ifndef VG_EVENT_UTF8_H
#define VG_EVENT_UTF8_H
#include <stdbool.h>
#include <stddef.h>
bool vg_utf8_valid(const char *s, size_t n);
#endif
