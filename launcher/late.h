/* late.h: the part of a held sandbox's plan that comes late (`vigil run
 * --hold`, docs/RUN.md "Prepared runs: --hold").  pid 1 of a held sandbox
 * was cloned before the command was known, so its copy of the plan lacks
 * the command, the environment the request adds to, and the Landlock rules
 * that name the command's files; the supervisor sends them, with the
 * candidate's stdin, once the request has come, and pid 1 takes them into
 * its own copy just before it forks the candidate. */
#ifndef VG_LATE_H
#define VG_LATE_H

#include "launcher/plan.h"
#include "util/util.h"

/* The most pid 1 accepts (the supervisor's request is far smaller:
 * run/hold.c's VG_HOLD_MSG_MAX, plus the environment and rules it had). */
#define VG_LATE_MAX (8u << 20)

/* Supervisor: send p's argv, envp and Landlock rules, and stdin_fd, over
 * the stream socket sock.  0, or -1 with err. */
int vg_late_send(int sock, const struct vg_plan *p, int stdin_fd, struct vg_err *err);

/* pid 1: read them into held (a copy of its plan), in memory of its own
 * that lives until exec (no malloc: pid 1 is a raw clone of a process
 * with threads).  Returns the stdin fd, or -1 (EOF, or a bad message). */
int vg_late_recv(int sock, struct vg_plan *held);
#endif
