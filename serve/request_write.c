/* request_write.c: a checked request made real: its files in the run's
 * working directory, its stdin and policy beside it, and its `vigil run`
 * command line (request.h).  Everything is made under the run's new
 * directory, which the daemon has just created and owns: nothing outside
 * it is opened, and nothing there is followed (O_NOFOLLOW, O_EXCL). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/request.h"

#define WORK_MODE 0755
#define FILE_MODE 0644
#define EXEC_MODE 0755
#define PRIVATE_MODE 0600

/* Opens (making) each directory of rel under dirfd; the file's parent fd. */
static int parent_of(int dirfd, const char *rel, uid_t owner, const char **base,
                     struct vg_err *err)
{
    int fd = dup(dirfd);
    const char *c = rel;
    for (const char *e; fd >= 0 && (e = strchr(c, '/'));) {
        char *name = vg_xstrndup(c, (size_t)(e - c));
        bool made = mkdirat(fd, name, WORK_MODE) == 0;
        if ((made && fchownat(fd, name, owner, owner, AT_SYMLINK_NOFOLLOW) < 0) ||
            (!made && errno != EEXIST)) {
            vg_errf(err, "files: mkdir for %s: %s", rel, strerror(errno));
            free(name);
            close(fd);
            return -1;
        }
        int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        free(name);
        close(fd);
        fd = sub;
        c = e + 1;
    }
    if (fd < 0)
        vg_errf(err, "files: %s: %s", rel, strerror(errno));
    *base = c;
    return fd;
}

static int write_at(int dirfd, const char *rel, const uint8_t *p, size_t n, mode_t mode,
                    uid_t owner, struct vg_err *err)
{
    const char *base;
    int dfd = parent_of(dirfd, rel, owner, &base, err);
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    int rc = fd < 0 || vg_write_all(fd, p, n) < 0 ||
                     (owner && fchown(fd, owner, owner) < 0)
                 ? -1
                 : 0;
    if (rc < 0)
        vg_errf(err, "%s: %s", rel, strerror(errno));
    if (fd >= 0 && close(fd) < 0 && rc == 0)
        rc = (vg_errf(err, "%s: %s", rel, strerror(errno)), -1);
    close(dfd);
    return rc;
}

int vg_sreq_write(const struct vg_sreq *q, const char *dir, uid_t owner, struct vg_err *err)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return vg_errf(err, "%s: %s", dir, strerror(errno)), -1;
    int rc = 0;
    /* the work dir is the candidate's own: its host uid owns it */
    if (mkdirat(dfd, VG_SREQ_WORK, WORK_MODE) < 0 ||
        fchownat(dfd, VG_SREQ_WORK, owner, owner, AT_SYMLINK_NOFOLLOW) < 0)
        rc = (vg_errf(err, "%s/%s: %s", dir, VG_SREQ_WORK, strerror(errno)), -1);
    int wfd = rc == 0 ? openat(dfd, VG_SREQ_WORK, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                      : -1;
    if (rc == 0 && wfd < 0)
        rc = (vg_errf(err, "%s/%s: %s", dir, VG_SREQ_WORK, strerror(errno)), -1);
    for (unsigned i = 0; rc == 0 && i < q->nfiles; i++)
        rc = write_at(wfd, q->files[i].path, q->files[i].data, q->files[i].len,
                      q->files[i].executable ? EXEC_MODE : FILE_MODE, owner, err);
    if (rc == 0 && q->stdin_data)
        rc = write_at(dfd, VG_SREQ_STDIN, q->stdin_data, q->stdin_len, PRIVATE_MODE, 0, err);
    if (rc == 0 && q->policy_text)
        rc = write_at(dfd, VG_SREQ_POLICY, (const uint8_t *)q->policy_text,
                      strlen(q->policy_text), PRIVATE_MODE, 0, err);
    if (wfd >= 0)
        close(wfd);
    close(dfd);
    return rc;
}

uint64_t vg_sreq_want_wall_ms(const struct vg_sreq *q)
{
    return q->limit[VG_LIM_TIME] ? q->limit_v[VG_LIM_TIME] : vg_limit_row(VG_LIM_TIME)->def;
}

/* The whole-run CPU limit's row, where this vigil has one. */
static int cputotal(void)
{
    return vg_limit_from_name("cputotal");
}

uint64_t vg_sreq_want_cpu_ms(const struct vg_sreq *q)
{
    int l = cputotal();
    if (l >= 0 && q->limit[l])
        return q->limit_v[l];
    return vg_sreq_want_wall_ms(q); /* one CPU for the whole time */
}

static void add(char ***v, unsigned *n, char *s)
{
    *v = vg_xrealloc(*v, (*n + 2) * sizeof **v);
    (*v)[(*n)++] = s;
    (*v)[*n] = NULL;
}

char **vg_sreq_command(const struct vg_sreq *q, const char *vigil, const char *dir,
                       const char *id, uint64_t cpu_ms, uint64_t wall_ms)
{
    char **v = NULL;
    unsigned n = 0;
    add(&v, &n, vg_xstrdup(vigil));
    add(&v, &n, vg_xstrdup("run"));
    add(&v, &n, vg_xstrdup("-q"));
    add(&v, &n, vg_xstrdup("-o"));
    add(&v, &n, vg_xasprintf("%s/%s", dir, VG_SREQ_LOG));
    add(&v, &n, vg_xstrdup("--result"));
    add(&v, &n, vg_xasprintf("%s/%s", dir, VG_SREQ_RESULT));
    add(&v, &n, vg_xstrdup("--task-id"));
    add(&v, &n, vg_xstrdup(q->task_id ? q->task_id : id));
    add(&v, &n, vg_xstrdup("--workdir"));
    add(&v, &n, vg_xasprintf("%s/%s", dir, VG_SREQ_WORK));
    if (q->policy || q->policy_text) {
        add(&v, &n, vg_xstrdup("-p"));
        add(&v, &n, q->policy ? vg_xstrdup(q->policy) : vg_xasprintf("%s/%s", dir, VG_SREQ_POLICY));
    }
    if (q->image) {
        add(&v, &n, vg_xstrdup("--image"));
        add(&v, &n, vg_xstrdup(q->image));
    }
    if (q->dry_run)
        add(&v, &n, vg_xstrdup("--dry-run"));
    for (int l = 0; l < VG_LIM_COUNT; l++) {
        if (!q->limit[l] || l == VG_LIM_TIME || l == cputotal())
            continue; /* the grants below hold those */
        add(&v, &n, vg_xasprintf("--%s", vg_limit_row((enum vg_limit)l)->flag));
        add(&v, &n, vg_xstrdup(q->limit[l]));
    }
    add(&v, &n, vg_xstrdup("--timeout"));
    add(&v, &n, vg_xasprintf("%" PRIu64 "ms", wall_ms));
    if (cputotal() >= 0) {
        add(&v, &n, vg_xasprintf("--%s", vg_limit_row((enum vg_limit)cputotal())->flag));
        add(&v, &n, vg_xasprintf("%" PRIu64 "ms", cpu_ms));
    }
    for (unsigned i = 0; i < q->nenv; i++) {
        add(&v, &n, vg_xstrdup("--env"));
        add(&v, &n, vg_xstrdup(q->env[i]));
    }
    add(&v, &n, vg_xstrdup("--"));
    for (unsigned i = 0; i < q->argc; i++)
        add(&v, &n, vg_xstrdup(q->argv[i]));
    return v;
}
