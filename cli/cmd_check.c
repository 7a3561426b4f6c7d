/* cmd_check.c: `vigil check [--strict] [--quiet] POLICY...`: parse and
 * validate policies, print their normalized rules; `vigil check --list`
 * names the shipped policies.  Exit 0 when all are
 * valid (warnings allowed unless --strict), 1 when any is not, 2 on usage
 * errors. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "image/image.h"
#include "policy/policy.h"
#include "util/escape.h"

static const char usage_text[] =
    "usage: vigil check [--strict] [--quiet] POLICY...\n"
    "       vigil check --list\n"
    "\n"
    "Parse and validate each policy (a file, or the name of a shipped policy:\n"
    "'python' is python.policy), following its includes, print its\n"
    "rules in normalized form, one per line with the file:line it came from\n"
    "(and, after '(= ', what a path in the host's read-only trees resolves\n"
    "to), then its defaults, limits, binds and environment.  Errors and warnings\n"
    "go to stderr as FILE:LINE:COL: message.\n"
    "\n";

static const char usage_tail[] =
    "\n"
    "Exit status: 0 all valid, 1 some policy is invalid, 2 usage error.\n"
    "The language is described in vigil-policy(5) (docs/POLICY.md in the source).\n";

struct check_opts {
    bool strict, quiet;
};

/* What parsing returns for --list (VG_OPTS_HELP for --help). */
#define CHECK_LIST (VG_OPTS_HELP + 1)
#define AT(field) offsetof(struct check_opts, field)

static const struct vg_opt rows[] = {
    {"strict", 0, NULL, "treat warnings (shadowed rules, default allow, ...) as errors",
     .kind = VG_OPT_FLAG, .off = AT(strict)},
    {"quiet", 'q', NULL, "print only errors and warnings", .kind = VG_OPT_FLAG, .off = AT(quiet)},
    {"list", 0, NULL, "the shipped policies, by name, with their files",
     .kind = VG_OPT_STOP, .value = CHECK_LIST},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

/* In order: POLICY... are the rest, even one that starts with "--". */
static const struct vg_example examples[] = {
    {"vigil check my.policy",
     "validate my.policy and print its rules with the file:line of each"},
    {"vigil check --strict --quiet my.policy",
     "fail (exit 1) on any warning, print only the problems"},
    {"vigil check --list",
     "name the shipped policies and their files"},
};

const struct vg_optcmd vg_check_optcmd = {
    .name = "check", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows), .in_order = true,
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

static void print_shipped(const char *name, const char *path, void *arg)
{
    (void)arg;
    vg_say(stdout, "%-12s %s", name, path);
}

/* A policy naming an image is checked as a run would use it: its paths
 * resolved in the image's trees (so "names no object" means in the
 * image).  An image not in this store is a warning: the host's trees
 * were used.  A misspelt one is an error at its line.  0, 1 warning, -1. */
static int check_image(struct vg_policy **p, const char *path, struct vg_trees **trees,
                       struct vg_image_ref *img)
{
    const char *file = NULL;
    uint32_t line = 0;
    const char *ref = vg_policy_image(*p, &file, &line);
    struct vg_err why;
    if (!ref)
        return 0;
    if (!vg_image_name_ok(ref, &why)) {
        vg_say(stderr, "%s:%u: %s", file, line, why.msg);
        return -1;
    }
    if (vg_image_find(ref, img, &why) < 0) {
        vg_say(stderr, "%s:%u: warning: %s; its paths were checked on the host's trees", file,
               line, why.msg);
        return 1;
    }
    *trees = vg_trees_of_root(img->rootfs, &why);
    struct vg_policy *again = *trees ? vg_policy_load_in(path, *trees, &why) : NULL;
    if (!again) {
        vg_say(stderr, "%s", why.msg);
        return -1;
    }
    vg_policy_free(*p);
    *p = again;
    return 0;
}

static int check_one(const char *arg, const struct check_opts *o)
{
    struct vg_err err = {{0}};
    char *path = vg_policy_find(arg, &err);
    struct vg_policy *p = path ? vg_policy_load(path, &err) : NULL;
    if (!p) {
        free(path);
        vg_say(stderr, "%s", err.msg);
        return 1;
    }
    struct vg_trees *trees = NULL;
    struct vg_image_ref img = {0};
    int im = check_image(&p, path, &trees, &img);
    free(path);
    uint32_t nw = vg_policy_nwarnings(p) + (im > 0);
    for (uint32_t i = 0; im >= 0 && i < vg_policy_nwarnings(p); i++)
        vg_say(stderr, "%s", vg_policy_warning(p, i));
    if (!o->quiet && im >= 0)
        vg_policy_print(p, stdout);
    vg_policy_free(p);
    vg_trees_free(trees);
    vg_image_ref_free(&img);
    return im < 0 || (o->strict && nw) ? 1 : 0;
}

int vg_cmd_check(int argc, char **argv)
{
    struct check_opts o = {false, false};
    struct vg_err err;
    int first, r = vg_opts_parse(&vg_check_optcmd, argc, argv, &o, &first, &err);
    if (r == VG_OPTS_HELP) {
        vg_opts_help(&vg_check_optcmd, stdout);
        return 0;
    }
    if (r == CHECK_LIST) {
        vg_policy_list(print_shipped, NULL);
        return 0;
    }
    if (r < 0) {
        vg_say(stderr, "vigil check: %s (try 'vigil check --help')", err.msg);
        return 2;
    }
    if (first >= argc) {
        vg_say(stderr, "vigil check: no policy given (usage: vigil check [--strict] [--quiet] POLICY...)");
        return 2;
    }
    int rc = 0;
    for (int i = first; i < argc; i++) {
        if (i > first && !o.quiet)
            fputc('\n', stdout);
        rc |= check_one(argv[i], &o);
    }
    return rc;
}
