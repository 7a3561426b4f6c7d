/* canon_cache.h: internal to canon.c: the memoized readlinkat. */
#ifndef VG_CANON_CACHE_H
#define VG_CANON_CACHE_H
#include <stddef.h>
#include <sys/types.h>
#include "tracer/canon.h"

/* readlinkat(root_fd, path + 1) with the same results and errno, answered
 * from the memo when path lies in an immutable tree. */
ssize_t vg_canon_cache_readlink(struct vg_canon_cache *c, int root_fd, const char *path,
                                char *buf, size_t size);
#endif
