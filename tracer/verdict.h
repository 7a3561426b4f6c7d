/* verdict.h: from a decoded call to a decision, independent of the engine
 * that intercepted it: the baseline, the artifacts named on the command
 * line, the policy (both paths of a two-path call, the stricter wins), and
 * the run mode (dry-run turns refusals into would-*). */
#ifndef VG_VERDICT_H
#define VG_VERDICT_H
#include <stdbool.h>
#include "tracer/decode.h"
#include "tracer/engine.h"

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
};

/* root_fd: the sandbox's "/", used to tell a refused call on a path that
 * does not exist (it then fails with ENOENT, exactly as it would outside,
 * so a PATH search or an optional config lookup behaves the same). */
/* A sendmmsg's per-destination decisions go into call->dests, and the
 * destination that decided into call->args. */
void vg_decide_call(const struct vg_engine_ctx *ctx, struct vg_call *call, int root_fd,
                    struct vg_call_verdict *v);
#endif
