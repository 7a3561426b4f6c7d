/* test_move.c: may a rename or a link give files a new name
 * (vg_policy_decide_move), and the pattern-to-tree relation it rests on
 * (vg_glob_tree_relation).  Sound means: a rename is allowed only when
 * every name below the source keeps, under the destination, a verdict at
 * least as strict, for read, write and exec. */
#include <stdio.h>

#include "policy/glob.h"
#include "policy/policy.h"
#include "tests/unit/check.h"

static const struct vg_places places = {"/home/u", "/w", "/tmp"};

static struct vg_policy *load(const char *text)
{
    struct vg_err err = {{0}};
    struct vg_policy *p = vg_policy_parse("t.policy", text, &err);
    if (!p || vg_policy_compile(p, &places, &err)) {
        fprintf(stderr, "policy: %s\n", err.msg);
        exit(2);
    }
    return p;
}

static enum vg_glob_rel rel(const char *pattern, const char *dir)
{
    struct vg_glob g;
    struct vg_spath sp;
    char buf[VG_SPATH_MAX + 1];
    vg_glob_compile(pattern, &g);
    enum vg_glob_rel r = vg_spath_split(&sp, buf, dir) ? vg_glob_tree_relation(&g, &sp)
                                                       : VG_GLOB_SOME;
    vg_glob_free(&g);
    return r;
}

static void test_tree_relation(void)
{
    CHECK(rel("/w/**", "/w/data") == VG_GLOB_ALL);
    CHECK(rel("/w/**", "/w") == VG_GLOB_ALL);
    CHECK(rel("/**", "/w/data") == VG_GLOB_ALL);
    CHECK(rel("/w/*/**", "/w/data/x") == VG_GLOB_ALL);
    CHECK(rel("/w/data/private/**", "/w/data") == VG_GLOB_SOME);   /* part of the tree */
    CHECK(rel("/w/data/private/**", "/w/data/private") == VG_GLOB_ALL);
    CHECK(rel("/w/data/private/**", "/w/other") == VG_GLOB_NONE);
    CHECK(rel("/w/data/private/**", "/w/data/privatex") == VG_GLOB_NONE);
    CHECK(rel("/w/data", "/w/data") == VG_GLOB_SOME);    /* only the top, not below */
    CHECK(rel("/w/data", "/w/data/x") == VG_GLOB_NONE);
    CHECK(rel("/w/a*/x", "/w/abc") == VG_GLOB_SOME);
    CHECK(rel("/w/a*/x", "/w/b") == VG_GLOB_NONE);
    CHECK(rel("/w/**/*.pem", "/w/data") == VG_GLOB_SOME); /* can match below anything */
    CHECK(rel("/etc/**", "/w/data") == VG_GLOB_NONE);
}

static bool allowed(struct vg_policy *p, const char *src, const char *dst, bool tree)
{
    return vg_policy_decide_move(p, src, dst, tree).action == VG_ACT_ALLOW;
}

static void test_moves(void)
{
    struct vg_policy *p = load("version 1\n"
                               "deny read $WORK/data/private/**\n"
                               "kill read $WORK/trap/**\n"
                               "allow read $WORK/** /usr/**\n"
                               "allow write $WORK/**\n"
                               "allow exec /usr/**\n"
                               "default deny\n");
    /* a directory above the deny, into the open */
    CHECK(!allowed(p, "/w/data", "/w/moved", true));
    /* the denied tree itself, or one file of it, to a lenient place */
    CHECK(!allowed(p, "/w/data/private", "/w/open", true));
    CHECK(!allowed(p, "/w/data/private/t.txt", "/w/t.txt", false));
    /* into a stricter place is fine; out of kill into deny is not */
    CHECK(allowed(p, "/w/plain.txt", "/w/data/private/plain.txt", false));
    CHECK(!allowed(p, "/w/trap/x", "/w/data/private/x", false));
    CHECK(allowed(p, "/w/data/private/x", "/w/trap/x", false));
    /* a tree with nothing special below it, inside one rule's reach */
    CHECK(allowed(p, "/w/a", "/w/b", true));
    CHECK(allowed(p, "/w/data/sub", "/w/sub", true));
    /* into a tree a rule splits: the destination is not uniform */
    CHECK(!allowed(p, "/w/a", "/w/data", true));
    /* every class counts: out of $WORK is stricter for read and write;
     * from /usr into $WORK would make the file writable */
    CHECK(allowed(p, "/w/a", "/tmp/a", true));
    CHECK(!allowed(p, "/usr/lib/x", "/w/x", false));
    vg_policy_free(p);
}

static void test_links_and_limits(void)
{
    struct vg_policy *p = load("version 1\n"
                               "deny read $WORK/secret/**\n"
                               "allow read $WORK/**\n"
                               "allow write $WORK/**\n"
                               "default deny\n");
    CHECK(!allowed(p, "/w/secret/t.txt", "/w/t.txt", false));
    CHECK(allowed(p, "/w/t.txt", "/w/secret/t.txt", false));
    CHECK(allowed(p, "/w/a.txt", "/w/b.txt", false));
    /* too long to judge: refused */
    char longp[VG_SPATH_MAX + 16];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    CHECK(!allowed(p, longp, "/w/x", false));
    vg_policy_free(p);
}

int main(void)
{
    test_tree_relation();
    test_moves();
    test_links_and_limits();
    return check_done();
}
