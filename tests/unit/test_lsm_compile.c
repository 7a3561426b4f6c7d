/* test_lsm_compile.c: the kernel engine's trie (lsm/lsm_compile.h) held
 * against the core decider, the first half of issue 27's differential
 * test.  For each policy of a table (every shipped one, and hand-written
 * ones for each rule kind, order, overlap, `**`, `*`, wildcards inside
 * components and the places) and each of many paths made from the
 * policy's own patterns (each glob component instanced several ways, one
 * a miss), the trie's walk must give what vg_policy_decide_path gives
 * (action and the very rule), and what vg_decide gives (decision and
 * rule) for the file calls whose hooks the engine will decide: open for
 * read and write, readlink, getxattr, unlink, rmdir, mkdir, mknod,
 * symlink, truncate, chmod, chown and exec.  Pairs of paths hold the
 * trie's move check (vg_lsm_move_decide, for a file and for a directory's
 * tree) against vg_policy_decide_move, and the rename and link hooks'
 * whole verdict (vg_lsm_two_decide) against vg_decide for renameat2
 * (plain and RENAME_EXCHANGE, each side a file or a directory) and
 * linkat.  Then the rules the trie cannot decide exactly are refused, each
 * named by its file and line, and mutants of the compiled globs (a
 * broken matcher) and of the tree verdicts must make rows differ.
 *
 * lsm/ is not among the binary's layers yet (its probe needs libbpf), so
 * its one pure file is compiled into this test itself: the unit tests'
 * link line (the Makefile) takes the layers' objects only. */
#include "lsm/lsm_compile.c"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/decide.h"
#include "policy/glob.h"
#include "tests/unit/check.h"
#include "tests/unit/policy_text.h"

#define MAX_PATHS 65536
#define LONG_COMP (VG_LSM_NAME_MAX + 10)

static const char *const class_names[VG_LSM_NCLS] = {"read", "write", "exec"};

/* ---- the paths a policy is tried on ---- */

struct paths {
    char *p[MAX_PATHS];
    unsigned n;
};

static void add_path(struct paths *ps, const char *s)
{
    if (ps->n < MAX_PATHS && s[0] == '/')
        ps->p[ps->n++] = vg_xstrdup(s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each path once. */
static void paths_unique(struct paths *ps)
{
    qsort(ps->p, ps->n, sizeof *ps->p, cmp_str);
    unsigned k = 0;
    for (unsigned i = 0; i < ps->n; i++) {
        if (k && !strcmp(ps->p[k - 1], ps->p[i]))
            free(ps->p[i]);
        else
            ps->p[k++] = ps->p[i];
    }
    ps->n = k;
}

static void paths_free(struct paths *ps)
{
    for (unsigned i = 0; i < ps->n; i++)
        free(ps->p[i]);
    ps->n = 0;
}

/* Does a component hold a wildcard inside (not escaped)? */
static bool has_wild(const char *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (c[i] == '\\')
            i++;
        else if (strchr("*?[", c[i]))
            return true;
    }
    return false;
}

/* How many ways each glob component is instanced: the last one misses. */
#define GLOB_VARIANTS 6
#define MISS_VARIANT (GLOB_VARIANTS - 1)

/* The bytes of one glob element's set a path may hold (no NUL, no '/'). */
static unsigned set_members(const struct vg_lsm_gop *op, bool in, unsigned char *out)
{
    unsigned n = 0;
    for (unsigned c = 1; c <= UCHAR_MAX; c++)
        if (c != '/' && ((op->set[c >> 3] >> (c & 7)) & 1) == in)
            out[n++] = (unsigned char)c;
    return n;
}

/* A component that glob component c matches, variant v: its stars
 * filled with one of a few runs, each set element one of its members
 * (the first, the last, ones between); the miss variant puts a byte not
 * in the first set element's set instead, or drops a letter. */
static void glob_sample(const char *c, size_t n, unsigned v, struct vg_buf *b)
{
    static const char *const fills[] = {"", "7", "x-1.so", ".A", "[]", ""};
    struct vg_lsm_glob g;
    if (glob_of(c, (uint32_t)n, &g)) {
        vg_buf_put(b, c, n);
        return;
    }
    bool missed = false;
    for (unsigned k = 0; k < g.nops; k++) {
        if (g.op[k].star) {
            vg_buf_puts(b, fills[v % VG_ARRAY_LEN(fills)]);
            continue;
        }
        unsigned char in[UCHAR_MAX + 1], out[UCHAR_MAX + 1];
        unsigned nin = set_members(&g.op[k], true, in), nout = set_members(&g.op[k], false, out);
        if (v == MISS_VARIANT && !missed) {
            missed = true;
            if (nout)
                vg_buf_put(b, (const char *)&out[(k * 31) % nout], 1);
            continue;       /* or no letter at all */
        }
        if (!nin)
            continue;
        unsigned at = v == 0 ? 0 : v == 1 ? nin - 1 : (nin / 2 + v + k) % nin;
        vg_buf_put(b, (const char *)&in[at], 1);
    }
}

/* A path as a pattern would match it: each `**` component becomes
 * dstar (dropped when empty), each `*` component star, each glob
 * component its variant v (glob_sample), escapes their character; then
 * squashed. */
static void instance(const char *pat, const char *dstar, const char *star, unsigned v, char *out,
                     size_t cap)
{
    struct vg_buf b = {0};
    size_t n;
    vg_buf_puts(&b, "/");
    for (const char *c = vg_path_comp(pat, &n); c; c = vg_path_comp(c + n, &n)) {
        if (n == 2 && c[0] == '*' && c[1] == '*')
            vg_buf_puts(&b, dstar);
        else if (n == 1 && c[0] == '*')
            vg_buf_puts(&b, star);
        else if (has_wild(c, n))
            glob_sample(c, n, v, &b);
        else
            for (size_t i = 0; i < n; i++)
                vg_buf_put(&b, &c[c[i] == '\\' && i + 1 < n ? ++i : i], 1);
        vg_buf_puts(&b, "/");
    }
    snprintf(out, cap, "%s", b.data);
    vg_buf_free(&b);
    vg_path_squash(out);
}

/* The place a pattern starts with, expanded ("~/x" -> "/home/u/x"). */
static char *expand_place(const char *w, const struct vg_places *pl)
{
    static const struct {
        const char *var;
        size_t field;
    } vars[] = {{"~", offsetof(struct vg_places, home)}, {"$HOME", offsetof(struct vg_places, home)},
                {"$WORK", offsetof(struct vg_places, work)}, {"$TMP", offsetof(struct vg_places, tmp)}};
    for (size_t i = 0; i < VG_ARRAY_LEN(vars); i++) {
        size_t k = strlen(vars[i].var);
        if (!strncmp(w, vars[i].var, k) && (w[k] == '/' || !w[k]))
            return vg_xasprintf("%s%s", *(const char *const *)((const char *)pl + vars[i].field),
                                w + k);
    }
    return vg_xstrdup(w);
}

/* Paths around one instance of a pattern: what it matches, with a
 * component more, its parent, and neighbours that differ by a letter. */
static void paths_of_instance(struct paths *ps, const char *pat, unsigned v)
{
    static const char *const dstars[] = {"", "q", "q/r/s", "__pycache__/z"};
    static const char *const stars[] = {"w", ".env", "bin"};
    char buf[VG_SPATH_MAX + 64], more[sizeof buf + 8];
    for (size_t d = 0; d < VG_ARRAY_LEN(dstars); d++)
        for (size_t s = 0; s < VG_ARRAY_LEN(stars); s++) {
            instance(pat, dstars[d], stars[s], v, buf, sizeof buf);
            add_path(ps, buf);
            snprintf(more, sizeof more, "%s/z", strcmp(buf, "/") ? buf : "");
            add_path(ps, more);
            snprintf(more, sizeof more, "%sx", buf);
            add_path(ps, more);
            size_t n = strlen(buf);
            if (n > 1) {
                buf[n - 1] ^= 1;    /* the last letter changed */
                add_path(ps, buf);
                buf[n - 1] ^= 1;
            }
            char *slash = strrchr(buf, '/');
            if (slash && slash != buf) {
                *slash = 0;
                add_path(ps, buf);
            }
        }
}

/* Paths around one pattern: what it matches, with a component more, its
 * parent, and neighbours that differ by a letter; each glob component
 * instanced several ways, one of them a miss. */
static void paths_of_pattern(struct paths *ps, const char *pat)
{
    size_t n;
    bool globs = false;
    for (const char *c = vg_path_comp(pat, &n); c; c = vg_path_comp(c + n, &n))
        globs |= !(n == 2 && c[0] == '*' && c[1] == '*') && !(n == 1 && c[0] == '*') &&
                 has_wild(c, n);
    for (unsigned v = 0; v < (globs ? GLOB_VARIANTS : 1); v++)
        paths_of_instance(ps, pat, v);
}

static char *read_text(const char *path);

/* How deep includes are followed: the shipped ones go two deep. */
#define INCLUDE_DEPTH 4

static void paths_of_text_at(struct paths *ps, const char *text, const struct vg_places *pl,
                             int depth);

/* `include NAME` or `include <NAME>`: the shipped policy of that name. */
static void paths_of_include(struct paths *ps, const char *w, const struct vg_places *pl,
                             int depth)
{
    size_t n = strlen(w);
    if (n > 2 && w[0] == '<' && w[n - 1] == '>')
        w++, n -= 2;
    if (n > strlen(".policy") && !strncmp(w + n - strlen(".policy"), ".policy", strlen(".policy")))
        n -= strlen(".policy");
    char *path = vg_xasprintf("policies/%.*s.policy", (int)n, w);
    char *text = read_text(path);
    paths_of_text_at(ps, text, pl, depth + 1);
    free(text);
    free(path);
}

/* Every path word of the policy text and of the shipped policies it
 * includes, braces expanded. */
static void paths_of_text(struct paths *ps, const char *text, const struct vg_places *pl)
{
    paths_of_text_at(ps, text, pl, 0);
}

static void paths_of_text_at(struct paths *ps, const char *text, const struct vg_places *pl,
                             int depth)
{
    char *copy = vg_xstrdup(text);
    for (char *save, *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *save2;
        char *act = strtok_r(line, " \t", &save2);
        if (act && !strcmp(act, "include") && depth < INCLUDE_DEPTH) {
            char *w = strtok_r(NULL, " \t", &save2);
            if (w)
                paths_of_include(ps, w, pl, depth);
            continue;
        }
        if (!act || (strcmp(act, "allow") && strcmp(act, "deny") && strcmp(act, "kill")))
            continue;
        for (char *w = strtok_r(NULL, " \t", &save2); w; w = strtok_r(NULL, " \t", &save2)) {
            if (w[0] == '#')
                break;
            char **alts;
            uint32_t nalts;
            char *full = expand_place(w, pl);
            if (full[0] == '/' && vg_glob_expand(full, &alts, &nalts)) {
                for (uint32_t i = 0; i < nalts; i++) {
                    paths_of_pattern(ps, alts[i]);
                    free(alts[i]);
                }
                free(alts);
            }
            free(full);
        }
    }
    free(copy);
}

/* Paths every policy is tried on: the usual places and the edges of the
 * walk (the root, slashes only, a component longer than NAME_MAX, the
 * longest path the kernel hands over and one past it). */
static void common_paths(struct paths *ps)
{
    static const char *const fixed[] = {
        "/", "/usr", "/usr/bin/python3", "/usr/bin/python3.11", "/usr/lib/x.so", "/etc/shadow",
        "/etc/passwd", "/home/u", "/home/u/.ssh/id_rsa", "/home/u/.aws/credentials",
        "/work/cand", "/work/cand/a.py", "/work/cand/data/private/key", "/tmp", "/tmp/x",
        "/proc/1/environ", "/proc/self", "/dev/null", "/dev/pts/0", "/root", "/root/.bashrc",
        "/var/tmp/x", "/bin/sh", "/lib/x86_64-linux-gnu/libc.so.6", "/a", "/a/b", "/a/b/c",
        "/usr/x/__pycache__/m.pyc", "/usr/__pycache__", "/sys/devices/system/cpu/online",
        "/tmp/x (deleted)", "/work/cand/a.py (deleted)", "/usr/bin/python3.11 (deleted)",
        "/tmp/(deleted)", "/tmp/x(deleted)",
    };
    for (size_t i = 0; i < VG_ARRAY_LEN(fixed); i++)
        add_path(ps, fixed[i]);
    char buf[VG_LSM_PATH_MAX + 8];
    memset(buf, 'l', sizeof buf);
    buf[0] = '/';
    buf[LONG_COMP + 1] = 0;
    add_path(ps, buf);                      /* one component past NAME_MAX */
    memcpy(buf, "/tmp/", 5);
    for (size_t i = 5; i < VG_LSM_PATH_MAX; i += 2)
        buf[i] = 'd', buf[i + 1] = '/';
    buf[VG_LSM_PATH_MAX] = 0;
    buf[VG_LSM_PATH_MAX - 1] = 'e';
    add_path(ps, buf);                      /* the longest the kernel walks */
    buf[VG_LSM_PATH_MAX] = 'f';
    buf[VG_LSM_PATH_MAX + 1] = 0;
    buf[VG_LSM_PATH_MAX + 2] = 0;
    add_path(ps, buf);                      /* one past it: refused by both */
}

/* ---- the decider's side ---- */

/* Every file there (a file hook sees an existing one), or none (a mkdir
 * hook sees only a name that does not exist yet: the kernel answers
 * EEXIST before it asks). */
struct fake_fs {
    bool fresh;          /* nothing exists */
    const char *dir;     /* this path is a directory (a rename's tree) */
    const char *dir2;    /* and this one */
};

static int fake_stat(void *arg, const char *path, bool follow, struct vg_fs_node *out)
{
    const struct fake_fs *f = arg;
    (void)follow;
    if (f->fresh)
        return ENOENT;
    bool dir = (f->dir && !strcmp(path, f->dir)) || (f->dir2 && !strcmp(path, f->dir2));
    *out = (struct vg_fs_node){.dev = 1, .ino = 2, .dir = dir};
    return 0;
}

struct call_kind {
    const char *sys;
    enum vg_class cls;       /* as the decoder classes the call */
    bool fresh;              /* the name does not exist yet */
};
static const struct call_kind calls[] = {
    {"openat", VG_CLASS_READ, false}, {"readlinkat", VG_CLASS_READ, false},
    {"getxattr", VG_CLASS_READ, false}, {"openat", VG_CLASS_WRITE, false},
    {"unlinkat", VG_CLASS_WRITE, false}, {"mkdirat", VG_CLASS_WRITE, true},
    {"truncate", VG_CLASS_WRITE, false}, {"fchmodat", VG_CLASS_WRITE, false},
    {"execve", VG_CLASS_EXEC, false}, {"rmdir", VG_CLASS_WRITE, false},
    {"mknodat", VG_CLASS_WRITE, true}, {"symlinkat", VG_CLASS_WRITE, true},
    {"fchownat", VG_CLASS_WRITE, false},
};

static enum vg_decision decision_of(enum vg_action a, bool dry)
{
    if (a == VG_ACT_ALLOW)
        return VG_DEC_ALLOW;
    if (a == VG_ACT_DENY)
        return dry ? VG_DEC_WOULD_DENY : VG_DEC_DENY;
    return dry ? VG_DEC_WOULD_KILL : VG_DEC_KILL;
}

/* The call's verdict from vg_decide, the policy's way: every class
 * audited, no command-line files, nothing masked. */
static void decide_call(const struct vg_policy *p, const struct call_kind *k, const char *path,
                        bool dry, struct vg_call *c, struct vg_call_verdict *v)
{
    static const bool audited[VG_CLASS_NCLASSES] = {true, true, true, true, true, true, true};
    struct fake_fs ff = {.fresh = k->fresh};
    struct vg_fs_view fs = {.stat = fake_stat, .arg = &ff};
    struct vg_decide_ctx d = {.pol = p, .dry_run = dry, .audited = audited, .fs = &fs};
    memset(c, 0, sizeof *c);
    c->ent = vg_sys_by_name(k->sys);
    c->nr = c->ent ? c->ent->nr : -1;
    c->name = k->sys;
    c->cls = c->check_cls2 = k->cls;
    c->deny_errno = c->ent ? c->ent->deny_errno : EACCES;
    c->args.flags = k->cls == VG_CLASS_WRITE && !strcmp(k->sys, "openat") ? O_WRONLY | O_CREAT : -1;
    c->args.mode = c->args.port = -1;
    c->check_path = c->args.resolved = path;
    if (k->cls == VG_CLASS_EXEC)
        c->args.exe = path;
    vg_decide(&d, c, v);
}

#define RENAME_EXCHANGE_FLAG 2 /* linux/fs.h */

/* A rename or link of src to dst as vg_decide sees it (renameat2 with
 * flags, linkat), the fake view saying which is a directory. */
static void decide_two(const struct vg_policy *p, const char *sys, const char *src,
                       const char *dst, const struct vg_lsm_two *how, struct vg_call *c,
                       struct vg_call_verdict *v)
{
    static const bool audited[VG_CLASS_NCLASSES] = {true, true, true, true, true, true, true};
    struct fake_fs ff = {.dir = how->src_dir ? src : NULL, .dir2 = how->dst_dir ? dst : NULL};
    struct vg_fs_view fs = {.stat = fake_stat, .arg = &ff};
    struct vg_decide_ctx d = {.pol = p, .audited = audited, .fs = &fs};
    memset(c, 0, sizeof *c);
    c->ent = vg_sys_by_name(sys);
    c->nr = c->ent ? c->ent->nr : -1;
    c->name = sys;
    c->cls = c->check_cls2 = VG_CLASS_WRITE;
    c->deny_errno = c->ent ? c->ent->deny_errno : EACCES;
    c->args.flags = how->exchange ? RENAME_EXCHANGE_FLAG : 0;
    c->args.mode = c->args.port = -1;
    c->check_path = c->args.resolved = src;
    c->check_path2 = c->args.resolved2 = dst;
    vg_decide(&d, c, v);
}

/* ---- the differential ---- */

struct tally {
    unsigned path_rows, call_rows, move_rows, two_rows, bad;
    bool quiet;         /* a mutant's: its rows are expected to differ */
};

static bool same_rule(const struct vg_rule_src *trie, const struct vg_rule_src *core,
                      enum vg_action act)
{
    static const char *const def_text[] = {"default allow", "default deny", "default kill"};
    if (trie)
        return trie == core;
    return core && !core->file && streq(core->text, def_text[act]);
}

static void say_bad(struct tally *t, const char *name, const char *what, int cls, const char *path,
                    int want, int got)
{
    if (t->bad++ < 20 && !t->quiet)
        fprintf(stderr, "%s: %s %s %.120s: core %d, trie %d\n", name, what, class_names[cls],
                path, want, got);
}

static void diff_path(struct tally *t, const char *name, const struct vg_policy *p,
                      const struct vg_lsm_trie *trie, const char *path)
{
    for (int cls = 0; cls < VG_LSM_NCLS; cls++) {
        struct vg_verdict want = vg_policy_decide_path(p, (enum vg_class)cls, path);
        struct vg_verdict got = vg_lsm_trie_decide(trie, (enum vg_class)cls, path);
        t->path_rows++;
        /* The paths the two may not agree on: exactly VG_SPATH_MAX
         * bytes, which the kernel cannot hand to bpf_d_path whole, and
         * an unlinked file's, which the engine refuses. */
        if (strlen(path) > VG_LSM_PATH_MAX || vg_lsm_deleted(path, strlen(path)))
            want = (struct vg_verdict){VG_ACT_DENY, NULL};
        if (got.action != want.action || got.rule != want.rule)
            say_bad(t, name, "path", cls, path, (int)want.action, (int)got.action);
    }
    for (size_t k = 0; k < VG_ARRAY_LEN(calls); k++)
        for (int dry = 0; dry < 2; dry++) {
            if (strlen(path) > VG_LSM_PATH_MAX || vg_lsm_deleted(path, strlen(path)))
                continue;       /* never made by the decoder; refused by the engine */
            struct vg_call c;
            struct vg_call_verdict v;
            decide_call(p, &calls[k], path, dry, &c, &v);
            struct vg_verdict got = vg_lsm_trie_decide(trie, calls[k].cls, path);
            t->call_rows++;
            if (!v.record || v.decision != decision_of(got.action, dry) ||
                !same_rule(got.rule, v.rule, got.action))
                say_bad(t, name, calls[k].sys, calls[k].cls, path, (int)v.decision,
                        (int)decision_of(got.action, dry));
            vg_call_free(&c);
        }
}

/* The same rule, or for a move the core's words about it: its file and
 * line (a default's: none). */
static bool same_move_rule(const struct vg_rule_src *trie, const struct vg_rule_src *core)
{
    if (!core)
        return false;
    if (!trie)
        return !core->file && core->line == 0;
    return core->file == trie->file && core->line == trie->line;
}

/* A pair of paths: vg_lsm_move_decide against vg_policy_decide_move (a
 * file and a directory), and renameat2 (plain and RENAME_EXCHANGE, each
 * side a file or a directory) and linkat against vg_decide. */
static void diff_two(struct tally *t, const char *name, const struct vg_policy *p,
                     const struct vg_lsm_trie *trie, const char *src, const char *dst)
{
    struct vg_lsm_walk ws, wd;
    if (!vg_lsm_trie_walk(trie, src, &ws) || !vg_lsm_trie_walk(trie, dst, &wd))
        return;     /* too long or unlinked: refused by the engine, never made by the decoder */
    for (int tree = 0; tree < 2; tree++) {
        struct vg_verdict want = vg_policy_decide_move(p, src, dst, tree);
        struct vg_verdict got = vg_lsm_move_decide(trie, &ws, &wd, tree);
        t->move_rows++;
        if (got.action != want.action || got.rule != want.rule)
            say_bad(t, name, tree ? "move tree" : "move", VG_CLASS_WRITE, src, (int)want.action,
                    (int)got.action);
    }
    static const struct {
        const char *sys;
        struct vg_lsm_two how;
    } kinds[] = {
        {"renameat2", {.src_dir = false}}, {"renameat2", {.src_dir = true}},
        {"renameat2", {.exchange = true, .src_dir = false, .dst_dir = true}},
        {"renameat2", {.exchange = true, .src_dir = true, .dst_dir = false}},
        {"linkat", {.link = true}},
    };
    for (size_t k = 0; k < VG_ARRAY_LEN(kinds); k++) {
        /* the kernel refuses a rename of or over "/" (EBUSY) before it
         * asks the hook; vg_decide takes "/" for a directory always */
        if (!kinds[k].how.link && (!strcmp(src, "/") || !strcmp(dst, "/")))
            continue;
        struct vg_call c;
        struct vg_call_verdict v;
        decide_two(p, kinds[k].sys, src, dst, &kinds[k].how, &c, &v);
        bool moved;
        struct vg_verdict got = vg_lsm_two_decide(trie, &ws, &wd, &kinds[k].how, &moved);
        t->two_rows++;
        bool rule_ok = moved ? same_move_rule(got.rule, v.rule) : same_rule(got.rule, v.rule, got.action);
        if (!v.record || v.decision != decision_of(got.action, false) || !rule_ok)
            say_bad(t, name, kinds[k].sys, VG_CLASS_WRITE, src, (int)v.decision,
                    (int)decision_of(got.action, false));
        vg_call_free(&c);
    }
}

/* The partners of path i among n for diff_two: its neighbour, one far
 * off, its mirror. */
#define PARTNERS 3
static unsigned partner(unsigned i, unsigned k, unsigned n)
{
    return k == 0 ? (i + 1) % n : k == 1 ? (i * 31u + 7u) % n : n - 1 - i;
}

/* The differential for one policy: compiled exactly, then every path. */
static void differential(struct tally *t, const char *name, const struct vg_policy *p,
                         const char *text, const struct vg_places *pl)
{
    struct vg_lsm_trie trie;
    struct vg_err err = {{0}};
    if (!CHECK(vg_lsm_compile(p, &trie, &err) == 0)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return;
    }
    struct paths *ps = vg_xcalloc(1, sizeof *ps);
    common_paths(ps);
    paths_of_text(ps, text, pl);
    paths_unique(ps);
    unsigned before = t->bad;
    for (unsigned i = 0; i < ps->n; i++) {
        diff_path(t, name, p, &trie, ps->p[i]);
        for (unsigned k = 0; k < PARTNERS; k++)
            diff_two(t, name, p, &trie, ps->p[i], ps->p[partner(i, k, ps->n)]);
    }
    CHECK(t->bad == before);
    /* the edge map is sorted, every child a node */
    bool sorted = true;
    for (uint32_t i = 0; i < trie.nedges; i++)
        sorted &= trie.edges[i].child < trie.nnodes &&
                  (i == 0 || vg_lsm_key_cmp(&trie.edges[i - 1].key, &trie.edges[i].key) < 0);
    CHECK(sorted);
    printf("%-22s %5u paths %5u nodes %5u edges\n", name, ps->n, trie.nnodes, trie.nedges);
    paths_free(ps);
    free(ps);
    vg_lsm_trie_free(&trie);
}

/* ---- the policies ---- */

/* Line numbers matter only to the refusals below. */
static const char *const hand[] = {
    /* each kind of pattern, deny over a later allow, kill, overlaps */
    "version 1\n"
    "default deny\n"
    "deny read $WORK/data/private/** /proc/*/environ\n"
    "kill read ~/.aws/**\n"
    "allow read /usr/** /etc/** $WORK/** /proc/** $TMP/**\n"
    "allow write $WORK/** $TMP/**\n"
    "kill write /etc/shadow\n"
    "allow exec /usr/bin/python3 /usr/bin/{ls,cat} /usr/lib/*/*\n"
    "kill exec /usr/bin/nc\n"
    "deny read /a/b\n"
    "deny write /a/b /a/b/c\n"
    "allow read /a/**\n"
    "allow write /a/**\n"
    "allow exec /a/**\n"
    "allow read /\n",
    /* an allow first shadows a later deny; one class's rule is not
     * another's; the root's subtree */
    "version 1\n"
    "allow read /etc/**\n"
    "deny read /etc/shadow\n"
    "allow write /etc/shadow\n"
    "kill exec /**\n"
    "default allow write\n",
    /* default allow with refusals, `*` levels, a `**` inside */
    "version 1\n"
    "default allow\n"
    "deny read /*/secret /home/*/.ssh/** /x/*/*/y\n"
    "kill write /usr/**/__pycache__/** /a/**/b/**/c\n"
    "deny exec /tmp/** /dev/shm/**\n"
    "allow exec /tmp/ok\n",
    /* nothing but defaults, each class its own */
    "version 1\n"
    "default allow read\n"
    "default kill exec\n",
    /* escaped wildcards are letters; a literal directory and its tree */
    "version 1\n"
    "allow read /lit/a\\*b /lit/q\\?/** /lit/br\\[x]\n"
    "deny read /lit/** /lit\n"
    "allow write /w /w/** /w/x/**\n"
    "deny write /w/x\n",
};

/* Wildcards inside components: each element (`?`, `*`, classes with
 * ranges, negation by `!` and `^`, a `]` first, a `-` last, escapes) and
 * their meeting with literal, `*` and `**` children at the same place,
 * first match across the kinds, either order. */
static const char *const glob_hand[] = {
    "version 1\n"
    "default deny\n"
    "deny read /g/a?c /g/[!x-z]*.txt /g/[^0-9]? /k/x[a-c-]y\n"
    "allow read /g/abc /g/*.txt /k/xby /k/[]a]b\n"
    "kill read /g/**/*.pyc /k/*\n"
    "allow read /g/* /g/\\*lit /k/q\\?[?] /k/[]a]b\n"
    "allow read /g/** /h/** /k/**\n"
    "allow write /g/*[0-9] /g/d/[!]]q /g/d/??\n"
    "deny write /g/d/*\n"
    "allow write /g/**/[a-m]*/tail\n"
    "kill exec /h/*/bin/[pq]y* /h/**/x*y*z\n"
    "allow exec /h/a*b*c /h/*/bin/p* /h/**/ab?d\n"
    "deny exec /h/**\n",
    /* a literal before the glob that takes it too, a `*` before a glob,
     * and globs inside a `**` loop */
    "version 1\n"
    "allow read /usr/bin/python3.11 /usr/lib/*/x\n"
    "deny read /usr/bin/python3.[0-9]* /usr/lib/py*/x /usr/lib/[a-p]*/x/**\n"
    "allow read /usr/**/__pycache__/*.py[co] /usr/**/lib*.so.[0-9]\n"
    "deny read /usr/**/*.so*\n"
    "allow write /t/[!.]* /t/.[!.]* /t/..?*\n"
    "default allow exec\n"
    "deny exec /usr/bin/*-[0-9][0-9] /usr/bin/[[]x /usr/bin/x[\\]\n",
};

/* A home whose name holds glob characters: matched as letters. */
static const struct vg_places odd_places = {"/home/a*b[c]", "/work/c?d", "/tmp"};
static const char odd_text[] =
    "version 1\n"
    "allow read ~/** $WORK/x\n"
    "deny read ~/.ssh/**\n"
    "allow write $WORK/** $TMP/*\n";

static struct vg_policy *compiled(const char *name, const char *text, const char *path,
                                  const struct vg_places *pl)
{
    struct vg_err err = {{0}};
    struct vg_policy *p = path ? vg_policy_load(path, &err) : vg_policy_parse(name, text, &err);
    if (!p || vg_policy_compile(p, pl, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        exit(1);
    }
    return p;
}

/* The source tree's policies/: the unit tests run from the tree's root
 * (tests/run.sh). */
static void shipped_path(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "policies/%s.policy", name);
}

static char *read_text(const char *path)
{
    struct vg_err err = {{0}};
    char *s = vg_read_file(path, 1 << 20, NULL, &err);
    if (!s) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    return s;
}

/* Every policy of policies/, as shipped (includes read from there),
 * resolved in the host's read-only trees as a run resolves them. */
static void test_shipped(struct tally *t)
{
    DIR *d = opendir("policies");
    if (!CHECK(d != NULL))
        return;
    struct paths *names = vg_xcalloc(1, sizeof *names);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > strlen(".policy") && !strcmp(e->d_name + n - strlen(".policy"), ".policy") &&
            names->n < MAX_PATHS)
            names->p[names->n++] = vg_xstrndup(e->d_name, n - strlen(".policy"));
    }
    closedir(d);
    paths_unique(names);
    CHECK(names->n >= 12);     /* the twelve shipped when this was written */
    for (unsigned i = 0; i < names->n; i++) {
        char path[PATH_MAX + 64];
        shipped_path(names->p[i], path, sizeof path);
        struct vg_policy *p = compiled(names->p[i], NULL, path, &places);
        char *text = read_text(path);
        differential(t, names->p[i], p, text, &places);
        free(text);
        vg_policy_free(p);
    }
    paths_free(names);
    free(names);
}

/* The differential for each policy of a table, named by prefix and place. */
static void test_table(struct tally *t, const char *prefix, const char *const *texts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s %zu", prefix, i + 1);
        struct vg_policy *p = compiled("t.policy", texts[i], NULL, &places);
        differential(t, name, p, texts[i], &places);
        vg_policy_free(p);
    }
}

static void test_hand(struct tally *t)
{
    test_table(t, "hand", hand, VG_ARRAY_LEN(hand));
    test_table(t, "glob hand", glob_hand, VG_ARRAY_LEN(glob_hand));
    struct vg_policy *p = compiled("t.policy", odd_text, NULL, &odd_places);
    differential(t, "odd places", p, odd_text, &odd_places);
    vg_policy_free(p);
}

/* Many rules, as a learned policy has: exact files, trees, `*` levels. */
static void test_many(struct tally *t)
{
    enum { NFILES = 600, NTREES = 200 };
    struct vg_buf b = {0};
    vg_buf_puts(&b, "version 1\n");
    for (int i = 0; i < NFILES; i++)
        vg_buf_printf(&b, "%s read /data/d%d/f%d\n", i % 7 ? "allow" : "deny", i % 40, i);
    for (int i = 0; i < NTREES; i++)
        vg_buf_printf(&b, "%s write /data/d%d/** /srv/*/t%d/**\n", i % 3 ? "allow" : "kill",
                      i % 50, i);
    vg_buf_puts(&b, "allow exec /data/*/bin/*\n");
    struct vg_policy *p = compiled("many.policy", b.data, NULL, &places);
    differential(t, "many (1001 rules)", p, b.data, &places);
    vg_policy_free(p);
    vg_buf_free(&b);
}

/* ---- what cannot compile exactly ---- */

static void refused(const char *text, const struct vg_places *pl, const char *path,
                    const char *where, const char *why)
{
    struct vg_policy *p = compiled("t.policy", text, path, pl);
    struct vg_lsm_trie trie;
    struct vg_err err = {{0}};
    bool ok = vg_lsm_compile(p, &trie, &err) == -1 && strstr(err.msg, where) &&
              strstr(err.msg, why) && trie.nnodes == 0 && !trie.nodes;
    if (!check(ok, where, __FILE__, __LINE__))
        fprintf(stderr, "  got: %s\n", err.msg);
    vg_policy_free(p);
}

static void test_refused(void)
{
    char *lng = vg_xasprintf("version 1\n\n\nallow read /a/%0*d\n", LONG_COMP, 0);
    refused(lng, &places, NULL, "t.policy:4:", "longer than NAME_MAX");
    free(lng);
    /* a glob of 65 elements; one of 64 compiles */
    char *many = vg_xasprintf("version 1\nallow read /a/%0*d*\n", VG_LSM_GLOB_OPS, 0);
    refused(many, &places, NULL, "t.policy:2:", "more than 64 elements");
    free(many);
    /* nine different globs live at /g: the ninth rule is named */
    struct vg_buf b = {0};
    vg_buf_puts(&b, "version 1\n");
    for (int i = 0; i < VG_LSM_NODE_GLOBS + 1; i++)
        vg_buf_printf(&b, "allow read /g/%d*\n", i);
    refused(b.data, &places, NULL, "t.policy:10: allow read /g/8*", "wildcard components at one place");
    vg_buf_free(&b);
    /* a network rule with a glob is no file rule: not the trie's */
    struct vg_policy *p = compiled("t.policy", "version 1\nallow connect unix /run/*.sock\n", NULL, &places);
    struct vg_lsm_trie trie;
    struct vg_err err = {{0}};
    CHECK(vg_lsm_compile(p, &trie, &err) == 0 && trie.nnodes == 1);
    vg_lsm_trie_free(&trie);
    vg_policy_free(p);
}

/* ---- mutants: a broken matcher must make rows differ ---- */

/* A set element's bytes, counted. */
static unsigned set_count(const struct vg_lsm_gop *op)
{
    unsigned char in[UCHAR_MAX + 1];
    return set_members(op, true, in) + ((op->set[0] & 1) != 0) + ((op->set['/' >> 3] >> ('/' & 7)) & 1);
}

enum mutant { M_QMARK_EMPTY, M_QMARK_STAR, M_NEG_IGNORED, M_RANGE_SHORT, M_STAR_ONE, M_PREFIX,
              M_NMUTANTS };
static const char *const mutant_names[M_NMUTANTS] = {
    "`?` matches nothing (dropped)", "`?` matches any run (a `*`)", "class negation ignored",
    "a range's last byte dropped", "`*` matches one byte", "a glob's last element dropped",
};

/* Break glob g as mutant m says; false when g has nothing to break. */
static bool mutate(struct vg_lsm_glob *g, enum mutant m)
{
    bool hit = false;
    for (unsigned k = 0; k < g->nops && !hit; k++) {
        struct vg_lsm_gop *op = &g->op[k];
        unsigned n = op->star ? 0 : set_count(op);
        if ((m == M_QMARK_EMPTY || m == M_QMARK_STAR) && n == UCHAR_MAX + 1) {
            if (m == M_QMARK_EMPTY)
                memmove(op, op + 1, (g->nops-- - k - 1) * sizeof *op);
            else
                op->star = 1;
            hit = true;
        } else if (m == M_NEG_IGNORED && n > (UCHAR_MAX + 1) / 2 && n <= UCHAR_MAX) {
            for (unsigned j = 0; j < VG_LSM_SET_BYTES; j++)
                op->set[j] = (unsigned char)~op->set[j];
            hit = true;
        } else if (m == M_RANGE_SHORT && n >= 3 && n <= (UCHAR_MAX + 1) / 2) {
            unsigned c = UCHAR_MAX;
            while (!((op->set[c >> 3] >> (c & 7)) & 1))
                c--;
            op->set[c >> 3] &= (unsigned char)~(1u << (c & 7));
            hit = true;
        } else if (m == M_STAR_ONE && op->star) {
            op->star = 0;
            memset(op->set, 0xff, sizeof op->set);
            hit = true;
        }
    }
    if (m == M_PREFIX && g->nops > 1) {
        g->nops--;
        hit = true;
    }
    return hit;
}

/* The glob policy's rows with each mutant in its trie: each must make
 * some row differ (the differential sees the matcher at all). */
static void test_mutants(const char *text)
{
    struct vg_policy *p = compiled("t.policy", text, NULL, &places);
    struct paths *ps = vg_xcalloc(1, sizeof *ps);
    common_paths(ps);
    paths_of_text(ps, text, &places);
    paths_unique(ps);
    for (int m = 0; m < M_NMUTANTS; m++) {
        struct vg_lsm_trie trie;
        struct vg_err err = {{0}};
        if (!CHECK(vg_lsm_compile(p, &trie, &err) == 0))
            break;
        bool hit = false;
        for (uint32_t i = 0; i < trie.nglobs; i++)
            hit |= mutate(&trie.globs[i], (enum mutant)m);
        struct tally t = {.quiet = true};
        for (unsigned i = 0; i < ps->n; i++)
            diff_path(&t, "mutant", p, &trie, ps->p[i]);
        printf("mutant %-34s %6u of %u rows differ\n", mutant_names[m], t.bad,
               t.path_rows + t.call_rows);
        if (!check(hit && t.bad > 0, mutant_names[m], __FILE__, __LINE__))
            fprintf(stderr, "  the mutant %s\n", hit ? "went unseen" : "found nothing to break");
        vg_lsm_trie_free(&trie);
    }
    paths_free(ps);
    free(ps);
    vg_policy_free(p);
}

/* The tree verdicts dropped (every node's tree[] none, or taken for its
 * end[]): a directory's rename must then differ somewhere (the move rows
 * see them at all). */
static void test_tree_mutants(const char *text)
{
    static const char *const names[] = {"tree verdicts dropped", "tree verdicts as end"};
    struct vg_policy *p = compiled("t.policy", text, NULL, &places);
    struct paths *ps = vg_xcalloc(1, sizeof *ps);
    common_paths(ps);
    paths_of_text(ps, text, &places);
    paths_unique(ps);
    for (size_t m = 0; m < VG_ARRAY_LEN(names); m++) {
        struct vg_lsm_trie trie;
        struct vg_err err = {{0}};
        if (!CHECK(vg_lsm_compile(p, &trie, &err) == 0))
            break;
        for (uint32_t i = 0; i < trie.nnodes; i++)
            for (int c = 0; c < VG_LSM_NCLS; c++)
                trie.nodes[i].tree[c] = m ? trie.nodes[i].end[c]
                                          : (struct vg_lsm_verdict){.prio = VG_LSM_NONE,
                                                                    .rule = VG_LSM_NONE};
        struct tally t = {.quiet = true};
        for (unsigned i = 0; i < ps->n; i++)
            for (unsigned k = 0; k < PARTNERS; k++)
                diff_two(&t, "mutant", p, &trie, ps->p[i], ps->p[partner(i, k, ps->n)]);
        printf("mutant %-34s %6u of %u rows differ\n", names[m], t.bad, t.move_rows + t.two_rows);
        check(t.bad > 0, names[m], __FILE__, __LINE__);
        vg_lsm_trie_free(&trie);
    }
    paths_free(ps);
    free(ps);
    vg_policy_free(p);
}

int main(void)
{
    /* `include <c>` (the image policies) names a shipped policy: these */
    char dir[PATH_MAX];
    if (!realpath("policies", dir) || setenv("VIGIL_POLICY_DIR", dir, 1)) {
        perror("policies");
        return 1;
    }
    struct tally t = {0};
    test_shipped(&t);
    test_hand(&t);
    test_many(&t);
    printf("differential: %u path rows, %u call rows, %u move rows, %u rename/link rows, "
           "%u differ\n", t.path_rows, t.call_rows, t.move_rows, t.two_rows, t.bad);
    CHECK(t.bad == 0);
    test_refused();
    test_mutants(glob_hand[0]);
    test_tree_mutants(hand[0]);
    return check_done();
}
