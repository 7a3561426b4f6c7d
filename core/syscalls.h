/* syscalls.h: the one table of system calls vigil knows about.  Each row
 * says what class of access the call is, which flags describe it, and how
 * its arguments are decoded.  Knowledge lives in the table (syscalls.c), not
 * in switch statements around the tracer. */
#ifndef VG_SYSCALLS_H
#define VG_SYSCALLS_H

#include <stdbool.h>
#include <stdint.h>
#include "event/event.h"

/* The x86_64 numbers, from the table's rows: VG_NR_openat, VG_NR_read, ... */
#define ROW(nr, name, ...) VG_NR_##name = (nr),
#define HARMLESS(nr, name, ...) VG_NR_##name = (nr),
#define REFUSE(nr, name, ...) VG_NR_##name = (nr),
enum vg_nr {
#include "core/syscalls_rows.h"
};
#undef ROW
#undef HARMLESS
#undef REFUSE

/* Row flags. */
#define VG_SF_FILE     0x01u /* takes a path or a file descriptor */
#define VG_SF_NET      0x02u /* takes a socket address */
#define VG_SF_PROC     0x04u /* exec and friends */
#define VG_SF_BASELINE 0x08u /* always refused by the baseline, whatever the policy */
#define VG_SF_CLASS_BY_ARGS 0x10u /* class depends on the arguments (open flags) */
#define VG_SF_COND     0x20u /* baseline row that the filter refuses only when an
                              * argument is dangerous (ioctl TIOCSTI, socket of an
                              * odd family, clone with CLONE_NEW* or CLONE_UNTRACED,
                              * seccomp asking for a listener); the conditions are
                              * data in core/syscalls_conds.h */
#define VG_SF_ADDR_OPT 0x40u /* a call naming no address has nothing to decide
                              * (a send on a connected socket, listen on a
                              * bound one): not recorded */
#define VG_SF_CONNECTS 0x80u /* a send that can connect (TCP fast open): traced
                              * when connect is audited too */
#define VG_SF_MOVE     0x100u /* rename family: moves an object (a tree) to a new name */
#define VG_SF_LINK     0x200u /* link family: gives an object a second name */
#define VG_SF_LOOKUP   0x400u /* stat-like lookup: traced only with `audit lookups` */
#define VG_SF_MKDIR    0x800u /* makes a directory: on a name that exists it fails
                               * EEXIST and changes nothing (a kill rule does not
                               * end the run for it: core/decide.c) */

/* What the seccomp filter stops for the supervisor: the classes that need
 * per-call decisions (vg_policy_audits), and whether the stat-like lookups
 * are among them (`audit lookups`).  Computed once per run. */
struct vg_audit_set {
    bool cls[VG_CLASS_NCLASSES];
    bool lookups;
};

/* Where a row finds its arguments.  VG_ARGn names register argument n; 0
 * (VG_ARG_NONE) means "the call has no such argument", so that a row only
 * spells out the arguments it has. */
enum { VG_ARG_NONE, VG_ARG0, VG_ARG1, VG_ARG2, VG_ARG3, VG_ARG4, VG_ARG5 };

/* Whether the kernel follows a symlink in the last path component. */
enum vg_follow {
    VG_FOLLOW_NO,             /* unlink, rename, lchown, mkdir, ... */
    VG_FOLLOW_YES,            /* chmod, truncate, exec, ... */
    VG_FOLLOW_UNLESS_AT_NOFOLLOW, /* *at calls with AT_SYMLINK_NOFOLLOW */
    VG_FOLLOW_IF_AT_FOLLOW,   /* linkat: only with AT_SYMLINK_FOLLOW */
    VG_FOLLOW_OPEN,           /* open: unless O_NOFOLLOW or O_CREAT|O_EXCL */
};

/* Which name table describes a row's flags argument (tracer/flags.c). */
enum vg_flagset {
    VG_FL_NONE,
    VG_FL_OPEN,    /* O_* */
    VG_FL_AT,      /* AT_* */
    VG_FL_RENAME,  /* RENAME_* */
    VG_FL_CLONE,   /* CLONE_* (clone, unshare, setns) */
    VG_FL_IOCTL,   /* one request name: TIOCSTI, ... */
    VG_FL_FAMILY,  /* one address family name: AF_NETLINK, ... */
    VG_FL_RESOLVE, /* RESOLVE_* (openat2) */
    VG_FL_SECCOMP, /* SECCOMP_FILTER_FLAG_* */
    VG_FL_NSETS
};

/* Where a network call keeps its socket address. */
enum vg_sa_from {
    VG_SA_NONE,
    VG_SA_ARGS,    /* addr and addrlen are arguments (connect, bind, sendto) */
    VG_SA_MSGHDR,  /* msg_name of the struct msghdr in argument 1 (sendmsg) */
    VG_SA_MMSGHDR, /* every struct mmsghdr in argument 1 (sendmmsg) */
};

/* A row's argument layout: VG_ARG* positions, 0 when absent. */
struct vg_argpos {
    uint8_t fd;       /* dirfd of path, or the file itself when there is no path */
    uint8_t path;
    uint8_t fd2;      /* second path (rename/link destination) */
    uint8_t path2;
    uint8_t flags;
    uint8_t mode;
    uint8_t follow;   /* enum vg_follow, for path; path2 is never followed */
    uint8_t names;    /* enum vg_flagset naming the flags */
    uint8_t sa_from;  /* enum vg_sa_from */
    uint8_t addr, addrlen; /* with VG_SA_ARGS */
    uint8_t msgflags;      /* send flags (MSG_FASTOPEN) */
    /* the other arguments a carried-out file call copies (notify_fs.c) */
    uint8_t dev;           /* mknod's device */
    uint8_t uid, gid;      /* chown's ids */
    uint8_t length;        /* truncate's */
    uint8_t times;         /* the utime family's times */
    uint8_t xname;         /* an xattr's name */
    uint8_t buf, size;     /* a buffer (setxattr's value; readlink's, getxattr's,
                            * listxattr's answer) and its size */
    uint8_t xflags;        /* setxattr's flags */
    /* the bits of the flags argument the kernel accepts (any other fails
     * EINVAL before a path is looked at), for a call whose flags vigil
     * does not pass on as they are; 0: not checked */
    uint16_t valid;
};

/* How the notify engine takes an allowed call (ROW's carry column, short
 * names below): the kernel runs it (CONT: CONTINUE, it reads the
 * arguments again, docs/SECURITY.md says why that is safe for each), or
 * vigil carries it out itself, with the decided copy of the arguments, by
 * one of its carriers.  The ptrace engine decides every traced call at its
 * stop and lets the kernel run it: it needs no column.
 * X(op, carrier): VG_CARRY_<op>, carried out by VG_CARRIER_<carrier>. */
#define VG_CARRY_OPS(X)                                                                     \
    X(CONT, CONTINUE)                                                                        \
    X(OPEN, OPEN)                                    /* tracer/notify/notify_open.c */       \
    X(UNLINK, FS) X(RMDIR, FS) X(MKDIR, FS) X(MKNOD, FS) X(SYMLINK, FS) X(RENAME, FS)        \
    X(LINK, FS) X(CHMOD, FS) X(CHOWN, FS) X(TRUNCATE, FS) X(UTIMENS, FS) X(UTIMES, FS)       \
    X(UTIME, FS) X(SETXATTR, FS) X(RMXATTR, FS) X(READLINK, FS) X(GETXATTR, FS)              \
    X(LISTXATTR, FS)                                 /* tracer/notify/notify_fs.c */         \
    X(CONNECT, NET) X(BIND, NET) X(LISTEN, NET) X(SENDTO, NET) X(SENDMSG, NET)               \
    X(SENDMMSG, NET)                                 /* tracer/notify/notify_net.c */
#define VG_CARRY_ENUM(op, carrier) VG_CARRY_##op,
enum vg_carry { VG_CARRY_OPS(VG_CARRY_ENUM) VG_CARRY_N };
#undef VG_CARRY_ENUM
enum vg_carrier { VG_CARRIER_CONTINUE, VG_CARRIER_OPEN, VG_CARRIER_FS, VG_CARRIER_NET };
/* Which carrier takes op (VG_CARRIER_CONTINUE: none). */
enum vg_carrier vg_carrier_of(enum vg_carry op);


/* The decoders a row can name (ROW(..., decoder, ...)): the tracer has one
 * function per kind, vg_dec_<kind> (tracer/decode*.c), found through this
 * list, so that the table names how a call is decoded without depending on
 * the tracer. */
#define VG_DECODERS(X) X(path) X(open) X(openat2) X(symlink) X(lookup) X(exec) \
    X(net) X(listen) X(socket)
#define VG_DEC_KIND(k) VG_DEC_##k,
enum vg_dec { VG_DECODERS(VG_DEC_KIND) VG_DEC_N };
#undef VG_DEC_KIND

struct vg_sysent {
    int nr;                 /* x86_64 number */
    const char *name;
    enum vg_class cls;      /* class, or the default when CLASS_BY_ARGS */
    unsigned flags;         /* VG_SF_* */
    int deny_errno;         /* errno for a refused call (EACCES, EPERM, ...) */
    enum vg_carry carry;    /* how the notify engine takes it, allowed */
    enum vg_dec decode;     /* how the tracer decodes it */
    struct vg_argpos pos;   /* where the decoder finds the arguments */
};

/* The rows vigil decodes (ROW), sorted by nr; vg_sys_lookup is O(1) and
 * NULL for every other number, harmless and refused rows included. */
extern const struct vg_sysent vg_sys_table[];
/* Which carrier takes an allowed call of row e (NULL: none). */
enum vg_carrier vg_sys_carrier(const struct vg_sysent *e);
extern const unsigned vg_sys_count;
const struct vg_sysent *vg_sys_lookup(int nr);
const struct vg_sysent *vg_sys_by_name(const char *name);

/* Every row of the table, whatever its kind: what the seccomp filter does
 * with each number (launcher/filter.c) comes from here.  A number without
 * a row is refused (ENOSYS). */
enum vg_sys_kind {
    VG_SK_DECODED,  /* a vg_sys_table row: decided, carried out, or baseline */
    VG_SK_HARMLESS, /* runs unrecorded */
    VG_SK_REFUSED,  /* the kernel refuses it with deny_errno, unrecorded */
};
struct vg_sysrow {
    int nr;
    const char *name;
    enum vg_sys_kind kind;
    int deny_errno;              /* VG_SK_REFUSED; the vg_sysent's otherwise */
    const char *reason;          /* why harmless or refused; NULL for decoded rows */
    const struct vg_sysent *ent; /* VG_SK_DECODED */
};
extern const struct vg_sysrow vg_sys_rows[];
extern const unsigned vg_sys_nrows;
/* The row of nr, NULL when the table has none (O(1)). */
const struct vg_sysrow *vg_sys_row(int nr);
/* The highest number with a row. */
int vg_sys_max_nr(void);

/* The syscall numbers the seccomp filter must trace given which classes are
 * audited: every row that is neither baseline nor conditional and whose
 * class is audited (open-like rows when read or write is); lookup rows
 * (VG_SF_LOOKUP) only when lookups are (`audit lookups`).  Writes at most
 * max numbers to nrs; returns how many there are in all. */
unsigned vg_sys_audited(const struct vg_audit_set *set, int *nrs, unsigned max);
/* The same test for one row: is it one of those numbers? */
bool vg_sys_row_traced(const struct vg_sysent *e, const struct vg_audit_set *set);
/* The rows the baseline always refuses (VG_SF_BASELINE without VG_SF_COND),
 * same conventions. */
unsigned vg_sys_baseline(int *nrs, unsigned max);
/* The rows' argument conditions (core/syscalls_conds.h): one comparison on
 * a register argument, with libseccomp's meaning on a 64-bit ABI (whole
 * registers, unsigned). */
enum vg_cmp_op { VG_CMP_MASKED_EQ, VG_CMP_GT, VG_CMP_NE };
struct vg_argcmp {
    unsigned arg;             /* 0..5 */
    enum vg_cmp_op op;
    uint64_t mask, value;     /* (a & mask) == value; a > value; a != value */
};
/* A call the filter acts on only when every comparison holds.  A row with
 * conditions is left alone when none of them holds; what is done when one
 * does is the row's (baseline refusal, or a stop). */
#define VG_COND_MAX_CMPS 2
struct vg_cond {
    int nr;
    unsigned ncmp;
    struct vg_argcmp cmp[VG_COND_MAX_CMPS];
};
extern const struct vg_cond vg_sys_conds[];
extern const unsigned vg_sys_nconds;
/* Does every comparison of c hold for these register arguments? */
bool vg_cond_holds(const struct vg_cond *c, const uint64_t args[6]);
/* Does row nr have conditions? */
bool vg_sys_has_conds(int nr);
#endif
