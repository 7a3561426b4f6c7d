/* test_svclog.c: the service log of vigil serve (serve/svclog.h).
 *
 * Without arguments, the unit tests: a lifecycle written and read back
 * through vigil's reader and verified, names that never reuse a file,
 * directories that are refused, events of no kind, writers in threads.
 *
 * With arguments it is tests/test_svclog.py's writer, which checks the
 * file with Python's msgpack and with `vigil log`, `view` and `verify`:
 *   test_svclog write DIR    a whole lifecycle with hostile strings, closed
 *   test_svclog flood DIR    events until it is killed (SIGKILL mid-write)
 * Each prints the log's path on stdout first. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event/reader.h"
#include "event/verify.h"
#include "serve/svclog.h"
#include "tests/unit/check.h"

#define THREADS 4
#define PER_THREAD 200
#define BIG_REASON (256u * 1024)   /* records big enough that a kill can cut one */

static char tmpdir[] = "/tmp/test_svclog.XXXXXX";

/* Strings an attacker chooses: a terminal title, a screen clear, a line
 * break, a bidi override, bytes that are not UTF-8. */
#define HOSTILE_USER "mallory\x1b]0;pwned\x07"
#define HOSTILE_RUN "r-1\x1b[2J\nuid 0"
#define HOSTILE_REASON "bad\r\nrequest \xe2\x80\xae\xff\xfe"

/* A daemon's life: every kind once, in the order a run goes through. */
static const struct vg_svc_event lifecycle[] = {
    {.kind = VG_SVC_START, .uid = -1, .reason = "vigil 0.1.0 listening on unix:/run/vigil.sock"},
    {.kind = VG_SVC_PREPARED, .uid = -1, .slot = "p1"},
    {.kind = VG_SVC_ACCEPTED, .uid = 1000, .user = "alice", .run = "r1"},
    {.kind = VG_SVC_ASSIGNED, .uid = 1000, .user = "alice", .run = "r1", .slot = "p1",
     .host_uid = 200001},
    {.kind = VG_SVC_STARTED, .uid = 1000, .user = "alice", .run = "r1", .pid = 4242},
    {.kind = VG_SVC_FINISHED, .uid = 1000, .user = "alice", .run = "r1", .status = "ok",
     .exit_code = 0, .cpu_s = 0.25, .wall_s = 1.5},
    {.kind = VG_SVC_DESTROYED, .uid = -1, .run = "r1", .slot = "p1"},
    {.kind = VG_SVC_REFUSED, .uid = 1001, .user = "bob", .quota = "concurrent",
     .retry_after_s = 30},
    {.kind = VG_SVC_REFUSED, .uid = 0, .user = "root", .reason = "malformed JSON at byte 12"},
    {.kind = VG_SVC_ACCEPTED, .uid = 1002, .user = HOSTILE_USER, .run = HOSTILE_RUN},
    {.kind = VG_SVC_ASSIGNED, .uid = 1002, .user = HOSTILE_USER, .run = HOSTILE_RUN,
     .host_uid = 200002},
    {.kind = VG_SVC_CANCELLED, .uid = 1002, .user = HOSTILE_USER, .run = HOSTILE_RUN,
     .reason = HOSTILE_REASON},
    {.kind = VG_SVC_FINISHED, .uid = 1002, .user = HOSTILE_USER, .run = HOSTILE_RUN,
     .status = "timeout", .exit_code = 124, .cpu_s = 2.0, .wall_s = 60.0},
    {.kind = VG_SVC_LOST, .uid = 1000, .user = "alice", .run = "r0",
     .reason = "unfinished when the daemon restarted"},
    {.kind = VG_SVC_DELETED, .uid = 1000, .user = "alice", .run = "r0"},
    {.kind = VG_SVC_STOP, .uid = -1, .reason = "SIGTERM: drained"},
};
#define NLIFE VG_ARRAY_LEN(lifecycle)

static struct vg_svclog *open_or_die(const char *dir)
{
    struct vg_err err;
    struct vg_svclog *l = vg_svclog_open(dir, &err);
    if (!l) {
        fprintf(stderr, "test_svclog: %s\n", err.msg);
        exit(2);
    }
    return l;
}

static int write_all(struct vg_svclog *l, const struct vg_svc_event *e, size_t n)
{
    struct vg_err err;
    for (size_t i = 0; i < n; i++)
        if (vg_svclog_write(l, &e[i], &err) < 0) {
            fprintf(stderr, "test_svclog: %s\n", err.msg);
            return -1;
        }
    return 0;
}

/* ---- helper modes for tests/test_svclog.py ---- */
static int mode_write(const char *dir)
{
    struct vg_svclog *l = open_or_die(dir);
    printf("%s\n", vg_svclog_path(l));
    int rc = write_all(l, lifecycle, NLIFE);
    return vg_svclog_close(l) < 0 || rc < 0 ? 1 : 0;
}

/* Until killed: accepted and finished runs with a large reason, so that
 * some writes take long enough for the kill to land inside one. */
static int mode_flood(const char *dir)
{
    struct vg_svclog *l = open_or_die(dir);
    printf("%s\n", vg_svclog_path(l));
    fflush(stdout);
    char *reason = vg_xmalloc(BIG_REASON + 1);
    memset(reason, 'x', BIG_REASON);
    reason[BIG_REASON] = 0;
    char run[32];
    for (unsigned i = 0;; i++) {
        snprintf(run, sizeof run, "r%u", i);
        struct vg_svc_event e = {.kind = i % 2 ? VG_SVC_FINISHED : VG_SVC_ACCEPTED, .uid = 1000,
                                 .user = "alice", .run = run, .status = "ok",
                                 .reason = i % 3 ? NULL : reason};
        if (write_all(l, &e, 1) < 0)
            break;
        if (i == 20) {     /* the test kills once it sees this */
            fprintf(stderr, "flooding\n");
        }
    }
    free(reason);
    vg_svclog_close(l);
    return 1;
}

/* ---- unit tests ---- */

/* Every record of path, decoded; n set to their number. */
static struct vg_decoded *read_all(const char *path, size_t *n, enum vg_mp_status *st)
{
    struct vg_err err;
    struct vg_reader *r = vg_reader_open(path, &err);
    size_t cap = 16;
    struct vg_decoded *d = vg_xcalloc(cap, sizeof *d);
    *n = 0;
    if (!CHECK(r != NULL))
        return d;
    while (vg_reader_next(r, &d[*n]) == 1)
        if (++*n == cap) {
            d = vg_xrealloc(d, 2 * cap * sizeof *d);
            cap *= 2;
        }
    *st = vg_reader_status(r);
    vg_reader_close(r);
    return d;
}

static void free_all(struct vg_decoded *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        vg_decoded_free(&d[i]);
    free(d);
}

static void check_verified(const char *path, enum vg_verdict want)
{
    struct vg_verify v;
    struct vg_err err;
    CHECK(vg_verify_path(path, NULL, &v, &err) == 0);
    CHECK(v.verdict == want);
}

static void test_lifecycle(void)
{
    char *dir = vg_xasprintf("%s/new/", tmpdir);   /* missing: made 0700 */
    struct vg_svclog *l = open_or_die(dir);
    char *path = vg_xstrdup(vg_svclog_path(l));
    struct stat st;
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 07777) == 0700);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
    CHECK(strstr(path, "/service-") && strstr(path, ".msgpack"));
    CHECK(write_all(l, lifecycle, NLIFE) == 0);
    check_verified(path, VG_VERIFY_TRUNCATED);   /* no trailer yet: a daemon still running */
    CHECK(vg_svclog_close(l) == 0);
    check_verified(path, VG_VERIFY_INTACT);

    size_t n;
    enum vg_mp_status rs = VG_MP_CORRUPT;
    struct vg_decoded *d = read_all(path, &n, &rs);
    CHECK(rs == VG_MP_OK && n == NLIFE + 2);
    CHECK(n > 0 && d[0].rec.type == VG_REC_HEADER && streq(d[0].rec.u.header.log_kind, "service"));
    CHECK(n > 0 && d[n - 1].rec.type == VG_REC_TRAILER && d[n - 1].rec.u.trailer.events == n - 1);
    uint64_t last_ts = 0, last_wall = 0;
    for (size_t i = 1; i + 1 < n && i <= NLIFE; i++) {
        const struct vg_svc_ev *e = &d[i].rec.u.svc;
        const struct vg_svc_event *w = &lifecycle[i - 1];
        CHECK(d[i].rec.type == VG_REC_SERVICE && e->kind == w->kind && e->seq == i);
        CHECK(e->uid == w->uid && streq(e->user, w->user) && streq(e->run, w->run));
        CHECK(streq(e->slot, w->slot) && streq(e->quota, w->quota) && streq(e->reason, w->reason));
        CHECK(e->host_uid == w->host_uid && e->pid == w->pid && e->exit_code == w->exit_code);
        CHECK(e->retry_after_s == w->retry_after_s && streq(e->status, w->status));
        CHECK(e->cpu_ns == (uint64_t)llround(w->cpu_s * 1e9) &&
              e->elapsed_ns == (uint64_t)llround(w->wall_s * 1e9));
        CHECK(e->ts_ns >= last_ts && e->wall_ns >= last_wall && e->wall_ns > 0);
        last_ts = e->ts_ns;
        last_wall = e->wall_ns;
    }
    free_all(d, n);
    free(path);
    free(dir);
}

/* Two logs of one process in one second get two files. */
static void test_names_unique(void)
{
    char *dir = vg_xasprintf("%s/twice", tmpdir);
    struct vg_svclog *a = open_or_die(dir), *b = open_or_die(dir);
    CHECK(strcmp(vg_svclog_path(a), vg_svclog_path(b)) != 0);
    CHECK(vg_svclog_close(a) == 0 && vg_svclog_close(b) == 0);
    CHECK(vg_svclog_close(NULL) == 0);
    free(dir);
}

/* A symlink or a file where the directory should be: refused, and
 * nothing is created behind it. */
static void test_bad_dirs(void)
{
    struct vg_err err;
    char *target = vg_xasprintf("%s/target", tmpdir), *link = vg_xasprintf("%s/link", tmpdir);
    char *file = vg_xasprintf("%s/file", tmpdir);
    CHECK(mkdir(target, 0700) == 0 && symlink(target, link) == 0);
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0 && close(fd) == 0);
    CHECK(vg_svclog_open(link, &err) == NULL && strstr(err.msg, "symlink"));
    CHECK(rmdir(target) == 0);   /* still empty: nothing was written through the link */
    CHECK(vg_svclog_open(file, &err) == NULL && strstr(err.msg, file));
    char *under = vg_xasprintf("%s/file/sub", tmpdir);
    CHECK(vg_svclog_open(under, &err) == NULL && strstr(err.msg, "mkdir"));
    free(under);
    free(target);
    free(link);
    free(file);
}

/* An event of no kind is a caller's bug: refused, nothing written. */
static void test_bad_kind(void)
{
    char *dir = vg_xasprintf("%s/kind", tmpdir);
    struct vg_svclog *l = open_or_die(dir);
    struct vg_err err;
    struct vg_svc_event e = {.kind = VG_SVC_NKINDS, .uid = -1};
    CHECK(vg_svclog_write(l, &e, &err) < 0 && strstr(err.msg, "unknown kind"));
    e.kind = (enum vg_svc_kind)-1;
    CHECK(vg_svclog_write(l, &e, &err) < 0);
    /* odd times: NaN and negatives are 0, too large the largest */
    e = (struct vg_svc_event){.kind = VG_SVC_FINISHED, .uid = 5, .cpu_s = NAN, .wall_s = 1e30};
    CHECK(vg_svclog_write(l, &e, &err) == 0);
    e.cpu_s = -1;
    e.wall_s = -INFINITY;
    CHECK(vg_svclog_write(l, &e, &err) == 0);
    char *path = vg_xstrdup(vg_svclog_path(l));
    CHECK(vg_svclog_close(l) == 0);
    size_t n;
    enum vg_mp_status rs;
    struct vg_decoded *d = read_all(path, &n, &rs);
    CHECK(n == 4 && d[1].rec.u.svc.cpu_ns == 0 && d[1].rec.u.svc.elapsed_ns == UINT64_MAX);
    CHECK(n == 4 && d[2].rec.u.svc.cpu_ns == 0 && d[2].rec.u.svc.elapsed_ns == 0);
    free_all(d, n);
    check_verified(path, VG_VERIFY_INTACT);
    free(path);
    free(dir);
}

static void *writer_thread(void *arg)
{
    struct vg_svclog *l = arg;
    struct vg_err err;
    struct vg_svc_event e = {.kind = VG_SVC_ACCEPTED, .uid = 7, .user = "t", .run = "r"};
    for (int i = 0; i < PER_THREAD; i++)
        if (vg_svclog_write(l, &e, &err) < 0)
            return (void *)1;
    return NULL;
}

/* Threads write at once: every record whole, seq without gaps, the
 * times never going back, the chain intact. */
static void test_threads(void)
{
    char *dir = vg_xasprintf("%s/threads", tmpdir);
    struct vg_svclog *l = open_or_die(dir);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, writer_thread, l) == 0);
    for (int i = 0; i < THREADS; i++) {
        void *rv = (void *)1;
        CHECK(pthread_join(t[i], &rv) == 0 && rv == NULL);
    }
    char *path = vg_xstrdup(vg_svclog_path(l));
    CHECK(vg_svclog_close(l) == 0);
    size_t n;
    enum vg_mp_status rs;
    struct vg_decoded *d = read_all(path, &n, &rs);
    CHECK(n == THREADS * PER_THREAD + 2);
    bool ordered = true;
    for (size_t i = 2; i + 1 < n; i++)
        ordered &= d[i].rec.u.svc.seq == i && d[i].rec.u.svc.ts_ns >= d[i - 1].rec.u.svc.ts_ns &&
                   d[i].rec.u.svc.wall_ns >= d[i - 1].rec.u.svc.wall_ns;
    CHECK(ordered);
    free_all(d, n);
    check_verified(path, VG_VERIFY_INTACT);
    free(path);
    free(dir);
}

/* A write that fails (the file size limit here, a full disk in life):
 * the error names the file, every later write fails too (no gap in the
 * middle of the log), and close says so. */
static void test_write_fails(void)
{
    char *dir = vg_xasprintf("%s/full", tmpdir);
    struct vg_svclog *l = open_or_die(dir);
    struct rlimit old, small = {.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);   /* EFBIG instead of the signal */
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    static char reason[8192];
    memset(reason, 'x', sizeof reason - 1);
    struct vg_svc_event e = {.kind = VG_SVC_STOP, .uid = -1, .reason = reason};
    struct vg_err err = {{0}};
    CHECK(vg_svclog_write(l, &e, &err) < 0 && strstr(err.msg, vg_svclog_path(l)));
    e.reason = "short";
    CHECK(vg_svclog_write(l, &e, &err) < 0);   /* dead: nothing after a gap */
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, SIG_DFL);
    char *path = vg_xstrdup(vg_svclog_path(l));
    CHECK(vg_svclog_close(l) < 0);
    check_verified(path, VG_VERIFY_TRUNCATED);   /* the header alone, no trailer */
    free(path);
    free(dir);
}

/* What `vigil log` prints of hostile strings: no byte that a terminal
 * would act on, and the line stays one line. */
static void test_text_escaped(void)
{
    struct vg_record r = {.type = VG_REC_SERVICE};
    r.u.svc = (struct vg_svc_ev){.kind = VG_SVC_CANCELLED, .uid = 1002, .user = HOSTILE_USER,
                                 .run = HOSTILE_RUN, .reason = HOSTILE_REASON,
                                 .wall_ns = 1796415300123000000ull};
    struct vg_buf b = {0};
    vg_record_text(&r, &b, false);
    bool clean = true;
    for (size_t i = 0; i < b.len; i++)
        clean &= b.data[i] >= 0x20 && b.data[i] < 0x7f;
    CHECK(clean);
    CHECK(strstr(b.data, "2026-12-04T20:15:00.123Z cancelled") != NULL);
    CHECK(strstr(b.data, "run \"r-1\\x1b[2J\\nuid 0\"") != NULL);
    vg_buf_free(&b);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "write"))
        return mode_write(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "flood"))
        return mode_flood(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_svclog [write|flood DIR]\n");
        return 2;
    }
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_lifecycle();
    test_names_unique();
    test_bad_dirs();
    test_bad_kind();
    test_threads();
    test_text_escaped();
    test_write_fails();
    check_rmtree(tmpdir);
    return check_done();
}
