/* svclog.h: the service log of `vigil serve` (issue 26, docs/FORMAT.md,
 * "The service log").  One file per start of the daemon, in the run logs'
 * msgpack family: the same framing, sequence numbers and SHA-256 chain
 * (event/writer.c writes every record), so that `vigil log`, `vigil view`
 * and `vigil verify` read it and a daemon killed at any moment leaves a
 * log whose every complete record is readable.
 *
 * Every string in an event may be chosen by a user (run ids, user names,
 * reasons): it is stored as given and escaped only where it is shown. */
#ifndef VG_SVCLOG_H
#define VG_SVCLOG_H

#include <stdint.h>

#include "event/event.h"
#include "util/util.h"

/* What happened: enum vg_svc_kind (VG_SVC_START ... VG_SVC_DELETED) is
 * in event/event.h, with the log's other enumerations, so that the writer
 * here and every reader share one list of names. */

/* One event.  Fields a kind does not use are left zero / NULL (a
 * designated initializer does that) and are not written; but uid is
 * always meant: 0 is root, -1 the daemon's own event. */
struct vg_svc_event {
    enum vg_svc_kind kind;
    int64_t uid;            /* the user's uid, -1 for the daemon's own events */
    const char *user;       /* the user's name, or NULL */
    const char *run;        /* run id, or NULL */
    const char *slot;       /* pool sandbox id ("p12"), or NULL */
    const char *quota;      /* REFUSED by a quota: "runs", "concurrent", "cpu", "wall", "stored"; else NULL */
    const char *reason;     /* one line, or NULL */
    uint64_t retry_after_s; /* REFUSED by a quota: when to retry */
    int exit_code;          /* FINISHED */
    const char *status;     /* FINISHED: the run's result status ("ok", "timeout", ...), or NULL */
    double cpu_s, wall_s;   /* FINISHED */
    uint64_t host_uid;      /* ASSIGNED: the candidate's host uid (0: none) */
    int pid;                /* STARTED: the run's vigil process; 0: none */
};

struct vg_svclog;

/* A new log file in dir (created 0700 if missing) for this start of the
 * daemon, named so that they sort by time
 * (service-20261204T201500Z-PID.msgpack); its first record is a header.
 * The file is created O_EXCL, never opened if it exists.  NULL with err. */
struct vg_svclog *vg_svclog_open(const char *dir, struct vg_err *err);
/* Thread-safe; the record is written (one write(2)) before it returns;
 * stamped with the time inside.  0, or -1 with err (the log is then dead:
 * every later write fails too). */
int vg_svclog_write(struct vg_svclog *l, const struct vg_svc_event *e, struct vg_err *err);
/* The file's path, as opened (dir/service-...msgpack). */
const char *vg_svclog_path(const struct vg_svclog *l);
/* Writes the closing record (a trailer, which seals the chain), closes
 * and frees.  -1 if that or any earlier write failed.  NULL: nothing. */
int vg_svclog_close(struct vg_svclog *l);

#endif
