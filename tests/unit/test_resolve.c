/* test_resolve.c: rules in the read-only trees mean the object they name
 * (policy/ro_trees.c, policy/resolve.c).  A temporary tree stands in for
 * the host's /usr and /lib, so nothing here depends on the host's own
 * layout: a symlink's rule also matches what it resolves to, nothing
 * outside the trees (nor hidden in them, nor a file the sandbox has of its
 * own there, nor under a bind) is looked at,
 * a literal path there that does not exist is warned of, and a run whose
 * workdir or bind lies in a tree matches rules as written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"
#include "tests/unit/check.h"

#define TEXT_MAX 4096

static char root[64] = "/tmp/vg-resolve-XXXXXX";
static char usr[128], lib[128], hidden[128], own[128];
static const char *dirs[2], *hid[1], *owned[1];
static struct vg_trees trees;
static const struct vg_places places = {"/home/u", "/work/cand", "/tmp"};

/* root/REL, in a static ring of buffers (a few live at once). */
static const char *at(const char *rel)
{
    static char ring[8][256];
    static unsigned k;
    char *b = ring[k++ % 8];
    snprintf(b, sizeof ring[0], "%s/%s", root, rel);
    return b;
}

static void mk(const char *rel, const char *link)
{
    int rc;
    if (!link) {
        FILE *f = fopen(at(rel), "w");
        rc = f ? fclose(f) : -1;
    } else if (!strcmp(link, "/")) {
        rc = mkdir(at(rel), 0755);
    } else {
        rc = symlink(link, at(rel));
    }
    if (rc) {
        perror(rel);
        exit(2);
    }
}

static void build_tree(void)
{
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        exit(2);
    }
    mk("usr", "/");
    mk("usr/bin", "/");
    mk("usr/lib", "/");
    mk("usr/hidden", "/");
    mk("usr/bound", "/");
    mk("usr/bin/python3.11", NULL);
    mk("usr/lib/tool", NULL);
    mk("usr/bin/python3", "python3.11");
    mk("usr/bin/abs", at("usr/bin/python3.11"));
    mk("usr/bin/out", "/etc/hostname");
    mk("usr/bin/up", "../lib/tool");
    mk("usr/bin/loop", "loop");
    mk("usr/hidden/link", "../bin/python3.11");
    mk("usr/bound/link", "../bin/python3.11");
    mk("lib", "usr/lib");
    mk("usr/lnk", "bin");
    mk("usr/bin/own", "python3.11");
    mk("usr/bin/imgabs", "/usr/bin/python3.11"); /* absolute in an image's own terms */
    mk("proc", "/");                              /* an image's: the sandbox has its own */
    mk("tmp", "/");
    mk("topfile", NULL);                          /* not a tree */
    snprintf(usr, sizeof usr, "%s/usr", root);
    snprintf(lib, sizeof lib, "%s/lib", root);
    snprintf(hidden, sizeof hidden, "%s/usr/hidden", root);
    dirs[0] = usr;
    dirs[1] = lib;
    snprintf(own, sizeof own, "%s/usr/bin/own", root);
    hid[0] = hidden;
    owned[0] = own;
    trees = (struct vg_trees){dirs, 2, hid, 1, owned, 1, NULL};
}

static void walk_is(const char *rel, enum vg_walk want, const char *want_rel)
{
    char *out = NULL;
    enum vg_walk w = vg_trees_resolve(&trees, at(rel), &out);
    if (!check(w == want, rel, __FILE__, __LINE__))
        fprintf(stderr, "  %s: walk %d, wanted %d\n", rel, w, want);
    if (want_rel)
        CHECK_STR(out, at(want_rel));
    else
        CHECK(out == NULL);
    free(out);
}

static void test_walk(void)
{
    walk_is("usr/bin/python3", VG_WALK_FOUND, "usr/bin/python3.11");
    walk_is("usr/bin/python3.11", VG_WALK_FOUND, "usr/bin/python3.11");
    walk_is("usr/bin/abs", VG_WALK_FOUND, "usr/bin/python3.11");
    walk_is("usr/bin/up", VG_WALK_FOUND, "usr/lib/tool");
    walk_is("lib/tool", VG_WALK_FOUND, "usr/lib/tool");
    walk_is("usr/bin/nope", VG_WALK_MISSING, NULL);
    walk_is("usr/bin/nope/deeper", VG_WALK_MISSING, NULL);
    walk_is("usr/bin/python3.11/x", VG_WALK_MISSING, NULL);
    walk_is("usr/bin/out", VG_WALK_AWAY, NULL);      /* leads out of the trees */
    walk_is("usr/bin/loop", VG_WALK_AWAY, NULL);
    walk_is("usr/hidden/link", VG_WALK_AWAY, NULL);  /* the sandbox hides it */
    walk_is("usr/bin/own", VG_WALK_AWAY, NULL);      /* the sandbox has its own */
    walk_is("work/x", VG_WALK_AWAY, NULL);           /* never looked at */
    walk_is("usr/lnk/python3", VG_WALK_FOUND, "usr/bin/python3.11");
}

/* A tree inside another: the links above the inner one are still
 * followed (only what lies above every tree is taken as given). */
static void test_nested_trees(void)
{
    const char *nested_dirs[] = {usr, at("usr/lnk/deep")};
    struct vg_trees nested = {nested_dirs, 2, NULL, 0, NULL, 0, NULL};
    char *out = NULL;
    CHECK(vg_trees_resolve(&nested, at("usr/lnk/python3"), &out) == VG_WALK_FOUND);
    CHECK_STR(out, at("usr/bin/python3.11"));
    free(out);
}

/* The same tree as an image's rootfs (vigil run --image): its top-level
 * directories and links are the trees, but /proc and /tmp (the sandbox's
 * own) and a file; paths are the image's, and an absolute link starts
 * again at the image's "/", never the host's. */
static void test_image_root(void)
{
    struct vg_err err;
    struct vg_trees *t = vg_trees_of_root(root, &err);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(t->ndirs == 2 && streq(t->dirs[0], "/lib") && streq(t->dirs[1], "/usr"));
    CHECK(t->nhidden == vg_system_trees.nhidden && t->root == root);
    char *out = NULL;
    CHECK(vg_trees_resolve(t, "/usr/bin/imgabs", &out) == VG_WALK_FOUND);
    CHECK_STR(out, "/usr/bin/python3.11");
    free(out);
    CHECK(vg_trees_resolve(t, "/lib/tool", &out) == VG_WALK_FOUND);
    CHECK_STR(out, "/usr/lib/tool");
    free(out);
    CHECK(vg_trees_resolve(t, "/usr/bin/nope", &out) == VG_WALK_MISSING && !out);
    CHECK(vg_trees_resolve(t, "/tmp/x", &out) == VG_WALK_AWAY && !out);
    CHECK(vg_trees_resolve(t, "/usr/bin/out", &out) == VG_WALK_AWAY && !out); /* no /etc tree here */
    /* on the host's terms the same link leads out of the trees */
    CHECK(vg_trees_resolve(&trees, at("usr/bin/imgabs"), &out) == VG_WALK_AWAY && !out);
    vg_trees_free(t);
    CHECK(vg_trees_of_root(at("nowhere"), &err) == NULL && strstr(err.msg, "nowhere"));
}

/* The policy text with R standing for the tree's root. */
static struct vg_policy *load(const char *fmt)
{
    char text[TEXT_MAX];
    struct vg_buf b = {0};
    for (const char *c = fmt; *c; c++)
        if (*c == 'R')
            vg_buf_puts(&b, root);
        else
            vg_buf_put(&b, c, 1);
    snprintf(text, sizeof text, "%s", b.data);
    vg_buf_free(&b);
    struct vg_err err = {{0}};
    struct vg_policy *p = vg_policy_parse_in("t.policy", text, &trees, &err);
    if (!p || vg_policy_compile(p, &places, &err)) {
        fprintf(stderr, "policy did not load: %s\n%s", err.msg, text);
        exit(2);
    }
    return p;
}

static const char rules[] =
    "version 1\n"
    "allow exec R/usr/bin/python3\n"            /* 2 */
    "allow read R/lib/**\n"                     /* 3 */
    "allow exec R/usr/bin/out\n"                /* 4 */
    "allow exec R/usr/bin/nope\n"               /* 5: warned */
    "allow exec R/usr/bin/{nope,python3}\n"     /* 6 */
    "allow read R/usr/lib/*.so\n"               /* 7: line 3 covers it */
    "allow exec R/usr/hidden/link\n"            /* 8 */
    "allow exec R/usr/bound/link\n"             /* 9 */
    "allow exec R/work/nope\n"                  /* 10 */
    "bind /var R/usr/bound\n"
    "default deny\n";

static void decides(const struct vg_policy *p, enum vg_class c, const char *rel,
                    enum vg_action act, uint32_t line)
{
    struct vg_verdict v = vg_policy_decide_path(p, c, at(rel));
    if (!check(v.action == act && (line ? v.rule && v.rule->line == line : !v.rule), rel,
               __FILE__, __LINE__))
        fprintf(stderr, "  %s: action %d rule line %u\n", rel, v.action,
                v.rule ? v.rule->line : 0);
}

static void test_rules(void)
{
    struct vg_policy *p = load(rules);
    decides(p, VG_CLASS_EXEC, "usr/bin/python3.11", VG_ACT_ALLOW, 2);
    decides(p, VG_CLASS_READ, "usr/lib/tool", VG_ACT_ALLOW, 3);
    decides(p, VG_CLASS_READ, "usr/lib", VG_ACT_ALLOW, 3);
    decides(p, VG_CLASS_EXEC, "usr/lib/tool", VG_ACT_DENY, 0);
    struct vg_verdict v = vg_policy_decide_path(p, VG_CLASS_EXEC, "/etc/hostname");
    CHECK(v.action == VG_ACT_DENY && !v.rule);
    /* the identity is the rule as written */
    v = vg_policy_decide_path(p, VG_CLASS_EXEC, at("usr/bin/python3.11"));
    CHECK(v.rule && strstr(v.rule->text, "/usr/bin/python3") &&
          !strstr(v.rule->text, "python3.11") && streq(v.rule->file, "t.policy"));
    /* only the nonexistent exact path warns of it; line 3's resolved form
     * covers line 7 */
    uint32_t nw = vg_policy_nwarnings(p), missing = 0, shadowed = 0;
    for (uint32_t i = 0; i < nw; i++) {
        const char *w = vg_policy_warning(p, i);
        if (strstr(w, "does not exist")) {
            missing++;
            CHECK(!strncmp(w, "t.policy:5:", strlen("t.policy:5:")));
        }
        shadowed += !strncmp(w, "t.policy:7:", strlen("t.policy:7:")) && strstr(w, "line 3");
    }
    CHECK(missing == 1);
    CHECK(shadowed == 1);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    vg_policy_print(p, f);
    CHECK(fclose(f) == 0);
    char want[256];
    snprintf(want, sizeof want, "allow exec %s/usr/bin/python3  (= %s/usr/bin/python3.11)\n",
             root, root);
    CHECK(out && strstr(out, want));
    snprintf(want, sizeof want, "allow exec %s/usr/bound/link\n", root);
    CHECK(out && strstr(out, want));     /* under a bind: not resolved */
    free(out);
    vg_policy_free(p);
}

/* A run whose workdir or bind lies in a tree: that tree is not the host's. */
static void test_unsure_run(void)
{
    struct vg_policy *p = load(rules);
    struct vg_err err = {{0}};
    struct vg_places in_tree = places;
    in_tree.work = at("usr/work");
    CHECK(vg_policy_compile(p, &in_tree, &err) == 0);
    decides(p, VG_CLASS_EXEC, "usr/bin/python3.11", VG_ACT_DENY, 0);
    struct vg_bind b = {.src = "/var", .dst = at("usr/lib/x"), .rw = true};
    CHECK(vg_policy_compile_run(p, &places, &b, 1, &err) == 0);
    decides(p, VG_CLASS_EXEC, "usr/bin/python3.11", VG_ACT_DENY, 0);
    CHECK(vg_policy_compile(p, &places, &err) == 0);
    decides(p, VG_CLASS_EXEC, "usr/bin/python3.11", VG_ACT_ALLOW, 2);
    vg_policy_free(p);
}

int main(void)
{
    build_tree();
    test_walk();
    test_nested_trees();
    test_image_root();
    test_rules();
    test_unsure_run();
    check_rmtree(root);
    return check_done();
}
