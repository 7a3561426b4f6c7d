/* batch_int.h: what batch/'s own files share (not for other folders).
 * attempt.c owns a task's directory (one attempt at a time, a result set
 * aside or put back), taskrun.c starts a task's `vigil run` (cold, or a
 * prepared sandbox and its request), runner.c decides which task runs when. */
#ifndef VG_BATCH_INT_H
#define VG_BATCH_INT_H
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "batch/batch.h"

/* attempt.c */
/* Is OUT a batch directory (has it the marker)? */
bool vg_attempt_is_batch_dir(const char *out);
/* OUT exists and is ours afterwards, or err says why not. */
int vg_attempt_claim_out(const char *out, struct vg_err *err);
/* A fresh OUT/tasks/ID with its work directory, code, inputs, stdin and key. */
int vg_attempt_make(const struct vg_batch_opts *o, const struct vg_batch_task *t,
                    struct vg_err *err);
/* The new attempt's result stands if it is of the key, else the one set aside comes back. */
void vg_attempt_settle(const struct vg_batch_opts *o, const struct vg_batch_task *t);
/* A result that is not of the key (an interrupted run's) is renamed aside to `name`. */
void vg_attempt_set_aside(const struct vg_batch_opts *o, const struct vg_batch_task *t,
                          const char *name);
/* Does the attempt's log exist (did its run start the candidate)? */
bool vg_attempt_has_log(const struct vg_batch_opts *o, const struct vg_batch_task *t);
/* Appends one line to the attempt's vigil.stderr (a note of the batch's). */
void vg_attempt_note(const struct vg_batch_opts *o, const struct vg_batch_task *t,
                     const char *line);
/* Where the attempt's run finds the candidate's stdin (malloc'd). */
char *vg_attempt_stdin(const struct vg_batch_opts *o, const struct vg_batch_task *t);

/* taskrun.c */
/* Every child of the batch gets this signal mask back before its exec
 * (the batch blocks its own signals outside ppoll). */
struct vg_taskrun_env {
    const struct vg_batch_opts *o;
    sigset_t child_mask;
    pid_t parent;
};
/* A cold run: `vigil run OPTIONS -- ARGV` of the task; host_uid (0: none)
 * its --host-uid, which then owns the task's work dir.  Its pid, or -1
 * with err. */
pid_t vg_taskrun_cold(const struct vg_taskrun_env *e, const struct vg_batch_task *t,
                      uid_t host_uid, struct vg_err *err);
/* A prepared sandbox: `vigil run --hold FD OPTIONS` of the task, *sock the
 * batch's end of its socket (close-on-exec); host_uid as for a cold run.
 * Its pid, or -1 with err. */
pid_t vg_taskrun_held(const struct vg_taskrun_env *e, const struct vg_batch_task *t,
                      uid_t host_uid, int *sock, struct vg_err *err);
/* Reads what a prepared sandbox said: 1 ready, 0 not yet, -1 its socket
 * closed (the vigil is ending), -2 anything else (err). */
int vg_taskrun_ready(int sock, struct vg_err *err);
/* Sends the task's request (argv, log, result, task_id; its stdin, /dev/null
 * and its vigil.stderr as the candidate's streams).  0, or -1 with err. */
int vg_taskrun_request(const struct vg_taskrun_env *e, const struct vg_batch_task *t, int sock,
                     struct vg_err *err);
#endif
