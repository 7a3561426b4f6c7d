/* extra.h: keys of a syscall record that other parts of vigil add and that
 * insight/ reads straight from the record's msgpack bytes, so that it
 * works whether or not this build's schema decodes them: the Python stack
 * `py` ([{"file","func","line"}], innermost first) and the connect's host
 * name `args.host`.  Both optional: a record without them gives nothing. */
#ifndef VG_INSIGHT_EXTRA_H
#define VG_INSIGHT_EXTRA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vg_buf;

/* The record's source line, "cand.py:14 in fetch_binary": the innermost
 * Python frame whose file is not the interpreter's own (stdlib,
 * site-packages, dist-packages, frozen modules).  Appended to out; false
 * (out unchanged) when the record has no such frame. */
bool vg_extra_source(const uint8_t *rec, size_t len, struct vg_buf *out);
/* args.host, appended to out; false when absent. */
bool vg_extra_host(const uint8_t *rec, size_t len, struct vg_buf *out);
#endif
