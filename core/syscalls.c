/* syscalls.c: the system call table and its lookups.  The rows live in
 * core/syscalls_rows.h; this file turns them into a table sorted by
 * number plus a constant by-number index, so that vg_sys_lookup (called on
 * every tracer stop) is one array access and nothing is built at run time. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "core/syscalls.h"
#include "util/util.h"

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
#define V_NOFOLLOW AT_SYMLINK_NOFOLLOW
#define V_FOLLOW AT_SYMLINK_FOLLOW
#define V_EMPTY AT_EMPTY_PATH
#define V_REMOVEDIR AT_REMOVEDIR
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
#define MK VG_SF_MKDIR

/* The row macros that expand to nothing: each pass picks its kinds. */
#define HARMLESS(...)
#define REFUSE(...)

/* Position of each decoded row in vg_sys_table: VG_POS_open, ... */
#define ROW(nr, name, ...) VG_POS_##name,
enum { VG_POS_FIRST_UNUSED = -1,
#include "core/syscalls_rows.h"
       VG_NROWS };
#undef ROW

#define ROW(nr, name, cls, fl, err, carry, dec, ...) \
    { VG_NR_##name, #name, VG_CLASS_##cls, (fl), (err), VG_CARRY_##carry, VG_DEC_##dec, \
      { __VA_ARGS__ } },
const struct vg_sysent vg_sys_table[] = {
#include "core/syscalls_rows.h"
};
#undef ROW
const unsigned vg_sys_count = VG_NROWS;

/* Every number below the limit; the index holds positions in a byte. */
#define VG_NR_LIMIT 512

/* By-number index of the decoded rows: position + 1, 0 for other numbers.
 * A number given twice is an initializer overridden (-Woverride-init,
 * part of -Wextra): the build fails. */
#define ROW(nr, name, ...) [VG_NR_##name] = VG_POS_##name + 1,
static const unsigned char vg_sys_index[VG_NR_LIMIT] = {
#include "core/syscalls_rows.h"
};
#undef ROW
#undef HARMLESS
#undef REFUSE
_Static_assert(VG_NROWS < 255, "the index holds row positions in a byte");

const struct vg_sysent *vg_sys_lookup(int nr)
{
    if (nr < 0 || nr >= VG_NR_LIMIT || vg_sys_index[nr] == 0)
        return NULL;
    return &vg_sys_table[vg_sys_index[nr] - 1];
}

/* Every row, of every kind, in number order. */
#define ROW(nr, name, ...) VG_RPOS_##name,
#define HARMLESS(nr, name, ...) VG_RPOS_##name,
#define REFUSE(nr, name, ...) VG_RPOS_##name,
enum { VG_RPOS_FIRST_UNUSED = -1,
#include "core/syscalls_rows.h"
       VG_NALLROWS };
#undef ROW
#undef HARMLESS
#undef REFUSE

#define ROW(nr, name, cls, fl, err, ...) \
    { VG_NR_##name, #name, VG_SK_DECODED, (err), NULL, &vg_sys_table[VG_POS_##name] },
#define HARMLESS(nr, name, why) { VG_NR_##name, #name, VG_SK_HARMLESS, 0, (why), NULL },
#define REFUSE(nr, name, err, why) { VG_NR_##name, #name, VG_SK_REFUSED, (err), (why), NULL },
const struct vg_sysrow vg_sys_rows[] = {
#include "core/syscalls_rows.h"
};
#undef ROW
#undef HARMLESS
#undef REFUSE
const unsigned vg_sys_nrows = VG_NALLROWS;

#define ROW(nr, name, ...) [VG_NR_##name] = VG_RPOS_##name + 1,
#define HARMLESS(nr, name, ...) [VG_NR_##name] = VG_RPOS_##name + 1,
#define REFUSE(nr, name, ...) [VG_NR_##name] = VG_RPOS_##name + 1,
static const unsigned short vg_sys_row_index[VG_NR_LIMIT] = {
#include "core/syscalls_rows.h"
};
#undef ROW
#undef HARMLESS
#undef REFUSE

const struct vg_sysrow *vg_sys_row(int nr)
{
    if (nr < 0 || nr >= VG_NR_LIMIT || vg_sys_row_index[nr] == 0)
        return NULL;
    return &vg_sys_rows[vg_sys_row_index[nr] - 1];
}

int vg_sys_max_nr(void)
{
    return vg_sys_rows[vg_sys_nrows - 1].nr; /* the rows are in number order */
}

const struct vg_sysent *vg_sys_by_name(const char *name)
{
    for (unsigned i = 0; i < vg_sys_count; i++)
        if (strcmp(vg_sys_table[i].name, name) == 0)
            return &vg_sys_table[i];
    return NULL;
}

#define VG_CARRY_BY(op, carrier) [VG_CARRY_##op] = VG_CARRIER_##carrier,
static const enum vg_carrier carriers[VG_CARRY_N] = {VG_CARRY_OPS(VG_CARRY_BY)};
#undef VG_CARRY_BY

enum vg_carrier vg_carrier_of(enum vg_carry op)
{
    return (unsigned)op < VG_CARRY_N ? carriers[op] : VG_CARRIER_CONTINUE;
}

enum vg_carrier vg_sys_carrier(const struct vg_sysent *e)
{
    return e ? vg_carrier_of(e->carry) : VG_CARRIER_CONTINUE;
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

/* ---- the rows' argument conditions ---- */

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1u << 3)
#endif
/* The int-typed arguments are compared on their low 32 bits only: the
 * kernel ignores the upper half, so a filter must too. */
#define LOW32 0xffffffffull
#define IS(n, v) { (n), VG_CMP_MASKED_EQ, LOW32, (uint64_t)(v) }
#define HAS(n, bit) { (n), VG_CMP_MASKED_EQ, (bit), (bit) }
#define ABOVE(n, v) { (n), VG_CMP_GT, 0, (uint64_t)(v) }
#define NONZERO(n) { (n), VG_CMP_NE, 0, 0 }
#define COND(sys, ...) \
    { VG_NR_##sys, VG_ARRAY_LEN(((struct vg_argcmp[]){__VA_ARGS__})), {__VA_ARGS__} },
#define SOCKOPT(level, opt) COND(setsockopt, IS(1, level), IS(2, opt))
const struct vg_cond vg_sys_conds[] = {
#include "core/syscalls_conds.h"
};
#undef COND
#undef SOCKOPT
const unsigned vg_sys_nconds = VG_ARRAY_LEN(vg_sys_conds);

static bool cmp_holds(const struct vg_argcmp *c, const uint64_t args[6])
{
    uint64_t a = args[c->arg];
    switch (c->op) {
    case VG_CMP_MASKED_EQ:
        return (a & c->mask) == c->value;
    case VG_CMP_GT:
        return a > c->value;
    case VG_CMP_NE:
        return a != c->value;
    }
    return false;
}

bool vg_cond_holds(const struct vg_cond *c, const uint64_t args[6])
{
    for (unsigned i = 0; i < c->ncmp; i++)
        if (!cmp_holds(&c->cmp[i], args))
            return false;
    return true;
}

bool vg_sys_has_conds(int nr)
{
    for (unsigned i = 0; i < vg_sys_nconds; i++)
        if (vg_sys_conds[i].nr == nr)
            return true;
    return false;
}
