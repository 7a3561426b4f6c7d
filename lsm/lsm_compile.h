/* lsm_compile.h: a compiled policy's file decisions (read, write, exec)
 * as the kernel engine's maps hold them (lsm/trie_maps.h), and the walk
 * its BPF program runs on them, here in user space so that a host test can
 * hold it against the core decider (tests/unit/test_lsm_compile.c).
 *
 * Exact or refused: a rule whose patterns the trie cannot decide exactly
 * as vg_policy_decide_path does makes vg_lsm_compile fail naming the rule
 * (file:line), and the run falls back to the notify engine.  Compiled
 * exactly: literal components, a whole-component `*`, `**` anywhere (a
 * final one is the node's sub verdict, an inner one a node that loops to
 * itself), and a wildcard inside a component (`*.py`, `x?`, `[0-9]`,
 * `[!a-z]`: a glob, matched by lsm/glob_step.h in the kernel and here).
 * Refused: a component longer than NAME_MAX, a glob of more than
 * VG_LSM_GLOB_OPS elements, a node where more than VG_LSM_NODE_GLOBS
 * different globs are live, and a policy whose trie would pass the maps'
 * sizes below. */
#ifndef VIGIL_LSM_COMPILE_H
#define VIGIL_LSM_COMPILE_H
#include <stdint.h>

#include "lsm/trie_maps.h"
#include "policy/policy.h"

/* The maps' sizes the loader asks the kernel for, at most. */
#define VG_LSM_MAX_NODES 65536u
#define VG_LSM_MAX_EDGES 262144u
#define VG_LSM_MAX_GLOBS 4096u
#define VG_LSM_MAX_KIDS 262144u

/* An entry of the edge hash map. */
struct vg_lsm_edge {
    struct vg_lsm_key key;
    uint32_t child;
};

struct vg_lsm_trie {
    struct vg_lsm_node *nodes;      /* [0] is the root */
    uint32_t nnodes;
    struct vg_lsm_edge *edges;      /* sorted by key (vg_lsm_key_cmp) */
    uint32_t nedges;
    struct vg_lsm_glob *globs;      /* the glob map, by id */
    uint32_t nglobs;
    uint32_t *kids;                 /* the kids map (trie_maps.h) */
    uint32_t nkids;
    struct vg_lsm_defaults def;
    /* rules[i]: the identity of the policy's rule i (a verdict's rule),
     * pointing into the policy, which must outlive the trie */
    const struct vg_rule_src **rules;
    uint32_t nrules;
};

/* p must be compiled (vg_policy_compile).  0, or -1 with err naming the
 * first rule that cannot compile exactly ("FILE:LINE: RULE: why"). */
int vg_lsm_compile(const struct vg_policy *p, struct vg_lsm_trie *t, struct vg_err *err);
void vg_lsm_trie_free(struct vg_lsm_trie *t);

/* The walk of lsm/trie_maps.h on a canonical absolute path (as bpf_d_path
 * gives it), for cls read, write or exec: what vg_policy_decide_path says
 * for the policy t was compiled from.  A path longer than VG_LSM_PATH_MAX,
 * not absolute, or a class of no file hook: DENY with no rule. */
struct vg_verdict vg_lsm_trie_decide(const struct vg_lsm_trie *t, enum vg_class cls,
                                     const char *path);

/* One walk of a path through the maps, every class at once: the best
 * sub verdict of the nodes it went through, and the last node's end and
 * tree verdicts when it used up the path (else none). */
struct vg_lsm_walk {
    struct vg_lsm_verdict sub[VG_LSM_NCLS];
    struct vg_lsm_verdict end[VG_LSM_NCLS];
    struct vg_lsm_verdict tree[VG_LSM_NCLS];
};
/* false: the path cannot be walked (the cases vg_lsm_trie_decide refuses). */
bool vg_lsm_trie_walk(const struct vg_lsm_trie *t, const char *path, struct vg_lsm_walk *w);
/* A walk's verdict for a path of class cls (what vg_policy_decide_path
 * says). */
struct vg_verdict vg_lsm_walk_path(const struct vg_lsm_trie *t, const struct vg_lsm_walk *w,
                                   enum vg_class cls);
/* Its verdict for the tree the path names (policy/move.c's decide_tree):
 * the first rule that can match anything at or below it, and *uniform
 * whether it matches all of it. */
struct vg_verdict vg_lsm_walk_tree(const struct vg_lsm_trie *t, const struct vg_lsm_walk *w,
                                   enum vg_class cls, bool *uniform);
/* vg_policy_decide_move from two walks (src, dst; tree: src is a
 * directory): the same verdict and rule, as the kernel engine's rename
 * and link hooks decide it. */
struct vg_verdict vg_lsm_move_decide(const struct vg_lsm_trie *t, const struct vg_lsm_walk *src,
                                     const struct vg_lsm_walk *dst, bool tree);

/* A rename (src to dst) or a hard link (dst a new name of src), as the
 * kernel's path_rename and path_link hooks see it. */
struct vg_lsm_two {
    bool link;
    bool exchange;      /* RENAME_EXCHANGE: both move */
    bool src_dir, dst_dir;
};
/* vg_decide's verdict for such a call: write on both names, the more
 * severe deciding (src's when alike), then, allowed, the move check (both
 * ways for an exchange); *moved: the move check refused it (the record
 * says "new name decided more leniently than" its rule). */
struct vg_verdict vg_lsm_two_decide(const struct vg_lsm_trie *t, const struct vg_lsm_walk *src,
                                    const struct vg_lsm_walk *dst, const struct vg_lsm_two *how,
                                    bool *moved);

/* Does a path (len bytes) end as d_path ends an unlinked file's
 * (VG_LSM_DELETED)?  Such a path is refused. */
bool vg_lsm_deleted(const char *path, size_t len);

/* Does glob g match path[start, start + len)?  1 yes, 0 no, -1 the
 * match did not end within its bound (a broken invariant: refuse).  The
 * loop the BPF program runs, on the same step. */
int vg_lsm_glob_run(const struct vg_lsm_glob *g, const char *path, uint32_t start, uint32_t len);

/* The edge map's key order (memcmp of the whole key). */
int vg_lsm_key_cmp(const void *a, const void *b);
#endif
