/* decide.c: see decide.h.  No I/O here: what the decision needs of the
 * world it asks the views it is given. */
#include "core/decide.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static const struct vg_rule_src default_rule[] = {
    [VG_ACT_ALLOW] = {.text = "default allow"},
    [VG_ACT_DENY] = {.text = "default deny"},
    [VG_ACT_KILL] = {.text = "default kill"},
};

/* A reason vigil gives for this call itself: the verdict's own rule. */
static void say(struct vg_call_verdict *v, const char *file, uint32_t line, const char *text)
{
    v->own = (struct vg_rule_src){.file = file, .line = line, .text = text};
    v->rule = &v->own;
}

static int severity(enum vg_action a)
{
    return a == VG_ACT_KILL ? 2 : a == VG_ACT_DENY ? 1 : 0;
}

static bool is_artifact(const struct vg_decide_ctx *ctx, const char *path)
{
    for (unsigned i = 0; path && i < ctx->nartifacts; i++)
        if (!strcmp(ctx->artifacts[i], path))
            return true;
    return false;
}

/* The canonical path the call is judged on. */
static const char *call_path(const struct vg_call *c)
{
    if (c->check_path)
        return c->check_path;
    return c->cls == VG_CLASS_EXEC && c->args.exe ? c->args.exe : c->args.resolved;
}

static enum vg_decision decision_of(enum vg_action a, bool dry)
{
    static const enum vg_decision enforce[] = {
        [VG_ACT_ALLOW] = VG_DEC_ALLOW, [VG_ACT_DENY] = VG_DEC_DENY, [VG_ACT_KILL] = VG_DEC_KILL};
    static const enum vg_decision dry_run[] = {
        [VG_ACT_ALLOW] = VG_DEC_ALLOW, [VG_ACT_DENY] = VG_DEC_WOULD_DENY,
        [VG_ACT_KILL] = VG_DEC_WOULD_KILL};
    return dry ? dry_run[a] : enforce[a];
}

/* The bytes of an address of this kind (struct vg_ip keeps v4 in 4). */
static size_t ip_bytes(const struct vg_ip *ip)
{
    return ip->v6 ? sizeof ip->a : sizeof(struct in_addr);
}

/* Is this the sandbox's way to vigil's resolver?  Only in a run that has
 * one (net->resolver): in the host's network namespace the address may be
 * anyone's. */
static bool to_resolver(const struct vg_decide_ctx *ctx, const char *proto,
                        const struct sockaddr *sa, socklen_t len)
{
    const struct vg_resolver *res = ctx->net ? ctx->net->resolver : NULL;
    const struct vg_sockaddr *r = res ? &res->addr : NULL;
    struct vg_sockaddr a;
    return r && proto && !strcmp(proto, "udp") && vg_sockaddr_reduce(sa, len, &a) &&
           a.family == r->family && a.ip.v6 == r->ip.v6 && a.port == r->port &&
           !memcmp(a.ip.a, r->ip.a, ip_bytes(&r->ip));
}

static const struct vg_rule_src special_rule = {
    .file = "(vigil)", .line = 0,
    .text = "multicast, broadcast and the host's anycast addresses: only a rule naming the "
            "address exactly allows them (net/net.h)",
};

/* A destination that is not one host (net/net.h)? */
static bool special(const struct vg_decide_ctx *ctx, const struct sockaddr *sa, socklen_t len)
{
    struct vg_sockaddr a;
    return ctx->net && ctx->net->special && vg_sockaddr_reduce(sa, len, &a) &&
           (a.family == AF_INET || a.family == AF_INET6) &&
           ctx->net->special(ctx->net->arg, &a.ip);
}

/* One address, as the policy and vigil's resolver see it. */
static struct vg_verdict ask_net(const struct vg_decide_ctx *ctx, enum vg_class cls,
                                 const char *proto, const struct sockaddr *sa, socklen_t len)
{
    bool out = cls == VG_CLASS_CONNECT || cls == VG_CLASS_SEND;
    if (out && to_resolver(ctx, proto, sa, len))
        return (struct vg_verdict){.action = VG_ACT_ALLOW, .rule = ctx->net->resolver->rule};
    if (out && special(ctx, sa, len)) {
        /* only a rule naming it exactly decides: a wide rule (`*`, a
         * network, a name) or a default does not cover it */
        struct vg_verdict v;
        if (vg_policy_decide_exact(ctx->pol, cls, proto, sa, len, &v))
            return v;
        return (struct vg_verdict){.action = VG_ACT_DENY, .rule = &special_rule};
    }
    return vg_policy_decide_net_names(ctx->pol, cls, proto, sa, len,
                                      ctx->net ? ctx->net->names : NULL);
}

/* The name vigil's resolver gave an address out for, for the record
 * (args.host, dests[].host); NULL when none. */
static const char *name_of(const struct vg_decide_ctx *ctx, struct vg_call *c,
                           const struct sockaddr *sa, socklen_t len)
{
    struct vg_sockaddr a;
    if (ctx->net && ctx->net->name_of && len && vg_sockaddr_reduce(sa, len, &a) &&
        (a.family == AF_INET || a.family == AF_INET6))
        return ctx->net->name_of(ctx->net->arg, &a.ip, &c->arena);
    return NULL;
}

/* sendmmsg: every destination is judged and keeps its decision; the
 * strictest decides the call (the engine cannot send part of it), and the
 * record's address becomes that destination's. */
static struct vg_verdict ask_dests(const struct vg_decide_ctx *ctx, struct vg_call *c)
{
    struct vg_verdict worst = {0};
    uint32_t at = 0;
    bool dry = ctx->dry_run;
    for (uint32_t i = 0; i < c->ndests; i++) {
        struct vg_verdict v = ask_net(ctx, c->cls, c->proto,
                                      (const struct sockaddr *)&c->dest_sa[i].sa,
                                      c->dest_sa[i].len);
        c->dests[i].decision = decision_of(v.action, dry);
        c->dests[i].host = name_of(ctx, c, (const struct sockaddr *)&c->dest_sa[i].sa,
                                   c->dest_sa[i].len);
        if (i == 0 || severity(v.action) > severity(worst.action)) {
            worst = v;
            at = i;
        }
    }
    c->args.family = c->dests[at].family;
    c->args.addr = c->dests[at].addr;
    c->args.port = c->dests[at].port;
    c->args.host = c->dests[at].host;
    return worst;
}

static struct vg_verdict ask_policy(const struct vg_decide_ctx *ctx, struct vg_call *c)
{
    const struct vg_policy *pol = ctx->pol;
    switch (c->cls) {
    case VG_CLASS_CONNECT:
    case VG_CLASS_BIND:
    case VG_CLASS_SEND:
        if (c->ndests)
            return ask_dests(ctx, c); /* the record's address is the deciding one's */
        if (c->cls != VG_CLASS_BIND && c->has_sa)
            c->args.host = name_of(ctx, c, (const struct sockaddr *)&c->sa, c->salen);
        return ask_net(ctx, c->cls, c->proto ? c->proto : "tcp",
                       (const struct sockaddr *)&c->sa, c->salen);
    default:
        break;
    }
    const char *path = call_path(c) ? call_path(c) : "";
    struct vg_verdict v = vg_policy_decide_path(pol, c->cls, path);
    if (c->check_path2) {
        struct vg_verdict v2 = vg_policy_decide_path(pol, c->check_cls2, c->check_path2);
        if (severity(v2.action) > severity(v.action))
            v = v2;
    }
    return v;
}

/* A path the decoder could not make canonical ("(unresolvable: ...)",
 * "(unreadable)", "(bad fd N)", "(too many links)"), of a file or of a
 * pathname unix socket: no rule can judge it, so it is refused whatever
 * the policy or the mode. */
static bool unjudgeable(const struct vg_call *c)
{
    const char *p = c->check_path, *p2 = c->check_path2;
    if (c->ent->flags & VG_SF_FILE)
        p = call_path(c);
    return (p && p[0] == '(') || (p2 && p2[0] == '(');
}

/* What the kernel answers, before any look at a policy, for a path the
 * decoder could not make absolute (decode.h): a bad or closed fd, a loop,
 * a name too long.  Others ("(unresolvable: ...)", an unreadable
 * argument) keep the call's refusal errno. */
static const struct {
    const char *prefix;
    int err;
} kernel_errno[] = {
    {"(bad fd", EBADF}, {"(too many links)", ELOOP}, {"(name too long)", ENAMETOOLONG},
};

/* "(unresolvable: PATH: Permission denied)": a directory on the way the
 * caller cannot search (vigil resolved it as the caller's uid). */
#define SEARCH_DENIED ": Permission denied)"

static int unjudgeable_errno(const struct vg_call *c, int deny_errno)
{
    const char *paths[] = {(c->ent->flags & VG_SF_FILE) ? call_path(c) : c->check_path,
                           c->check_path2};
    for (size_t i = 0; i < VG_ARRAY_LEN(paths); i++)
        for (size_t k = 0; paths[i] && k < VG_ARRAY_LEN(kernel_errno); k++)
            if (!strncmp(paths[i], kernel_errno[k].prefix, strlen(kernel_errno[k].prefix)))
                return kernel_errno[k].err;
    for (size_t i = 0; i < VG_ARRAY_LEN(paths); i++) {
        size_t n = paths[i] ? strlen(paths[i]) : 0;
        if (n > strlen(SEARCH_DENIED) && !strcmp(paths[i] + n - strlen(SEARCH_DENIED), SEARCH_DENIED))
            return EACCES;
    }
    return deny_errno;
}

#define VG_RENAME_EXCHANGE 2u /* linux/fs.h */

/* Ask the view about path (absolute, not "/"): 0 or the errno; EINVAL
 * for anything else, and when there is no view. */
static int look(const struct vg_decide_ctx *ctx, const char *path, bool follow,
                struct vg_fs_node *node)
{
    if (!ctx->fs || !ctx->fs->stat || !path || path[0] != '/' || !path[1])
        return EINVAL;
    return ctx->fs->stat(ctx->fs->arg, path, follow, node);
}

/* Is path a directory in the sandbox view (lstat now: the candidate can
 * swap it before the call, see docs/POLICY.md)?  Unknown counts as one,
 * the stricter check. */
static bool is_tree(const struct vg_decide_ctx *ctx, const char *path)
{
    struct vg_fs_node node;
    return look(ctx, path, false, &node) != 0 || node.dir;
}

/* rename and link: the names the objects get must not be decided more
 * leniently than the names they have (policy/move.c).  RENAME_EXCHANGE
 * moves both ways. */
static struct vg_verdict check_move(const struct vg_decide_ctx *ctx, const struct vg_call *c)
{
    const struct vg_policy *pol = ctx->pol;
    const char *src = c->check_path, *dst = c->check_path2;
    if (c->ent->flags & VG_SF_LINK)
        return vg_policy_decide_move(pol, src, dst, false);
    struct vg_verdict v = vg_policy_decide_move(pol, src, dst, is_tree(ctx, src));
    if (v.action == VG_ACT_ALLOW && c->args.flags > 0 && (c->args.flags & VG_RENAME_EXCHANGE))
        v = vg_policy_decide_move(pol, dst, src, is_tree(ctx, dst));
    return v;
}

/* Does path (absolute, sandbox view) exist?  For writes, its parent. */
static bool target_missing(const struct vg_decide_ctx *ctx, enum vg_class cls, const char *path)
{
    if (!path || path[0] != '/' || !path[1])
        return false;
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    if (cls == VG_CLASS_WRITE) {
        char *slash = strrchr(buf, '/');
        if (slash == buf)
            return false; /* the parent is "/" */
        *slash = 0;
    } else if (cls != VG_CLASS_READ && cls != VG_CLASS_EXEC) {
        return false;
    }
    struct vg_fs_node node;
    return look(ctx, buf, false, &node) == ENOENT;
}

/* A kill rule does not end the run for a mkdir of a name that exists:
 * the call changes nothing (the kernel answers EEXIST, whatever the
 * policy), and `mkdir -p DIR` makes it for every ancestor of DIR, a
 * workdir's in the home or in /var included.  It is refused with EEXIST,
 * as the kernel would have. */
static bool harmless_mkdir(const struct vg_decide_ctx *ctx, const struct vg_call *call,
                           const char *path)
{
    struct vg_fs_node node;
    return (call->ent->flags & VG_SF_MKDIR) && look(ctx, path, false, &node) == 0;
}

/* A probe: a read or exec lookup (open without O_CREAT, stat, access,
 * exec) whose object does not exist in the sandbox's view, as the
 * canonical walk found it (call->missing).  A PATH search, a package.json
 * walk, a locale lookup.  Informational only: the decision is the same,
 * and the candidate may create the file a moment later.  Writes (O_CREAT
 * opens included) are never probes: they make things. */
static bool is_probe(const struct vg_call *c)
{
    return c->missing && (c->cls == VG_CLASS_READ || c->cls == VG_CLASS_EXEC);
}

static const struct vg_rule_src artifact_rule = {
    .file = "(command line)", .line = 0, .text = "allow the files named on the command line",
};

static void set_rule(struct vg_call_verdict *v, const struct vg_verdict *pv)
{
    v->rule = pv->rule ? pv->rule : &default_rule[pv->action];
}

/* An exec whose argv or envp could not be read whole (decode_exec.c) is
 * refused in every mode, with the errno the kernel would have given
 * (EFAULT, E2BIG): the log could not show what would run. */
static bool exec_unreadable(const struct vg_call *call, struct vg_call_verdict *v)
{
    if (call->cls != VG_CLASS_EXEC || !call->args.argv_unreadable)
        return false;
    v->decision = VG_DEC_DENY;
    v->refuse = true;
    v->err = call->deny_errno ? call->deny_errno : EFAULT;
    snprintf(v->text_buf, sizeof v->text_buf, "exec: argv or envp cannot be read whole (%s)",
             v->err == E2BIG ? "too long" : "unreadable");
    say(v, NULL, 0, v->text_buf);
    return true;
}

bool vg_is_command(const struct vg_decide_ctx *ctx, const char *path, const struct vg_fs_node *node)
{
    const struct vg_command_id *id = ctx->command_id;
    if (!ctx->command_path || !path || strcmp(path, ctx->command_path))
        return false;
    if (!id || !id->seen)
        return true; /* vigil's own first exec: nothing of the candidate ran yet */
    /* the very file, unchanged: same inode, and no write, truncate or
     * chmod since (each sets the change time) */
    const struct vg_fs_node *was = &id->node;
    return id->known && node && node->dev == was->dev && node->ino == was->ino &&
           node->ctime.tv_sec == was->ctime.tv_sec && node->ctime.tv_nsec == was->ctime.tv_nsec;
}

/* An exec call of the command: judged on the file now at its path. */
static bool exec_of_command(const struct vg_decide_ctx *ctx, const char *path)
{
    struct vg_fs_node node;
    return vg_is_command(ctx, path, look(ctx, path, true, &node) == 0 ? &node : NULL);
}

void vg_decide_exec(const struct vg_decide_ctx *ctx, const struct vg_exec_image *img,
                    struct vg_call_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->record = true;
    bool dry = ctx->dry_run;
    if (!img->exe) {
        v->decision = VG_DEC_KILL;
        v->kill = true;
        say(v, NULL, 0, "exec check: the running executable cannot be read");
        return;
    }
    if (!ctx->audited[VG_CLASS_EXEC]) {
        v->record = false;
        v->decision = VG_DEC_ALLOW;
        return;
    }
    struct vg_verdict pv = vg_is_command(ctx, img->exe, img->node)
        ? (struct vg_verdict){.action = VG_ACT_ALLOW, .rule = &artifact_rule}
        : vg_policy_decide_path(ctx->pol, VG_CLASS_EXEC, img->exe);
    set_rule(v, &pv);
    if (pv.action == VG_ACT_ALLOW) {
        v->decision = VG_DEC_ALLOW;
        return;
    }
    /* Deny or kill alike: the exec already happened, only a kill stops it. */
    v->decision = dry ? VG_DEC_WOULD_KILL : VG_DEC_KILL;
    v->kill = !dry;
}

/* Is path at or under one of the plan's masks?  A fact for the record:
 * the call is decided as usual, and sees an empty file or directory. */
static bool masked(const struct vg_decide_ctx *ctx, const char *path)
{
    for (unsigned i = 0; path && i < ctx->nmasked; i++) {
        size_t n = strlen(ctx->masked[i]);
        if (!strncmp(path, ctx->masked[i], n) && (path[n] == 0 || path[n] == '/'))
            return true;
    }
    return false;
}

void vg_decide(const struct vg_decide_ctx *ctx, struct vg_call *call, struct vg_call_verdict *v)
{
    call->args.masked = masked(ctx, call->args.resolved);
    memset(v, 0, sizeof *v);
    v->record = true;
    const struct vg_sysent *ent = call->ent;
    int deny_errno = call->deny_errno ? call->deny_errno : EACCES;

    /* The baseline is the kernel-boundary's list: refused in every mode. */
    if (!ent || (ent->flags & VG_SF_BASELINE)) {
        v->decision = VG_DEC_DENY;
        v->refuse = true;
        v->err = ent ? deny_errno : ENOSYS;
        snprintf(v->text_buf, sizeof v->text_buf, "baseline: %s is never allowed",
                 ent ? ent->name : call->name ? call->name : "this system call");
        say(v, NULL, 0, v->text_buf);
        return;
    }
    if (call->undecidable) {
        /* Fail closed, in every mode: what cannot be read or decoded
         * cannot be judged, so it does not run. */
        v->decision = VG_DEC_DENY;
        v->refuse = true;
        v->err = deny_errno;
        say(v, NULL, 0, call->undecidable);
        return;
    }
    if (call->on_open_fd) {
        v->record = false; /* fstat and the like: the fd was decided at open */
        v->decision = VG_DEC_ALLOW;
        return;
    }
    if ((ent->flags & VG_SF_ADDR_OPT) && !call->has_sa) {
        /* A send on a connected socket, listen on a bound one: decided at
         * connect or bind. */
        v->record = false;
        v->decision = VG_DEC_ALLOW;
        return;
    }
    if (!ctx->audited[call->cls]) {
        /* Traced because its row serves another class (open for read when
         * only writes are audited): nothing to decide or record. */
        v->record = false;
        v->decision = VG_DEC_ALLOW;
        return;
    }
    if (exec_unreadable(call, v))
        return;
    struct vg_verdict pv;
    const char *path = call_path(call);
    if (unjudgeable(call)) {
        v->decision = VG_DEC_DENY;
        v->refuse = true;
        v->err = unjudgeable_errno(call, deny_errno);
        say(v, NULL, 0, "unresolvable path");
        return;
    }
    v->probe = is_probe(call);
    if ((call->cls == VG_CLASS_READ && is_artifact(ctx, path)) ||
        (call->cls == VG_CLASS_EXEC && exec_of_command(ctx, path)))
        pv = (struct vg_verdict){.action = VG_ACT_ALLOW, .rule = &artifact_rule};
    else
        pv = ask_policy(ctx, call);
    bool moved = false;
    if (pv.action == VG_ACT_ALLOW && (ent->flags & (VG_SF_MOVE | VG_SF_LINK))) {
        pv = check_move(ctx, call);
        moved = pv.action != VG_ACT_ALLOW;
    }
    set_rule(v, &pv);
    if (moved) {
        /* the rule that differs, in vigil's words */
        snprintf(v->text_buf, sizeof v->text_buf, "new name decided more leniently than %s",
                 v->rule->text);
        say(v, v->rule->file, v->rule->line, v->text_buf);
    }
    bool dry = ctx->dry_run;
    if (pv.action != VG_ACT_ALLOW && target_missing(ctx, call->cls, path))
        deny_errno = ENOENT;
    if (pv.action == VG_ACT_KILL && harmless_mkdir(ctx, call, path)) {
        pv.action = VG_ACT_DENY;
        deny_errno = EEXIST;
    }
    switch (pv.action) {
    case VG_ACT_ALLOW:
        v->decision = VG_DEC_ALLOW;
        break;
    case VG_ACT_DENY:
        v->decision = dry ? VG_DEC_WOULD_DENY : VG_DEC_DENY;
        v->refuse = !dry;
        v->err = dry ? 0 : deny_errno;
        break;
    case VG_ACT_KILL:
        v->decision = dry ? VG_DEC_WOULD_KILL : VG_DEC_KILL;
        v->kill = !dry;
        v->refuse = !dry;
        v->err = dry ? 0 : deny_errno;
        break;
    }
}

static const struct vg_rule_src unnamed_host = {.text = "no allow rule names this host"};

void vg_decide_name(const struct vg_decide_ctx *ctx, const char *name, struct vg_call_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->record = true;
    if (!name) {
        v->decision = VG_DEC_DENY;
        v->refuse = true;
        say(v, NULL, 0, "malformed query");
        return;
    }
    struct vg_verdict pv = vg_policy_decide_name(ctx->pol, name);
    v->rule = pv.rule ? pv.rule : &unnamed_host;
    if (pv.action == VG_ACT_ALLOW) {
        v->decision = VG_DEC_ALLOW;
        return;
    }
    /* a name is only ever refused: no kill rule is about names */
    v->decision = ctx->dry_run ? VG_DEC_WOULD_DENY : VG_DEC_DENY;
    v->refuse = !ctx->dry_run;
}
