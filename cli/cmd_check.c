/* cmd_check.c: `vigil check [--strict] [--quiet] POLICY...`: parse and
 * validate policies, print their normalized rules; `vigil check --list`
 * names the shipped policies.  Exit 0 when all are
 * valid (warnings allowed unless --strict), 1 when any is not, 2 on usage
 * errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "policy/policy.h"
#include "util/escape.h"

static const char usage_text[] =
    "usage: vigil check [--strict] [--quiet] POLICY...\n"
    "       vigil check --list\n"
    "\n"
    "Parse and validate each policy (a file, or the name of a shipped policy:\n"
    "'python' is python.policy), following its includes, print its\n"
    "rules in normalized form, one per line with the file:line it came from,\n"
    "then its defaults, limits, binds and environment.  Errors and warnings\n"
    "go to stderr as FILE:LINE:COL: message.\n"
    "\n"
    "  --strict   treat warnings (shadowed rules, dangerous grants) as errors\n"
    "  --quiet    print only errors and warnings\n"
    "  --list     the shipped policies, by name, with their files\n"
    "  --help     this text\n"
    "\n"
    "Exit status: 0 all valid, 1 some policy is invalid, 2 usage error.\n"
    "The language is described in docs/POLICY.md.\n";

struct check_opts {
    bool strict, quiet;
};

static void print_shipped(const char *name, const char *path, void *arg)
{
    (void)arg;
    vg_say(stdout, "%-12s %s", name, path);
}

static int check_one(const char *arg, const struct check_opts *o)
{
    struct vg_err err = {{0}};
    char *path = vg_policy_find(arg, &err);
    struct vg_policy *p = path ? vg_policy_load(path, &err) : NULL;
    free(path);
    if (!p) {
        vg_say(stderr, "%s", err.msg);
        return 1;
    }
    uint32_t nw = vg_policy_nwarnings(p);
    for (uint32_t i = 0; i < nw; i++)
        vg_say(stderr, "%s", vg_policy_warning(p, i));
    if (!o->quiet)
        vg_policy_print(p, stdout);
    vg_policy_free(p);
    return (o->strict && nw) ? 1 : 0;
}

int vg_cmd_check(int argc, char **argv)
{
    struct check_opts o = {false, false};
    int first = 1;
    for (; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
        const char *a = argv[first];
        if (!strcmp(a, "--")) {
            first++;
            break;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (!strcmp(a, "--list")) {
            vg_policy_list(print_shipped, NULL);
            return 0;
        }
        if (!strcmp(a, "--strict"))
            o.strict = true;
        else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
            o.quiet = true;
        else {
            vg_say(stderr, "vigil check: unknown option '%s' (try 'vigil check --help')", a);
            return 2;
        }
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
