/* test_canon_cache.c: the memo of symlink lookups gives the same answers as
 * the plain walk, is consulted only under the immutable prefixes, and is
 * really used there (a change on disk under a cached prefix is not seen,
 * which is correct only because those trees are read-only binds). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "tracer/canon.h"
#include "util/util.h"

static char root[] = "/tmp/vg-canon-cache-XXXXXX";

static void mk(const char *rel, bool dir)
{
    char *p = vg_xasprintf("%s/%s", root, rel);
    if (dir)
        mkdir(p, 0755);
    else
        close(open(p, O_WRONLY | O_CREAT, 0644));
    free(p);
}

static void ln(const char *target, const char *rel)
{
    char *p = vg_xasprintf("%s/%s", root, rel);
    unlink(p);
    if (symlink(target, p) < 0)
        perror("symlink");
    free(p);
}

static char *canon(struct vg_canon_cache *c, int fd, const char *path)
{
    return vg_canon_cached(c, fd, "/", path, true);
}

int main(void)
{
    if (!mkdtemp(root))
        return 1;
    mk("usr", true);
    mk("usr/lib", true);
    mk("usr/lib/real.so", false);
    mk("tmp", true);
    mk("tmp/a", false);
    mk("tmp/b", false);
    ln("real.so", "usr/lib/alias.so");
    ln("usr/lib", "lib");
    ln("a", "tmp/link");
    int fd = open(root, O_PATH | O_DIRECTORY);
    const char *prefixes[] = {"/usr", "/lib"};
    struct vg_canon_cache *c = vg_canon_cache_new(prefixes, 2);

    const char *paths[] = {"/lib/alias.so", "/usr/lib/alias.so", "/usr/lib/missing",
                           "/tmp/link", "/usr/lib/../lib/real.so"};
    for (size_t i = 0; i < VG_ARRAY_LEN(paths); i++) {
        char *plain = vg_canon(fd, "/", paths[i], true);
        char *memo1 = canon(c, fd, paths[i]);
        char *memo2 = canon(c, fd, paths[i]);
        CHECK_STR(memo1, plain);
        CHECK_STR(memo2, plain);
        free(plain);
        free(memo1);
        free(memo2);
    }
    char *r = canon(c, fd, "/lib/alias.so");
    CHECK_STR(r, "/usr/lib/real.so");
    free(r);

    /* Retarget links behind the memo's back. */
    ln("b", "tmp/link");
    ln("missing.so", "usr/lib/alias.so");
    r = canon(c, fd, "/tmp/link");
    CHECK_STR(r, "/tmp/b"); /* mutable tree: asked again */
    free(r);
    r = canon(c, fd, "/usr/lib/alias.so");
    CHECK_STR(r, "/usr/lib/real.so"); /* immutable tree: remembered */
    free(r);
    r = vg_canon(fd, "/", "/usr/lib/alias.so", true);
    CHECK_STR(r, "/usr/lib/missing.so"); /* without the memo: the disk */
    free(r);

    vg_canon_cache_free(c);
    close(fd);
    check_rmtree(root);
    return check_done();
}
