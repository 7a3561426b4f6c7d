/* learn.c: see learn.h.  One pass over the log collects the accesses
 * (deduplicated as the patterns they become), then the text is written
 * and checked (learn_check.c). */
#include "insight/learn.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/syscalls.h"
#include "event/reader.h"
#include "insight/generalize.h"
#include "insight/learn_int.h"
#include "insight/summary.h"
#include "policy/glob.h"
#include "policy/policy.h"

#define ARTIFACT_RULE_FILE "(command line)"

/* Add "line" once (rules and comments alike keep their first order). */
static void add_line(struct vg_learn_lines *l, const char *line)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], line))
            return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = vg_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = vg_xstrdup(line);
}

bool vg_learn_writable(const char *p)
{
    for (; *p; p++)
        if (*p <= ' ' || *p >= 0x7f || *p == '#' || *p == '$' || *p == '~' || *p == '"')
            return false;
    return true;
}

static void skip(struct vg_learn *L, const char *why, enum vg_class cls, const char *what)
{
    struct vg_buf b = {0};
    vg_buf_printf(&b, "# not learned (%s): %s ", why, vg_class_name(cls));
    vg_text_escaped(&b, what);
    vg_buf_put(&b, "", 1);
    add_line(&L->skipped, b.data);
    vg_buf_free(&b);
}

static void add_rule(struct vg_learn *L, enum vg_class cls, const char *pattern)
{
    struct vg_buf b = {0};
    vg_buf_printf(&b, "allow %s %s", vg_class_name(cls), pattern);
    vg_buf_put(&b, "", 1);
    add_line(&L->rules, b.data);
    vg_buf_free(&b);
}

static bool base_allows_path(const struct vg_learn *L, enum vg_class cls, const char *path)
{
    return L->base && vg_policy_decide_path(L->base, cls, path).action == VG_ACT_ALLOW;
}

/* The sandbox's scratch tree a file outside $WORK lies in, or NULL.  Its
 * names are made up anew each run (gcc's /tmp/ccXXXXXX.s): a rule for one
 * would be noise, and the tree is the sandbox's own. */
static const char *scratch_of(const struct vg_learn *L, enum vg_class cls, const char *path)
{
    size_t n = strlen(L->work);
    bool in_work = !strncmp(path, L->work, n) && (path[n] == '/' || path[n] == 0);
    return cls == VG_CLASS_EXEC || in_work ? NULL : vg_sum_scratch_tree(&L->where, path);
}

/* How a path is written: as the policy's patterns would (a tree, a glob),
 * or as the name itself, outside the candidate's places (a directory
 * listed, a symlink read), or as a file named on the command line, which
 * is the file itself wherever it lies (a copy in the sandbox's /tmp too). */
enum learn_how { AS_PATTERN, AS_NAME, AS_NAMED_FILE };

static void learn_path(struct vg_learn *L, enum vg_class cls, const char *path,
                       enum learn_how how)
{
    bool exact = how != AS_PATTERN;
    if (!path || path[0] != '/' || base_allows_path(L, cls, path))
        return;
    if (vg_sum_is_secret(path)) {
        skip(L, "a secret or a home path: grant it by hand if the task needs it", cls, path);
        return;
    }
    if (!vg_learn_writable(path)) {
        skip(L, "a name the policy language cannot write", cls, path);
        return;
    }
    const char *tree = how == AS_NAMED_FILE ? NULL : scratch_of(L, cls, path);
    struct vg_buf pat = {0};
    if (tree) {
        /* named as the tree, never as the file; with a base policy (the
         * include, --diff) that tree is the base's to grant, not ours:
         * a comment, not a rule.  A policy standing alone needs it. */
        if (L->places.tmp && !strcmp(tree, L->places.tmp)) {
            vg_buf_puts(&pat, "$TMP/**");
        } else {
            vg_glob_put_literal(&pat, tree);
            vg_buf_puts(&pat, "/**");
        }
        if (L->base)
            skip(L, "the sandbox's own scratch, gone with the run: the base policy decides it",
                 cls, pat.data);
        else
            add_rule(L, cls, pat.data);
        vg_buf_free(&pat);
        return;
    }
    if (how == AS_NAMED_FILE)
        vg_generalize_file(path, &L->places, &pat);
    else
        vg_generalize(cls, path, &L->places, exact, &pat);
    vg_buf_put(&pat, "", 1);
    add_rule(L, cls, pat.data);
    vg_buf_free(&pat);
}

/* The address as a sockaddr, for asking the base policy; false when the
 * text is not a numeric inet/inet6 address. */
static bool to_sockaddr(const struct vg_args *a, struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    uint16_t port = htons((uint16_t)(a->port > 0 ? a->port : 0));
    if (a->addr && inet_pton(AF_INET, a->addr, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = port;
        *len = sizeof *in;
        return true;
    }
    if (a->addr && inet_pton(AF_INET6, a->addr, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = port;
        *len = sizeof *in6;
        return true;
    }
    return false;
}

static void learn_net(struct vg_learn *L, const struct vg_syscall_ev *e)
{
    const struct vg_args *a = &e->args;
    const char *proto = a->proto ? a->proto : "tcp";
    struct sockaddr_storage ss;
    socklen_t len;
    bool unix_path = !strcmp(proto, "unix") || (a->family && !strcmp(a->family, "unix"));
    if (unix_path) {
        if (a->addr && a->addr[0] == '/' && vg_learn_writable(a->addr)) {
            struct vg_buf b = {0};
            vg_buf_puts(&b, "unix ");
            vg_glob_put_literal(&b, a->addr); /* a name the candidate chose: no wildcards */
            vg_buf_put(&b, "", 1);
            add_rule(L, e->cls, b.data);
            vg_buf_free(&b);
        }
        return;
    }
    if (!to_sockaddr(a, &ss, &len) || a->port < 0)
        return;
    if (L->base && vg_policy_decide_net(L->base, e->cls, proto, (struct sockaddr *)&ss, len)
                           .action == VG_ACT_ALLOW)
        return;
    struct vg_buf b = {0};
    bool v6 = ss.ss_family == AF_INET6;
    if (!vg_learn_writable(proto)) /* a log is input: its words, too */
        return;
    if (a->host && a->host[0] && vg_learn_writable(a->host)) /* the name the candidate asked for */
        vg_buf_printf(&b, "%s %s:%d", proto, a->host, a->port);
    else
        vg_buf_printf(&b, "%s %s%s%s:%d", proto, v6 ? "[" : "", a->addr, v6 ? "]" : "", a->port);
    vg_buf_put(&b, "", 1);
    add_rule(L, e->cls, b.data);
    vg_buf_free(&b);
}

/* Calls on a name rather than on what is below it: a directory opened to
 * be listed, a symlink read (realpath walks every ancestor that way; the
 * syscall table says which calls read a link). */
static bool names_itself(const struct vg_syscall_ev *e)
{
    if (e->args.flags >= 0 && (e->args.flags & O_DIRECTORY) && e->cls == VG_CLASS_READ)
        return true;
    const struct vg_sysent *row = e->name ? vg_sys_by_name(e->name) : NULL;
    return row && row->carry == VG_CARRY_READLINK;
}

static void learn_syscall(struct vg_learn *L, const struct vg_syscall_ev *e)
{
    enum vg_sum_noise noise = vg_sum_noise_of(&L->where, e);
    if (e->probe)
        return; /* nothing was found */
    if (noise == VG_NOISE_RESOLVER || noise == VG_NOISE_NSCD)
        return; /* the sandbox's own resolver, the C library's own socket: no task asks */
    if (e->rule.file && !strcmp(e->rule.file, ARTIFACT_RULE_FILE)) {
        /* Named on the command line: the supervisor allows it anyway, but
         * the kernel's Landlock layer only knows the policy's rules, so
         * the file itself is granted (exactly); the command's exec needs
         * nothing (vigil grants it in Landlock too). */
        if (e->cls == VG_CLASS_READ)
            learn_path(L, e->cls, e->args.resolved, AS_NAMED_FILE);
        return;
    }
    switch (e->cls) {
    case VG_CLASS_READ:
    case VG_CLASS_WRITE:
        learn_path(L, e->cls, e->args.resolved, names_itself(e) ? AS_NAME : AS_PATTERN);
        if (e->args.resolved2)
            learn_path(L, e->cls, e->args.resolved2, AS_PATTERN);
        break;
    case VG_CLASS_EXEC:
        learn_path(L, e->cls, e->args.exe ? e->args.exe : e->args.resolved, AS_NAME);
        break;
    case VG_CLASS_CONNECT:
    case VG_CLASS_BIND:
    case VG_CLASS_SEND:
        learn_net(L, e);
        break;
    default:
        break; /* the baseline: no policy can allow it */
    }
}

/* The image an exec really ran (the exec check judges it: a #! script's
 * interpreter).  The first is vigil's own exec of the command: a file
 * named on the command line needs no rule. */
static void learn_image(struct vg_learn *L, const struct vg_proc_ev *p)
{
    if (p->kind != VG_PROC_EXEC || !p->exe)
        return;
    bool first = !L->seen_exec;
    L->seen_exec = true;
    if (first && L->command_file)
        return;
    learn_path(L, VG_CLASS_EXEC, p->exe, AS_NAME);
}

const struct vg_trees *vg_learn_trees(const struct vg_learn *L)
{
    return L->trees ? L->trees : &vg_system_trees;
}

/* A run on an image: the learned policy names it by digest (its paths are
 * the image's), and is checked in its trees when this store holds it. */
static void on_image(struct vg_learn *L, const struct vg_header *h)
{
    struct vg_err why;
    if (!h->image_digest)
        return;
    L->image = vg_xstrdup(h->image_digest);
    if (vg_image_find(L->image, &L->img, &why) == 0)
        L->trees = vg_trees_of_root(L->img.rootfs, &why);
}

static int on_header(struct vg_learn *L, const struct vg_header *h, struct vg_err *err)
{
    on_image(L, h);
    L->work = vg_xstrdup(h->cwd ? h->cwd : "/tmp/work");
    L->places.work = L->work;
    vg_sum_places_set(&L->where, h);
    L->command_file = h->argc > 0 && h->argv[0] && strchr(h->argv[0], '/');
    L->run_policy = vg_xstrdup(h->policy_path ? h->policy_path : "?");
    return vg_learn_base(L, h, err);
}

static int read_log(struct vg_learn *L, struct vg_err *err)
{
    struct vg_reader *rd = vg_reader_open(L->o->log, err);
    if (!rd)
        return -1;
    struct vg_decoded d;
    int rc, n = 0, bad = 0;
    bool trailer = false;
    while (!bad && (rc = vg_reader_next(rd, &d)) > 0) {
        trailer |= d.rec.type == VG_REC_TRAILER;
        if (n++ == 0 && d.rec.type != VG_REC_HEADER) {
            vg_errf(err, "%s: not a vigil log (no header)", L->o->log);
            bad = 1;
        } else if (d.rec.type == VG_REC_HEADER) {
            bad = on_header(L, &d.rec.u.header, err) < 0;
        } else if (d.rec.type == VG_REC_SYSCALL) {
            learn_syscall(L, &d.rec.u.sys);
        } else if (d.rec.type == VG_REC_PROC) {
            learn_image(L, &d.rec.u.proc);
        }
        vg_decoded_free(&d);
    }
    if (!bad && n == 0) {
        vg_errf(err, "%s: not a vigil log (%s)", L->o->log, vg_reader_error(rd));
        bad = 1;
    }
    if (!bad && (rc < 0 || !trailer || vg_reader_status(rd) == VG_MP_TRUNCATED))
        snprintf(L->incomplete, sizeof L->incomplete, "%s is %s at byte %llu: the policy "
                 "covers only what the records before it did", L->o->log,
                 rc < 0 ? "corrupt" : "truncated", (unsigned long long)vg_reader_offset(rd));
    vg_reader_close(rd);
    return bad ? -1 : 0;
}

static void free_lines(struct vg_learn_lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

int vg_learn(const struct vg_learn_opts *o, struct vg_buf *out, struct vg_err *err)
{
    struct vg_learn L = {.o = o, .places = {.home = o->home, .tmp = "/tmp"}};
    int rc = read_log(&L, err);
    if (rc == 0)
        rc = vg_learn_write(&L, out, err);
    if (rc == 0 && L.incomplete[0]) {
        vg_errf(err, "%s", L.incomplete);
        rc = 1;
    }
    free_lines(&L.rules);
    free_lines(&L.skipped);
    vg_policy_free(L.base);
    vg_trees_free(L.trees); /* after the base policy, which points into them */
    vg_image_ref_free(&L.img);
    free(L.image);
    free(L.include);
    free(L.work);
    vg_sum_places_free(&L.where);
    free(L.run_policy);
    return rc;
}
