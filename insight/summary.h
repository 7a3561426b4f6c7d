/* summary.h: the intent summary of a run: what a candidate tried that a
 * reviewer wants to see first, grouped so that one attempt is one line.
 * Fed one record at a time (from `vigil log --summary` or, at the end of a
 * run, from the log it wrote: run/result.c), rendered as text or JSON.
 *
 * Categories (docs/FORMAT.md "vigil log --summary" has the exact rules):
 * secrets and home paths touched, network attempts (names refused by
 * vigil's resolver among them), programs the policy does not let run,
 * writes outside the workdir, deletions outside it.  What the sandbox and
 * the C library do on their own (a PATH search's lookups of what does not
 * exist, the sandbox's private /tmp, vigil's resolver, nscd) is noise:
 * counted apart, never an attempt. */
#ifndef VG_INSIGHT_SUMMARY_H
#define VG_INSIGHT_SUMMARY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "util/util.h"

enum vg_sum_cat {
    VG_SUM_SECRETS, VG_SUM_NETWORK, VG_SUM_EXEC, VG_SUM_WRITES, VG_SUM_DELETIONS,
    VG_SUM_NCATS
};

/* Records that look like an attempt and are not one (classify.c). */
enum vg_sum_noise {
    VG_NOISE_NONE,
    VG_NOISE_PROBE,    /* a lookup of what does not exist: a PATH search's tries */
    VG_NOISE_SCRATCH,  /* in the sandbox's own trees (its private /tmp, /dev/shm) */
    VG_NOISE_RESOLVER, /* to vigil's resolver, the one the sandbox is given */
    VG_NOISE_NSCD,     /* the C library asking nscd, before every name lookup */
    VG_NOISE_NKINDS
};

/* Where a run's records are judged: from its header. */
struct vg_sum_places {
    char *workdir;       /* the header's cwd, or NULL */
    char **scratch;      /* the header's scratch (older logs: the sandbox's own trees) */
    size_t nscratch;
};

/* Distinct things kept per category; attempts on more are only counted. */
#define VG_SUM_MAX_ITEMS 200

/* One thing tried, with every attempt on it. */
struct vg_sum_item {
    char *what;          /* a path, "tcp 93.184.216.34:80", a program's name */
    char *host;          /* network: the name the record gives, or NULL */
    char *source;        /* the first attempt's source line ("cand.py:14 in f"), or NULL */
    struct vg_buf paths; /* exec: the paths tried, space-separated, the first few */
    struct vg_buf rcodes; /* a name refused: its answers' rcodes, '/'-separated */
    uint64_t count;      /* attempts (a PATH search is one) */
    uint64_t first_ts;   /* ns since the start of the run */
    unsigned decisions;  /* bit (1 << vg_decision) per decision seen */
    bool found;          /* some attempt found the object (not only probes) */
    bool dns;            /* a name refused (a dns record), what is "dns NAME" */
};

struct vg_sum_list {
    struct vg_sum_item *items;
    size_t n, cap;
    uint64_t total;      /* attempts in all */
    uint64_t more;       /* attempts on things past VG_SUM_MAX_ITEMS */
};

struct vg_exec_try;      /* an open PATH search (summary.c) */

struct vg_summary {
    struct vg_sum_list cat[VG_SUM_NCATS];
    uint64_t noise[VG_NOISE_NKINDS]; /* records (PATH searches) left out, by why */
    struct vg_sum_places places;
    struct vg_exec_try *tries;
    size_t ntries, captries;
};

void vg_summary_init(struct vg_summary *s);
void vg_summary_add(struct vg_summary *s, const struct vg_record *r);
/* After the last record: close the PATH searches still open. */
void vg_summary_finish(struct vg_summary *s);
void vg_summary_free(struct vg_summary *s);
/* Read a whole log into s (init, add, finish).  0; 1 with err saying so
 * when the log is truncated or corrupt (s then has its complete records);
 * -1 with err when the file cannot be opened or is not a vigil log. */
int vg_summary_of_log(const char *path, struct vg_summary *s, struct vg_err *err);

/* Rendering (summary_fmt.c).  color: ANSI colours for the decisions. */
void vg_summary_text(const struct vg_summary *s, struct vg_buf *out);
struct vg_json;
void vg_summary_json(const struct vg_summary *s, struct vg_json *j);
/* classify.c.  Is path (sandbox view) a secret or a home path? */
bool vg_sum_is_secret(const char *path);
/* The category record e would count in, its item's name appended to what
 * (nothing for exec: the PATH search names it); -1 for none.  Noise is
 * not told apart here: vg_sum_noise_of says it. */
int vg_sum_category(const struct vg_sum_places *pl, const struct vg_syscall_ev *e,
                    struct vg_buf *what);
/* Is record e noise, and which?  A secret never is; a PATH search's
 * refusals are noise when every one was a probe (summary.c). */
enum vg_sum_noise vg_sum_noise_of(const struct vg_sum_places *pl, const struct vg_syscall_ev *e);
/* The scratch tree path lies in ("/tmp"), or NULL. */
const char *vg_sum_scratch_tree(const struct vg_sum_places *pl, const char *path);
/* pl from a header (copies); vg_sum_places_free undoes it. */
void vg_sum_places_set(struct vg_sum_places *pl, const struct vg_header *h);
void vg_sum_places_free(struct vg_sum_places *pl);
#endif
