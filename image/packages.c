/* packages.c: the package manifest of a built tree: name, architecture
 * and version of every installed package, as dpkg-query reads them from
 * the tree's own database.  The database directory is opened beneath the
 * root through no symlink and handed to dpkg-query as an fd: the host's
 * own database is never what it reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/build_int.h"

#define TOOL "dpkg-query"
#define DB "var/lib/dpkg"
#define STATUS "status"
#define FIELDS 4 /* name, architecture, version, status */
#define INSTALLED "installed"

static int by_name(const void *pa, const void *pb)
{
    const struct vg_package *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->arch, b->arch);
}

/* dpkg-query's lines "NAME\tARCH\tVERSION\tSTATUS" -> the installed ones. */
static int parse(char *text, struct vg_package **v, size_t *n, struct vg_err *err)
{
    size_t cap = 0;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *f[FIELDS], *fs = NULL;
        size_t k = 0;
        for (char *w = strtok_r(l, "\t", &fs); w && k < FIELDS; w = strtok_r(NULL, "\t", &fs))
            f[k++] = w;
        if (k != FIELDS) {
            vg_errf(err, TOOL " printed a line of %zu fields, not %d", k, FIELDS);
            return -1;
        }
        if (strcmp(f[3], INSTALLED))
            continue; /* removed, its config files left: not in the tree's use */
        if (*n == cap)
            *v = vg_xrealloc(*v, (cap = cap ? 2 * cap : 256) * sizeof **v);
        (*v)[(*n)++] = (struct vg_package){vg_xstrdup(f[0]), vg_xstrdup(f[1]), vg_xstrdup(f[2])};
    }
    if (*n)
        qsort(*v, *n, sizeof **v, by_name);
    return 0;
}

static int query(int dbfd, int logfd, struct vg_package **v, size_t *n, struct vg_err *err)
{
    char *path = vg_tool_find(TOOL);
    if (!path) {
        vg_errf(err, TOOL " not found on PATH: it lists the image's packages (apt-get install dpkg)");
        return -1;
    }
    char *av[] = {TOOL, "--admindir=/proc/self/fd/3", "--show",
                  "--showformat=${Package}\t${Architecture}\t${Version}\t${db:Status-Status}\n",
                  NULL};
    char *pathvar = vg_xasprintf("PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    char *env[] = {pathvar, "LC_ALL=C.UTF-8", NULL};
    off_t from = lseek(logfd, 0, SEEK_END);
    struct vg_buf out = {0};
    int rc = vg_spawn_capture(path, av, env, logfd, dbfd, &out, err);
    if (rc > 0) {
        char reason[sizeof err->msg / 2];
        vg_log_reason(logfd, from < 0 ? 0 : from, reason, sizeof reason);
        vg_errf(err, TOOL " failed (exit %d): %s", rc, reason);
        rc = -1;
    }
    if (rc == 0 && out.data)
        rc = parse(out.data, v, n, err);
    vg_buf_free(&out);
    free(pathvar);
    free(path);
    return rc;
}

int vg_build_packages(int rootfd, int logfd, struct vg_package **v, size_t *n,
                      struct vg_err *err)
{
    *v = NULL;
    *n = 0;
    int dbfd = vg_image_openat(rootfd, DB, O_RDONLY | O_DIRECTORY, 0);
    if (dbfd < 0 && errno == ENOENT)
        return 0; /* no package database: a tree of files only */
    if (dbfd < 0) {
        vg_errf(err, DB ": %m");
        return -1;
    }
    /* an empty database (variant extract) is no error: nothing installed */
    struct stat st;
    int rc = 0;
    if (fstatat(dbfd, STATUS, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_size > 0)
        rc = query(dbfd, logfd, v, n, err);
    close(dbfd);
    if (rc < 0) {
        vg_packages_free(*v, *n);
        *v = NULL;
        *n = 0;
    }
    return rc;
}

void vg_packages_free(struct vg_package *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].arch);
        free(v[i].version);
    }
    free(v);
}
