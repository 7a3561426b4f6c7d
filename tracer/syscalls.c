/* syscalls.c: the system call table and its lookups.  The rows live in
 * tracer/syscalls_rows.h; this file turns them into a table sorted by
 * number plus a constant by-number index, so that vg_sys_lookup (called on
 * every tracer stop) is one array access and nothing is built at run time. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "tracer/decode_impl.h"
#include "tracer/syscalls.h"

/* Numbers newer than the installed headers. */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* Short spellings for the rows. */
#define A0 VG_ARG0
#define A1 VG_ARG1
#define A2 VG_ARG2
#define A3 VG_ARG3
#define A4 VG_ARG4
#define A5 VG_ARG5
#define F_NO VG_FOLLOW_NO
#define F_YES VG_FOLLOW_YES
#define F_AT VG_FOLLOW_UNLESS_AT_NOFOLLOW
#define F_ATF VG_FOLLOW_IF_AT_FOLLOW
#define F_OPEN VG_FOLLOW_OPEN
#define N_OPEN VG_FL_OPEN
#define N_AT VG_FL_AT
#define N_RENAME VG_FL_RENAME
#define N_CLONE VG_FL_CLONE
#define N_IOCTL VG_FL_IOCTL
#define N_FAMILY VG_FL_FAMILY
#define N_SECCOMP VG_FL_SECCOMP
#define SA_ARGS VG_SA_ARGS
#define SA_MSGHDR VG_SA_MSGHDR
#define SA_MMSGHDR VG_SA_MMSGHDR
#define FI VG_SF_FILE
#define NE VG_SF_NET
#define PR VG_SF_PROC
#define BL VG_SF_BASELINE
#define BA VG_SF_CLASS_BY_ARGS
#define CO VG_SF_COND
#define AO VG_SF_ADDR_OPT
#define CN VG_SF_CONNECTS
#define MV VG_SF_MOVE
#define LN VG_SF_LINK
#define LK VG_SF_LOOKUP

/* Position of each row in the table: VG_POS_open, VG_POS_openat, ... */
#define ROW(name, ...) VG_POS_##name,
enum { VG_POS_FIRST_UNUSED = -1,
#include "tracer/syscalls_rows.h"
       VG_NROWS };
#undef ROW

#define ROW(name, cls, fl, err, dec, ...) \
    { SYS_##name, #name, VG_CLASS_##cls, (fl), (err), vg_dec_##dec, { __VA_ARGS__ } },
const struct vg_sysent vg_sys_table[] = {
#include "tracer/syscalls_rows.h"
};
#undef ROW
const unsigned vg_sys_count = VG_NROWS;

/* By-number index: row position + 1, 0 for numbers without a row. */
#define VG_NR_LIMIT 512
#define ROW(name, ...) [SYS_##name] = VG_POS_##name + 1,
static const unsigned char vg_sys_index[VG_NR_LIMIT] = {
#include "tracer/syscalls_rows.h"
};
#undef ROW
_Static_assert(VG_NROWS < 255, "the index holds row positions in a byte");

const struct vg_sysent *vg_sys_lookup(int nr)
{
    if (nr < 0 || nr >= VG_NR_LIMIT || vg_sys_index[nr] == 0)
        return NULL;
    return &vg_sys_table[vg_sys_index[nr] - 1];
}

const struct vg_sysent *vg_sys_by_name(const char *name)
{
    for (unsigned i = 0; i < vg_sys_count; i++)
        if (strcmp(vg_sys_table[i].name, name) == 0)
            return &vg_sys_table[i];
    return NULL;
}

/* Open-like rows change class with their flags, so they are traced when
 * either class they can become is audited. */
static bool row_audited(const struct vg_sysent *e, const struct vg_audit_set *set)
{
    if ((e->flags & VG_SF_LOOKUP) && !set->lookups)
        return false;
    if (e->flags & VG_SF_CLASS_BY_ARGS)
        return set->cls[VG_CLASS_READ] || set->cls[VG_CLASS_WRITE];
    if (e->flags & VG_SF_CONNECTS)
        return set->cls[e->cls] || set->cls[VG_CLASS_CONNECT];
    return set->cls[e->cls];
}

bool vg_sys_row_traced(const struct vg_sysent *e, const struct vg_audit_set *set)
{
    return !(e->flags & (VG_SF_BASELINE | VG_SF_COND)) && row_audited(e, set);
}

unsigned vg_sys_audited(const struct vg_audit_set *set, int *nrs, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < vg_sys_count; i++) {
        const struct vg_sysent *e = &vg_sys_table[i];
        if (!vg_sys_row_traced(e, set))
            continue;
        if (n < max)
            nrs[n] = e->nr;
        n++;
    }
    return n;
}

unsigned vg_sys_baseline(int *nrs, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < vg_sys_count; i++) {
        const struct vg_sysent *e = &vg_sys_table[i];
        if (!(e->flags & VG_SF_BASELINE) || (e->flags & VG_SF_COND))
            continue;
        if (n < max)
            nrs[n] = e->nr;
        n++;
    }
    return n;
}
