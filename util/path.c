/* path.c: paths as text (path.h says which normalising is for what). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/path.h"
#include "util/util.h"

int vg_path_push(char *out, size_t cap, size_t *len, const char *c, size_t n)
{
    /* the separator, the component and the NUL */
    if (*len + 1 + n >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    out[(*len)++] = '/';
    memcpy(out + *len, c, n);
    *len += n;
    out[*len] = '\0';
    return 0;
}

void vg_path_pop(char *out, size_t *len)
{
    while (*len > 0 && out[*len - 1] != '/')
        (*len)--;
    if (*len > 0)
        (*len)--;            /* the separator; "/" stays the empty prefix */
    out[*len] = '\0';
}

int vg_path_lexical(char *out, size_t cap, size_t *len, const char *path)
{
    size_t n;
    for (const char *c = vg_path_comp(path, &n); c; c = vg_path_comp(c + n, &n)) {
        enum vg_path_kind k = vg_path_kind(c, n);
        if (k == VG_PATH_DOTDOT)
            vg_path_pop(out, len);
        else if (k == VG_PATH_NAME && vg_path_push(out, cap, len, c, n) < 0)
            return -1;
    }
    return 0;
}

char *vg_path_normalize(const char *path)
{
    /* Each component comes out with one slash before it, which the input
     * had too, except perhaps the first: one byte more, and the NUL. */
    size_t cap = strlen(path) + 2, len = 0;
    char *out = vg_xmalloc(cap);
    out[0] = '\0';
    if (vg_path_lexical(out, cap, &len, path) < 0)
        abort();             /* cannot happen: cap holds the longest result */
    if (len == 0)
        strcpy(out, "/");
    return out;
}

void vg_path_squash(char *s)
{
    /* In place: every component moves left or stays, never right. */
    const bool absolute = s[0] == '/';
    char *w = s;
    size_t n;
    for (const char *c = vg_path_comp(s, &n); c; c = vg_path_comp(c + n, &n)) {
        if (w > s || absolute)
            *w++ = '/';
        memmove(w, c, n);
        w += n;
    }
    if (w == s && absolute)
        *w++ = '/';
    *w = '\0';
}
