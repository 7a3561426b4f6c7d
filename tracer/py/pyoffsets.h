/* pyoffsets.h: where CPython keeps what a stack walk reads, per version.
 * 3.11 and 3.12 publish nothing: their offsets are a table row here
 * (measured with offsetof on each version's own headers, and checked
 * against the live interpreter by tests/unit/test_pyframes.c).  3.13 and
 * later put a _Py_DebugOffsets structure at the start of _PyRuntime: its
 * values are read from the process, and only the position of each value
 * in that structure (fixed within a minor version) is a table row here. */
#ifndef VG_PY_PYOFFSETS_H
#define VG_PY_PYOFFSETS_H

#include <stdbool.h>
#include <stdint.h>

#define VG_PY_DEBUG_COOKIE "xdebugpy"   /* _Py_Debug_Cookie, 8 bytes */
#define VG_PY_NO_OWNER 0xffu            /* owner_cstack: the version has no shim frames */

/* Byte offsets in the interpreter's structures. */
struct vg_pyoffsets {
    uint32_t hexversion;        /* PY_VERSION_HEX of the interpreter */
    uint64_t rt_interp_head;    /* _PyRuntimeState.interpreters.head */
    uint64_t is_next;           /* PyInterpreterState.next */
    uint64_t is_threads_head;   /* PyInterpreterState.threads.head */
    uint64_t ts_next;           /* PyThreadState.next */
    uint64_t ts_native_tid;     /* PyThreadState.native_thread_id */
    bool via_cframe;            /* the current frame hangs off tstate->cframe (3.11, 3.12) */
    uint64_t ts_cframe;         /* PyThreadState.cframe, when via_cframe */
    uint64_t current_frame;     /* current_frame in _PyCFrame, or in PyThreadState */
    uint64_t fr_previous;       /* _PyInterpreterFrame.previous */
    uint64_t fr_code;           /* .f_code / .f_executable */
    uint64_t fr_instr;          /* .prev_instr / .instr_ptr */
    uint64_t fr_owner;          /* .owner (one byte) */
    uint32_t owner_cstack;      /* owner of a C-stack shim frame (no code), VG_PY_NO_OWNER */
    uint64_t co_filename, co_qualname, co_linetable, co_firstlineno; /* PyCodeObject */
    uint64_t co_code;           /* co_code_adaptive: the first instruction */
    uint64_t ob_type;           /* PyObject.ob_type */
    uint64_t bytes_size, bytes_data;     /* PyBytesObject ob_size, ob_sval */
    uint64_t str_length, str_state;      /* PyASCIIObject length, state */
    uint64_t str_ascii_size;    /* sizeof(PyASCIIObject): an ASCII string's data */
    uint64_t str_compact_size;  /* sizeof(PyCompactUnicodeObject): other compact strings */
};

/* The layout of PY_VERSION_HEX hexversion when it has a table row (3.11,
 * 3.12), else NULL. */
const struct vg_pyoffsets *vg_py_static_offsets(uint32_t hexversion);

/* How many bytes of _Py_DebugOffsets the reader needs for this version
 * (0: no debug-offsets row for it). */
uint32_t vg_py_debug_size(uint32_t hexversion);
/* Fill *out from the first vg_py_debug_size() bytes of _PyRuntime (the
 * cookie already checked).  Returns 0, or -1 when the version has no row
 * or an offset is out of any plausible range. */
int vg_py_debug_offsets(const uint64_t *words, uint32_t nwords, struct vg_pyoffsets *out);
#endif
