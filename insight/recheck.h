/* recheck.h: `vigil recheck`: every decision a run's log records, made
 * again under another policy by the one decider (core/decide.h), nothing
 * run.  Each syscall record becomes the call it was (recheck_call.c), the
 * files it met answer from what the log says of them (recheck_fs.c), the
 * exec check judges each image again and vigil's resolver each name.
 * What changes is listed, with a verdict for the run; what the log cannot
 * tell (calls the run's policy did not record, what a candidate would
 * have done after a different answer) is said, never guessed
 * (docs/RECHECK.md). */
#ifndef VG_INSIGHT_RECHECK_H
#define VG_INSIGHT_RECHECK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "util/util.h"

struct vg_recheck_opts {
    const char *policy;     /* the new policy's file (found by vg_policy_find) */
    const char *home;       /* ~ as the run had it (the log does not say), or NULL */
};

/* What was decided again: a syscall record, the exec check of an image a
 * proc record names, or a name asked of vigil's resolver. */
enum vg_recheck_kind { VG_RK_CALL, VG_RK_EXEC_CHECK, VG_RK_NAME };

/* A rule as a change names it (copied: the policies and records it came
 * from are freed long before the report is written). */
struct vg_recheck_rule {
    char *file;             /* NULL: a default or one of vigil's own reasons */
    uint32_t line;
    char *text;
};

/* One decision that differs. */
struct vg_recheck_change {
    enum vg_recheck_kind kind;
    uint64_t seq, ts_ns;
    int32_t pid;
    enum vg_class cls;
    char *name;             /* the syscall's; "exec check"; the query type */
    char *target;           /* path(s), address, image or host name, raw */
    bool probe;
    enum vg_decision old_dec, new_dec;
    struct vg_recheck_rule old_rule, new_rule;
    int new_errno;          /* what a refusal now fails with (0: none) */
    char *source;           /* the candidate's line, "cand.py:3 in <module>", or NULL */
};

/* One log, decided again. */
struct vg_recheck_run {
    char *log;
    char *task_id;          /* the header's, or NULL */
    bool dry_run;
    char *old_policy;       /* the header's policy path */
    uint64_t decided;       /* decisions made again (calls, images, names) */
    struct vg_recheck_change *changes;
    size_t nchanges, cap_changes;
    uint64_t to_refused;    /* allowed before, refused (or killed) now */
    uint64_t to_allowed;    /* refused before, allowed now */
    uint64_t refused;       /* calls the new policy refuses (kills aside) */
    uint64_t refused_probes; /* of them, probes: ENOENT either way */
    uint64_t names_refused; /* names vigil's resolver would not answer */
    /* The first kill (or would-kill) under the new policy: an enforcing
     * run ends there. */
    bool killed;
    uint64_t kill_seq;
    char *kill_what;        /* "+0.228 (exec /usr/bin/nc, new.policy:9)" */
    /* The refusals cap, and where the new decisions reach it (0: never). */
    uint64_t cap;
    uint64_t cap_seq, cap_ts_ns;
    /* Where a log of an enforcing run stops telling what the candidate
     * would do: the first change to what a call returned (0: none). */
    uint64_t diverges_seq;
    /* The first call or name the new policy refuses that the candidate
     * would see refused (a probe fails ENOENT either way): where a run
     * enforcing it would first go another way than a dry run (0: none). */
    uint64_t first_refused_seq;
    char **unknown;         /* what this recheck cannot know, one line each */
    size_t nunknown;
    bool truncated;         /* no trailer, or a record cut off: decided up to there */
    char *status;           /* the trailer's status, or NULL */
};

/* Load the new policy once, as every log will (on the host's trees), so
 * that a bad one is one error before any log is read.  0, or -1 with err
 * ("FILE:LINE:COL: ..."). */
int vg_recheck_policy_check(const struct vg_recheck_opts *o, struct vg_err *err);
/* Decide every record of log again.  0 with run filled (free it with
 * vg_recheck_run_free, also after an error); -1 with err naming the log
 * and what is wrong (missing, not a vigil log, a corrupt record, the
 * policy failing to compile for this run's places). */
int vg_recheck_log(const struct vg_recheck_opts *o, const char *log, struct vg_recheck_run *run,
                   struct vg_err *err);
void vg_recheck_run_free(struct vg_recheck_run *run);

/* Does anything of the run differ under the new policy? */
bool vg_recheck_changed(const struct vg_recheck_run *run);
/* Would an enforcing run under the new policy be refused nothing that
 * matters (probes aside) and killed by nothing? */
bool vg_recheck_passes(const struct vg_recheck_run *run);
/* "would pass", "would be refused 3 calls (1 probe)", "would be killed
 * at +0.228 (exec /usr/bin/nc)", into out. */
void vg_recheck_verdict(const struct vg_recheck_run *run, struct vg_buf *out);

/* ---- output (recheck_fmt.c) ---- */
/* One run as text: its changes (the first max, 0: all), verdict, unknowns. */
void vg_recheck_text(const struct vg_recheck_run *run, size_t max, struct vg_buf *out);
/* One run as one JSON object (no newline). */
void vg_recheck_json(const struct vg_recheck_run *run, struct vg_buf *out);
/* The batch table: one row per run, named ids[i] (a NULL run: none, for
 * the reason absent[i] gives, "no log"), then a totals line. */
void vg_recheck_table(const struct vg_recheck_run *const *runs, const char *const *ids,
                      const char *const *absent, size_t n, struct vg_buf *out);
/* The summary object of --json (no newline): counts over the runs. */
void vg_recheck_summary_json(const struct vg_recheck_run *const *runs, size_t n, size_t missing,
                             size_t failed, struct vg_buf *out);
#endif
