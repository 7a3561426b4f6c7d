/* svclog.c: see svclog.h.  The service log is a log of the run logs'
 * family written by the one writer (event/writer.c): a header whose "log"
 * is "service", one "service" record per event, and at a clean close a
 * trailer that seals the chain.  The file is new, created O_EXCL in a
 * directory opened without following a symlink, so the daemon (root)
 * never writes through a name someone else put there. */
#include "serve/svclog.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "event/writer.h"
#include "run/selfhash.h"

#define NS_PER_S 1000000000.0
/* A name taken already (two opens in one second by one process): try
 * "-1", "-2", ... after it, this many times. */
#define NAME_TRIES 100
#define BUILD_ID_HEX 129

struct vg_svclog {
    struct vg_log *log;
    char *path;
    pthread_mutex_t lock;   /* stamps are taken in the order records are written */
    uint64_t start_wall, start_mono;
    char kernel[2 * sizeof(((struct utsname *)0)->release) + 2];
    char build_id[BUILD_ID_HEX];
};

/* service-20261204T201500Z-PID.msgpack, and -N before the extension for
 * the n-th retry: names sort by the time the daemon started. */
static void file_name(char *out, size_t cap, uint64_t wall_ns, int n)
{
    time_t t = (time_t)(wall_ns / (uint64_t)NS_PER_S);
    struct tm tm;
    char when[32] = "00000000T000000Z";
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
    if (n)
        snprintf(out, cap, "service-%s-%d-%d.msgpack", when, (int)getpid(), n);
    else
        snprintf(out, cap, "service-%s-%d.msgpack", when, (int)getpid());
}

/* dir, made 0700 if it is missing, opened as a directory (not through a
 * symlink).  An fd, or -1 with err. */
static int open_dir(const char *dir, struct vg_err *err)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        vg_errf(err, "service log: mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        int e = errno;
        struct stat st;
        bool link = lstat(dir, &st) == 0 && S_ISLNK(st.st_mode);
        vg_errf(err, "service log: %s: %s", dir, link ? "a symlink, not a directory" : strerror(e));
    }
    return dfd;
}

/* A new file in dfd, never one that exists; its name in name.  An fd,
 * or -1 with err. */
static int create_file(int dfd, const char *dir, uint64_t wall_ns, char *name, size_t cap,
                       struct vg_err *err)
{
    for (int n = 0; n < NAME_TRIES; n++) {
        file_name(name, cap, wall_ns, n);
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                        0600);
        if (fd >= 0 || errno != EEXIST) {
            if (fd < 0)
                vg_errf(err, "service log: create %s/%s: %s", dir, name, strerror(errno));
            return fd;
        }
    }
    vg_errf(err, "service log: create %s/%s: %d names of this second taken", dir, name,
            NAME_TRIES);
    return -1;
}

/* Remove the file open() created, if the name is still that file. */
static void remove_ours(int dfd, const char *name, int fd)
{
    struct stat ours, now;
    if (fstat(fd, &ours) == 0 && fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
        ours.st_dev == now.st_dev && ours.st_ino == now.st_ino)
        (void)unlinkat(dfd, name, 0);
}

static int write_header(struct vg_svclog *l, struct vg_err *err)
{
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(l->kernel, sizeof l->kernel, "%s %s", u.release, u.version);
    struct vg_record rec = {.type = VG_REC_HEADER};
    rec.u.header = (struct vg_header){
        .format = VG_FORMAT_VERSION, .vigil_version = VG_VERSION,
        .start_wall_ns = l->start_wall, .start_mono_ns = l->start_mono,
        .kernel = l->kernel[0] ? l->kernel : NULL, .log_kind = "service",
    };
    if (vg_log_write(l->log, &rec) < 0) {
        vg_errf(err, "service log: %s", vg_log_error(l->log));
        return -1;
    }
    return 0;
}

static void svclog_free(struct vg_svclog *l)
{
    pthread_mutex_destroy(&l->lock);
    free(l->path);
    free(l);
}

struct vg_svclog *vg_svclog_open(const char *dir, struct vg_err *err)
{
    int dfd = open_dir(dir, err);
    if (dfd < 0)
        return NULL;
    struct vg_svclog *l = vg_xcalloc(1, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
    l->start_wall = vg_now_wall_ns();
    l->start_mono = vg_now_mono_ns();
    char name[96];
    int fd = create_file(dfd, dir, l->start_wall, name, sizeof name, err);
    if (fd < 0) {
        close(dfd);
        svclog_free(l);
        return NULL;
    }
    size_t dlen = strlen(dir);
    l->path = vg_xasprintf("%s%s%s", dir, dlen && dir[dlen - 1] == '/' ? "" : "/", name);
    l->log = vg_log_from_fd(fd, l->path);
    if (write_header(l, err) < 0) {
        remove_ours(dfd, name, fd);   /* nothing left behind */
        vg_log_close(l->log);
        close(dfd);
        svclog_free(l);
        return NULL;
    }
    close(dfd);
    return l;
}

/* The API's seconds as the log's ns: negative or NaN is 0, too large the
 * largest. */
static uint64_t to_ns(double s)
{
    if (!(s > 0))
        return 0;
    if (s * NS_PER_S >= 0x1p64)
        return UINT64_MAX;
    return (uint64_t)llround(s * NS_PER_S);
}

static struct vg_svc_ev to_record(const struct vg_svc_event *e)
{
    return (struct vg_svc_ev){
        .kind = e->kind, .uid = e->uid < 0 ? -1 : e->uid, .user = e->user, .run = e->run,
        .slot = e->slot, .quota = e->quota, .retry_after_s = e->retry_after_s,
        .reason = e->reason, .status = e->status, .exit_code = e->exit_code,
        .cpu_ns = to_ns(e->cpu_s), .elapsed_ns = to_ns(e->wall_s), .host_uid = e->host_uid,
        .pid = e->pid,
    };
}

int vg_svclog_write(struct vg_svclog *l, const struct vg_svc_event *e, struct vg_err *err)
{
    if ((unsigned)e->kind >= VG_SVC_NKINDS) {   /* a caller's bug: nothing is written */
        vg_errf(err, "service log: event of unknown kind %d", (int)e->kind);
        return -1;
    }
    struct vg_record rec = {.type = VG_REC_SERVICE};
    rec.u.svc = to_record(e);
    pthread_mutex_lock(&l->lock);
    rec.u.svc.ts_ns = vg_now_mono_ns() - l->start_mono;
    rec.u.svc.wall_ns = vg_now_wall_ns();
    int rc = vg_log_write(l->log, &rec);
    if (rc < 0)
        vg_errf(err, "service log: %s", vg_log_error(l->log));
    pthread_mutex_unlock(&l->lock);
    return rc;
}

const char *vg_svclog_path(const struct vg_svclog *l) { return l->path; }

/* The trailer: the daemon's log ended cleanly, sealed (FORMAT.md). */
static int write_trailer(struct vg_svclog *l)
{
    uint64_t now = vg_now_mono_ns();
    struct vg_record rec = {.type = VG_REC_TRAILER};
    rec.u.trailer = (struct vg_trailer){
        .ts_ns = now - l->start_mono, .status = "ok", .elapsed_ns = now - l->start_mono,
        .events = vg_log_count(l->log),
        .seal = {.vigil_build_id = vg_self_build_id(l->build_id, sizeof l->build_id)
                                       ? l->build_id : NULL,
                 .kernel = l->kernel[0] ? l->kernel : NULL,
                 .start_wall_ns = l->start_wall, .end_wall_ns = vg_now_wall_ns()},
    };
    return vg_log_write(l->log, &rec);
}

int vg_svclog_close(struct vg_svclog *l)
{
    if (!l)
        return 0;
    pthread_mutex_lock(&l->lock);
    int rc = write_trailer(l);
    pthread_mutex_unlock(&l->lock);
    if (vg_log_close(l->log) < 0)
        rc = -1;
    svclog_free(l);
    return rc;
}
