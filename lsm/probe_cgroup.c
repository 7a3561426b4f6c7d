/* probe_cgroup.c: see probe_cgroup.h. */
#include "lsm/probe_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* /proc/self/cgroup's cgroup v2 line: "0::/path". */
#define V2_LINE_PREFIX "0::"
/* A cgroup's file handle is its 64-bit id (kernfs node id). */
#define CGROUP_HANDLE_BYTES sizeof(unsigned long long)

static int fail(char *err, size_t errlen, const char *what, const char *path)
{
    snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
    return -1;
}

/* The caller's group, as a path below the cgroup2 mount ("/" for the root). */
static int current_group(char *out, size_t outlen, char *err, size_t errlen)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return fail(err, errlen, "open", "/proc/self/cgroup");
    char line[PATH_MAX + sizeof(V2_LINE_PREFIX)];
    int found = -1;
    while (found < 0 && fgets(line, sizeof(line), f)) {
        if (strncmp(line, V2_LINE_PREFIX, strlen(V2_LINE_PREFIX)) != 0)
            continue;
        char *p = line + strlen(V2_LINE_PREFIX);
        p[strcspn(p, "\n")] = '\0';
        if (snprintf(out, outlen, "%s", p) < (int)outlen)
            found = 0;
    }
    if (fclose(f) != 0 && found == 0)
        return fail(err, errlen, "close", "/proc/self/cgroup");
    if (found < 0)
        snprintf(err, errlen, "no cgroup v2 line in /proc/self/cgroup (is cgroup2 mounted?)");
    return found;
}

/* Write this process's pid into dir/cgroup.procs: moves it into dir. */
static int move_self(const char *dir, char *err, size_t errlen)
{
    char procs[PATH_MAX];
    if (snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir) >= (int)sizeof(procs)) {
        errno = ENAMETOOLONG;
        return fail(err, errlen, "path", dir);
    }
    int fd = open(procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, "open", procs);
    char pid[sizeof("4294967295\n")];
    int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    ssize_t w = write(fd, pid, (size_t)n);
    int saved = errno;
    if (close(fd) != 0 && w == n)
        return fail(err, errlen, "close", procs);
    errno = saved;
    if (w != n)
        return fail(err, errlen, "write", procs);
    return 0;
}

static int group_id(const char *dir, unsigned long long *id, char *err, size_t errlen)
{
    union {
        struct file_handle fh;
        char bytes[sizeof(struct file_handle) + CGROUP_HANDLE_BYTES];
    } h;
    int mount_id;
    h.fh.handle_bytes = CGROUP_HANDLE_BYTES;
    if (name_to_handle_at(AT_FDCWD, dir, &h.fh, &mount_id, 0) != 0)
        return fail(err, errlen, "name_to_handle_at", dir);
    if (h.fh.handle_bytes != CGROUP_HANDLE_BYTES) {
        errno = EPROTO;
        return fail(err, errlen, "cgroup handle size of", dir);
    }
    memcpy(id, h.fh.f_handle, sizeof(*id));
    return 0;
}

int probe_cgroup_enter(struct probe_cgroup *cg, const char *root, char *err, size_t errlen)
{
    char rel[PATH_MAX];
    if (current_group(rel, sizeof(rel), err, errlen) < 0)
        return -1;
    const char *sep = strcmp(rel, "/") == 0 ? "" : rel;
    if (snprintf(cg->parent, sizeof(cg->parent), "%s%s", root, sep) >= (int)sizeof(cg->parent) ||
        snprintf(cg->dir, sizeof(cg->dir), "%s/vigil-lsm-probe-%d", cg->parent, (int)getpid()) >=
            (int)sizeof(cg->dir)) {
        errno = ENAMETOOLONG;
        return fail(err, errlen, "cgroup path under", root);
    }
    if (mkdir(cg->dir, S_IRWXU) != 0)
        return fail(err, errlen, "mkdir", cg->dir);
    if (move_self(cg->dir, err, errlen) < 0 || group_id(cg->dir, &cg->id, err, errlen) < 0) {
        /* Best effort: the first error is the one reported. */
        char ignored[1];
        if (move_self(cg->parent, ignored, sizeof(ignored)) == 0)
            (void)rmdir(cg->dir);
        return -1;
    }
    return 0;
}

int probe_cgroup_leave(const struct probe_cgroup *cg, char *err, size_t errlen)
{
    if (move_self(cg->parent, err, errlen) < 0)
        return -1;
    if (rmdir(cg->dir) != 0)
        return fail(err, errlen, "rmdir", cg->dir);
    return 0;
}
