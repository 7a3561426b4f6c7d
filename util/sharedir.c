/* sharedir.c: the search directories of util/sharedir.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/sharedir.h"

bool vg_self_exe(char *buf, size_t cap)
{
    ssize_t len = cap ? readlink("/proc/self/exe", buf, cap - 1) : -1;
    if (len <= 0 || (size_t)len >= cap - 1)
        return false;   /* unreadable, or cut at cap: not the path */
    buf[len] = '\0';
    return true;
}

size_t vg_share_dirs(const char *env, const char *sub, const char *installed,
                     char *dirs[VG_SHARE_NDIRS])
{
    size_t n = 0;
    const char *own = getenv(env);
    if (own && own[0])
        dirs[n++] = vg_xstrdup(own);
    char exe[PATH_MAX];
    char *slash = vg_self_exe(exe, sizeof exe) ? strrchr(exe, '/') : NULL;
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
