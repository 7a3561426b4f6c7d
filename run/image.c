/* image.c: a run on a stored image (docs/IMAGES.md, "Runs").  The
 * image's tree takes the place of the host's system trees: the launcher
 * binds it read-only (launcher/plan.c), and the policy's literal paths are
 * resolved in it, not on the host (policy/ro_trees.c), so the policy's
 * paths name the image's files.  The digest goes into the log's header
 * and the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run_int.h"

/* The policy again, its rules resolved in the image's trees: the first
 * load (with the host's) only told which image. */
static int reload_policy(struct run *r)
{
    struct vg_policy *p = r->policy_file ? vg_policy_load_in(r->policy_file, r->trees, &r->err)
                                         : vg_policy_parse_in("default.policy",
                                                              vg_default_policy_text, r->trees,
                                                              &r->err);
    if (!p)
        return -1;
    vg_policy_free(r->pol);
    r->pol = p;
    return 0;
}

int vg_run_image(struct run *r)
{
    const char *file = NULL;
    uint32_t line = 0;
    const char *from_policy = vg_policy_image(r->pol, &file, &line);
    if (!r->o->image && !from_policy)
        return 0;
    /* a copy: the policy that said it is replaced below */
    r->image_ref = vg_xstrdup(r->o->image ? r->o->image : from_policy);
    struct vg_err why;
    if (vg_image_find(r->image_ref, &r->image, &why) < 0) {
        if (r->o->image)
            vg_errf(&r->err, "--image %s: %s", r->image_ref, why.msg);
        else /* file: kept by the policy, which is still r->pol here */
            vg_errf(&r->err, "%s:%u: image %s: %s", file, line, r->image_ref, why.msg);
        return -1;
    }
    snprintf(r->image_digest, sizeof r->image_digest, "sha256:%s", r->image.hex);
    r->trees = vg_trees_of_root(r->image.rootfs, &r->err);
    if (!r->trees)
        return -1;
    r->plan.trees = r->trees;
    return reload_policy(r);
}

void vg_run_image_free(struct run *r)
{
    vg_trees_free(r->trees);
    r->trees = NULL;
    free(r->image_ref);
    r->image_ref = NULL;
    vg_image_ref_free(&r->image);
}
