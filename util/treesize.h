/* treesize.h: the bytes a directory tree holds, as its blocks allocated,
 * measured without trusting it: the tree may be a candidate's, who may
 * make it point anywhere, so only metadata is read, relative to fds,
 * never following a symlink nor leaving the tree's filesystem.  Used for
 * a host workdir's --disk limit (launcher/usage.c) and for what a vigil
 * serve run stores (serve/persist.c). */
#ifndef VG_TREESIZE_H
#define VG_TREESIZE_H
#include <stdbool.h>
#include <stdint.h>

/* Deeper trees are not walked: a directory below this depth makes the
 * walk blind (its size cannot be known). */
#define VG_TREE_DEPTH 64

struct vg_tree_size {
    uint64_t bytes;   /* below the directory (itself not counted) */
    uint64_t shape;   /* hash of every directory met, in order: inode and times */
    bool moved;       /* a name vanished or changed kind under the walk */
    bool blind;       /* a directory could not be read, or was too deep */
    bool capped;      /* the walk stopped at its cap: bytes is at least that */
};

/* Walks the tree of the directory dirfd (which it closes), stopping once
 * bytes reaches cap (UINT64_MAX: never).  Two walks with the same shape
 * and neither moved saw a tree that stood still (launcher/usage.c). */
void vg_tree_size(int dirfd, uint64_t cap, struct vg_tree_size *w);
#endif
