/* run_int.h: the state of one `vigil run`, shared by the files that
 * carry it out (run.c: the sequence; artifacts.c: the files named on the
 * command line; runlog.c: the run's own records in the log). */
#ifndef VG_RUN_INT_H
#define VG_RUN_INT_H

#include "event/writer.h"
#include "tracer/engine.h"
#include "tracer/filter.h"
#include "tracer/notify/probe.h"
#include "tracer/plan.h"
#include "tracer/result.h"
#include "tracer/run.h"

struct run {
    struct vg_run_opts *o;
    struct vg_policy *pol;
    const char *policy_name;
    char *policy_file;          /* what -p named, found (policy/find.c) */
    struct vg_limits limits;
    char *workdir;
    bool own_workdir;
    char *log_path;
    struct vg_log *log;
    struct vg_artifact *artifacts;
    char **artifact_paths;      /* sandbox view */
    char **artifact_hosts;      /* canonical host paths */
    unsigned nartifacts;
    char *command_path;
    struct vg_plan plan;
    struct vg_bpf cand_bpf, init_bpf;
    bool audited[VG_CLASS_NCLASSES]; /* per class: intercepted at all? */
    const struct vg_engine *engine;  /* --engine, or ptrace when notify cannot run */
    struct vg_notify_features notify;
    char engine_note[200];           /* features found, or why notify fell back */
    uint64_t start_wall, start_mono;
    char kernel[300];
    struct vg_err err;
};

/* artifacts.c: hash --artifact files, or every argument naming a file that
 * is neither hidden nor part of the system; record their sandbox paths. */
int vg_run_artifacts(struct run *r);

/* runlog.c */
int vg_run_header(struct run *r);
void vg_run_trailer(struct run *r, const struct vg_engine_ctx *ctx, const struct vg_ending *end);
#endif
