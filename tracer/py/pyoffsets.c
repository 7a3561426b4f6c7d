/* pyoffsets.c: the per-version layouts (pyoffsets.h) as data. */
#include <stddef.h>

#include "tracer/py/pyoffsets.h"
#include "util/util.h"

#define MINOR(hex) (((hex) >> 16) & 0xffu)
#define MAJOR(hex) ((hex) >> 24)
/* No interpreter structure is anywhere near this big: a larger value in
 * _Py_DebugOffsets is a corrupt (or forged) table. */
#define MAX_STRUCT_OFFSET (1u << 20)

/* offsetof on /usr/include/python3.11 (Debian 3.11.2) and pyenv's
 * 3.11.7: identical, as CPython keeps a minor version's layout. */
static const struct vg_pyoffsets py311 = {
    .hexversion = 0x030b0000, .rt_interp_head = 40, .is_next = 0, .is_threads_head = 16,
    .ts_next = 8, .ts_native_tid = 160, .via_cframe = true, .ts_cframe = 56,
    .current_frame = 8, .fr_previous = 48, .fr_code = 32, .fr_instr = 56, .fr_owner = 69,
    .owner_cstack = VG_PY_NO_OWNER, .co_filename = 112, .co_qualname = 128,
    .co_linetable = 136, .co_firstlineno = 72, .co_code = 184, .ob_type = 8,
    .bytes_size = 16, .bytes_data = 32, .str_length = 16, .str_state = 32,
    .str_ascii_size = 48, .str_compact_size = 72,
};

/* offsetof on pyenv's 3.12.1 headers; FRAME_OWNED_BY_CSTACK = 3. */
static const struct vg_pyoffsets py312 = {
    .hexversion = 0x030c0000, .rt_interp_head = 40, .is_next = 0, .is_threads_head = 72,
    .ts_next = 8, .ts_native_tid = 144, .via_cframe = true, .ts_cframe = 56,
    .current_frame = 0, .fr_previous = 8, .fr_code = 0, .fr_instr = 56, .fr_owner = 70,
    .owner_cstack = 3, .co_filename = 112, .co_qualname = 128, .co_linetable = 136,
    .co_firstlineno = 68, .co_code = 192, .ob_type = 8, .bytes_size = 16, .bytes_data = 32,
    .str_length = 16, .str_state = 32, .str_ascii_size = 40, .str_compact_size = 56,
};

static const struct vg_pyoffsets *const static_rows[] = {&py311, &py312};

const struct vg_pyoffsets *vg_py_static_offsets(uint32_t hexversion)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(static_rows); i++)
        if (MAJOR(hexversion) == MAJOR(static_rows[i]->hexversion) &&
            MINOR(hexversion) == MINOR(static_rows[i]->hexversion))
            return static_rows[i];
    return NULL;
}

/* ---- _Py_DebugOffsets ---- */

/* One value: the field of vg_pyoffsets it fills, and its index in the
 * structure counted in uint64 words (cookie = word 0, version = word 1). */
struct dbg_word {
    size_t field;
    uint16_t word;
};
#define W(f, w) {offsetof(struct vg_pyoffsets, f), (w)}
#define DBG_FREE_THREADED 2     /* word 2 of every version so far: free_threaded */

/* 3.13: Include/internal/pycore_runtime.h of 3.13.0, counted in words:
 * cookie 0, version 1, free_threaded 2, runtime_state 3-5,
 * interpreter_state 6-18, thread_state 19-27, interpreter_frame 28-33,
 * code_object 34-43, pyobject 44-45, type 46-49, tuple 50-52, list 53-55,
 * dict 56-58, float 59-60, long 61-63, bytes 64-66, unicode 67-70, gc 71-72. */
static const struct dbg_word dbg313[] = {
    W(rt_interp_head, 5), W(is_next, 8), W(is_threads_head, 9), W(ts_next, 21),
    W(current_frame, 23), W(ts_native_tid, 25), W(fr_previous, 29), W(fr_code, 30),
    W(fr_instr, 31), W(fr_owner, 33), W(co_filename, 35), W(co_qualname, 37),
    W(co_linetable, 38), W(co_firstlineno, 39), W(co_code, 43), W(ob_type, 45),
    W(bytes_size, 65), W(bytes_data, 66), W(str_state, 68), W(str_length, 69),
    W(str_ascii_size, 70),
};

struct dbg_row {
    uint32_t minor;
    const struct dbg_word *words;
    size_t n;
    uint32_t nwords;            /* words to read */
    uint32_t owner_cstack;      /* not in the structure: the version's constant */
    uint64_t compact_extra;     /* PyCompactUnicodeObject - PyASCIIObject */
};

static const struct dbg_row dbg_rows[] = {
    {13, dbg313, VG_ARRAY_LEN(dbg313), 73, 3, 16},
};

static const struct dbg_row *dbg_row(uint32_t hexversion)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(dbg_rows); i++)
        if (MAJOR(hexversion) == 3 && MINOR(hexversion) == dbg_rows[i].minor)
            return &dbg_rows[i];
    return NULL;
}

uint32_t vg_py_debug_size(uint32_t hexversion)
{
    const struct dbg_row *r = dbg_row(hexversion);
    return r ? r->nwords * (uint32_t)sizeof(uint64_t) : 0;
}

int vg_py_debug_offsets(const uint64_t *words, uint32_t nwords, struct vg_pyoffsets *out)
{
    const struct dbg_row *r = nwords > 1 ? dbg_row((uint32_t)words[1]) : NULL;
    /* a free-threaded build (3.13t) lays out objects and strings in ways
     * this reader does not know: no frames rather than wrong ones */
    if (!r || nwords < r->nwords || words[DBG_FREE_THREADED] != 0)
        return -1;
    *out = (struct vg_pyoffsets){.hexversion = (uint32_t)words[1], .via_cframe = false,
                                 .owner_cstack = r->owner_cstack};
    for (size_t i = 0; i < r->n; i++) {
        uint64_t v = words[r->words[i].word];
        if (v >= MAX_STRUCT_OFFSET)
            return -1;
        *(uint64_t *)((char *)out + r->words[i].field) = v;
    }
    out->str_compact_size = out->str_ascii_size + r->compact_extra;
    return 0;
}
