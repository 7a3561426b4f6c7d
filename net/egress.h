/* egress.h: pasta, the sandbox's one way out (see net.h).
 *
 * vigil starts pasta as its own child once the sandbox's namespaces exist
 * and before the candidate runs: pasta joins the sandbox's user and
 * network namespaces, makes a tap device there with the host's addresses
 * and default routes, and carries the namespace's TCP, UDP and ICMP echo
 * out through sockets of its own in the host's namespace.  No port is
 * forwarded in either direction, the gateway address is not mapped to the
 * host's loopback, no DNS is forwarded or handed out, no pid file, socket
 * or log is written.  pasta dies with vigil (parent-death signal) and at
 * the end of the run (when the sandbox's pid 1 is gone); a watcher thread
 * notes when it dies before that, after which the namespace has no route
 * out (its tap device is gone with pasta). */
#ifndef VG_NET_EGRESS_H
#define VG_NET_EGRESS_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/util.h"

/* The program: Debian's passt package.  VIGIL_PASTA (the caller's
 * environment, which is trusted as the command line is) may name
 * another, for tests. */
#define VG_PASTA "/usr/bin/pasta"

struct vg_egress {
    pid_t pid;              /* pasta, a child of vigil; 0: none */
    pid_t init;             /* the sandbox's pid 1 */
    int pidfd, init_pidfd, err_fd, stop_fd;
    int ready_fd;           /* pasta's "pid file": its pid once it is ready */
    uint64_t t0;            /* when it was started */
    pthread_t watcher;
    bool watching;
    uint64_t start_ns;      /* pasta's start-up, for the note */
    atomic_uint_fast64_t died_mono_ns; /* pasta ended before the sandbox: when; 0 if not */
    char last_err[160];     /* pasta's last line on stderr (the watcher's) */
    int (*bill_self)(void); /* see vg_egress_start */
    bool kept;              /* pid is pasta's keeper (vg_egress_start) */
};

/* No pasta yet: vg_egress_stop does nothing. */
void vg_egress_init(struct vg_egress *eg);
/* Is pasta there at all?  Checked before anything runs so that a policy
 * that needs egress fails with one line (fail closed: no egress, no run). */
int vg_egress_check(struct vg_err *err);
/* Start pasta on the sandbox whose pid 1 is init (host pid): it sets up
 * the namespace while pid 1 builds the mounts.  owner: the uid that owns
 * the sandbox's user namespace; when it is not vigil's own (root's
 * --host-uid), pasta's join of it clears its parent-death signal, so pasta
 * runs under a keeper that dies with vigil and takes it along.  bill_self (the launcher's
 * vg_cgroup_bill_self, handed down: net/ is below it; NULL: none) moves
 * pasta into the group that pays for the run before its exec.  -1 with err. */
int vg_egress_start(struct vg_egress *eg, pid_t init, uid_t owner, int (*bill_self)(void),
                    struct vg_err *err);
/* Wait until pasta has configured the namespace (before the candidate
 * may start), and watch it from then on.  -1 with err (pasta's own
 * message when it said one), nothing left running. */
int vg_egress_ready(struct vg_egress *eg, struct vg_err *err);
/* The end of the run: pasta is killed if still there, reaped if the
 * engine did not, and the watcher joined.  Idempotent. */
void vg_egress_stop(struct vg_egress *eg);
/* The log's "network" note: egress ran (and how fast it started), or
 * when pasta died mid-run; false when there was no egress. */
bool vg_egress_note(const struct vg_egress *eg, uint64_t start_mono, char *buf, size_t cap);
#endif
