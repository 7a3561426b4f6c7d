/* test_lsm_compile.c: the kernel engine's trie (lsm/lsm_compile.h) held
 * against the core decider, the first half of issue 27's differential
 * test.  For each policy of a table (the shipped ones that compile
 * exactly, and hand-written ones for each rule kind, order, overlap,
 * `**`, `*` and the places) and each of many paths made from the policy's
 * own patterns, the trie's walk must give what vg_policy_decide_path gives
 * (action and the very rule), and what vg_decide gives (decision and
 * rule) for the file calls whose hooks the engine will decide: open for
 * read and write, readlink, getxattr, unlink, mkdir, truncate, chmod and
 * exec.  Then the rules the trie cannot decide exactly are refused, each
 * named by its file and line.
 *
 * lsm/ is not among the binary's layers yet (its probe needs libbpf), so
 * its one pure file is compiled into this test itself: the unit tests'
 * link line (the Makefile) takes the layers' objects only. */
#include "lsm/lsm_compile.c"

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

/* A path as a pattern would match it: each `**` component becomes
 * dstar (dropped when empty), each `*` component star, escapes their
 * character; then squashed. */
static void instance(const char *pat, const char *dstar, const char *star, char *out, size_t cap)
{
    struct vg_buf b = {0};
    size_t n;
    vg_buf_puts(&b, "/");
    for (const char *c = vg_path_comp(pat, &n); c; c = vg_path_comp(c + n, &n)) {
        if (n == 2 && c[0] == '*' && c[1] == '*')
            vg_buf_puts(&b, dstar);
        else if (n == 1 && c[0] == '*')
            vg_buf_puts(&b, star);
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

/* Paths around one pattern: what it matches, with a component more, its
 * parent, and neighbours that differ by a letter. */
static void paths_of_pattern(struct paths *ps, const char *pat)
{
    static const char *const dstars[] = {"", "q", "q/r/s", "__pycache__/z"};
    static const char *const stars[] = {"w", ".env", "bin"};
    char buf[VG_SPATH_MAX + 64], more[sizeof buf + 8];
    for (size_t d = 0; d < VG_ARRAY_LEN(dstars); d++)
        for (size_t s = 0; s < VG_ARRAY_LEN(stars); s++) {
            instance(pat, dstars[d], stars[s], buf, sizeof buf);
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

/* Every path word of the policy text (includes aside), braces expanded. */
static void paths_of_text(struct paths *ps, const char *text, const struct vg_places *pl)
{
    char *copy = vg_xstrdup(text);
    for (char *save, *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *save2;
        char *act = strtok_r(line, " \t", &save2);
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
static int fake_stat(void *arg, const char *path, bool follow, struct vg_fs_node *out)
{
    (void)path, (void)follow;
    if (*(const bool *)arg)
        return ENOENT;
    *out = (struct vg_fs_node){.dev = 1, .ino = 2};
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
    {"execve", VG_CLASS_EXEC, false},
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
    bool fresh = k->fresh;
    struct vg_fs_view fs = {.stat = fake_stat, .arg = &fresh};
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

/* ---- the differential ---- */

struct tally {
    unsigned path_rows, call_rows, bad;
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
    if (t->bad++ < 20)
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
        /* The one path the two may not agree on: exactly VG_SPATH_MAX
         * bytes, which the kernel cannot hand to bpf_d_path whole. */
        if (strlen(path) > VG_LSM_PATH_MAX)
            want = (struct vg_verdict){VG_ACT_DENY, NULL};
        if (got.action != want.action || got.rule != want.rule)
            say_bad(t, name, "path", cls, path, (int)want.action, (int)got.action);
    }
    for (size_t k = 0; k < VG_ARRAY_LEN(calls); k++)
        for (int dry = 0; dry < 2; dry++) {
            if (strlen(path) > VG_LSM_PATH_MAX)
                continue;       /* the decoder never makes such a path */
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
    for (unsigned i = 0; i < ps->n; i++)
        diff_path(t, name, p, &trie, ps->p[i]);
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

/* Replace every `from` in s (malloc'd) with `to`. */
static char *replace(char *s, const char *from, const char *to)
{
    struct vg_buf b = {0};
    for (char *at; (at = strstr(s, from)); s = at + strlen(from)) {
        vg_buf_put(&b, s, (size_t)(at - s));
        vg_buf_puts(&b, to);
    }
    vg_buf_puts(&b, s);
    return b.data;
}

static void test_shipped_exact(struct tally *t)
{
    static const char *const exact[] = {"observe", "guard"};
    for (size_t i = 0; i < VG_ARRAY_LEN(exact); i++) {
        char path[PATH_MAX + 64];
        shipped_path(exact[i], path, sizeof path);
        struct vg_policy *p = compiled(exact[i], NULL, path, &places);
        char *text = read_text(path);
        differential(t, exact[i], p, text, &places);
        free(text);
        vg_policy_free(p);
    }
    /* default.policy, less the two alternatives no trie can hold
     * (python3.[0-9]*): every other rule as shipped, resolved in the
     * host's read-only trees as a run resolves them. */
    char path[PATH_MAX + 64];
    shipped_path("default", path, sizeof path);
    char *text = read_text(path);
    char *less = replace(text, "python3.[0-9]*,", "");
    struct vg_policy *p = compiled("default-less", less, NULL, &places);
    differential(t, "default (less 2 alts)", p, less, &places);
    vg_policy_free(p);
    free(less);
    free(text);
}

static void test_hand(struct tally *t)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(hand); i++) {
        char name[32];
        snprintf(name, sizeof name, "hand %zu", i + 1);
        struct vg_policy *p = compiled("t.policy", hand[i], NULL, &places);
        differential(t, name, p, hand[i], &places);
        vg_policy_free(p);
    }
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
    static const char inner[] = "a wildcard inside a component";
    refused("version 1\nallow read /usr/**\ndeny read /a/*.py\n", &places, NULL, "t.policy:3: deny read /a/*.py", inner);
    refused("version 1\n\nallow exec /usr/bin/x?\n", &places, NULL, "t.policy:3:", inner);
    refused("version 1\nallow write /a/[0-9]/**\n", &places, NULL, "t.policy:2:", inner);
    refused("version 1\nallow read /a/{b,c*}\n", &places, NULL, "pattern /a/c*", inner);
    char *lng = vg_xasprintf("version 1\n\n\nallow read /a/%0*d\n", LONG_COMP, 0);
    refused(lng, &places, NULL, "t.policy:4:", "longer than NAME_MAX");
    free(lng);
    /* a network rule with a glob is no file rule: not the trie's */
    struct vg_policy *p = compiled("t.policy", "version 1\nallow connect unix /run/*.sock\n", NULL, &places);
    struct vg_lsm_trie trie;
    struct vg_err err = {{0}};
    CHECK(vg_lsm_compile(p, &trie, &err) == 0 && trie.nnodes == 1);
    vg_lsm_trie_free(&trie);
    vg_policy_free(p);
    /* the shipped policies that hold such a rule, each named at it */
    static const struct {
        const char *name, *at;
    } shipped[] = {
        {"default", "default.policy:"}, {"python", "default.policy:"}, {"c", "c.policy:"},
        {"java", "java.policy:"},       {"node", "default.policy:"},   {"shell", "default.policy:"},
        {"localhost", "default.policy:"},
    };
    for (size_t i = 0; i < VG_ARRAY_LEN(shipped); i++) {
        char path[PATH_MAX + 64];
        shipped_path(shipped[i].name, path, sizeof path);
        refused(NULL, &places, path, shipped[i].at, inner);
    }
}

/* The line of default.policy the refusal names is the first that holds
 * a glob inside a component. */
static void test_refused_line(void)
{
    char path[PATH_MAX + 64];
    shipped_path("default", path, sizeof path);
    char *text = read_text(path);
    unsigned line = 0, at = 0;
    for (const char *l = text; *l && !at; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        size_t n = strcspn(l, "\n");
        line++;
        if (!strncmp(l, "allow exec", strlen("allow exec")) && memmem(l, n, "[0-9]*", strlen("[0-9]*")))
            at = line;
    }
    char where[64];
    snprintf(where, sizeof where, "default.policy:%u: allow exec /usr/bin/{python3,", at);
    refused(NULL, &places, path, where, "python3.[0-9]*");
    free(text);
}

int main(void)
{
    struct tally t = {0};
    test_shipped_exact(&t);
    test_hand(&t);
    test_many(&t);
    printf("differential: %u path rows, %u call rows, %u differ\n", t.path_rows, t.call_rows,
           t.bad);
    CHECK(t.bad == 0);
    test_refused();
    test_refused_line();
    return check_done();
}
