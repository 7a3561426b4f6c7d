/* report_int.h: what vigil report's files share (report.h is the outside
 * of it): the tally, the report's data, and the lists' names. */
#ifndef VG_INSIGHT_REPORT_INT_H
#define VG_INSIGHT_REPORT_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "insight/report.h"
#include "insight/summary.h"
#include "util/util.h"

/* ---- the tally (report_tally.c): distinct things, counted across
 * candidates, each candidate once among its "cands" ---- */
struct vg_tally_ent {
    char *key;           /* what: a path, "tcp 1.1.1.1:443", a program, a source key */
    char *extra;         /* network: the host name; sources: the location "cand.py:3 in f" */
    char *example;       /* sources: the first candidate's id */
    uint64_t count;      /* attempts, execs, refusals */
    uint64_t cands;      /* candidates with at least one */
    unsigned decisions;  /* bit (1 << vg_decision) per decision seen */
    size_t last;         /* the candidate counted last, plus one: cands counts each once */
};

struct vg_tally {
    struct vg_tally_ent *e;
    size_t n, cap;
    size_t *slots;       /* open addressing: entry index + 1, 0 empty */
    size_t nslots;
};

/* Adds n to key's entry for candidate cand (0-based; candidates are added
 * one after another, each whole); the entry. */
struct vg_tally_ent *vg_tally_add(struct vg_tally *t, const char *key, size_t cand, uint64_t n);
const struct vg_tally_ent *vg_tally_find(const struct vg_tally *t, const char *key);
/* The entries, most candidates first, then most counted, then by key
 * (malloc'd; t->n of them). */
const struct vg_tally_ent **vg_tally_sorted(const struct vg_tally *t);
void vg_tally_free(struct vg_tally *t);

/* ---- the lists: the summary's categories, then two from the logs ---- */
enum vg_rep_kind {
    VG_REP_SECRETS = VG_SUM_SECRETS,
    VG_REP_NETWORK = VG_SUM_NETWORK,
    VG_REP_EXEC = VG_SUM_EXEC,           /* programs the policy does not allow */
    VG_REP_WRITES = VG_SUM_WRITES,
    VG_REP_DELETIONS = VG_SUM_DELETIONS,
    VG_REP_PROGRAMS = VG_SUM_NCATS,      /* programs run: the log's exec records */
    VG_REP_SOURCES,                      /* source lines behind refusals */
    VG_REP_NLISTS
};

struct vg_rep_list_info {
    const char *key;     /* JSON key, and the summary's for the first five */
    const char *title;   /* heading */
    const char *unit;    /* what count counts, one: "attempt", "exec", "refusal" */
};
extern const struct vg_rep_list_info vg_rep_lists[VG_REP_NLISTS];

/* A source key is its line's text, 't' first, when the line could be
 * read from the task's work dir, else 'l' and its location: two
 * candidates' "cand.py:3" are the same line only when they say the same. */
#define VG_REP_SRC_TEXT 't'
#define VG_REP_SRC_PLACE 'l'

struct vg_rep_list {
    uint64_t count;      /* attempts, execs, refusals */
    uint64_t cands;      /* candidates with at least one */
    uint64_t untracked;  /* summaries' attempts on things past their 200 items */
    struct vg_tally items;
};

/* The fleet, or one group of it. */
struct vg_rep_group {
    char *name;          /* the label's value; NULL for the fleet and for "no such label" */
    bool fleet;
    uint64_t ncand;
    struct vg_tally status;      /* status -> candidates */
    struct vg_tally limits;      /* limit hit -> candidates */
    uint64_t refusals[VG_CLASS_NCLASSES];
    uint64_t refused;            /* refusals in all */
    uint64_t refused_cands;      /* candidates with at least one */
    uint64_t no_source;          /* refusals without a frame of the candidate's */
    struct vg_rep_list list[VG_REP_NLISTS];
};

/* How a candidate's log was read. */
enum vg_rep_log {
    VG_REP_LOG_READ,       /* whole */
    VG_REP_LOG_NONE,       /* the result names none: the run failed before it ran */
    VG_REP_LOG_MISSING,    /* named, not there */
    VG_REP_LOG_CUT,        /* truncated or corrupt: counted up to its last complete record */
    VG_REP_LOG_UNSAFE,     /* a task id that is no task directory's name: not looked for */
    VG_REP_LOG_NSTATES
};
extern const char *const vg_rep_log_names[VG_REP_LOG_NSTATES];

/* What the log adds to a candidate (report_log.c). */
struct vg_rep_logfacts {
    struct vg_tally programs;    /* exe -> execs */
    struct vg_tally sources;     /* source key -> refusals (extra: the location) */
    uint64_t no_source;
};

struct vg_rep_cand {
    char *id;
    char *group;         /* the label's value, or NULL */
    char *status;
    bool has_exit;
    int64_t exit_code;
    char *limits;        /* limits hit, space-separated; "" none */
    bool summary;        /* the record has a summary */
    uint64_t refusals[VG_CLASS_NCLASSES];
    uint64_t refused;
    uint64_t n[VG_REP_NLISTS];   /* per list: attempts, execs, refusals with a line */
    enum vg_rep_log log;
};

struct vg_report {
    char *dir;           /* the batch directory */
    char *results;       /* the results file read */
    char *by;            /* the label grouped by, or NULL */
    unsigned top;
    struct vg_rep_cand *cands;
    size_t ncands, capcands;
    struct vg_rep_group fleet;
    struct vg_rep_group *groups; /* sorted by name, "no such label" last */
    size_t ngroups;
    char **warnings;
    size_t nwarnings;
};

/* report_log.c: the facts of candidate id's log at path (init'd here).
 * 0; 1 when the log was cut (err says where: f has what came before);
 * -1 with err when it cannot be read at all.  workdir: the task's work
 * dir on the host, where its source files are. */
int vg_rep_log_read(const char *path, const char *workdir, struct vg_rep_logfacts *f,
                    struct vg_err *err);
void vg_rep_logfacts_free(struct vg_rep_logfacts *f);

/* report_fmt.c: helpers the renderings share. */
/* A label's value for a person: NULL, the label missing, is "(no LABEL)". */
void vg_rep_label_name(const struct vg_report *r, const char *value, struct vg_buf *out);
/* A group's name for a person: the fleet "all", else its label's value. */
void vg_rep_group_name(const struct vg_report *r, const struct vg_rep_group *g,
                       struct vg_buf *out);
/* Candidates of g with status "ok". */
uint64_t vg_rep_ok(const struct vg_rep_group *g);
/* A source entry's line text; NULL when it was not read (its extra, the
 * location, is all there is). */
const char *vg_rep_src_text(const struct vg_tally_ent *e);
/* The decisions of mask, "deny/would-deny". */
void vg_rep_decisions(unsigned mask, struct vg_buf *out);
#endif
