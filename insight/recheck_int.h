/* recheck_int.h: internal to insight/recheck*.c (and its unit test): a
 * record made the call it was, and the files it met. */
#ifndef VG_INSIGHT_RECHECK_INT_H
#define VG_INSIGHT_RECHECK_INT_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/call.h"
#include "core/decide.h"
#include "core/syscalls.h"
#include "event/event.h"
#include "image/image.h"
#include "insight/recheck.h"
#include "policy/dns_table.h"
#include "policy/policy.h"

/* ---- recheck_call.c: a syscall record -> the call it was ---- */

/* The rule file vigil writes for the files named on the command line
 * (core/decide.c's artifact rule). */
#define VG_RECHECK_CMDLINE_FILE "(command line)"

/* Fill c with the call e records, as the decoders (tracer/decode*.c) made
 * it: row, class, paths the policy is asked about, the socket address(es),
 * the errno a refusal takes, why it could not be judged (a reason the
 * record gives that no policy changes), and whether it was a lookup that
 * found nothing.  Strings point into e or c's arena: e must outlive c.
 * Free c with vg_call_free. */
void vg_recheck_call_of(const struct vg_syscall_ev *e, struct vg_call *c);
/* The address family, address and port of a record as the sockaddr the
 * kernel took (unix: the canonical path, or an abstract "@name"); false
 * when the record has none it can be made of. */
bool vg_recheck_sockaddr(const char *family, const char *addr, int32_t port, const char *raw,
                         struct sockaddr_storage *ss, socklen_t *len);

/* ---- recheck_fs.c: the files, as far as the log tells ---- */

/* What is known of one path at some point of the run. */
enum vg_fact { VG_FACT_UNKNOWN, VG_FACT_MISSING, VG_FACT_FILE, VG_FACT_DIR };

/* The files the log shows, as they were just before the record being
 * decided: learned from every record before it (what a read found, a
 * probe missed, a write made or removed), and from that record itself
 * (what its outcome says was there before it). */
struct vg_recheck_fs {
    struct fact_slot *slots;
    size_t nslots, used;
    uint64_t gen;               /* facts learned so far: their order */
    /* the record being decided: what it says of the state before it */
    struct {
        const char *path;
        enum vg_fact fact;
    } now[3];
    unsigned nnow;
    char up[PATH_MAX];          /* the parent of its path, which now[] may name */
};
void vg_recheck_fs_init(struct vg_recheck_fs *fs, const char *cwd);
void vg_recheck_fs_free(struct vg_recheck_fs *fs);
/* Set what e says of the state before its call (for vg_recheck_fs_view). */
void vg_recheck_fs_before(struct vg_recheck_fs *fs, const struct vg_syscall_ev *e);
/* Then learn what the call left behind, as the run's own outcome says. */
void vg_recheck_fs_after(struct vg_recheck_fs *fs, const struct vg_syscall_ev *e);
enum vg_fact vg_recheck_fs_fact(const struct vg_recheck_fs *fs, const char *path);
/* The decider's view of those facts: unknown answers EIO, which the
 * decider reads as the stricter case (decide.c: a tree, not missing). */
struct vg_fs_view vg_recheck_fs_view(struct vg_recheck_fs *fs);

/* ---- recheck.c and recheck_setup.c: one log ---- */

/* The exec check of the last image a proc record names, until the record
 * after it says whether the run's own check refused it (a kill or
 * would-kill note comes right after the proc record). */
struct vg_recheck_image {
    bool pending;
    uint64_t seq, ts_ns;
    int32_t pid;
    char *exe;
    struct vg_call_verdict v;   /* under the new policy */
};

struct vg_recheck {
    const struct vg_recheck_opts *o;
    struct vg_recheck_run *run;
    struct vg_policy *pol;          /* the new policy, for this run's places */
    struct vg_trees *trees;         /* the run's image's trees (NULL: the host's) */
    struct vg_image_ref img;
    struct vg_audit_set audit;      /* what the new policy has the filter stop */
    bool old_known;                 /* the run's own policy is at hand: */
    struct vg_audit_set old_audit;  /* what it had stopped, so what the log can hold */
    bool seen[VG_CLASS_NCLASSES];   /* classes the log has records of */
    char *cwd;
    char *command;                  /* the command file (sandbox path), or NULL */
    bool exec_seen;                 /* the first exec (vigil's own, of the command) */
    struct vg_recheck_fs fs;
    struct vg_dns_table names;      /* what vigil's resolver handed out, so far */
    struct vg_resolver resolver;
    uint64_t refusals;              /* under the new policy, as the cap counts */
    bool ended_by_cap;              /* the run's own refusals cap ended it */
    uint64_t last_seq, last_ts_ns;  /* the log's last record */
    uint64_t nrecords;              /* read so far, the header included */
    struct vg_recheck_image image;
};

/* Everything the header decides: the new policy loaded in the run's
 * trees and compiled for its places, the run's own policy's audit set,
 * the command file, the resolver, the refusals cap, and what of this run
 * cannot be known (an image not in this store, limits that differ).  -1
 * with err when the new policy does not compile for this run. */
int vg_recheck_setup(struct vg_recheck *R, const struct vg_header *h, struct vg_err *err);
/* What the log cannot hold, said once the whole log is read (classes the
 * run's policy did not record). */
void vg_recheck_setup_end(struct vg_recheck *R);
void vg_recheck_teardown(struct vg_recheck *R);
/* One line of what this recheck cannot know (printf-like). */
void vg_recheck_unknown(struct vg_recheck_run *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif
