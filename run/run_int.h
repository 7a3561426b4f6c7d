/* run_int.h: the state of one `vigil run`, shared by the files that
 * carry it out (run.c: the sequence; artifacts.c: the files named on the
 * command line; outputs.c: the log and result files; runlog.c: the run's
 * own records in the log). */
#ifndef VG_RUN_INT_H
#define VG_RUN_INT_H

#include "event/writer.h"
#include "tracer/engine.h"
#include "launcher/filter.h"
#include "tracer/notify/probe.h"
#include "launcher/plan.h"
#include "net/dns.h"
#include "run/result.h"
#include "run/run.h"
#include "run/selfhash.h"
#include "core/syscalls.h"
#include "image/image.h"
#include "util/outfile.h"

/* A held run's request (run/hold.c): what it names, owned here. */
#define VG_HOLD_NFDS 3
struct vg_held {
    char **argv, **env;         /* NULL-terminated */
    unsigned argc, nenv;
    char *log, *result, *task_id;
    int fds[VG_HOLD_NFDS];      /* the candidate's stdin, stdout, stderr; -1 */
};

struct run {
    struct vg_run_opts *o;
    struct vg_policy *pol;
    const char *policy_name;
    char *policy_file;          /* what -p named, found (policy/find.c) */
    char *image_ref;            /* --image, or the policy's `image`; NULL: the host's trees */
    struct vg_image_ref image;  /* what it names in the store */
    char image_digest[80];      /* "sha256:HEX", or "" */
    struct vg_trees *trees;     /* the image's trees (NULL: vg_system_trees) */
    struct vg_limits limits;
    struct vg_enforce enf;      /* how each limit is held; the cgroups */
    char *workdir;
    bool own_workdir;
    char *log_path;
    struct vg_log *log;
    struct vg_outfile log_out;    /* the log until it is renamed into place */
    int log_fd;                   /* the log's file, kept to read it back for the
                                   * result's summary (never by its name); -1 */
    struct vg_outfile result_out; /* reserved before anything runs */
    bool result_refused;          /* --result itself refused: no record goes there */
    struct vg_artifact *artifacts;
    char **artifact_paths;      /* sandbox view */
    char **artifact_hosts;      /* canonical host paths */
    unsigned nartifacts;
    char *command_path;
    char **warnings;            /* said on stderr, kept for the log and the result */
    unsigned nwarnings;
    struct vg_plan plan;
    struct vg_dns_upstream dns_upstream; /* where vigil's resolver asks (plan.dns) */
    struct vg_dns_table dns_table;       /* what it handed out: the rules' host names */
    struct vg_bpf cand_bpf, init_bpf;
    struct vg_audit_set audit;  /* what is intercepted at all */
    const struct vg_engine *engine;  /* --engine, or ptrace when notify cannot run */
    struct vg_notify_features notify;
    char engine_note[200];           /* features found, or why notify fell back */
    uint64_t start_wall, start_mono;
    char kernel[300];
    struct vg_sigkey sign_key;  /* --sign-key, read before anything runs */
    struct vg_selfhash selfhash; /* vigil's own binary, for a signed seal */
    char build_id[2 * VG_SHA256_LEN + 1]; /* its GNU build id, or "" */
    struct vg_result_seal seal; /* what the trailer sealed, for the result */
    struct vg_held held;        /* --hold: the request, once it came */
    struct vg_err err;
};

/* run.c: a warning: one line on stderr, a note in the log, an entry in
 * the result's "warnings". */
void vg_run_warn(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* image.c: the image the run uses (--image, else the policy's), found in
 * the store, its trees set in the plan and the policy loaded again with
 * its rules resolved there.  0 (also when there is none), or -1. */
int vg_run_image(struct run *r);
void vg_run_image_free(struct run *r);

/* artifacts.c: hash --artifact files, or every argument naming a file that
 * is neither hidden nor part of the system; record their sandbox paths. */
int vg_run_artifacts(struct run *r);

/* outputs.c: choose the log's path, check -o and --result against the
 * inputs and the candidate's writable trees, reserve both (the log is
 * open on a file of vigil's own from here on). */
int vg_run_outputs(struct run *r);
/* Rename the log into place (once the sandbox has started). */
int vg_run_log_commit(struct run *r);
/* Remove whatever of the outputs was not committed. */
void vg_run_outputs_discard(struct run *r);

/* hold.c: --hold FD is a unix SOCK_SEQPACKET socket (made close-on-exec). */
int vg_hold_check(struct run *r);
/* Say "ready" on it, wait for the request (EOF or a signal: -1 with
 * r->err) and take it into the run's options and r->held. */
int vg_hold_request(struct run *r, pid_t init_pid);
void vg_hold_free(struct vg_held *h);
/* artifacts.c, held: the files the request's command names, taken in
 * as vg_run_artifacts takes them; one the held sandbox does not show
 * already is refused (its mounts are made). */
int vg_run_command_artifacts(struct run *r);

/* runlog.c */
int vg_run_header(struct run *r);
/* A note record (docs/FORMAT.md, "note"): -1 when the log cannot take it. */
int vg_run_note(struct run *r, const char *what, const char *detail);
void vg_run_trailer(struct run *r, const struct vg_engine_ctx *ctx, const struct vg_ending *end);
#endif
