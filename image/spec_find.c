/* spec_find.c: shipped build specs by name.  `vigil image build python`
 * means python.spec from the first directory of util/sharedir.h that has
 * it: $VIGIL_SPEC_DIR, specs/ beside the binary or above it, VG_SPEC_DIR
 * (set at build time: PREFIX/share/vigil/specs).  Anything with a '/' or
 * ending in ".spec" is a path, taken as given. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/spec.h"
#include "util/sharedir.h"

#ifndef VG_SPEC_DIR
#define VG_SPEC_DIR "/usr/local/share/vigil/specs"
#endif
#define SUFFIX ".spec"

static bool is_path(const char *arg)
{
    size_t n = strlen(arg), k = strlen(SUFFIX);
    return strchr(arg, '/') || (n > k && !strcmp(arg + n - k, SUFFIX));
}

/* Only these become a file name: no '/', no "..", nothing hidden. */
static bool name_ok(const char *name)
{
    size_t n = strlen(name);
    return n > 0 && n <= NAME_MAX - strlen(SUFFIX) &&
           strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shipped names in the first directory that has any, sorted, for the
 * message of a name that is none of them. */
static void shipped_names(char *dirs[], size_t n, struct vg_buf *out)
{
    char **v = NULL;
    size_t nv = 0;
    for (size_t i = 0; i < n && !nv; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t len = strlen(e->d_name), k = strlen(SUFFIX);
            if (len <= k || strcmp(e->d_name + len - k, SUFFIX))
                continue;
            v = vg_xrealloc(v, (nv + 1) * sizeof *v);
            v[nv++] = vg_xstrndup(e->d_name, len - k);
        }
        if (d)
            closedir(d);
    }
    if (nv)
        qsort(v, nv, sizeof *v, by_name);
    for (size_t i = 0; i < nv; i++) {
        vg_buf_printf(out, "%s%s", i ? ", " : "", v[i]);
        free(v[i]);
    }
    free(v);
}

char *vg_spec_find(const char *arg, struct vg_err *err)
{
    if (is_path(arg))
        return vg_xstrdup(arg);
    char *dirs[VG_SHARE_NDIRS], *found = NULL;
    size_t n = vg_share_dirs("VIGIL_SPEC_DIR", "specs", VG_SPEC_DIR, dirs);
    for (size_t i = 0; i < n && !found && name_ok(arg); i++) {
        char *path = vg_xasprintf("%s/%s" SUFFIX, dirs[i], arg);
        if (access(path, R_OK) == 0)
            found = realpath(path, NULL);
        free(path);
    }
    if (!found && access(arg, F_OK) == 0)
        found = vg_xstrdup(arg);
    if (!found) {
        struct vg_buf names = {0};
        shipped_names(dirs, n, &names);
        vg_errf(err, "spec '%s': no such file, and no shipped spec of that name (%s)", arg,
                names.len ? names.data : "none is installed");
        vg_buf_free(&names);
    }
    vg_share_dirs_free(dirs, n);
    return found;
}
