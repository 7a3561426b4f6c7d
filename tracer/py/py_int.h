/* py_int.h: shared by the files of tracer/py/. */
#ifndef VG_PY_INT_H
#define VG_PY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/decode.h"
#include "tracer/py/elfsym.h"
#include "tracer/py/pyoffsets.h"

/* Addresses above this are not user space on x86_64 (47-bit). */
#define VG_PY_USER_TOP (1ull << 47)

/* Is p a plausible address of an object or structure (8-aligned)? */
static inline bool vg_py_ptr_ok(uint64_t p)
{
    return p != 0 && (p & 7) == 0 && p < VG_PY_USER_TOP;
}

struct vg_pyframes;

/* pyread.c: the tracee's memory for one walk, a page at a time. */
#define VG_PY_PAGE 4096u
#define VG_PY_PAGES 64u
struct vg_pyreader {
    struct vg_tracee *tr;
    unsigned n, next;            /* pages held; the slot replaced next */
    uint64_t page[VG_PY_PAGES];  /* address of each page held */
    uint8_t *data;               /* VG_PY_PAGES pages */
};
void vg_py_reader_init(struct vg_pyreader *r);
void vg_py_reader_free(struct vg_pyreader *r);
/* Start a walk of tr: nothing cached is kept. */
void vg_py_reader_reset(struct vg_pyreader *r, struct vg_tracee *tr);
/* Read n bytes at addr: 0, or -1 when any of it cannot be read. */
int vg_py_read(struct vg_pyreader *r, uint64_t addr, void *buf, size_t n);
/* The per-run reader (pyproc.c owns it). */
struct vg_pyreader *vg_py_reader(struct vg_pyframes *pf);

/* The interpreter of one process. */
struct vg_pyrt {
    uint64_t runtime;          /* address of _PyRuntime */
    uint64_t code_type;        /* address of PyCode_Type, 0 if unknown */
    struct vg_pyoffsets off;
};

/* The interpreter of tr's process, found once per process (pyproc.c);
 * NULL when the process is not a CPython of a version vigil knows. */
const struct vg_pyrt *vg_py_runtime(struct vg_pyframes *pf, struct vg_tracee *tr,
                                    uint64_t proc);

/* pyobj.c: objects read from the tracee. */
/* A str object's text as UTF-8 in a (at most max characters, "..." when
 * cut); NULL when it cannot be read or is not a compact str. */
char *vg_py_read_str(struct vg_pyreader *rd, const struct vg_pyoffsets *o, uint64_t addr,
                     size_t max, struct vg_arena *a);
/* The line of byte offset addr (instr - first instruction) in a code
 * object whose co_linetable is the bytes object at table; 0 when unknown. */
int32_t vg_py_code_line(struct vg_pyreader *rd, const struct vg_pyoffsets *o, uint64_t table,
                        int32_t firstline, int64_t addr);
/* The location-table walk itself (3.11+ format), on bytes already read. */
int32_t vg_py_addr2line(const uint8_t *t, size_t n, int32_t firstline, int64_t addr);
#endif
