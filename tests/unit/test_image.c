/* test_image.c: image/entry.c and image/digest.c as tables: which entry
 * names are refused and what the others become, which --names pass, and
 * that the digest changes with every byte, mode, name or link target of
 * a tree and with nothing else. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"
#include "tests/unit/check.h"

static const struct {
    const char *in, *out; /* out NULL: refused */
} paths[] = {
    {"etc/passwd", "etc/passwd"}, {"./etc/passwd", "etc/passwd"}, {"etc//x/", "etc/x"},
    {"./", ""}, {".", ""}, {"a/./b", "a/b"}, {"../escape", NULL}, {"a/../../b", NULL},
    {"a/../b", NULL}, {"/etc/passwd", NULL}, {"..", NULL}, {".wh.x", ".wh.x"},
};

static void test_entry_paths(void)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(paths); i++) {
        char out[VG_IMAGE_PATH_MAX];
        struct vg_err err;
        int rc = vg_image_entry_path(paths[i].in, out, sizeof out, &err);
        if (!CHECK(rc == (paths[i].out ? 0 : -1)))
            fprintf(stderr, "  %s\n", paths[i].in);
        if (paths[i].out && rc == 0)
            CHECK_STR(out, paths[i].out);
    }
    char small[4];
    struct vg_err err;
    CHECK(vg_image_entry_path("abcdef", small, sizeof small, &err) < 0);
}

static const struct {
    const char *name;
    bool ok;
} names[] = {
    {"py312", true}, {"python:3.12", true}, {"a@sha256+x_y.z-1", true}, {"", false},
    {".hidden", false}, {"-x", false}, {"a/b", false}, {"a b", false}, {"..", false},
};

static void test_names(void)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(names); i++) {
        struct vg_err err;
        if (!CHECK(vg_image_name_ok(names[i].name, &err) == names[i].ok))
            fprintf(stderr, "  '%s'\n", names[i].name);
    }
    char hex[VG_IMAGE_HEX];
    const char *h = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    CHECK(vg_image_digest_text(h, hex) && !strcmp(hex, h));
    char *p = vg_xasprintf("sha256:%s", h);
    CHECK(vg_image_digest_text(p, hex));
    free(p);
    CHECK(!vg_image_digest_text("sha256:0123", hex));
    CHECK(!vg_image_digest_text("../../../../etc/passwd", hex));
}

/* The record of docs/IMAGES.md, byte for byte. */
static void test_record(void)
{
    struct vg_buf b = {0};
    vg_image_record(&b, 'f', S_IFREG | 04755, "bin/su", "4 abc");
    CHECK(b.len == 20 && !memcmp(b.data, "f 4755 bin/su\0" "4 abc\0", 20));
    vg_buf_free(&b);
}

/* A small tree in dir: a file, a dir, a symlink. */
static void make_tree(const char *dir)
{
    char *p = vg_xasprintf("%s/d", dir);
    CHECK(mkdir(dir, 0755) == 0 && mkdir(p, 0755) == 0);
    free(p);
    p = vg_xasprintf("%s/d/f", dir);
    int fd = open(p, O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
    close(fd);
    free(p);
    p = vg_xasprintf("%s/l", dir);
    CHECK(symlink("/etc/x", p) == 0);
    free(p);
}

static void digest_of(const char *dir, char hex[VG_IMAGE_HEX])
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    struct vg_image_sum sum;
    struct vg_err err;
    CHECK(fd >= 0 && vg_image_digest(fd, &sum, &err) == 0);
    memcpy(hex, sum.hex, VG_IMAGE_HEX);
    close(fd);
}

/* One change to the tree, and whether it changes the digest. */
static const struct {
    const char *cmd; /* run in the tree */
    bool changes;
} changes[] = {
    {"touch -d 2001-01-01 d/f", false}, {"printf hellp > d/f", true}, {"chmod 600 d/f", true},
    {"chmod 700 d", true}, {"chmod 4644 d/f", true}, {"mv d/f d/g", true},
    {"ln -sfn /etc/y l", true}, {"mkdir e", true},
};

static void test_digest_changes(void)
{
    char base[] = "/tmp/vigil-test-image-XXXXXX";
    if (!CHECK(mkdtemp(base) != NULL))
        return;
    char *a = vg_xasprintf("%s/a", base), *b = vg_xasprintf("%s/b", base);
    char ha[VG_IMAGE_HEX], hb[VG_IMAGE_HEX];
    make_tree(a);
    make_tree(b);
    digest_of(a, ha);
    digest_of(b, hb);
    CHECK_STR(ha, hb); /* made at other times, by the same steps */
    for (size_t i = 0; i < VG_ARRAY_LEN(changes); i++) {
        char *cmd = vg_xasprintf("cd %s && %s", b, changes[i].cmd);
        CHECK(system(cmd) == 0);
        free(cmd);
        digest_of(b, hb);
        if (!CHECK((strcmp(ha, hb) != 0) == changes[i].changes))
            fprintf(stderr, "  %s\n", changes[i].cmd);
        memcpy(ha, hb, VG_IMAGE_HEX);
    }
    free(a);
    free(b);
    check_rmtree(base);
}

int main(void)
{
    test_entry_paths();
    test_names();
    test_record();
    test_digest_changes();
    return check_done();
}
