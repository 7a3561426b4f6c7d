/* path.h: paths as text.  The one place that splits a path into components
 * and says what "//", ".", ".." and a trailing slash mean; nothing here
 * looks at the file system.  Two strengths of normalising, because vigil
 * needs both:
 *   vg_path_lexical / vg_path_normalize  "//" and a trailing '/' go, "."
 *       is dropped and ".." removes the component before it (never above
 *       "/"); the result is absolute.  For paths vigil builds itself, and
 *       for a prefix already resolved by the kernel (tracer/canon.c, which
 *       resolves the candidate's own ".." against real directories with
 *       vg_path_push and vg_path_pop, after each symlink).
 *   vg_path_squash  only "//" and a trailing '/' go: "." and ".." stay, and
 *       a relative text ("@abstract", a glob alternative) stays relative.
 *       For the policy, whose patterns cannot hold "." or ".." and whose
 *       decided paths are already canonical. */
#ifndef VG_UTIL_PATH_H
#define VG_UTIL_PATH_H

#include <stddef.h>
#include <string.h>

/* The next component at or after p, slashes skipped: its start, with its
 * length in *n; NULL at the end of the path.  Inline: the policy splits
 * every decided path with it. */
static inline const char *vg_path_comp(const char *p, size_t *n)
{
    while (*p == '/')
        p++;
    if (*p == '\0')
        return NULL;
    *n = strcspn(p, "/");
    return p;
}

enum vg_path_kind { VG_PATH_NAME, VG_PATH_DOT, VG_PATH_DOTDOT };

/* What the component c (n bytes) is: ".", "..", or a name. */
static inline enum vg_path_kind vg_path_kind(const char *c, size_t n)
{
    if (n == 1 && c[0] == '.')
        return VG_PATH_DOT;
    if (n == 2 && c[0] == '.' && c[1] == '.')
        return VG_PATH_DOTDOT;
    return VG_PATH_NAME;
}

/* A path built component by component in out (cap bytes), *len long and
 * NUL-terminated: "" stands for "/", otherwise "/a/b", never a doubled or
 * trailing slash and never a "." or ".." component.
 * push: append "/" and the component c (n bytes); -1 (ENAMETOOLONG, out
 *       unchanged) when it and the NUL do not fit.
 * pop:  remove the last component; at "/" nothing happens. */
int vg_path_push(char *out, size_t cap, size_t *len, const char *c, size_t n);
void vg_path_pop(char *out, size_t *len);

/* Append the components of path to out (as vg_path_push does), normalised
 * lexically: from where out is, whether or not path starts with '/'.
 * -1 (ENAMETOOLONG) when they do not fit: out then holds part of them. */
int vg_path_lexical(char *out, size_t cap, size_t *len, const char *path);

/* Lexically normalize a path, taking a relative one from "/": collapse
 * "//", drop ".", resolve ".." (never above "/"), no trailing slash; ""
 * gives "/".  malloc'd.  Symlinks are not looked at: use it for paths
 * vigil itself builds. */
char *vg_path_normalize(const char *path);

/* Collapse "//" and drop a trailing '/' (but keep "/"), in place; "." and
 * ".." stay, a relative path stays relative, "" stays "". */
void vg_path_squash(char *s);
#endif
