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

char *vg_state_dir(bool create, const char *what, const char *hint, struct vg_err *err)
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
            vg_errf(err, "no %s in %s yet (%s)", what, path.data, hint);
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

/* One log found in the directory. */
struct found {
    char *name;
    struct timespec mtime;
};

/* Older: earlier mtime, then the earlier name (names carry the time too). */
static int older_first(const void *pa, const void *pb)
{
    const struct found *a = pa, *b = pb;
    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The logs in d that vigil named and the caller owns (regular files, not
 * followed), oldest first.  Only these are ever opened as "the latest" or
 * removed by pruning: anything else there is left alone. */
static struct found *list_logs(DIR *d, size_t *n)
{
    struct found *v = NULL;
    size_t cap = 0;
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (!is_log_name(e->d_name) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        if (*n == cap)
            v = vg_xrealloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
        v[(*n)++] = (struct found){vg_xstrdup(e->d_name), st.st_mtim};
    }
    if (*n)  /* qsort's array must not be NULL, even for no elements */
        qsort(v, *n, sizeof *v, older_first);
    return v;
}

static void free_logs(struct found *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

static DIR *open_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

char *vg_state_latest_log(struct vg_err *err)
{
    char *dir = vg_state_dir(false, "run log", "give a FILE", err);
    if (!dir)
        return NULL;
    DIR *d = open_dir(dir);
    if (!d) {
        vg_errf(err, "state directory %s: %s", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    size_t n;
    struct found *logs = list_logs(d, &n);
    closedir(d);
    char *path = n ? vg_xasprintf("%s/%s", dir, logs[n - 1].name) : NULL;
    if (!n)
        vg_errf(err, "no run log in %s yet (give a FILE)", dir);
    free_logs(logs, n);
    free(dir);
    return path;
}

int vg_state_prune(const char *dir, size_t keep)
{
    DIR *d = open_dir(dir);
    if (!d)
        return -1;
    size_t n;
    struct found *logs = list_logs(d, &n);
    int e = 0;
    for (size_t i = 0; i + keep < n; i++)
        if (unlinkat(dirfd(d), logs[i].name, 0) < 0 && errno != ENOENT)
            e = errno;
    free_logs(logs, n);
    closedir(d);
    errno = e;
    return e ? -1 : 0;
}
