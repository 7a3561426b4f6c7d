/* parse.c: the policy language's reader: lines -> statements -> rules and
 * settings.  Parsing stops at the first error ("file:line:col: message");
 * warnings are collected and parsing goes on. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"
#include "util/path.h"
#include "util/sha256.h"

#define MAX_TOKENS 256
#define MAX_DEPTH 8                 /* include nesting */
#define MAX_FILE (1u << 20)
#define BUILTIN_ID "<default>"      /* `include <default>`: the built-in policy */

struct tok {
    const char *s;
    uint32_t col;
};

struct parser {
    struct vg_policy *p;
    struct vg_err *err;
    const char *file;               /* owned by p */
    uint32_t line;
    struct tok t[MAX_TOKENS];
    uint32_t nt;
    bool seen_version;
    int depth;
    const char *chain[MAX_DEPTH + 1];   /* identities of the files being read */
    const char *chain_name[MAX_DEPTH + 1];
    bool untrusted;                 /* vg_policy_parse_untrusted: the top text's own lines */
};

static int perr(struct parser *ps, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int perr(struct parser *ps, uint32_t col, const char *fmt, ...)
{
    char m[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    vg_errf(ps->err, "%s:%u:%u: %s", ps->file, ps->line, col, m);
    return -1;
}

/* Column just past the last word: where a missing word was expected. */
static uint32_t end_col(const struct parser *ps)
{
    const struct tok *last = &ps->t[ps->nt - 1];
    return last->col + (uint32_t)strlen(last->s);
}

static int want_words(struct parser *ps, uint32_t min, uint32_t max, const char *what)
{
    if (ps->nt < min)
        return perr(ps, end_col(ps), "missing %s after '%s'", what, ps->t[ps->nt - 1].s);
    if (ps->nt > max)
        return perr(ps, ps->t[max].col, "unexpected '%s' (%s takes %s)", ps->t[max].s,
                    ps->t[0].s, what);
    return 0;
}

/* Split a line (modified in place) into words; '#' at a word start begins a
 * comment, so a '#' inside a path is still a path character. */
static int tokenize(struct parser *ps, char *line)
{
    ps->nt = 0;
    for (char *c = line; *c;) {
        if (*c == ' ' || *c == '\t' || *c == '\r') {
            *c++ = 0;
            continue;
        }
        if (*c == '#')
            break;
        if (ps->nt == MAX_TOKENS)
            return perr(ps, (uint32_t)(c - line) + 1, "too many words on one line (at most %d)", MAX_TOKENS);
        ps->t[ps->nt].s = c;
        ps->t[ps->nt++].col = (uint32_t)(c - line) + 1;
        while (*c && *c != ' ' && *c != '\t' && *c != '\r')
            c++;
    }
    return 0;
}

/* ---- words ---- */

static const struct {
    const char *name;
    uint32_t classes;
} class_words[] = {
    {"read", VG_CLS_BIT(VG_CLASS_READ)},
    {"write", VG_CLS_BIT(VG_CLASS_WRITE)},
    {"exec", VG_CLS_BIT(VG_CLASS_EXEC)},
    {"connect", VG_CLS_BIT(VG_CLASS_CONNECT)},
    {"bind", VG_CLS_BIT(VG_CLASS_BIND)},
    {"send", VG_CLS_BIT(VG_CLASS_SEND)},
    {"net", VG_CLS_NET_MASK},
};

static int parse_class(struct parser *ps, const struct tok *t, bool all_ok, uint32_t *out)
{
    if (all_ok && !strcmp(t->s, "all")) {
        *out = VG_CLS_ALL_MASK;
        return 0;
    }
    for (size_t i = 0; i < VG_ARRAY_LEN(class_words); i++)
        if (!strcmp(t->s, class_words[i].name)) {
            *out = class_words[i].classes;
            return 0;
        }
    return perr(ps, t->col, "unknown class '%s' (read, write, exec, connect, bind, send, net%s)",
                t->s, all_ok ? " or all" : "");
}

static int parse_action(struct parser *ps, const struct tok *t, enum vg_action *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(t->s, vg_pol_action_names[i])) {
            *out = (enum vg_action)i;
            return 0;
        }
    return perr(ps, t->col, "unknown action '%s' (allow, deny or kill)", t->s);
}

static const struct {
    const char *name;
    enum vg_place place;
} variables[] = {
    {"HOME", VG_PLACE_HOME}, {"WORK", VG_PLACE_WORK}, {"TMP", VG_PLACE_TMP},
};

/* The place a path starts with (~, $WORK, $TMP, $HOME); *rest the remainder. */
static int parse_place(struct parser *ps, const struct tok *t, bool abstract_ok,
                       enum vg_place *pl, const char **rest)
{
    const char *s = t->s;
    *pl = VG_PLACE_NONE;
    *rest = s;
    if (s[0] == '/' || (abstract_ok && s[0] == '@'))
        return 0;
    if (s[0] == '~') {
        if (s[1] && s[1] != '/')
            return perr(ps, t->col, "'~name' is not supported: ~ is the invoking user's home");
        *pl = VG_PLACE_HOME;
        *rest = s + 1;
        return 0;
    }
    if (s[0] != '$')
        return perr(ps, t->col, "pattern must be absolute (start with /, ~, $WORK, $TMP or $HOME): '%s'", s);
    size_t n = strspn(s + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
    for (size_t i = 0; i < VG_ARRAY_LEN(variables); i++)
        if (strlen(variables[i].name) == n && !memcmp(s + 1, variables[i].name, n)) {
            *pl = variables[i].place;
            *rest = s + 1 + n;
            if (**rest && **rest != '/')
                return perr(ps, t->col + 1 + (uint32_t)n, "'$%s' must be followed by '/' or end the pattern",
                            variables[i].name);
            return 0;
        }
    return perr(ps, t->col, "unknown variable '$%.*s' ($WORK, $TMP or $HOME)", (int)n, s + 1);
}

/* A component "." or "..": paths are canonical, so it could never match. */
static bool has_dot_component(const char *s)
{
    size_t n;
    for (const char *c = vg_path_comp(s, &n); c; c = vg_path_comp(c + n, &n))
        if (vg_path_kind(c, n) != VG_PATH_NAME)
            return true;
    return false;
}

static int parse_ppat(struct parser *ps, const struct tok *t, bool abstract_ok,
                      struct vg_ppat *pp)
{
    const char *rest, *msg;
    size_t bad;
    if (parse_place(ps, t, abstract_ok, &pp->place, &rest))
        return -1;
    uint32_t base = t->col + (uint32_t)(rest - t->s);
    for (size_t i = 0; rest[i]; i++) {
        if (rest[i] == '\\' && rest[i + 1])
            i++;
        else if (rest[i] == '$')
            return perr(ps, base + (uint32_t)i, "a variable may only start a pattern (write \\$ for a '$')");
    }
    if (!vg_glob_check(rest, &bad, &msg))
        return perr(ps, base + (uint32_t)bad, "%s", msg);
    if (!vg_glob_expand(rest, &pp->alts, &pp->nalts))
        return perr(ps, t->col, "too many alternatives (more than %d once braces are expanded)",
                    VG_GLOB_MAX_ALTS);
    pp->nwritten = pp->nalts;
    for (uint32_t i = 0; i < pp->nalts; i++)
        if (has_dot_component(pp->alts[i]))
            return perr(ps, t->col, "'.' and '..' cannot appear in a pattern (paths are matched in canonical form)");
    return 0;
}

static void ppat_free(struct vg_ppat *pp)
{
    for (uint32_t i = 0; i < pp->nalts; i++)
        free(pp->alts[i]);
    free(pp->alts);
    free(pp->from);
    if (pp->globs)
        for (uint32_t i = 0; i < pp->nalts; i++)
            vg_glob_free(&pp->globs[i]);
    free(pp->globs);
    memset(pp, 0, sizeof *pp);
}

void vg_pol_rule_free(struct vg_prule *r)
{
    free((char *)r->src.text);
    vg_netpat_free(&r->net);
    ppat_free(&r->path);
}

/* ---- statements ---- */

static struct vg_prule *new_rule(struct parser *ps, enum vg_action act,
                                 uint32_t classes, const struct tok *cls,
                                 const struct tok *pat, const char *proto)
{
    struct vg_policy *p = ps->p;
    p->rules = vg_xrealloc(p->rules, (p->nrules + 1) * sizeof *p->rules);
    struct vg_prule *r = &p->rules[p->nrules++];
    memset(r, 0, sizeof *r);
    r->act = act;
    r->classes = classes;
    r->col = pat->col;
    r->src.file = ps->file;
    r->src.line = ps->line;
    r->src.text = vg_xasprintf("%s %s %s%s%s", vg_pol_action_names[act], cls->s,
                               proto ? proto : "", proto ? " " : "", pat->s);
    return r;
}

static int net_rule(struct parser *ps, enum vg_action act, uint32_t classes,
                    const struct tok *cls, const struct tok *pat, int proto)
{
    struct vg_prule *r = new_rule(ps, act, classes, cls, pat, vg_proto_name((enum vg_proto)proto));
    char msg[300];
    size_t bad = 0;
    r->is_net = true;
    r->net.proto = (enum vg_proto)proto;
    if (proto == VG_PROTO_UNIX)
        return parse_ppat(ps, pat, true, &r->path);
    if (!vg_netpat_parse_inet(&r->net, pat->s, &bad, msg, sizeof msg))
        return perr(ps, pat->col + (uint32_t)bad, "%s", msg);
    return 0;
}

static int st_rule(struct parser *ps)
{
    enum vg_action act = VG_ACT_DENY;
    uint32_t classes;
    if (parse_action(ps, &ps->t[0], &act))
        return -1;
    if (ps->nt < 2)
        return perr(ps, end_col(ps), "missing class after '%s' (read, write, exec, connect, bind, send or net)",
                    ps->t[0].s);
    if (parse_class(ps, &ps->t[1], false, &classes))
        return -1;
    if (ps->nt < 3)
        return perr(ps, end_col(ps), "missing pattern after '%s'", ps->t[1].s);
    bool net = classes & VG_CLS_NET_MASK;
    int proto = -1;
    for (uint32_t i = 2; i < ps->nt; i++) {
        const struct tok *t = &ps->t[i];
        if (!net) {
            struct vg_prule *r = new_rule(ps, act, classes, &ps->t[1], t, NULL);
            if (parse_ppat(ps, t, false, &r->path))
                return -1;
            continue;
        }
        int pr = vg_proto_from_name(t->s);
        if (pr >= 0) {      /* "tcp A B udp C": a protocol applies to what follows */
            proto = pr;
            if (i + 1 == ps->nt || vg_proto_from_name(ps->t[i + 1].s) >= 0)
                return perr(ps, i + 1 == ps->nt ? end_col(ps) : ps->t[i + 1].col,
                            "missing address after '%s'", t->s);
            continue;
        }
        if (proto < 0)
            return perr(ps, t->col, "expected tcp, udp or unix before '%s'", t->s);
        if (net_rule(ps, act, classes, &ps->t[1], t, proto))
            return -1;
    }
    return 0;
}

static int st_version(struct parser *ps)
{
    if (ps->seen_version)
        return perr(ps, ps->t[0].col, "duplicate 'version' line");
    if (want_words(ps, 2, 2, "a version number"))
        return -1;
    if (strcmp(ps->t[1].s, "1"))
        return perr(ps, ps->t[1].col, "unsupported version '%s' (this vigil reads version 1)", ps->t[1].s);
    ps->seen_version = true;
    return 0;
}

/* The first setting wins, like the first rule.  Returns whether this one
 * took effect; *earlier gets the line of the one that won, when it is in
 * the same file (a repeat there is probably a mistake, worth pointing out;
 * across files it is how a policy overrides what it includes). */
static bool first_setting(struct parser *ps, struct vg_setting_src *src, uint32_t *earlier)
{
    if (!src->file) {
        src->file = ps->file;
        src->line = ps->line;
        src->col = ps->t[0].col;
        return true;
    }
    if (src->file == ps->file && !*earlier)
        *earlier = src->line;
    return false;
}

static int class_list(struct parser *ps, uint32_t from, uint32_t *classes)
{
    *classes = 0;
    if (ps->nt <= from) {
        *classes = VG_CLS_ALL_MASK;
        return 0;
    }
    for (uint32_t i = from; i < ps->nt; i++) {
        uint32_t c;
        if (parse_class(ps, &ps->t[i], true, &c))
            return -1;
        *classes |= c;
    }
    return 0;
}

static int st_default(struct parser *ps)
{
    enum vg_action act = VG_ACT_DENY;
    uint32_t classes;
    if (ps->nt < 2)
        return perr(ps, end_col(ps), "missing action after 'default' (allow, deny or kill)");
    if (parse_action(ps, &ps->t[1], &act) || class_list(ps, 2, &classes))
        return -1;
    bool took = false;
    uint32_t earlier = 0;
    for (int c = 0; c < VG_NPCLASS; c++)
        if ((classes & VG_CLS_BIT(c)) && first_setting(ps, &ps->p->def_src[c], &earlier)) {
            ps->p->def[c] = act;
            took = true;
        }
    if (!took && earlier)
        vg_pol_warnf(ps->p, ps->file, ps->line, ps->t[0].col,
                     "this line has no effect: line %u already set these defaults, and the first setting wins",
                     earlier);
    return 0;
}

/* audit CLASS... | all, and the word lookups (the stat family, see
 * docs/POLICY.md), alone or among the classes. */
static int st_audit(struct parser *ps)
{
    uint32_t classes = 0;
    if (ps->nt < 2)
        return perr(ps, end_col(ps), "missing class after 'audit' (a class, all, or lookups)");
    for (uint32_t i = 1; i < ps->nt; i++) {
        uint32_t c;
        if (!strcmp(ps->t[i].s, "lookups")) {
            ps->p->audit_lookups = true;
            continue;
        }
        if (parse_class(ps, &ps->t[i], true, &c))
            return -1;
        classes |= c;
    }
    for (int c = 0; c < VG_NPCLASS; c++)
        if (classes & VG_CLS_BIT(c))
            ps->p->audit[c] = true;
    return 0;
}

static int st_limit(struct parser *ps)
{
    char names[128], syntax[160];
    vg_limit_names(names, sizeof names);
    if (ps->nt < 2)
        return perr(ps, end_col(ps), "missing limit name after 'limit' (%s)", names);
    int l = vg_limit_from_name(ps->t[1].s);
    if (l < 0)
        return perr(ps, ps->t[1].col, "unknown limit '%s' (%s)", ps->t[1].s, names);
    if (want_words(ps, 3, 3, "a value"))
        return -1;
    uint64_t v;
    if (!vg_limit_parse((enum vg_limit)l, ps->t[2].s, &v)) {
        vg_limit_syntax((enum vg_limit)l, syntax, sizeof syntax);
        return perr(ps, ps->t[2].col, "bad value '%s' for limit %s (%s)", ps->t[2].s,
                    ps->t[1].s, syntax);
    }
    uint32_t earlier = 0;
    if (first_setting(ps, &ps->p->limit_src[l], &earlier)) {
        ps->p->limits.v[l] = v;
        ps->p->limits.set[l] = true;
    } else if (earlier) {
        vg_pol_warnf(ps->p, ps->file, ps->line, ps->t[0].col,
                     "this line has no effect: line %u already set limit %s, and the first setting wins",
                     earlier, ps->t[1].s);
    }
    return 0;
}

/* A bind path: a place and a literal rest (no wildcards). */
static int bind_path(struct parser *ps, const struct tok *t, enum vg_place *pl, char **rest)
{
    const char *r;
    if (parse_place(ps, t, false, pl, &r))
        return -1;
    size_t meta = strcspn(r, "*?[{\\$");
    if (r[meta])
        return perr(ps, t->col + (uint32_t)(r - t->s + meta), "a bind path cannot contain '%c'", r[meta]);
    if (has_dot_component(r))
        return perr(ps, t->col, "'.' and '..' cannot appear in a bind path");
    *rest = vg_xstrdup(r);
    return 0;
}

static int st_bind(struct parser *ps)
{
    struct vg_policy *p = ps->p;
    if (ps->untrusted)
        return perr(ps, ps->t[0].col, "'%s': a policy sent to vigil serve may not bind host "
                                      "paths", ps->t[0].s);
    if (want_words(ps, 2, 3, "a source path and an optional destination"))
        return -1;
    p->binds = vg_xrealloc(p->binds, (p->nbinds + 1) * sizeof *p->binds);
    struct vg_pbind *b = &p->binds[p->nbinds++];
    memset(b, 0, sizeof *b);
    b->out.rw = !strcmp(ps->t[0].s, "bind-rw");
    b->src_text = vg_xstrdup(ps->t[1].s);
    b->out.src = b->src_text;
    b->out.dst = b->src_text;
    if (bind_path(ps, &ps->t[1], &b->src_place, &b->src_rest))
        return -1;
    if (ps->nt == 3 && bind_path(ps, &ps->t[2], &b->dst_place, &b->dst_rest))
        return -1;
    return 0;
}

static bool env_name_ok(const char *s, size_t n)
{
    if (!n || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_", s[i]))
            return false;
    return true;
}

static int st_env(struct parser *ps)
{
    struct vg_policy *p = ps->p;
    if (want_words(ps, 3, 3, "pass NAME or set NAME=VALUE"))
        return -1;
    const char *arg = ps->t[2].s, *eq = strchr(arg, '=');
    bool set = !strcmp(ps->t[1].s, "set");
    if (!set && strcmp(ps->t[1].s, "pass"))
        return perr(ps, ps->t[1].col, "unknown env action '%s' (pass or set)", ps->t[1].s);
    if (set && !eq)
        return perr(ps, ps->t[2].col, "env set needs NAME=VALUE");
    size_t n = set ? (size_t)(eq - arg) : strlen(arg);
    if (!env_name_ok(arg, n))
        return perr(ps, ps->t[2].col, "bad environment variable name '%.*s'", (int)n, arg);
    for (uint32_t i = 0; i < p->nenv; i++)
        if (strlen(p->env[i].name) == n && !memcmp(p->env[i].name, arg, n))
            return 0;   /* first one wins */
    p->env = vg_xrealloc(p->env, (p->nenv + 1) * sizeof *p->env);
    p->env[p->nenv].name = vg_pol_keep(p, vg_xstrndup(arg, n));
    p->env[p->nenv++].value = set ? vg_pol_keep(p, vg_xstrdup(eq + 1)) : NULL;
    return 0;
}

/* `image REF`: the run's image when --image names none.  Only its
 * spelling is the parser's: what it names is looked up in the image
 * store when a run starts (image/lookup.c), and `vigil check` checks the
 * spelling with the store's own rule. */
static int st_image(struct parser *ps)
{
    if (want_words(ps, 2, 2, "an image name or digest"))
        return -1;
    uint32_t earlier = 0;
    if (first_setting(ps, &ps->p->image_src, &earlier))
        ps->p->image = vg_pol_keep(ps->p, vg_xstrdup(ps->t[1].s));
    else if (earlier)
        vg_pol_warnf(ps->p, ps->file, ps->line, ps->t[0].col,
                     "this line has no effect: line %u already named the image, and the first "
                     "setting wins", earlier);
    return 0;
}

static int parse_text(struct parser *ps, const char *file, const char *id, const char *text);

static int include_builtin(struct parser *ps)
{
    return parse_text(ps, "default.policy", BUILTIN_ID, vg_default_policy_text);
}

/* Read and parse the file at path (malloc'd; kept as the rules' file name
 * when it is read). */
static int include_file(struct parser *ps, const struct tok *t, char *path)
{
    struct vg_err e;
    char *text = vg_read_file(path, MAX_FILE, NULL, &e);
    int saved = errno;
    char *real = text ? realpath(path, NULL) : NULL;
    int rc = -1;
    if (!text)
        rc = saved == ENOENT ? perr(ps, t->col, "include not found: '%s'", path)
                             : perr(ps, t->col, "cannot read include: %s", e.msg);
    else if (!real)
        rc = perr(ps, t->col, "cannot resolve include '%s': %s", path, strerror(errno));
    else
        rc = parse_text(ps, vg_pol_keep(ps->p, path), real, text);
    if (!text || !real)
        free(path);
    free(real);
    free(text);
    return rc;
}

/* `include <NAME>`: the shipped policy NAME.policy, found as `-p NAME`
 * finds it (policy/find.c); <default> is the built-in one, so that it is
 * the policy this binary was built with wherever vigil runs. */
static int include_shipped(struct parser *ps, const struct tok *t)
{
    if (!strcmp(t->s, BUILTIN_ID))
        return include_builtin(ps);
    char *name = vg_xstrndup(t->s + 1, strlen(t->s) - 2);
    char *path = vg_policy_find_shipped(name);
    int rc = path ? include_file(ps, t, path)
                  : perr(ps, t->col, "no shipped policy '%s' ('vigil check --list' names them)", name);
    free(name);
    return rc;
}

static int st_include(struct parser *ps)
{
    if (want_words(ps, 2, 2, "a file name"))
        return -1;
    const struct tok *t = &ps->t[1];
    size_t n = strlen(t->s);
    if (ps->depth >= MAX_DEPTH)
        return perr(ps, t->col, "includes nested too deeply (more than %d levels)", MAX_DEPTH);
    if (n > 2 && t->s[0] == '<' && t->s[n - 1] == '>') {
        /* a shipped policy is the system's, not the sender's: trusted */
        bool was = ps->untrusted;
        ps->untrusted = false;
        int rc = include_shipped(ps, t);
        ps->untrusted = was;
        return rc;
    }
    if (ps->untrusted)
        return perr(ps, t->col, "a policy sent to vigil serve may include only shipped "
                                "policies (include <NAME>), not a file: the daemon would "
                                "read it as root");
    const char *slash = strrchr(ps->file, '/');
    if (t->s[0] == '/' || !slash)
        return include_file(ps, t, vg_xstrdup(t->s));
    return include_file(ps, t, vg_xasprintf("%.*s/%s", (int)(slash - ps->file), ps->file, t->s));
}

static const struct {
    const char *kw;
    int (*fn)(struct parser *);
} statements[] = {
    {"version", st_version}, {"include", st_include},
    {"allow", st_rule},      {"deny", st_rule},       {"kill", st_rule},
    {"default", st_default}, {"audit", st_audit},     {"limit", st_limit},
    {"bind", st_bind},       {"bind-rw", st_bind},    {"env", st_env},
    {"image", st_image},
};

static int statement(struct parser *ps)
{
    const char *kw = ps->t[0].s;
    if (!ps->seen_version && strcmp(kw, "version"))
        return perr(ps, ps->t[0].col, "missing 'version 1' line (it must come first)");
    for (size_t i = 0; i < VG_ARRAY_LEN(statements); i++)
        if (!strcmp(kw, statements[i].kw))
            return statements[i].fn(ps);
    return perr(ps, ps->t[0].col, "unknown keyword '%s'", kw);
}

static int check_cycle(struct parser *ps, const char *file, const char *id)
{
    for (int i = 0; i < ps->depth; i++) {
        if (strcmp(ps->chain[i], id))
            continue;
        struct vg_buf b = {0};
        for (int j = i; j < ps->depth; j++)
            vg_buf_printf(&b, "%s -> ", ps->chain_name[j]);
        vg_buf_puts(&b, file);
        int rc = perr(ps, ps->t[1].col, "include cycle: %s", b.data);
        vg_buf_free(&b);
        return rc;
    }
    return 0;
}

/* Parse one file's text; includes recurse here with depth + 1. */
static int parse_text(struct parser *ps, const char *file, const char *id, const char *text)
{
    if (check_cycle(ps, file, id))
        return -1;
    struct parser saved = *ps;
    ps->chain[ps->depth] = id;
    ps->chain_name[ps->depth++] = file;
    ps->file = file;
    ps->seen_version = false;
    vg_buf_printf(&ps->p->text, "# file: %s\n%s", file, text);
    if (text[0] && text[strlen(text) - 1] != '\n')
        vg_buf_puts(&ps->p->text, "\n");
    int rc = 0;
    ps->line = 0;
    for (const char *l = text; *l && !rc;) {
        size_t n = strcspn(l, "\n");
        char *line = vg_xstrndup(l, n);
        ps->line++;
        rc = tokenize(ps, line);
        if (!rc && ps->nt)
            rc = statement(ps);
        free(line);
        l += n + (l[n] == '\n');
    }
    if (!rc && !ps->seen_version) {
        ps->line = 1;
        rc = perr(ps, 1, "missing 'version 1' line (the file has no rules)");
    }
    if (rc)
        return rc;
    /* back in the including file: restore its position */
    ps->file = saved.file;
    ps->line = saved.line;
    ps->seen_version = saved.seen_version;
    ps->depth = saved.depth;
    memcpy(ps->t, saved.t, sizeof ps->t);
    ps->nt = saved.nt;
    return 0;
}

static void finish(struct vg_policy *p)
{
    for (int c = 0; c < VG_NPCLASS; c++)
        p->list[c] = vg_xcalloc(p->nrules, sizeof *p->list[c]);
    for (uint32_t i = 0; i < p->nrules; i++)
        for (int c = 0; c < VG_NPCLASS; c++)
            if (p->rules[i].classes & VG_CLS_BIT(c))
                p->list[c][p->nlist[c]++] = i;
    vg_sha256_buf(p->text.data, p->text.len, p->sha256);
    vg_pol_resolve_rules(p);
    vg_pol_find_warnings(p);
}

static struct vg_policy *parse_top(const char *name, const char *id, const char *text,
                                   const struct vg_trees *ro, bool untrusted,
                                   struct vg_err *err)
{
    struct vg_policy *p = vg_xcalloc(1, sizeof *p);
    p->ro = ro;
    for (int c = 0; c < VG_NPCLASS; c++)
        p->def[c] = VG_ACT_DENY;      /* nothing said: deny */
    p->path = vg_xstrdup(name);
    vg_buf_put(&p->text, "", 0);
    struct parser *ps = vg_xcalloc(1, sizeof *ps);   /* big: keep it off the stack */
    ps->p = p;
    ps->err = err;
    ps->untrusted = untrusted;
    int rc = parse_text(ps, vg_pol_keep(p, vg_xstrdup(name)), id, text);
    free(ps);
    if (rc) {
        vg_policy_free(p);
        return NULL;
    }
    finish(p);
    return p;
}

struct vg_policy *vg_policy_parse_in(const char *name, const char *text,
                                     const struct vg_trees *ro, struct vg_err *err)
{
    return parse_top(name, name, text, ro, false, err);
}

struct vg_policy *vg_policy_parse_untrusted(const char *name, const char *text,
                                            struct vg_err *err)
{
    return parse_top(name, name, text, &vg_system_trees, true, err);
}

struct vg_policy *vg_policy_parse(const char *name, const char *text, struct vg_err *err)
{
    return vg_policy_parse_in(name, text, &vg_system_trees, err);
}

struct vg_policy *vg_policy_load(const char *path, struct vg_err *err)
{
    return vg_policy_load_in(path, &vg_system_trees, err);
}

struct vg_policy *vg_policy_load_in(const char *path, const struct vg_trees *ro,
                                    struct vg_err *err)
{
    size_t len;
    char *text = vg_read_file(path, MAX_FILE, &len, err);
    if (!text)
        return NULL;
    struct vg_policy *p = NULL;
    char *real = realpath(path, NULL);
    if (strlen(text) != len) {
        uint32_t line = 1;
        for (const char *c = text; *c; c++)
            line += *c == '\n';
        vg_errf(err, "%s:%u:1: NUL byte in policy text", path, line);
    } else {
        p = parse_top(path, real ? real : path, text, ro, false, err);
    }
    free(real);
    free(text);
    return p;
}
