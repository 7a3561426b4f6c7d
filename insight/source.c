/* source.c: see source.h.  The summary's rule (docs/FORMAT.md, --summary)
 * is its own: a frame of a library under another prefix (a pyenv's
 * lib/python3.X) counts as the candidate's, and with no frame of the
 * candidate's there is no line (vigil log shows the innermost instead,
 * event/pyframe.c). */
#include "insight/source.h"

#include <string.h>

#include "event/event.h"
#include "util/util.h"

/* Interpreter-owned code: what a reader of the candidate's source skips. */
static const char *const lib_marks[] = {
    "/site-packages/", "/dist-packages/", "/usr/lib/python", "/usr/local/lib/python", "<frozen ",
};

static bool is_lib_file(const char *file)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(lib_marks); i++)
        if (strstr(file, lib_marks[i]))
            return true;
    return false;
}

static bool is_users(const struct vg_pyframe *fr)
{
    return fr->file && !is_lib_file(fr->file) && fr->line >= 0;
}

const struct vg_pyframe *vg_sum_source_frame(const struct vg_syscall_ev *e)
{
    for (uint32_t i = 0; i < e->npy; i++)
        if (is_users(&e->py[i]))
            return &e->py[i];
    return NULL;
}

bool vg_sum_source(const struct vg_syscall_ev *e, struct vg_buf *out)
{
    const struct vg_pyframe *fr = vg_sum_source_frame(e);
    if (!fr)
        return false;
    /* one frame as "file:line in func" (the file's last component) */
    const char *slash = strrchr(fr->file, '/');
    vg_buf_printf(out, "%s:%d", slash ? slash + 1 : fr->file, (int)fr->line);
    if (fr->func)
        vg_buf_printf(out, " in %s", fr->func);
    return true;
}
