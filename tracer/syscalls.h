/* syscalls.h: the one table of system calls vigil knows about.  Each row
 * says what class of access the call is, which flags describe it, and how
 * its arguments are decoded.  Knowledge lives in the table (syscalls.c), not
 * in switch statements around the tracer. */
#ifndef VG_SYSCALLS_H
#define VG_SYSCALLS_H

#include <stdbool.h>
#include <stdint.h>
#include "event/event.h"

/* Row flags. */
#define VG_SF_FILE     0x01u /* takes a path or a file descriptor */
#define VG_SF_NET      0x02u /* takes a socket address */
#define VG_SF_PROC     0x04u /* exec and friends */
#define VG_SF_BASELINE 0x08u /* always refused by the baseline, whatever the policy */
#define VG_SF_CLASS_BY_ARGS 0x10u /* class depends on the arguments (open flags) */

struct vg_call;
struct vg_tracee;

/* A decoder fills call->args, call->cls and call->check_path* from the
 * registers (call->a) and the tracee's memory.  0 on success; -1 when the
 * arguments cannot be read (bad pointer): the call is then decided on
 * what could be read, with the path recorded as "(unreadable)". */
typedef int (*vg_decoder_fn)(struct vg_tracee *t, struct vg_call *call);

struct vg_sysent {
    int nr;                 /* x86_64 number */
    const char *name;
    enum vg_class cls;      /* class, or the default when CLASS_BY_ARGS */
    unsigned flags;         /* VG_SF_* */
    int deny_errno;         /* errno for a refused call (EACCES, EPERM, ...) */
    vg_decoder_fn decode;
};

/* The table, sorted by nr; vg_sys_lookup is O(1). */
extern const struct vg_sysent vg_sys_table[];
extern const unsigned vg_sys_count;
const struct vg_sysent *vg_sys_lookup(int nr);
const struct vg_sysent *vg_sys_by_name(const char *name);
#endif
