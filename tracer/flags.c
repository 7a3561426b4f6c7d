/* flags.c: names for flag bits and for a few enumerated arguments, as
 * tables.  The values are the x86_64 kernel ABI; where glibc spells one as
 * 0 (O_LARGEFILE on 64-bit) or may lack it, the number is written out. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "tracer/decode_impl.h"

struct vg_flagname {
    uint64_t mask;   /* bits this entry covers */
    uint64_t value;  /* what they must equal */
    const char *name;
};

#define BIT(v, n) { (v), (v), (n) }

/* Multi-bit flags come before the single bits they contain. */
static const struct vg_flagname open_names[] = {
    { O_ACCMODE, O_RDONLY, "O_RDONLY" },
    { O_ACCMODE, O_WRONLY, "O_WRONLY" },
    { O_ACCMODE, O_RDWR, "O_RDWR" },
    BIT(020200000, "O_TMPFILE"),     /* __O_TMPFILE | O_DIRECTORY */
    BIT(04010000, "O_SYNC"),         /* __O_SYNC | O_DSYNC */
    BIT(O_CREAT, "O_CREAT"),
    BIT(O_EXCL, "O_EXCL"),
    BIT(O_NOCTTY, "O_NOCTTY"),
    BIT(O_TRUNC, "O_TRUNC"),
    BIT(O_APPEND, "O_APPEND"),
    BIT(O_NONBLOCK, "O_NONBLOCK"),
    BIT(O_DSYNC, "O_DSYNC"),
    BIT(O_ASYNC, "O_ASYNC"),
    BIT(O_DIRECT, "O_DIRECT"),
    BIT(0100000, "O_LARGEFILE"),
    BIT(O_DIRECTORY, "O_DIRECTORY"),
    BIT(O_NOFOLLOW, "O_NOFOLLOW"),
    BIT(O_NOATIME, "O_NOATIME"),
    BIT(O_CLOEXEC, "O_CLOEXEC"),
    BIT(O_PATH, "O_PATH"),
};

static const struct vg_flagname at_names[] = {
    BIT(AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"),
    BIT(AT_REMOVEDIR, "AT_REMOVEDIR"),
    BIT(AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW"),
    BIT(0x800, "AT_NO_AUTOMOUNT"),
    BIT(AT_EMPTY_PATH, "AT_EMPTY_PATH"),
    BIT(0x8000, "AT_RECURSIVE"),
};

static const struct vg_flagname rename_names[] = {
    BIT(1, "RENAME_NOREPLACE"),
    BIT(2, "RENAME_EXCHANGE"),
    BIT(4, "RENAME_WHITEOUT"),
};

static const struct vg_flagname clone_names[] = {
    BIT(0x00000080, "CLONE_NEWTIME"),
    BIT(0x00000100, "CLONE_VM"),
    BIT(0x00000200, "CLONE_FS"),
    BIT(0x00000400, "CLONE_FILES"),
    BIT(0x00000800, "CLONE_SIGHAND"),
    BIT(0x00001000, "CLONE_PIDFD"),
    BIT(0x00002000, "CLONE_PTRACE"),
    BIT(0x00004000, "CLONE_VFORK"),
    BIT(0x00008000, "CLONE_PARENT"),
    BIT(0x00010000, "CLONE_THREAD"),
    BIT(0x00020000, "CLONE_NEWNS"),
    BIT(0x00040000, "CLONE_SYSVSEM"),
    BIT(0x00080000, "CLONE_SETTLS"),
    BIT(0x00100000, "CLONE_PARENT_SETTID"),
    BIT(0x00200000, "CLONE_CHILD_CLEARTID"),
    BIT(0x00400000, "CLONE_DETACHED"),
    BIT(0x00800000, "CLONE_UNTRACED"),
    BIT(0x01000000, "CLONE_CHILD_SETTID"),
    BIT(0x02000000, "CLONE_NEWCGROUP"),
    BIT(0x04000000, "CLONE_NEWUTS"),
    BIT(0x08000000, "CLONE_NEWIPC"),
    BIT(0x10000000, "CLONE_NEWUSER"),
    BIT(0x20000000, "CLONE_NEWPID"),
    BIT(0x40000000, "CLONE_NEWNET"),
    BIT(0x80000000, "CLONE_IO"),
};

static const struct vg_flagname resolve_names[] = {
    BIT(0x01, "RESOLVE_NO_XDEV"),
    BIT(0x02, "RESOLVE_NO_MAGICLINKS"),
    BIT(0x04, "RESOLVE_NO_SYMLINKS"),
    BIT(0x08, "RESOLVE_BENEATH"),
    BIT(0x10, "RESOLVE_IN_ROOT"),
    BIT(0x20, "RESOLVE_CACHED"),
};

static const struct vg_flagname seccomp_names[] = {
    BIT(0x01, "SECCOMP_FILTER_FLAG_TSYNC"),
    BIT(0x02, "SECCOMP_FILTER_FLAG_LOG"),
    BIT(0x04, "SECCOMP_FILTER_FLAG_SPEC_ALLOW"),
    BIT(0x08, "SECCOMP_FILTER_FLAG_NEW_LISTENER"),
    BIT(0x10, "SECCOMP_FILTER_FLAG_TSYNC_ESRCH"),
    BIT(0x20, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"),
};

/* Enumerations: the whole value is one name. */
static const struct vg_flagname ioctl_names[] = {
    { 0xffffffffu, TIOCSTI, "TIOCSTI" },
    { 0xffffffffu, TIOCLINUX, "TIOCLINUX" },
};

struct vg_family {
    int af;
    const char *name;     /* args.family */
    const char *af_name;  /* flag name */
};

static const struct vg_family families[] = {
    { AF_UNIX, "unix", "AF_UNIX" },           { AF_INET, "inet", "AF_INET" },
    { AF_AX25, "ax25", "AF_AX25" },           { AF_IPX, "ipx", "AF_IPX" },
    { AF_APPLETALK, "appletalk", "AF_APPLETALK" }, { AF_NETROM, "netrom", "AF_NETROM" },
    { AF_BRIDGE, "bridge", "AF_BRIDGE" },     { AF_X25, "x25", "AF_X25" },
    { AF_INET6, "inet6", "AF_INET6" },        { AF_ROSE, "rose", "AF_ROSE" },
    { AF_DECnet, "decnet", "AF_DECnet" },     { AF_KEY, "key", "AF_KEY" },
    { AF_NETLINK, "netlink", "AF_NETLINK" },  { AF_PACKET, "packet", "AF_PACKET" },
    { AF_RDS, "rds", "AF_RDS" },              { AF_LLC, "llc", "AF_LLC" },
    { AF_IB, "ib", "AF_IB" },                 { AF_MPLS, "mpls", "AF_MPLS" },
    { AF_CAN, "can", "AF_CAN" },              { AF_TIPC, "tipc", "AF_TIPC" },
    { AF_BLUETOOTH, "bluetooth", "AF_BLUETOOTH" }, { AF_RXRPC, "rxrpc", "AF_RXRPC" },
    { AF_ALG, "alg", "AF_ALG" },              { AF_VSOCK, "vsock", "AF_VSOCK" },
    { AF_KCM, "kcm", "AF_KCM" },              { AF_QIPCRTR, "qipcrtr", "AF_QIPCRTR" },
    { AF_SMC, "smc", "AF_SMC" },              { AF_XDP, "xdp", "AF_XDP" },
    { 45, "mctp", "AF_MCTP" },
};

static const struct vg_family *family_find(int af)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(families); i++)
        if (families[i].af == af)
            return &families[i];
    return NULL;
}

const char *vg_family_name(int af)
{
    const struct vg_family *f = family_find(af);
    return f ? f->name : NULL;
}

struct vg_flagtable {
    const struct vg_flagname *names;
    size_t n;
    uint64_t ignore;   /* bits that are not flags (clone's exit signal) */
};

#define TABLE(t, ign) { (t), VG_ARRAY_LEN(t), (ign) }
static const struct vg_flagtable tables[VG_FL_NSETS] = {
    [VG_FL_OPEN] = TABLE(open_names, 0),
    [VG_FL_AT] = TABLE(at_names, 0),
    [VG_FL_RENAME] = TABLE(rename_names, 0),
    [VG_FL_CLONE] = TABLE(clone_names, 0x7f),
    [VG_FL_IOCTL] = TABLE(ioctl_names, 0),
    [VG_FL_RESOLVE] = TABLE(resolve_names, 0),
    [VG_FL_SECCOMP] = TABLE(seccomp_names, 0),
};

static const char *hex(struct vg_arena *a, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
    return vg_arena_strdup(a, buf);
}

static uint32_t family_names(uint64_t v, struct vg_arena *a, const char **out)
{
    const struct vg_family *f = family_find((int)v);
    out[0] = f ? f->af_name : hex(a, v);
    return 1;
}

uint32_t vg_flag_names(enum vg_flagset set, uint64_t flags, struct vg_arena *a,
                       const char *const **names)
{
    /* At most one name per table entry plus one for leftover bits. */
    const struct vg_flagtable *t = set < VG_FL_NSETS ? &tables[set] : &tables[VG_FL_NONE];
    const char **out = vg_arena_alloc(a, (t->n + 1) * sizeof(*out));
    uint32_t n = 0;
    *names = out;
    if (set == VG_FL_FAMILY)
        return family_names(flags, a, out);
    if (set == VG_FL_IOCTL)
        flags &= 0xffffffffu;   /* the kernel takes the request as 32 bits */
    uint64_t left = flags & ~t->ignore;
    for (size_t i = 0; i < t->n; i++) {
        const struct vg_flagname *f = &t->names[i];
        if ((flags & f->mask) == f->value && (left & f->mask) == (f->mask & f->value)) {
            out[n++] = f->name;
            left &= ~f->mask;
        }
    }
    if (left)
        out[n++] = hex(a, left);
    return n;
}
