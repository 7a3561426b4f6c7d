/* test_scratch.c: launcher/scratch.c's removal of a candidate's tree:
 * deeper than PATH_MAX, locked (chmod 0), with links that must not be
 * followed, and a file outside that must survive. */
#include <fcntl.h>
#include <sys/stat.h>

#include "launcher/scratch.h"
#include "tests/unit/check.h"

#define LONG_NAME_LEN 250
#define LONG_LEVELS 20

static void touch_at(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0 && write(fd, "x", 1) == 1);
    if (fd >= 0)
        close(fd);
}

/* base/t/ with LONG_LEVELS names of LONG_NAME_LEN bytes, each holding a
 * file, made by fd (a path would pass PATH_MAX). */
static void deep_tree(const char *t)
{
    char name[LONG_NAME_LEN + 1];
    memset(name, 'n', LONG_NAME_LEN);
    name[LONG_NAME_LEN] = '\0';
    CHECK(mkdir(t, 0755) == 0);
    int fd = open(t, O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < LONG_LEVELS && fd >= 0; i++) {
        CHECK(mkdirat(fd, name, 0755) == 0);
        touch_at(fd, "f");
        int sub = openat(fd, name, O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = sub;
    }
    CHECK(fd >= 0);
    touch_at(fd, "bottom");
    CHECK(fchmod(fd, 0) == 0); /* locked, as a candidate can */
    close(fd);
}

int main(void)
{
    char base[] = "/tmp/vigil-test-scratch-XXXXXX";
    CHECK(mkdtemp(base) != NULL);
    char *outside = vg_xasprintf("%s/outside", base), *t = vg_xasprintf("%s/t", base);
    int bfd = open(base, O_RDONLY | O_DIRECTORY);
    touch_at(bfd, "outside");
    deep_tree(t);
    char *link = vg_xasprintf("%s/link", t), *dlink = vg_xasprintf("%s/dlink", t);
    CHECK(symlink(outside, link) == 0);
    CHECK(symlink(base, dlink) == 0);
    char *locked = vg_xasprintf("%s/locked", t), *inner = vg_xasprintf("%s/locked/in", t);
    CHECK(mkdir(locked, 0755) == 0 && mkdir(inner, 0755) == 0);
    CHECK(chmod(locked, 0) == 0);
    CHECK(vg_scratch_remove(t) == 0);
    CHECK(access(t, F_OK) < 0);
    CHECK(access(outside, F_OK) == 0);            /* the links were not followed */
    CHECK(vg_scratch_remove(t) == 0);             /* gone already: nothing to do */
    CHECK(unlinkat(bfd, "outside", 0) == 0 && rmdir(base) == 0);
    close(bfd);
    free(outside), free(t), free(link), free(dlink), free(locked), free(inner);
    return check_done();
}
