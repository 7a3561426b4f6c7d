/* result.h: how a run ended, and the JSON result record a harness grades. */
#ifndef VG_RESULT_H
#define VG_RESULT_H
#include <stdbool.h>
#include <stdint.h>
#include "event/event.h"
#include "tracer/engine.h"
#include "run/iothread.h"
#include "launcher/limits.h"
#include "run/run.h"
#include "util/outfile.h"
#include "insight/summary.h"

struct vg_ending {
    const char *status;     /* ok nonzero signal timeout limit killed error */
    int exit_code;          /* vigil's exit status */
    int cand_code;          /* candidate's exit code, -1 if none */
    int signal;             /* killing signal, 0 if none */
    const char *limit;      /* with status "limit" */
    char error[4700];       /* with status "error" / "killed" */
    const char *hits[VG_LIM_COUNT]; /* limits that were reached */
    unsigned nhits;
    double wall_s, cpu_user_s, cpu_sys_s;
    uint64_t peak_rss;      /* bytes */
};

/* The log's seal as the trailer wrote it (docs/RUN.md, the result's
 * "seal"): the chain value that stands for the whole log, hex. */
struct vg_result_seal {
    bool sealed;                   /* the trailer was written */
    bool signed_log;
    uint64_t records;              /* the log's records, the trailer included */
    char chain[2 * VG_CHAIN_LEN + 1], head[2 * VG_CHAIN_LEN + 1];
    char sig[2 * VG_SIG_LEN + 1], key[2 * VG_CHAIN_LEN + 1];
    char vigil_sha256[2 * VG_CHAIN_LEN + 1], vigil_build_id[2 * VG_CHAIN_LEN + 1];
};

struct vg_result_in {
    const struct vg_run_opts *opts;
    const struct vg_limits *limits;
    const struct vg_enforce *enforce;
    const struct vg_artifact *artifacts;
    unsigned nartifacts;
    const char *policy_path, *policy_sha256;
    const char *image_name, *image_digest; /* --image: as given, "sha256:HEX"; NULL: host trees */
    const char *log_path;
    const char *workdir;
    bool workdir_kept;
    uint64_t start_wall_ns;
    int landlock_abi;
    const char *engine;         /* the engine that ran */
    const char *engine_note;    /* its features, or why --engine notify fell back */
    const struct vg_outcome *outcome;
    const struct vg_io *io;
    const struct vg_ending *end;
    char *const *warnings;  /* what vigil warned about (files it did not show, ...) */
    unsigned nwarnings;
    const struct vg_summary *summary; /* the log's intent summary, or NULL */
    const struct vg_result_seal *seal;
};

/* Work out status and exit code from what the supervisor, the I/O thread
 * and the cgroups (use) saw. */
void vg_ending_decide(struct vg_ending *end, const struct vg_outcome *out,
                      const struct vg_io *io, const struct vg_limits *lim,
                      const struct vg_cg_usage *use);
/* Write the JSON record into f (reserved by run/outputs.c) and rename
 * it into place (util/outfile.h). */
int vg_result_write(struct vg_outfile *f, const struct vg_result_in *in, struct vg_err *err);
/* The record of a run that ended in an error before it ran: status
 * "error", the message, exit_code 125. */
int vg_result_write_error(struct vg_outfile *f, const struct vg_run_opts *o, const char *msg,
                          struct vg_err *err);
#endif
