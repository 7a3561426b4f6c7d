/* learn_base.c: which policy a learned one builds on (see learn_int.h). */
#include <stdlib.h>
#include <string.h>

#include "insight/learn_int.h"

#define BUILTIN_NAME "(builtin) default.policy" /* the header's path for the built-in */
#define BUILTIN_INCLUDE "<default>"
#define SUFFIX ".policy"

static int compile(struct vg_learn *L, struct vg_policy *p, struct vg_err *err)
{
    if (!p)
        return -1;
    if (vg_policy_compile(p, &L->places, err) < 0) {
        vg_policy_free(p);
        return -1;
    }
    L->base = p;
    return 0;
}

/* The shipped policy the header names, if its text is exactly that file's. */
static void shipped(struct vg_learn *L, const struct vg_header *h)
{
    struct vg_err err;
    if (h->policy_path && !strcmp(h->policy_path, BUILTIN_NAME)) {
        if (compile(L, vg_policy_parse_in("default.policy", vg_default_policy_text,
                                          vg_learn_trees(L), &err), &err) == 0)
            L->include = vg_xstrdup(BUILTIN_INCLUDE);
        return;
    }
    const char *slash = h->policy_path ? strrchr(h->policy_path, '/') : NULL;
    const char *base = slash ? slash + 1 : h->policy_path;
    if (!base || !h->policy_sha256)
        return;
    size_t n = strlen(base), sl = strlen(SUFFIX);
    char *name = n > sl && !strcmp(base + n - sl, SUFFIX) ? vg_xstrndup(base, n - sl)
                                                         : vg_xstrdup(base);
    char *path = vg_policy_find_shipped(name);
    struct vg_policy *p = path ? vg_policy_load_in(path, vg_learn_trees(L), &err) : NULL;
    /* included by name, as a user writes it: the learned policy then
     * builds on that policy wherever vigil is installed */
    if (p && !strcmp(vg_policy_sha256(p), h->policy_sha256) && compile(L, p, &err) == 0)
        L->include = vg_xasprintf("<%s>", name);
    else
        vg_policy_free(p);
    free(path);
    free(name);
}

int vg_learn_base(struct vg_learn *L, const struct vg_header *h, struct vg_err *err)
{
    if (!L->o->diff) {
        shipped(L, h);
        return 0;
    }
    char *path = vg_policy_find(L->o->diff, err);
    char *real = path ? realpath(path, NULL) : NULL;
    int rc = real ? compile(L, vg_policy_load_in(real, vg_learn_trees(L), err), err) : -1;
    if (path && !real)
        vg_errf(err, "%s: cannot resolve it", path);
    if (rc == 0)
        L->include = real;
    else
        free(real);
    free(path);
    return rc;
}
