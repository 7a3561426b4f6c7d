/* pyframes.c: the walk (pyframes.h).  From _PyRuntime: interpreters ->
 * their thread states -> the one whose native_thread_id is the calling
 * thread's tid as the candidate sees it -> its current frame -> previous
 * ... Each frame gives its code object: co_filename, co_qualname, and the
 * line of the frame's instruction from co_linetable.  Every list walked
 * is capped (a corrupt list may loop), and a frame whose code object is
 * not of PyCode_Type ends the stack. */
#include <string.h>

#include "tracer/py/py_int.h"
#include "tracer/py/pyframes.h"

#define MAX_INTERPRETERS 64u
#define MAX_THREAD_STATES 4096u     /* over all interpreters */
#define FILE_CHARS 1024u
#define FUNC_CHARS 256u
/* Shim frames are skipped, but count towards this cap on the walk. */
#define MAX_WALK(max) (2u * (max) + 16u)
#define FRAME_BYTES 128u            /* of _PyInterpreterFrame read at once */
#define CODE_BYTES 256u             /* of PyCodeObject read at once */

static bool read_ptr(struct vg_pyreader *rd, uint64_t addr, uint64_t *out)
{
    return vg_py_ptr_ok(addr) && vg_py_read(rd, addr, out, sizeof *out) == 0;
}

static uint64_t field(const uint8_t *buf, uint64_t off)
{
    uint64_t v;
    memcpy(&v, buf + off, sizeof v);
    return v;
}

/* The thread state of the candidate's thread nstid, 0 if none. */
static uint64_t thread_state(struct vg_pyreader *rd, const struct vg_pyrt *rt)
{
    const struct vg_pyoffsets *o = &rt->off;
    uint64_t interp = 0, ts = 0, tid = 0;
    unsigned budget = MAX_THREAD_STATES;
    if (!read_ptr(rd, rt->runtime + o->rt_interp_head, &interp))
        return 0;
    for (unsigned i = 0; i < MAX_INTERPRETERS && vg_py_ptr_ok(interp); i++) {
        if (!read_ptr(rd, interp + o->is_threads_head, &ts))
            return 0;
        for (; budget > 0 && vg_py_ptr_ok(ts); budget--) {
            if (!read_ptr(rd, ts + o->ts_native_tid, &tid))
                return 0;
            if (tid == (uint64_t)rd->tr->nstid)
                return ts;
            if (!read_ptr(rd, ts + o->ts_next, &ts))
                return 0;
        }
        if (!read_ptr(rd, interp + o->is_next, &interp))
            return 0;
    }
    return 0;
}

static uint64_t current_frame(struct vg_pyreader *rd, const struct vg_pyoffsets *o, uint64_t ts)
{
    uint64_t holder = ts, frame = 0;
    if (o->via_cframe && !read_ptr(rd, ts + o->ts_cframe, &holder))
        return 0;
    return read_ptr(rd, holder + o->current_frame, &frame) ? frame : 0;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* Bytes of a frame that hold the fields read. */
static uint64_t frame_len(const struct vg_pyoffsets *o)
{
    return max3(o->fr_previous + 8, o->fr_code + 8, max3(o->fr_instr + 8, o->fr_owner + 1, 0));
}

/* Every field read lies in the bytes read (a debug-offsets table is the
 * candidate's memory too). */
static bool layout_fits(const struct vg_pyoffsets *o)
{
    uint64_t c = o->co_code;
    return frame_len(o) <= FRAME_BYTES && c <= CODE_BYTES && o->co_filename + 8 <= c &&
           o->co_qualname + 8 <= c && o->co_linetable + 8 <= c && o->co_firstlineno + 4 <= c &&
           o->ob_type + 8 <= c;
}

/* One frame's code object into *out; false ends the stack. */
static bool describe(struct vg_pyreader *rd, const struct vg_pyrt *rt, uint64_t code,
                     uint64_t instr, struct vg_pyframe *out, struct vg_arena *a)
{
    const struct vg_pyoffsets *o = &rt->off;
    uint8_t co[CODE_BYTES];
    if (!vg_py_ptr_ok(code) || vg_py_read(rd, code, co, o->co_code) < 0)
        return false;
    if (rt->code_type && field(co, o->ob_type) != rt->code_type)
        return false;
    int32_t first;
    memcpy(&first, co + o->co_firstlineno, sizeof first);
    /* the instruction's offset in bytes from the code's first one */
    int64_t addr = (int64_t)(instr - (code + o->co_code));
    out->file = vg_py_read_str(rd, o, field(co, o->co_filename), FILE_CHARS, a);
    out->func = vg_py_read_str(rd, o, field(co, o->co_qualname), FUNC_CHARS, a);
    out->line = vg_py_code_line(rd, o, field(co, o->co_linetable), first, addr);
    if (!out->file)
        out->file = "?";
    if (!out->func)
        out->func = "?";
    return true;
}

uint32_t vg_py_stack(struct vg_pyframes *pf, struct vg_tracee *tr, uint64_t proc,
                     struct vg_pyframe *out, uint32_t max, bool *trunc, struct vg_arena *a)
{
    *trunc = false;
    const struct vg_pyrt *rt = vg_py_runtime(pf, tr, proc);
    if (!rt || !layout_fits(&rt->off) || tr->nstid <= 0)
        return 0;
    const struct vg_pyoffsets *o = &rt->off;
    struct vg_pyreader *rd = vg_py_reader(pf);
    vg_py_reader_reset(rd, tr);
    uint64_t ts = thread_state(rd, rt);
    uint64_t frame = ts ? current_frame(rd, o, ts) : 0;
    uint32_t n = 0;
    for (unsigned steps = 0; vg_py_ptr_ok(frame) && steps < MAX_WALK(max); steps++) {
        uint8_t fr[FRAME_BYTES];
        if (vg_py_read(rd, frame, fr, frame_len(o)) < 0)
            break;
        if (fr[o->fr_owner] != o->owner_cstack) {
            if (n == max) {
                *trunc = true;
                break;
            }
            if (!describe(rd, rt, field(fr, o->fr_code), field(fr, o->fr_instr), &out[n], a))
                break;
            n++;
        }
        frame = field(fr, o->fr_previous);
    }
    return n;
}
