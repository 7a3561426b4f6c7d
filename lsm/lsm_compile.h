/* lsm_compile.h: a compiled policy's file decisions (read, write, exec)
 * as the kernel engine's maps hold them (lsm/trie_maps.h), and the walk
 * its BPF program runs on them, here in user space so that a host test can
 * hold it against the core decider (tests/unit/test_lsm_compile.c).
 *
 * Exact or refused: a rule whose patterns the trie cannot decide exactly
 * as vg_policy_decide_path does makes vg_lsm_compile fail naming the rule
 * (file:line), and the run falls back to the notify engine.  Compiled
 * exactly: literal components, a whole-component `*`, and `**` anywhere
 * (a final one is the node's sub verdict, an inner one a node that loops
 * to itself).  Refused: a wildcard inside a component (`*.py`, `?`,
 * `[0-9]`), a component longer than NAME_MAX, and a policy whose trie
 * would pass VG_LSM_MAX_NODES nodes or VG_LSM_MAX_EDGES edges. */
#ifndef VIGIL_LSM_COMPILE_H
#define VIGIL_LSM_COMPILE_H
#include <stdint.h>

#include "lsm/trie_maps.h"
#include "policy/policy.h"

/* The maps' sizes the loader asks the kernel for, at most. */
#define VG_LSM_MAX_NODES 65536u
#define VG_LSM_MAX_EDGES 262144u

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

/* The edge map's key order (memcmp of the whole key). */
int vg_lsm_key_cmp(const void *a, const void *b);
#endif
