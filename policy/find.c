/* find.c: shipped policies by name.  `-p python` means python.policy from
 * the first of these directories that has it:
 *   $VIGIL_POLICY_DIR             (the caller's own set)
 *   DIR/policies, DIR/../policies  where DIR holds the running vigil binary
 *                                 (a source checkout: ./vigil, build/vigil)
 *   VG_POLICY_DIR                 (set at build time: PREFIX/share/vigil/policies)
 * Anything with a '/' or ending in ".policy" is a path and is taken as
 * given.  All of these are chosen by the caller or come with the binary:
 * nothing the candidate can write is ever searched. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"
#include "util/sharedir.h"

#ifndef VG_POLICY_DIR
#define VG_POLICY_DIR "/usr/local/share/vigil/policies"
#endif
#define SUFFIX ".policy"

static bool is_path(const char *arg)
{
    size_t n = strlen(arg), k = strlen(SUFFIX);
    return strchr(arg, '/') || (n > k && !strcmp(arg + n - k, SUFFIX));
}



static bool valid_name(const char *name)
{
    if (!name[0] || strlen(name) > NAME_MAX - strlen(SUFFIX))
        return false;
    for (const char *c = name; *c; c++)
        if (!(*c >= 'a' && *c <= 'z') && !(*c >= '0' && *c <= '9') && *c != '-' && *c != '_')
            return false;
    return true;
}

char *vg_policy_find_shipped(const char *name)
{
    if (!valid_name(name))
        return NULL;
    char *dirs[VG_SHARE_NDIRS], *real = NULL;
    size_t n = vg_share_dirs("VIGIL_POLICY_DIR", "policies", VG_POLICY_DIR, dirs);
    for (size_t i = 0; i < n && !real; i++) {
        char *path = vg_xasprintf("%s/%s%s", dirs[i], name, SUFFIX);
        if (access(path, R_OK) == 0)
            real = realpath(path, NULL);
        free(path);
    }
    vg_share_dirs_free(dirs, n);
    return real;
}

char *vg_policy_find(const char *arg, struct vg_err *err)
{
    if (is_path(arg))
        return vg_xstrdup(arg);
    char *real = vg_policy_find_shipped(arg);
    if (real)
        return real;
    /* A file of that name here (an old habit: -p mypolicy) still works. */
    if (access(arg, F_OK) == 0)
        return vg_xstrdup(arg);
    vg_errf(err, "policy '%s': no such file, and no shipped policy of that name "
                 "('vigil check --list' shows them)", arg);
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of one directory's policies, sorted; *n of them. */
static char **dir_names(const char *dir, unsigned *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **names = NULL;
    struct dirent *e;
    size_t k = strlen(SUFFIX);
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= k || strcmp(e->d_name + len - k, SUFFIX))
            continue;
        names = vg_xrealloc(names, (*n + 1) * sizeof *names);
        names[(*n)++] = vg_xstrndup(e->d_name, len - k);
    }
    closedir(d);
    if (*n)
        qsort(names, *n, sizeof *names, cmp_str);
    return names;
}

void vg_policy_list(void (*fn)(const char *name, const char *path, void *arg), void *arg)
{
    char *dirs[VG_SHARE_NDIRS];
    size_t nd = vg_share_dirs("VIGIL_POLICY_DIR", "policies", VG_POLICY_DIR, dirs);
    char **seen = NULL;
    unsigned nseen = 0;
    for (size_t i = 0; i < nd; i++) {
        unsigned n;
        char **names = dir_names(dirs[i], &n);
        for (unsigned j = 0; j < n; j++) {
            bool dup = false;
            for (unsigned s = 0; s < nseen && !dup; s++)
                dup = !strcmp(seen[s], names[j]);
            char *path = vg_xasprintf("%s/%s%s", dirs[i], names[j], SUFFIX);
            char *real = realpath(path, NULL);
            if (!dup && real) {
                fn(names[j], real, arg);
                seen = vg_xrealloc(seen, (nseen + 1) * sizeof *seen);
                seen[nseen++] = names[j];
            } else {
                free(names[j]);
            }
            free(real);
            free(path);
        }
        free(names);
    }
    for (unsigned s = 0; s < nseen; s++)
        free(seen[s]);
    free(seen);
    vg_share_dirs_free(dirs, nd);
}
