/* trie_maps.h: the layout of a policy's file decisions as the kernel
 * engine's BPF maps hold them (issue 27), shared by the BPF side and the
 * host (lsm/lsm_compile.c fills them, vg_lsm_trie_decide walks them as the
 * program does).  Plain fixed-size types only, so that the BPF target and
 * the host agree on every offset, as in lsm/probe.h.
 *
 * A path is walked one component at a time from node 0 (the root "/"):
 * the child of a node for a component is the edge map's entry keyed by
 * (node, component); else, when the node has globs (component patterns
 * with a wildcard inside, `python3.[0-9]*`), each is matched against the
 * component (lsm/glob_step.h) and the set of those that match, a mask of
 * the node's up to VG_LSM_NODE_GLOBS, picks the child in the kids array
 * map (mask m at kids + m - 1); else, or when none matches, the node's
 * star child (what any other component leads to); no child at all ends
 * the walk.  The trie is deterministic (lsm/lsm_compile.c): every child
 * already holds all that its component matched, the literal, the globs
 * and `*` alike, so no order among the kinds is kept here; the rules'
 * order is in the verdicts.  Each node holds,
 * per class, the best rule that matches a path ending exactly there (end)
 * and the best that matches it and everything below it (sub: a final
 * slash-star-star), and the best that can still match the path or
 * something below it (tree: a pattern not used up there, or used up
 * exactly there), which a directory's rename needs (policy/move.c: the
 * first rule that can match anything in the moved tree must match all of
 * it, a sub seen on the way).  The verdict is the best of every visited node's sub
 * and, when the walk used up the path, the last node's end; "best" is the
 * lowest prio, the rule that comes first in the policy, since the first
 * rule that matches decides (docs/POLICY.md, "Precedence").  No rule: the
 * class's default. */
#ifndef VIGIL_LSM_TRIE_MAPS_H
#define VIGIL_LSM_TRIE_MAPS_H

/* The classes a file hook decides, VG_CLASS_READ, _WRITE and _EXEC
 * (event/event.h) in that order: read, write, exec. */
#define VG_LSM_NCLS 3
/* NAME_MAX: no file system hands the kernel a longer component, so a
 * rule's longer component could never be an edge (compile refuses it). */
#define VG_LSM_NAME_MAX 255
/* bpf_d_path writes at most PATH_MAX bytes, the NUL included: a longer
 * path cannot be walked and is refused. */
#define VG_LSM_PATH_MAX 4095
/* What d_path puts after the path of a file unlinked since it was opened
 * (a /proc/PID/fd link's target): no path of the tree, and not one a rule
 * can be held against, so the engine refuses such a path, as the notify
 * engine refuses what it cannot resolve (a file named so is refused too). */
#define VG_LSM_DELETED " (deleted)"
#define VG_LSM_DELETED_LEN 10
/* No node, no rule. */
#define VG_LSM_NONE 0xffffffffu
/* A glob's ops at most (a power of two: a mask that bounds an index for
 * the verifier); a longer component pattern is refused. */
#define VG_LSM_GLOB_OPS 64
/* The globs one node tries at most: its kids are 2^this - 1 (masks). */
#define VG_LSM_NODE_GLOBS 8
/* A set of bytes: one bit each. */
#define VG_LSM_SET_BYTES 32

/* One class's verdict at a node.  prio: the rule's place among that
 * class's rules (lower decides), VG_LSM_NONE when no rule; rule: its index
 * in the policy (the identity a record carries back to vigil); action:
 * enum vg_action. */
struct vg_lsm_verdict {
    unsigned int prio;
    unsigned int rule;
    unsigned int action;
};

/* One element of a glob: `*` (star set; any run of bytes), or one byte
 * that must be in set (bit c % 8 of set[c / 8]): a letter, `?` (every
 * byte) or a [...] class, its ranges and negation already applied. */
struct vg_lsm_gop {
    unsigned int star;
    unsigned char set[VG_LSM_SET_BYTES];
};

/* A value of the glob array map: a component pattern as ops. */
struct vg_lsm_glob {
    unsigned int nops;
    struct vg_lsm_gop op[VG_LSM_GLOB_OPS];
};

/* A value of the node array map, indexed by node id. */
struct vg_lsm_node {
    unsigned int star;                     /* child for any other component */
    unsigned int nglob;                    /* globs tried, at most VG_LSM_NODE_GLOBS */
    unsigned int glob[VG_LSM_NODE_GLOBS];  /* their ids in the glob map; bit k of the mask */
    unsigned int kids;                     /* mask m's child: the kids map's kids + m - 1 */
    struct vg_lsm_verdict end[VG_LSM_NCLS];
    struct vg_lsm_verdict sub[VG_LSM_NCLS];
    struct vg_lsm_verdict tree[VG_LSM_NCLS];
};

/* A key of the edge hash map; name is zero-padded past len so that equal
 * components are equal keys byte for byte. */
struct vg_lsm_key {
    unsigned int parent;
    unsigned int len;
    char name[VG_LSM_NAME_MAX + 1];
};

/* The settings array map's one entry: each class's default action. */
struct vg_lsm_defaults {
    unsigned int action[VG_LSM_NCLS];
};
#endif
