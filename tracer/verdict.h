/* verdict.h: from a decoded call to a decision, independent of the engine
 * that intercepted it: the baseline, the artifacts named on the command
 * line, the policy (both paths of a two-path call, the stricter wins), and
 * the run mode (dry-run turns refusals into would-*). */
#ifndef VG_VERDICT_H
#define VG_VERDICT_H
#include <stdbool.h>
#include "tracer/decode.h"
#include "tracer/engine.h"

struct stat;

struct vg_call_verdict {
    bool record;               /* false: nothing to decide (plain send) */
    enum vg_decision decision;
    bool refuse;               /* make the call fail with err */
    bool kill;                 /* end the sandbox */
    int err;
    const char *rule_file;     /* NULL: default or baseline */
    uint32_t rule_line;
    const char *rule_text;
    char text_buf[96];         /* rule_text when vigil wrote it itself */
    bool probe;                /* a lookup that found nothing (is_probe, verdict.c) */
};

/* root_fd: the sandbox's "/", used to tell a refused call on a path that
 * does not exist (it then fails with ENOENT, exactly as it would outside,
 * so a PATH search or an optional config lookup behaves the same). */
/* A sendmmsg's per-destination decisions go into call->dests, and the
 * destination that decided into call->args. */
void vg_decide_call(const struct vg_engine_ctx *ctx, struct vg_call *call, int root_fd,
                    struct vg_call_verdict *v);

/* The exec check: after a successful exec, the image that really runs.
 * The path checked before the call may have been swapped by another
 * thread, a #! line names an interpreter, and the command named on the
 * command line may have been replaced: the engine reports what it found
 * at the exec event, while the task is still stopped there. */
struct vg_exec_image {
    const char *exe;        /* /proc/PID/exe; NULL when it cannot be read */
    const struct stat *st;  /* its identity (stat of /proc/PID/exe) */
};
/* decision ALLOW, or KILL (refuse is never set: the exec happened; the
 * task must be killed before it runs, and the run ends), WOULD_KILL in a
 * dry run.  An image that cannot be read is KILL in every mode.  record is
 * false when the policy does not audit exec. */
/* Is an exec of path (canonical, sandbox view) of the file st the command
 * named on the command line?  Its name and, once the candidate's first
 * exec is past, its inode (ctx->command_id). */
bool vg_is_command(const struct vg_engine_ctx *ctx, const char *path, const struct stat *st);
void vg_decide_exec_image(const struct vg_engine_ctx *ctx, const struct vg_exec_image *img,
                          struct vg_call_verdict *v);
#endif
