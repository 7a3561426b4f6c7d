/* statedir.c: see statedir.h. */
#include "util/statedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_PREFIX "vigil-"
#define LOG_SUFFIX ".msgpack"

/* The components below the base, per the XDG base directory spec. */
static const char *const xdg_below[] = {"vigil", NULL};
static const char *const home_below[] = {".local", "state", "vigil", NULL};

static const char *state_base(const char *const **below)
{
    const char *x = getenv("XDG_STATE_HOME");
    if (x && x[0] == '/') { /* the spec: a relative value is ignored */
        *below = xdg_below;
        return x;
    }
    *below = home_below;
    const char *h = getenv("HOME");
    if (h && h[0] == '/')
        return h;
    struct passwd *pw = getpwuid(geteuid());
    return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* Step from dirfd into name: create it (0700) if asked and missing, and
 * open it without following a symlink.  The new fd, or -1 with errno. */
static int step(int dirfd, const char *name, bool create)
{
    if (create && mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
        return -1;
    return openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static bool owned(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_uid == geteuid();
}

char *vg_state_dir(bool create, struct vg_err *err)
{
    const char *const *below;
    const char *base = state_base(&below);
    if (!base) {
        vg_errf(err, "no state directory: neither XDG_STATE_HOME nor HOME is an absolute path; "
                     "name the log with -o");
        return NULL;
    }
    int fd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || !owned(fd)) {
        vg_errf(err, "state directory base %s: %s; name the log with -o", base,
                fd < 0 ? strerror(errno) : "not owned by you");
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    struct vg_buf path = {0};
    vg_buf_puts(&path, base);
    for (const char *const *c = below; *c; c++) {
        int next = step(fd, *c, create);
        int e = errno;
        close(fd);
        vg_buf_printf(&path, "/%s", *c);
        if (next < 0 && e == ENOENT && !create) {
            for (const char *const *rest = c + 1; *rest; rest++)
                vg_buf_printf(&path, "/%s", *rest);
            vg_errf(err, "no run log in %s yet (give a FILE)", path.data);
            vg_buf_free(&path);
            return NULL;
        }
        if (next < 0) {
            vg_errf(err, "state directory %s: %s", path.data,
                    e == ELOOP || e == ENOTDIR ? "not a directory (vigil follows no symlink there)"
                                               : strerror(e));
            vg_buf_free(&path);
            return NULL;
        }
        fd = next;
    }
    bool mine = owned(fd);
    close(fd);
    if (!mine) {
        vg_errf(err, "state directory %s: not owned by you", path.data);
        vg_buf_free(&path);
        return NULL;
    }
    return path.data;
}

char *vg_state_log_name(const char *dir)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    return vg_xasprintf("%s/" LOG_PREFIX "%s-%d" LOG_SUFFIX, dir, stamp, (int)getpid());
}

static bool is_log_name(const char *name)
{
    size_t n = strlen(name), p = strlen(LOG_PREFIX), s = strlen(LOG_SUFFIX);
    return n > p + s && !strncmp(name, LOG_PREFIX, p) && !strcmp(name + n - s, LOG_SUFFIX);
}

/* Newer: later mtime, then the later name (names carry the time too). */
static bool newer(const struct stat *st, const char *name, const struct timespec *best,
                  const char *best_name)
{
    if (!best_name)
        return true;
    if (st->st_mtim.tv_sec != best->tv_sec)
        return st->st_mtim.tv_sec > best->tv_sec;
    if (st->st_mtim.tv_nsec != best->tv_nsec)
        return st->st_mtim.tv_nsec > best->tv_nsec;
    return strcmp(name, best_name) > 0;
}

char *vg_state_latest_log(struct vg_err *err)
{
    char *dir = vg_state_dir(false, err);
    if (!dir)
        return NULL;
    DIR *d = opendir(dir);
    if (!d) {
        vg_errf(err, "state directory %s: %s", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    char *best = NULL;
    struct timespec best_t = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (!is_log_name(e->d_name) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
            !newer(&st, e->d_name, &best_t, best))
            continue;
        free(best);
        best = vg_xstrdup(e->d_name);
        best_t = st.st_mtim;
    }
    closedir(d);
    char *path = best ? vg_xasprintf("%s/%s", dir, best) : NULL;
    if (!best)
        vg_errf(err, "no run log in %s yet (give a FILE)", dir);
    free(best);
    free(dir);
    return path;
}
