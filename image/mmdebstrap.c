/* mmdebstrap.c: the tree of a build, made by Debian's mmdebstrap from the
 * spec and written as a tar to vigil's pipe, which applies it with the
 * rules of an import (layer.c): no device node, FIFO or socket, no
 * setuid or setgid bit, nothing outside the tree.
 *
 * As root, mmdebstrap's root mode, contained (spawn.c: when vigil dies it
 * dies with all it started, and the /proc, /sys and /dev it mounts in its
 * chroot vanish) and with its temporary chroot in the build's own
 * directory of the store's tmp/ (what a killed build leaves is swept).  As
 * another user, its unshare mode, which needs newuidmap and ranges in
 * /etc/subuid and /etc/subgid; without them the build says so and stops. */
#include <archive.h>
#include <errno.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/build_int.h"

#define TOOL "mmdebstrap"
#define INSTALL_HINT "apt-get install mmdebstrap, or sh scripts/install-deps.sh test"
#define WHAT "the tree mmdebstrap wrote"
#define COMPONENTS "main"
#define MAX_ARGS 16
#define MAX_ENV 16
#define SUBID_LINE 256
/* mmdebstrap's chroot cannot see a file:// mirror of the host; apt's
 * copy:// method reads the same files from outside it. */
#define FILE_SCHEME "file://"
#define COPY_SCHEME "copy://"

/* The environment the tools get: fixed, so that the host's locale, time
 * zone or build flags cannot change what a package's scripts write; the
 * proxies pass (apt reads them, and they change no byte of the tree). */
static const char *const passed[] = {"http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY",
                                     "HTTPS_PROXY", "NO_PROXY"};

static size_t build_env(char **env, const struct vg_debs *d, bool root)
{
    size_t n = 0;
    const char *path = getenv("PATH"), *tmp = getenv("TMPDIR");
    env[n++] = vg_xasprintf("PATH=%s", path && path[0] ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    env[n++] = vg_xasprintf("SOURCE_DATE_EPOCH=%d", VG_BUILD_EPOCH);
    env[n++] = vg_xstrdup("LC_ALL=C.UTF-8");
    env[n++] = vg_xstrdup("TZ=UTC");
    /* root: the chroot in the build's directory; unshare: mmdebstrap's
     * unshared root cannot enter the store (0700), so the usual place */
    if (root)
        env[n++] = vg_xasprintf("TMPDIR=%s", d->workdir);
    else if (tmp && tmp[0])
        env[n++] = vg_xasprintf("TMPDIR=%s", tmp);
    for (size_t i = 0; i < VG_ARRAY_LEN(passed) && n + 1 < MAX_ENV; i++) {
        const char *v = getenv(passed[i]);
        if (v)
            env[n++] = vg_xasprintf("%s=%s", passed[i], v);
    }
    env[n] = NULL;
    return n;
}

/* The sources.list line: the spec's mirror, suite and main. */
static char *source_line(const struct vg_spec *s)
{
    const char *url = s->mirror;
    char *copy = !strncmp(url, FILE_SCHEME, strlen(FILE_SCHEME))
                     ? vg_xasprintf(COPY_SCHEME "%s", url + strlen(FILE_SCHEME))
                     : vg_xstrdup(url);
    char *line = vg_xasprintf("deb %s%s %s " COMPONENTS, s->trusted ? "[trusted=yes] " : "",
                              copy, s->suite);
    free(copy);
    return line;
}

static size_t build_argv(char **av, const struct vg_debs *d, const char *mode)
{
    const struct vg_spec *s = d->spec;
    size_t n = 0;
    av[n++] = vg_xstrdup(TOOL);
    av[n++] = vg_xasprintf("--mode=%s", mode);
    av[n++] = vg_xstrdup("--format=tar");
    av[n++] = vg_xasprintf("--variant=%s", s->variant);
    if (s->npackages) {
        struct vg_buf b = {0};
        vg_buf_puts(&b, "--include=");
        for (size_t i = 0; i < s->npackages; i++)
            vg_buf_printf(&b, "%s%s", i ? "," : "", s->packages[i]);
        av[n++] = b.data;
    }
    av[n++] = vg_xstrdup(s->suite);
    av[n++] = vg_xstrdup("-"); /* the tar on stdout */
    av[n++] = source_line(s);
    av[n] = NULL;
    return n;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

/* Whether file (/etc/subuid) gives the user a range: "NAME:" or "UID:". */
static bool has_range(const char *file, const char *user, uid_t uid)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return false;
    char line[SUBID_LINE], id[32];
    snprintf(id, sizeof id, "%u:", (unsigned)uid);
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = (user && !strncmp(line, user, strlen(user)) && line[strlen(user)] == ':') ||
                !strncmp(line, id, strlen(id));
    fclose(f);
    return found;
}

/* What unshare mode lacks for this user ("" when nothing), into out. */
static void unshare_lacks(char *out, size_t cap)
{
    out[0] = '\0';
    uid_t uid = geteuid();
    struct passwd *pw = getpwuid(uid);
    const char *user = pw ? pw->pw_name : NULL;
    char *nu = vg_tool_find("newuidmap"), *ng = vg_tool_find("newgidmap");
    if (!nu || !ng)
        snprintf(out, cap, "newuidmap and newgidmap (apt-get install uidmap)");
    else if (!has_range("/etc/subuid", user, uid) || !has_range("/etc/subgid", user, uid))
        snprintf(out, cap, "a range for %s in /etc/subuid and /etc/subgid", user ? user : "it");
    free(nu);
    free(ng);
}

/* "mmdebstrap 1.3.5", for the manifest; "mmdebstrap" when it does not say. */
static void tool_version(const char *path, char *const env[], int logfd, char *out, size_t cap)
{
    char *av[] = {TOOL, "--version", NULL};
    struct vg_buf b = {0};
    struct vg_err why;
    int rc = vg_spawn_capture(path, av, env, logfd, -1, &b, &why);
    size_t n = b.data ? strcspn(b.data, "\n") : 0;
    snprintf(out, cap, "%.*s", rc == 0 && n ? (int)n : (int)strlen(TOOL), rc == 0 && n ? b.data : TOOL);
    vg_buf_free(&b);
}

/* The child's stdout, counted: a tool that failed before its tar began
 * wrote nothing, and its own reason is the one to give. */
struct pipe_in {
    int fd;
    uint64_t nread;
    char buf[VG_IMAGE_BUF];
};

static la_ssize_t read_cb(struct archive *a, void *ctx, const void **out)
{
    (void)a;
    struct pipe_in *in = ctx;
    ssize_t got;
    while ((got = read(in->fd, in->buf, sizeof in->buf)) < 0 && errno == EINTR)
        ;
    if (got < 0)
        archive_set_error(a, errno, "read the tar: %s", strerror(errno));
    else
        in->nread += (uint64_t)got;
    *out = in->buf;
    return got;
}

/* The tar on the pipe, applied to the tree. */
static int apply_tar(struct pipe_in *in, struct vg_build *b, struct vg_err *err)
{
    struct archive *a = archive_read_new();
    archive_read_support_format_tar(a);
    int rc = 0;
    if (archive_read_open(a, in, NULL, read_cb, NULL) != ARCHIVE_OK) {
        vg_errf(err, WHAT ": %s", archive_error_string(a));
        rc = -1;
    }
    if (rc == 0)
        rc = vg_layer_apply(b, a, WHAT, err);
    archive_read_free(a);
    return rc;
}

static int run(const char *path, struct vg_debs *d, struct vg_build *b, bool root,
               struct vg_err *err)
{
    char *av[MAX_ARGS], *env[MAX_ENV];
    size_t na = build_argv(av, d, d->mode), ne = build_env(env, d, root);
    tool_version(path, env, d->logfd, d->tool, sizeof d->tool);
    off_t from = lseek(d->logfd, 0, SEEK_END);
    struct vg_child c;
    int rc = vg_spawn(path, av, env, d->logfd, -1, root ? VG_SPAWN_CONTAINED : 0, &c, err);
    if (rc == 0) {
        struct pipe_in *in = vg_xmalloc(sizeof *in);
        *in = (struct pipe_in){.fd = c.out};
        struct vg_err why;
        int applied = apply_tar(in, b, &why);
        /* our end closed first: a tool still writing a tar refused gets
         * SIGPIPE, and cleans up on it */
        int status = vg_spawn_wait(&c);
        if (applied == 0 && status == 0)
            rc = 0;
        else if (status != 0 && (applied == 0 || in->nread == 0)) {
            char reason[sizeof err->msg / 2];
            vg_log_reason(d->logfd, from < 0 ? 0 : from, reason, sizeof reason);
            vg_errf(err, TOOL " failed (exit %d): %s", status, reason);
            rc = -1;
        } else {
            *err = why;
            rc = -1;
        }
        free(in);
    }
    free_list(av, na);
    free_list(env, ne);
    return rc;
}

int vg_mmdebstrap(struct vg_debs *d, struct vg_build *b, struct vg_err *err)
{
    char *path = vg_tool_find(TOOL);
    if (!path) {
        vg_errf(err, TOOL " not found on PATH: it builds the tree (" INSTALL_HINT ")");
        return -1;
    }
    bool root = geteuid() == 0;
    snprintf(d->mode, sizeof d->mode, root ? "root" : "unshare");
    char lacks[128];
    if (!root && (unshare_lacks(lacks, sizeof lacks), lacks[0])) {
        vg_errf(err, "build needs root here: as uid %u it needs " TOOL "'s unshare mode, "
                     "and that needs %s", (unsigned)geteuid(), lacks);
        free(path);
        return -1;
    }
    int rc = run(path, d, b, root, err);
    free(path);
    return rc;
}
