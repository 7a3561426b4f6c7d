/* pyframe.c: which Python frame of a record names "the candidate's line".
 * The rule, for every reader (vigil log, the viewer, summaries): the
 * innermost frame whose file is not the interpreter's own library or an
 * installed package, i.e. whose co_filename contains none of
 * "/lib/python3" (the standard library, wherever the interpreter lives:
 * /usr/lib/python3.11/, a pyenv's lib/python3.13/, a venv's lib/...),
 * "/site-packages/", "/dist-packages/", and is not a frozen module
 * ("<frozen importlib._bootstrap>").  "<string>" (python -c) and
 * "<stdin>" are the candidate's.  When every frame is library code the
 * innermost frame is shown. */
#include <string.h>

#include "event/event.h"
#include "util/util.h"

static const char *const library_marks[] = {"/lib/python3", "/site-packages/", "/dist-packages/"};
#define FROZEN_PREFIX "<frozen "

static bool is_library(const char *file)
{
    if (!file || strncmp(file, FROZEN_PREFIX, strlen(FROZEN_PREFIX)) == 0)
        return true;
    for (size_t i = 0; i < VG_ARRAY_LEN(library_marks); i++)
        if (strstr(file, library_marks[i]))
            return true;
    return false;
}

const struct vg_pyframe *vg_py_user_frame(const struct vg_pyframe *f, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!is_library(f[i].file))
            return &f[i];
    return n ? &f[0] : NULL;
}
