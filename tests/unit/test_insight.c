/* test_insight.c: the pieces of insight/ and the probe mark that can be
 * checked without a run: the canonical walk says whether a path names
 * nothing (followed or not, through a dangling symlink, a missing
 * directory, a file used as one); the secret table; which records are
 * noise (the summary and learn both ask); and the patterns `vigil learn`
 * writes for a path. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "insight/generalize.h"
#include "insight/summary.h"
#include "tracer/canon.h"
#include "util/util.h"
#include "tests/unit/check.h"

static char tmpdir[] = "/tmp/test_insight.XXXXXX";

static void setup(void)
{
    char *p[4];
    if (!mkdtemp(tmpdir))
        exit(2);
    p[0] = vg_xasprintf("%s/d", tmpdir);
    p[1] = vg_xasprintf("%s/d/file", tmpdir);
    p[2] = vg_xasprintf("%s/dangling", tmpdir);
    p[3] = vg_xasprintf("%s/tod", tmpdir);
    if (mkdir(p[0], 0755) || close(open(p[1], O_CREAT | O_WRONLY, 0644)) ||
        symlink("/nothere", p[2]) || symlink("d", p[3]))
        exit(2);
    for (int i = 0; i < 4; i++)
        free(p[i]);
}

/* Does the walk say path names nothing (follow: the last component too)? */
static bool missing(int root, const char *path, bool follow)
{
    bool m = true;
    struct vg_canon_ctx cx = {.root_fd = root, .missing = &m};
    free(vg_canon_at(&cx, "/", path, follow));
    return m;
}

static void test_missing(void)
{
    int root = open(tmpdir, O_PATH | O_DIRECTORY);
    CHECK(root >= 0);
    CHECK(!missing(root, "/d/file", true) && !missing(root, "/d/file", false));
    CHECK(!missing(root, "/d", true) && !missing(root, "/", true));
    CHECK(missing(root, "/d/nofile", true) && missing(root, "/d/nofile", false));
    CHECK(missing(root, "/nodir/x", true) && missing(root, "/nodir/x", false));
    CHECK(missing(root, "/d/file/x", true));                /* ENOTDIR */
    CHECK(missing(root, "/dangling", true));                /* its target is missing */
    CHECK(!missing(root, "/dangling", false));              /* the link itself exists */
    CHECK(!missing(root, "/tod/file", true) && missing(root, "/tod/nofile", false));
    CHECK(!missing(root, "/d/../d/file", true));
    close(root);
}

static void test_secrets(void)
{
    static const char *const yes[] = {
        "/root", "/root/.bashrc", "/home/u/x", "/tmp/work/.ssh/id_rsa", "/x/.ssh",
        "/etc/shadow", "/etc/sudoers.d/a", "/w/.aws/credentials", "/w/.netrc", "/proc/3/environ",
        "/w/github_token", "/w/.kube/config", "/etc/ssh/ssh_host_ed25519_key", "/w/id_rsa.pub",
    };
    static const char *const no[] = {
        "/rootfs/x", "/homework", "/usr/lib/python3.11/tokenize.py", "/etc/shadowsocks",
        "/w/ssh/x", "/w/.sshx", "/etc/passwd", "/w/tokens.txt", "/usr/share/kube/config.txt", "rel",
    };
    for (size_t i = 0; i < VG_ARRAY_LEN(yes); i++)
        CHECK(vg_sum_is_secret(yes[i]) || (fprintf(stderr, "  not secret: %s\n", yes[i]), 0));
    for (size_t i = 0; i < VG_ARRAY_LEN(no); i++)
        CHECK(!vg_sum_is_secret(no[i]) || (fprintf(stderr, "  secret: %s\n", no[i]), 0));
    CHECK(!vg_sum_is_secret(NULL));
}

/* One record as the noise classifier sees it. */
struct noise_row {
    enum vg_class cls;
    const char *resolved, *resolved2, *family, *proto, *addr;
    int port;
    bool probe;
    enum vg_sum_noise want;
};

static void test_noise(void)
{
    static const struct noise_row rows[] = {
        {VG_CLASS_EXEC, "/usr/local/bin/as", .probe = true, .want = VG_NOISE_PROBE},
        {VG_CLASS_EXEC, "/usr/bin/curl", .want = VG_NOISE_NONE},
        {VG_CLASS_EXEC, "/tmp/a.out", .want = VG_NOISE_NONE},       /* a program is a program */
        {VG_CLASS_READ, "/tmp/work/.ssh/id_rsa", .probe = true, .want = VG_NOISE_NONE},
        {VG_CLASS_WRITE, "/tmp/ccX.s", .want = VG_NOISE_SCRATCH},
        {VG_CLASS_WRITE, "/tmp", .want = VG_NOISE_SCRATCH},
        {VG_CLASS_WRITE, "/dev/shm/sem.x", .want = VG_NOISE_SCRATCH},
        {VG_CLASS_WRITE, "/tmpx/a", .want = VG_NOISE_NONE},
        {VG_CLASS_WRITE, "/tmp/a", "/etc/a", .want = VG_NOISE_NONE}, /* moved out of it */
        {VG_CLASS_WRITE, "/etc/passwd", .want = VG_NOISE_NONE},
        {VG_CLASS_SEND, .family = "inet", .proto = "udp", .addr = "127.0.0.53", .port = 53,
         .want = VG_NOISE_RESOLVER},
        {VG_CLASS_CONNECT, .family = "inet", .proto = "tcp", .addr = "127.0.0.53", .port = 53,
         .want = VG_NOISE_RESOLVER},
        {VG_CLASS_SEND, .family = "inet", .proto = "udp", .addr = "127.0.0.53", .port = 5353,
         .want = VG_NOISE_NONE},
        {VG_CLASS_SEND, .family = "inet", .proto = "udp", .addr = "8.8.8.8", .port = 53,
         .want = VG_NOISE_NONE},
        {VG_CLASS_CONNECT, .family = "unix", .proto = "unix", .addr = "/var/run/nscd/socket",
         .port = -1, .want = VG_NOISE_NSCD},
        {VG_CLASS_CONNECT, .family = "unix", .proto = "unix", .addr = "/tmp/work/nscd/socket",
         .port = -1, .want = VG_NOISE_NONE},
    };
    static const char *const trees[] = {"/tmp", "/dev/shm", "/", ""}; /* "/" and "" ignored */
    struct vg_header h = {.cwd = "/tmp/work", .scratch = trees, .nscratch = 4};
    struct vg_sum_places pl = {0};
    vg_sum_places_set(&pl, &h);
    CHECK(pl.nscratch == 2);
    for (size_t i = 0; i < VG_ARRAY_LEN(rows); i++) {
        const struct noise_row *r = &rows[i];
        struct vg_syscall_ev e = {.cls = r->cls, .probe = r->probe};
        e.args = (struct vg_args){.resolved = r->resolved, .resolved2 = r->resolved2,
                                  .family = r->family, .proto = r->proto, .addr = r->addr,
                                  .port = r->port, .flags = -1, .mode = -1};
        enum vg_sum_noise got = vg_sum_noise_of(&pl, &e);
        CHECK(got == r->want || (fprintf(stderr, "  row %zu: noise %d, not %d\n", i, got,
                                         r->want), 0));
    }
    CHECK(vg_sum_scratch_tree(&pl, "/tmp/x") && vg_sum_scratch_tree(&pl, "/dev/shm/y"));
    CHECK(!vg_sum_scratch_tree(&pl, "/etc/x") && !vg_sum_scratch_tree(&pl, NULL));
    /* a log older than the header's scratch (or a run with a host tree
     * bound into each): nothing is scratch, /tmp writes count as before */
    struct vg_header old = {.cwd = "/tmp/work"};
    vg_sum_places_set(&pl, &old);
    CHECK(pl.nscratch == 0 && !vg_sum_scratch_tree(&pl, "/tmp/x"));
    vg_sum_places_free(&pl);
}

static bool pattern(enum vg_class cls, const char *path, bool exact, const char *want)
{
    struct vg_places pl = {.home = "/home/u", .work = "/tmp/work", .tmp = "/tmp"};
    struct vg_buf b = {0};
    vg_generalize(cls, path, &pl, exact, &b);
    vg_buf_put(&b, "", 1);
    bool ok = streq(b.data, want);
    if (!ok)
        fprintf(stderr, "  %s %s -> %s, not %s\n", vg_class_name(cls), path, b.data, want);
    vg_buf_free(&b);
    return ok;
}

static void test_generalize(void)
{
    CHECK(pattern(VG_CLASS_READ, "/tmp/work/a/b.txt", false, "$WORK/**"));
    CHECK(pattern(VG_CLASS_WRITE, "/tmp/work", false, "$WORK/**"));
    CHECK(pattern(VG_CLASS_READ, "/tmp/x", true, "$TMP/**"));
    /* a file named on the command line is itself, from its place */
    struct vg_places pl = {.work = "/tmp/work", .tmp = "/tmp", .home = "/home/u"};
    struct vg_buf f = {0};
    vg_generalize_file("/tmp/clone/cand.py", &pl, &f);
    vg_buf_put(&f, "", 1);
    CHECK(streq(f.data, "$TMP/clone/cand.py"));
    vg_buf_free(&f);
    CHECK(pattern(VG_CLASS_READ, "/home/u/.cache/x", false, "~/**"));
    CHECK(pattern(VG_CLASS_READ, "/usr/lib/python3.11/os.py", false, "/usr/lib/**"));
    CHECK(pattern(VG_CLASS_READ, "/usr/local/lib/x/y", false, "/usr/local/lib/**"));
    CHECK(pattern(VG_CLASS_READ, "/usr/bin", false, "/usr/bin"));
    CHECK(pattern(VG_CLASS_READ, "/etc/ssl/certs/ca.pem", false, "/etc/**"));
    CHECK(pattern(VG_CLASS_READ, "/proc/2/status", false, "/proc/**"));
    CHECK(pattern(VG_CLASS_READ, "/sys/devices/system/cpu/online", false, "/sys/devices/system/cpu/**"));
    CHECK(pattern(VG_CLASS_READ, "/data/in.csv", false, "/data/**"));
    CHECK(pattern(VG_CLASS_READ, "/data", false, "/data"));
    CHECK(pattern(VG_CLASS_READ, "/opt/a/b", true, "/opt/a/b"));
    CHECK(pattern(VG_CLASS_READ, "/dev/urandom", false, "/dev/urandom"));
    CHECK(pattern(VG_CLASS_EXEC, "/usr/bin/curl", false, "/usr/bin/curl"));
    CHECK(pattern(VG_CLASS_EXEC, "/tmp/work/a.out", true, "/tmp/work/a.out"));
    CHECK(pattern(VG_CLASS_WRITE, "/etc/passwd", false, "/etc/passwd"));
    CHECK(pattern(VG_CLASS_READ, "/data/a*b", false, "/data/**"));
    CHECK(pattern(VG_CLASS_READ, "/opt/[x]/f", false, "/opt/\\[x\\]/**"));
}

int main(void)
{
    setup();
    test_missing();
    test_secrets();
    test_noise();
    test_generalize();
    char *cmd = vg_xasprintf("rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    free(cmd);
    return check_done();
}
