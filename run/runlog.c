/* runlog.c: the records the run writes about itself: the header before
 * anything runs, the notes on how it ended, the trailer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "launcher/hostuid.h"
#include "launcher/limits.h"
#include "launcher/plan.h"
#include "run/run_int.h"
#include "util/fastsha.h"

/* Room for the sandbox's own trees (launcher/plan.c has two). */
#define VG_MAX_SCRATCH 8

int vg_run_note(struct run *r, const char *what, const char *detail)
{
    struct vg_record rec = {.type = VG_REC_NOTE};
    rec.u.note = (struct vg_note_ev){.ts_ns = vg_now_mono_ns() - r->start_mono, .what = what,
                                     .detail = detail};
    return vg_log_write(r->log, &rec);
}

/* The limits in force (a limit with no value, like cpus unless set, is
 * not one), each with the mechanism this run holds it by. */
static uint32_t limit_recs(const struct run *r, struct vg_limit_rec *out)
{
    uint32_t n = 0;
    for (int i = 0; i < VG_LIM_COUNT; i++)
        if (r->enf.how[i] != VG_MECH_NONE)
            out[n++] = (struct vg_limit_rec){.name = vg_limit_name(i), .value = r->limits.v[i],
                                             .enforced_by = vg_limit_mech_name(r->enf.how[i])};
    return n;
}

int vg_run_header(struct run *r)
{
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(r->kernel, sizeof r->kernel, "%s %s", u.release, u.version);
    struct vg_limit_rec lim[VG_LIM_COUNT];
    uint32_t nlim = limit_recs(r, lim);
    const char *scratch[VG_MAX_SCRATCH];
    uint32_t nscratch = vg_plan_scratch(&r->plan, scratch, VG_MAX_SCRATCH);
    if (r->o->sign_key)
        vg_log_sign(r->log, &r->sign_key);
    uid_t uid;
    gid_t gid;
    vg_host_ids(r->o, &uid, &gid);
    struct vg_record rec = {.type = VG_REC_HEADER};
    rec.u.header = (struct vg_header){
        .format = VG_FORMAT_VERSION, .vigil_version = VG_VERSION,
        .start_wall_ns = r->start_wall, .start_mono_ns = r->start_mono, .kernel = r->kernel,
        .argv = (const char *const *)r->o->argv, .argc = (uint32_t)r->o->argc,
        .cwd = r->workdir, .host_uid = (uint32_t)uid, .task_id = r->o->task_id,
        .mode = r->o->mode == VG_MODE_DRY_RUN ? "dry-run" : "enforce", .engine = r->engine->name,
        .engine_note = r->engine_note[0] ? r->engine_note : NULL,
        .policy_path = r->policy_name, .policy_sha256 = vg_policy_sha256(r->pol),
        .policy_text = vg_policy_text(r->pol), .limits = lim, .nlimits = nlim,
        .artifacts = r->artifacts, .nartifacts = r->nartifacts,
        .scratch = scratch, .nscratch = nscratch,
        .image_name = r->image_ref, .image_digest = r->image_digest[0] ? r->image_digest : NULL,
    };
    int rc = vg_log_write(r->log, &rec);
    for (unsigned i = 0; rc == 0 && i < r->nwarnings; i++)
        rc = vg_run_note(r, "warning", r->warnings[i]);
    if (rc < 0)
        vg_errf(&r->err, "%s", vg_log_error(r->log));
    return rc;
}

/* How the run ended, as notes a reader of the log sees in order. */
static void ending_notes(struct run *r, const struct vg_ending *end)
{
    char buf[256];
    if (!strcmp(end->status, "timeout")) {
        snprintf(buf, sizeof buf, "wall-clock limit of %.3fs reached: sandbox killed",
                 (double)r->limits.v[VG_LIM_TIME] / 1000);
        vg_run_note(r, "timeout", buf);
    }
    for (unsigned i = 0; i < end->nhits; i++) {
        if (!strcmp(end->hits[i], "time"))
            continue;
        snprintf(buf, sizeof buf, "limit %s reached", end->hits[i]);
        vg_run_note(r, "limit", buf);
    }
    if (!strcmp(end->status, "error") && end->error[0])
        vg_run_note(r, "error", end->error);
}

void vg_run_trailer(struct run *r, const struct vg_engine_ctx *ctx,
                    const struct vg_ending *end)
{
    ending_notes(r, end);
    struct vg_count cnt[VG_CLASS_NCLASSES * VG_DEC_NDECISIONS];
    uint32_t n = 0;
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        for (int d = 0; d < VG_DEC_NDECISIONS; d++)
            if (ctx->out.counts[c][d])
                cnt[n++] = (struct vg_count){.cls = c, .decision = d, .n = ctx->out.counts[c][d]};
    struct vg_record rec = {.type = VG_REC_TRAILER};
    rec.u.trailer = (struct vg_trailer){
        .ts_ns = vg_now_mono_ns() - r->start_mono, .status = end->status,
        .exit_code = end->exit_code, .signal = end->signal, .limit = end->limit,
        .elapsed_ns = vg_now_mono_ns() - r->start_mono, .events = vg_log_count(r->log),
        .counts = cnt, .ncounts = n,
        /* the writer adds the chain's head and the key */
        .seal = {.vigil_build_id = vg_self_build_id(r->build_id, sizeof r->build_id)
                                       ? r->build_id : NULL,
                 .vigil_sha256 = vg_selfhash_wait(&r->selfhash),
                 .policy_sha256 = vg_policy_sha256(r->pol),
                 .image_digest = r->image_digest[0] ? r->image_digest : NULL,
                 .artifacts = r->artifacts, .nartifacts = r->nartifacts,
                 .engine = r->engine->name, .kernel = r->kernel,
                 .start_wall_ns = r->start_wall, .end_wall_ns = vg_now_wall_ns()},
    };
    if (vg_log_write(r->log, &rec) < 0)
        return;
    struct vg_result_seal *s = &r->seal;
    s->sealed = true;
    s->signed_log = rec.sealed_sig;
    s->records = vg_log_count(r->log);
    vg_hex(rec.chain, VG_CHAIN_LEN, s->chain);
    snprintf(s->head, sizeof s->head, "%s", rec.u.trailer.seal.head);
    snprintf(s->vigil_sha256, sizeof s->vigil_sha256, "%s",
             rec.u.trailer.seal.vigil_sha256 ? rec.u.trailer.seal.vigil_sha256 : "");
    snprintf(s->vigil_build_id, sizeof s->vigil_build_id, "%s", r->build_id);
    if (rec.sealed_sig) {
        vg_hex(rec.sig, VG_SIG_LEN, s->sig);
        vg_hex(r->sign_key.pub, VG_PUBKEY_LEN, s->key);
    }
}

