/* views.h: the decider (core/decide.h) over the real run.  Its views of
 * the world are here, because they do I/O: the sandbox's files through
 * the O_PATH fd of its root, the resolver's table of handed-out names and
 * the run's network plan.  Both engines decide through these calls. */
#ifndef VG_TRACER_VIEWS_H
#define VG_TRACER_VIEWS_H
#include <sys/stat.h>

#include "core/decide.h"
#include "tracer/engine.h"

/* root_fd: the sandbox's "/" (-1: none known, every file is unknown). */
void vg_decide_call(const struct vg_engine_ctx *ctx, struct vg_call *call, int root_fd,
                    struct vg_call_verdict *v);
/* The exec check (vg_decide_exec) of what /proc/PID/exe named (exe NULL:
 * it could not be read) and is (st). */
void vg_decide_exec_image(const struct vg_engine_ctx *ctx, const char *exe, const struct stat *st,
                          struct vg_call_verdict *v);

/* What the decider knows of a file, from its stat. */
void vg_fs_node_of(const struct stat *st, struct vg_fs_node *node);
/* The decider's view of the files under *root_fd (which must outlive it). */
struct vg_fs_view vg_fs_view_at(const int *root_fd);
/* The decider's context for the run ctx, with these views. */
void vg_decide_ctx_of(const struct vg_engine_ctx *ctx, const struct vg_fs_view *fs,
                      const struct vg_net_view *net, struct vg_decide_ctx *d);
#endif
