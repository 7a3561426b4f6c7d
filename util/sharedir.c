/* sharedir.c: the search directories of util/sharedir.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/sharedir.h"

size_t vg_share_dirs(const char *env, const char *sub, const char *installed,
                     char *dirs[VG_SHARE_NDIRS])
{
    size_t n = 0;
    const char *own = getenv(env);
    if (own && own[0])
        dirs[n++] = vg_xstrdup(own);
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = len > 0 ? (exe[len] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        dirs[n++] = vg_xasprintf("%s/%s", exe, sub);
        dirs[n++] = vg_xasprintf("%s/../%s", exe, sub);
    }
    dirs[n++] = vg_xstrdup(installed);
    return n;
}

void vg_share_dirs_free(char *dirs[], size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
}
