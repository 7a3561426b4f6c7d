/* test_outfile.c: util/outfile.c, the rule for files vigil writes for its
 * caller, including the branches a race test cannot be sure to reach: a
 * file appearing at an absent target, the target swapped for another file
 * between the check and the rename (it must be swapped back intact). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "tests/unit/check.h"
#include "util/outfile.h"

static const struct vg_outfile_kind kind = {
    .what = "-o", .signature = "VIGIL-SIG", .siglen = 9, .within = 32,
};

static char dir[] = "/tmp/vigil-test-outfile-XXXXXX";

static char *at(const char *name)
{
    return vg_xasprintf("%s/%s", dir, name);
}

static void put(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0 && vg_write_all(fd, text, strlen(text)) == 0);
    if (fd >= 0)
        close(fd);
}

static bool holds(const char *path, const char *text)
{
    size_t n;
    struct vg_err err;
    char *s = vg_read_file(path, 1 << 16, &n, &err);
    bool ok = s && n == strlen(text) && !memcmp(s, text, n);
    free(s);
    return ok;
}

/* vigil's temporary files left in dir */
static int strays(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".vigil-") != NULL;
    if (d)
        closedir(d);
    return n;
}

static int write_and_commit(struct vg_outfile *f, const char *text, struct vg_err *err)
{
    if (vg_write_all(f->fd, text, strlen(text)) < 0)
        return -1;
    return vg_outfile_commit(f, err);
}

static void test_new_file(void)
{
    char *p = at("new");
    struct vg_outfile f;
    struct vg_err err;
    CHECK(vg_outfile_reserve(&f, p, &kind, &err) == 0);
    CHECK(access(p, F_OK) < 0); /* nothing at the name until the commit */
    CHECK(write_and_commit(&f, "VIGIL-SIG one", &err) == 0);
    vg_outfile_discard(&f);
    CHECK(holds(p, "VIGIL-SIG one") && strays() == 0);
    /* vigil's own file may be replaced, by a new inode */
    struct stat before, after;
    CHECK(stat(p, &before) == 0);
    CHECK(vg_outfile_reserve(&f, p, &kind, &err) == 0);
    CHECK(write_and_commit(&f, "VIGIL-SIG two", &err) == 0);
    vg_outfile_discard(&f);
    CHECK(stat(p, &after) == 0 && after.st_ino != before.st_ino);
    CHECK(holds(p, "VIGIL-SIG two") && strays() == 0);
    free(p);
}

static void test_file_appears_meanwhile(void)
{
    char *p = at("appears");
    struct vg_outfile f;
    struct vg_err err;
    CHECK(vg_outfile_reserve(&f, p, &kind, &err) == 0);
    put(p, "theirs");
    CHECK(write_and_commit(&f, "VIGIL-SIG", &err) < 0 && strstr(err.msg, "appeared"));
    vg_outfile_discard(&f);
    CHECK(holds(p, "theirs") && strays() == 0);
    free(p);
}

static void test_target_swapped_meanwhile(void)
{
    char *p = at("swapped"), *host = at("host"), *side = at("side");
    struct vg_outfile f;
    struct vg_err err;
    put(p, "");
    put(host, "host bytes");
    CHECK(vg_outfile_reserve(&f, p, &kind, &err) == 0);
    CHECK(symlink(host, side) == 0 && rename(side, p) == 0);
    CHECK(write_and_commit(&f, "VIGIL-SIG", &err) < 0);
    vg_outfile_discard(&f);
    char link[4096];
    ssize_t n = readlink(p, link, sizeof link - 1);
    CHECK(n > 0 && (link[n] = 0, !strcmp(link, host)));
    CHECK(holds(host, "host bytes") && strays() == 0);
    free(p);
    free(host);
    free(side);
}

/* Case i of test_refused at p: each a target vigil must not replace. */
static int make_target(size_t i, const char *p, const char *host)
{
    switch (i) {
    case 0: return mkfifo(p, 0644);
    case 1: return mknod(p, S_IFCHR | 0644, makedev(1, 7)); /* a copy of /dev/full */
    case 2: return symlink(host, p);
    case 3: return mkdir(p, 0755);
    case 4: put(p, "notes"); return 0;
    default: {
        put(p, "");
        char *q = vg_xasprintf("%s.second-name", p);
        int r = link(p, q);
        free(q);
        return r;
    }
    }
}

static void test_refused(void)
{
    static const char *const why[] = {
        "a fifo", "a character device", "a symbolic link", "a directory",
        "not a file vigil wrote", "other hard links",
    };
    char *host = at("host2");
    put(host, "host");
    for (size_t i = 0; i < VG_ARRAY_LEN(why); i++) {
        char *p = vg_xasprintf("%s/refused-%zu", dir, i);
        CHECK(make_target(i, p, host) == 0);
        struct stat before, after;
        CHECK(lstat(p, &before) == 0);
        struct vg_outfile f;
        struct vg_err err;
        CHECK(vg_outfile_reserve(&f, p, &kind, &err) < 0 && strstr(err.msg, why[i]));
        vg_outfile_discard(&f);
        CHECK(lstat(p, &after) == 0 && after.st_ino == before.st_ino);
        CHECK(strays() == 0);
        free(p);
    }
    CHECK(holds(host, "host"));
    free(host);
    struct vg_outfile f;
    struct vg_err err;
    CHECK(vg_outfile_reserve(&f, dir, &kind, &err) < 0); /* the directory itself */
    vg_outfile_discard(&f);
    char *slash = vg_xasprintf("%s/", dir);
    CHECK(vg_outfile_reserve(&f, slash, &kind, &err) < 0 && strstr(err.msg, "directory"));
    vg_outfile_discard(&f);
    free(slash);
    struct vg_outfile never = {.fd = -1};
    vg_outfile_discard(&never); /* safe on one never reserved */
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_new_file();
    test_file_appears_meanwhile();
    test_target_swapped_meanwhile();
    test_refused();
    check_rmtree(dir);
    return check_done();
}
