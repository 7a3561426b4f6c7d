/* policy.h: the policy engine's interface.  A policy is parsed and validated
 * (vg_policy_load), then compiled against the run's places
 * (vg_policy_compile), then consulted per audited call (vg_policy_decide_*).
 * The language itself is documented in docs/POLICY.md.
 *
 * Precedence: the first rule that matches decides; when none matches, the
 * class's default does. */
#ifndef VG_POLICY_H
#define VG_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "event/event.h"
#include "util/util.h"

enum vg_action { VG_ACT_ALLOW, VG_ACT_DENY, VG_ACT_KILL };

struct vg_verdict {
    enum vg_action action;
    const struct vg_rule_src *rule; /* NULL: the class default decided */
};

/* Limit indices.  Everything else about a limit is its row in the one
 * table of limits (policy/limit_table.c). */
enum vg_limit {
    VG_LIM_TIME, VG_LIM_CPU, VG_LIM_CPUTOTAL, VG_LIM_MEMORY, VG_LIM_PROCS, VG_LIM_FILES,
    VG_LIM_FSIZE, VG_LIM_OUTPUT, VG_LIM_TMPFS, VG_LIM_DISK, VG_LIM_CPUS, VG_LIM_REFUSALS,
    VG_LIM_LOG, VG_LIM_COUNT
};
/* How a value is written and kept: time in ms, cpu in s, sizes in bytes,
 * counts, CPU bandwidth in thousandths of a CPU. */
enum vg_limit_kind { VG_LK_MS, VG_LK_SECONDS, VG_LK_SIZE, VG_LK_COUNT, VG_LK_CPUS };
/* What holds a limit in a run (launcher/limits.c picks one per run). */
enum vg_limit_mech {
    VG_MECH_NONE,        /* no limit of this kind in force */
    VG_MECH_SUPERVISOR,  /* vigil watches and acts */
    VG_MECH_RLIMIT,      /* per process, set right before exec */
    VG_MECH_TMPFS,       /* the tmpfs's size= */
    VG_MECH_CGROUP_V1,
    VG_MECH_CGROUP_V2,
    VG_MECH_AFFINITY,    /* CPU pinning, which the candidate could widen */
};
/* The cgroup controllers that can hold a limit (launcher/cgroup.c);
 * cpuacct is v1's count of CPU time (v2 has it in every group). */
enum vg_cg_ctrl { VG_CG_MEMORY, VG_CG_PIDS, VG_CG_CPU, VG_CG_CPUACCT, VG_CG_NCTRL };
struct vg_limit_row {
    const char *name;       /* the policy's `limit NAME`, the result's key */
    const char *flag;       /* `vigil run --FLAG` */
    enum vg_limit_kind kind;
    uint64_t def;           /* default; 0: no limit unless one is given */
    uint64_t min, max;      /* accepted values */
    const char *what;       /* what it bounds */
    const char *enforced;   /* by what, best first, then the fallback */
    const char *reported;   /* how a hit is seen */
    /* what enforces it, as launcher/limits.c reads it: the controller
     * that holds it where vigil has a cgroup (VG_CG_NCTRL: none), else
     * the fallback, and the rlimit of a VG_MECH_RLIMIT fallback (-1: none) */
    enum vg_cg_ctrl cgroup;
    enum vg_limit_mech fallback;
    int rlimit;
};
const struct vg_limit_row *vg_limit_row(enum vg_limit l);
const char *vg_limit_name(enum vg_limit l); /* "time", "cpu", ... */
const char *vg_limit_unit(enum vg_limit l); /* of the kept value: "ms", "bytes", ... */
/* The reverse: -1 when unknown. */
int vg_limit_from_name(const char *name);
/* "time, cpu, ... or cpus", for messages. */
void vg_limit_names(char *buf, size_t cap);
/* Parse a limit value as the policy and the run flags write it ("60s",
 * "512M", "64"); false on junk or a value outside the row's range. */
bool vg_limit_parse(enum vg_limit l, const char *text, uint64_t *out);
/* What a value of this limit looks like, with its range, for messages. */
void vg_limit_syntax(enum vg_limit l, char *buf, size_t cap);
/* Format a value the way the policy writes it ("60s", "512M", "64"). */
void vg_limit_format(enum vg_limit l, uint64_t v, char *buf, size_t cap);

struct vg_limits {
    uint64_t v[VG_LIM_COUNT];  /* 0: no limit (only where the row's default is 0) */
    bool set[VG_LIM_COUNT];    /* given explicitly (policy or flag) */
};
/* The table's defaults; then every limit src sets, over dst. */
void vg_limits_defaults(struct vg_limits *l);
void vg_limits_merge(struct vg_limits *dst, const struct vg_limits *src);

struct vg_bind {
    const char *src;  /* host path, absolute after compile */
    const char *dst;  /* sandbox path */
    bool rw;
};

struct vg_env {
    const char *name;
    const char *value;  /* NULL: pass the caller's value through */
};

/* The places a policy's variables name.  All absolute. */
struct vg_places {
    const char *home;   /* ~ : the invoking user's home */
    const char *work;   /* $WORK : the candidate's working directory */
    const char *tmp;    /* $TMP : the private tmpfs (always "/tmp") */
};

/* Host trees the sandbox shows read-only (dirs), and what it hides in
 * them (hidden: masked, or a bind's destination).  Nothing there changes
 * during a run, so a path there names the same object on the host as in
 * the sandbox.  vg_system_trees is the launcher's list (launcher/plan.c
 * mounts and masks from it). */
struct vg_trees {
    const char *const *dirs;
    unsigned ndirs;
    const char *const *hidden;
    unsigned nhidden;
    const char *const *own;     /* files the sandbox puts its own over */
    unsigned nown;
    const char *root;           /* the host directory they lie in: an image's
                                 * rootfs (vigil run --image); NULL: "/" */
};
extern const struct vg_trees vg_system_trees;
/* The trees of an image (docs/IMAGES.md): every directory and symlink at
 * the top of rootfs but those the sandbox has of its own (/proc, /dev,
 * /tmp, /sys), with vg_system_trees' hidden and own files.  rootfs (a
 * canonical host path) must outlive them.  NULL with err if it cannot be
 * read. */
struct vg_trees *vg_trees_of_root(const char *rootfs, struct vg_err *err);
void vg_trees_free(struct vg_trees *t);
/* The one such file of every sandbox: vigil's resolver's resolv.conf. */
#define VG_SANDBOX_RESOLV_CONF "/etc/resolv.conf"
/* Is path (absolute, squashed) tree itself or below it? */
bool vg_path_under(const char *path, const char *tree);
/* Does path lie in one of t's dirs, under none of its hidden paths and
 * none of its own files? */
bool vg_trees_holds(const struct vg_trees *t, const char *path);
/* Resolve a path lying in t on the host's file system, one component at a
 * time (lstat, readlink), never looking at anything outside t's trees.
 * FOUND: *out (malloc'd) is the canonical path, also in t; MISSING: a
 * component does not exist; AWAY: the path leads out of t (or too many
 * links, or an error): no resolution is trusted. */
enum vg_walk { VG_WALK_FOUND, VG_WALK_MISSING, VG_WALK_AWAY };
enum vg_walk vg_trees_resolve(const struct vg_trees *t, const char *path, char **out);

struct vg_policy;

/* Parse and validate a file (following includes) or an in-memory text
 * (name is used in messages and in rule_src.file; includes are relative to
 * the directory of name).  Errors: err->msg is "file:line:col: message". */
struct vg_policy *vg_policy_load(const char *path, struct vg_err *err);
struct vg_policy *vg_policy_parse(const char *name, const char *text,
                                  struct vg_err *err);
/* The same, literal paths of rules in the read-only trees ro resolved
 * there (policy/resolve.c); the two above use vg_system_trees.  ro must
 * outlive the policy. */
struct vg_policy *vg_policy_load_in(const char *path, const struct vg_trees *ro,
                                    struct vg_err *err);
struct vg_policy *vg_policy_parse_in(const char *name, const char *text,
                                     const struct vg_trees *ro, struct vg_err *err);
/* A text from someone the caller does not trust with its own rights (a
 * vigil serve request: the daemon is root): parsed as vg_policy_parse
 * does, but an `include` of anything but a shipped policy (<NAME>) and a
 * `bind` of its own are errors, found before any file is opened.  Shipped
 * policies it includes are the system's and keep their binds. */
struct vg_policy *vg_policy_parse_untrusted(const char *name, const char *text,
                                            struct vg_err *err);
void vg_policy_free(struct vg_policy *p);

/* Warnings found while parsing (shadowed rules, dangerous grants, rules
 * naming no object, default allow: docs/POLICY.md), each
 * "file:line:col: warning: ...".  Valid until vg_policy_free. */
uint32_t vg_policy_nwarnings(const struct vg_policy *p);
const char *vg_policy_warning(const struct vg_policy *p, uint32_t i);

/* Expand variables and ~, compile globs.  Host names are not resolved
 * here: a run's host-name rules match what vigil's resolver handed out
 * (net/dns.h), and nothing else does.  Must be called once before deciding. */
int vg_policy_compile(struct vg_policy *p, const struct vg_places *places,
                      struct vg_err *err);
/* The same for a run that also binds these (--bind, --bind-rw): a bind, a
 * workdir or a home in a read-only tree makes that tree not the host's in
 * the run, and then rules are matched as written only (policy/resolve.c). */
int vg_policy_compile_run(struct vg_policy *p, const struct vg_places *places,
                          const struct vg_bind *binds, unsigned nbinds, struct vg_err *err);

/* Path decisions: path is absolute and canonical (the tracer resolves it). */
struct vg_verdict vg_policy_decide_path(const struct vg_policy *p,
                                        enum vg_class cls, const char *path);
/* A rename of src to dst (tree: src is a directory, all below it moves
 * too) or a hard link dst to src (tree false): DENY unless, for read,
 * write and exec, every name the object(s) get is decided at least as
 * strictly as the name they have and no rule splits a tree (policy/move.c).
 * A refusal's rule is the rule that differs (NULL: a default). */
struct vg_verdict vg_policy_decide_move(const struct vg_policy *p, const char *src,
                                        const char *dst, bool tree);
/* Network decisions for connect/bind/send.  proto: "tcp", "udp" or "unix". */
struct vg_verdict vg_policy_decide_net(const struct vg_policy *p,
                                       enum vg_class cls, const char *proto,
                                       const struct sockaddr *sa,
                                       socklen_t len);

/* The same, host-name rules also matching the addresses the run's
 * resolver handed out for the names they name (NULL: none). */
struct vg_dns_table;
struct vg_verdict vg_policy_decide_net_names(const struct vg_policy *p, enum vg_class cls,
                                             const char *proto, const struct sockaddr *sa,
                                             socklen_t len, struct vg_dns_table *names);
/* May vigil's resolver answer this host name (lower case, no final dot)?
 * ALLOW with the first allow rule of class connect or send whose host
 * pattern names it (ports and protocol aside); otherwise DENY with no
 * rule.  Addresses and `*` do not name hosts. */
struct vg_verdict vg_policy_decide_name(const struct vg_policy *p, const char *name);

/* Does this class need per-call interception?  False when every call of it
 * would be allowed anyway (default allow and no non-allow rule). */
bool vg_policy_audits(const struct vg_policy *p, enum vg_class cls);
/* `audit lookups`: decide the stat family, access, getdents and
 * inotify_add_watch as reads too (they are not intercepted otherwise);
 * it makes vg_policy_audits(p, VG_CLASS_READ) true. */
bool vg_policy_audits_lookups(const struct vg_policy *p);
/* Does an allow of connect or send (a rule or the default) reach beyond
 * the sandbox's own loopback: another address or network, a host name,
 * any address?  Then the sandbox's netns gets egress (net/egress.h). */
bool vg_policy_net_egress(const struct vg_policy *p);
/* Does an allow rule of connect or send name exactly this address (one
 * address, not a network, a name or any)?  Only such a rule opens a host
 * address of the supervisor's own to the sandbox (net/hostaddr.c). */
struct vg_ip;
bool vg_policy_names_ip(const struct vg_policy *p, const struct vg_ip *ip);
/* The first rule of cls naming this one address exactly (not a network,
 * a name or any) that matches the call: *v its verdict, true; false when
 * no such rule does (then no wide rule or default may decide either: see
 * net/net.h, multicast and broadcast). */
struct sockaddr;
bool vg_policy_decide_exact(const struct vg_policy *p, enum vg_class cls, const char *proto,
                            const struct sockaddr *sa, socklen_t len, struct vg_verdict *v);
/* fn for every address such a rule names (repeats included). */
void vg_policy_each_exact_ip(const struct vg_policy *p,
                             void (*fn)(const struct vg_ip *ip, void *arg), void *arg);

const struct vg_limits *vg_policy_limits(const struct vg_policy *p);
uint32_t vg_policy_nbinds(const struct vg_policy *p);
/* `image REF`: the image a run uses when --image names none (NULL: the
 * host's trees); where it was said into *file and *line (either may be
 * NULL). */
const char *vg_policy_image(const struct vg_policy *p, const char **file, uint32_t *line);
const struct vg_bind *vg_policy_bind(const struct vg_policy *p, uint32_t i);
uint32_t vg_policy_nenv(const struct vg_policy *p);
const struct vg_env *vg_policy_env(const struct vg_policy *p, uint32_t i);

/* For the log header: sha256 of text, full text (includes expanded, each
 * file preceded by a "# file: PATH" line). */
const char *vg_policy_text(const struct vg_policy *p);
const char *vg_policy_sha256(const struct vg_policy *p);

/* Landlock: the part of the policy the kernel can enforce.  A plan is a
 * superset of what the policy allows (so it never refuses an allowed call)
 * and is applied in the sandbox right before exec. */
struct vg_landlock_rule {
    const char *path;      /* absolute; beneath this (or this file) */
    uint64_t access;       /* LANDLOCK_ACCESS_FS_* bits */
    bool exact;            /* the policy names this path only: if it is a
                            * directory, grant just READ_DIR on it (Landlock
                            * cannot say "this directory but not below");
                            * if it is missing, skip it.  Otherwise a
                            * missing path grants beneath its nearest
                            * existing ancestor, so that what the candidate
                            * may create it may also use. */
};
struct vg_landlock_plan {
    uint64_t handled_fs;   /* LANDLOCK_ACCESS_FS_* the ruleset handles */
    struct vg_landlock_rule *rules;
    uint32_t nrules;
    uint64_t handled_net;  /* LANDLOCK_ACCESS_NET_* */
    uint16_t *connect_ports; uint32_t nconnect_ports;
    uint16_t *bind_ports;    uint32_t nbind_ports;
};
/* Fills plan for the given Landlock ABI (0: not available -> empty plan).
 * Free with vg_landlock_plan_free. */
int vg_policy_landlock_plan(const struct vg_policy *p, int abi,
                            struct vg_landlock_plan *plan);
/* The policy file a -p argument names (policy/find.c): a path as given,
 * or the NAME of a shipped policy (NAME.policy).  Malloc'd; NULL with err
 * when there is none. */
char *vg_policy_find(const char *arg, struct vg_err *err);
/* The real path of the shipped policy NAME (NAME.policy in the first
 * search directory that has it; `include <NAME>`), malloc'd; NULL when
 * there is none or NAME is not a name. */
char *vg_policy_find_shipped(const char *name);
/* Calls fn for each shipped policy (name, real path), first of a name only,
 * in search order. */
void vg_policy_list(void (*fn)(const char *name, const char *path, void *arg), void *arg);
/* Also let the candidate execute the one file at path (sandbox view): the
 * command named on the command line.  No-op when exec is not handled. */
void vg_landlock_plan_exec_file(struct vg_landlock_plan *plan, const char *path);
/* Also let the candidate read what vigil shows it on purpose (sandbox
 * view): a file named on the command line (tree false), which it may read
 * whatever the policy says (core/decide.c), or a bind's destination
 * (tree true), which the user chose to show.  Layer 2 still judges each
 * read of a bind by the policy; this keeps a dry run of a task with bound
 * inputs from stopping at the kernel where the policy has no rule. */
void vg_landlock_plan_read(struct vg_landlock_plan *plan, const char *path, bool tree);
void vg_landlock_plan_free(struct vg_landlock_plan *plan);

/* Print the normalized rules (vigil check). */
void vg_policy_print(const struct vg_policy *p, FILE *out);

/* The built-in default policy (policies/default.policy, compiled in). */
extern const char vg_default_policy_text[];
#endif
