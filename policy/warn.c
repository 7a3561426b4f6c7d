/* warn.c: things a policy author probably did not mean, found right after
 * parsing: rules that can never match because an earlier rule covers them
 * (decided conservatively: only when that is certain from the text),
 * grants that defeat the sandbox (decided by asking the policy itself
 * about a table of sensitive samples), and `default allow`.  (A rule
 * naming no object is resolve.c's, which looks at the trees.) */
#include <string.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "policy/policy_int.h"

/* Does every path alt_j can match lie under what alt_i matches? */
static bool alt_covers(enum vg_place pi, const char *ai, enum vg_place pj, const char *aj)
{
    char *i = vg_xstrdup(ai), *j = vg_xstrdup(aj);
    vg_path_squash(i);
    vg_path_squash(j);
    size_t n = strlen(i);
    bool dstar_tail = n >= 3 && !strcmp(i + n - 3, "/**");
    size_t lit = dstar_tail ? n - 3 : n;
    bool r;
    if (pi == VG_PLACE_NONE && !strcmp(i, "/**"))
        r = true;           /* everything absolute */
    else if (pi != pj)
        r = false;
    else if (!strcmp(i, j))
        r = true;
    else
        r = dstar_tail && vg_glob_literal_len(i) >= lit && !strncmp(i, j, lit) &&
            (j[lit] == '/' || j[lit] == 0);
    free(i);
    free(j);
    return r;
}

static bool ppat_covers(const struct vg_ppat *a, const struct vg_ppat *b)
{
    for (uint32_t j = 0; j < b->nalts; j++) {
        bool covered = false;
        for (uint32_t i = 0; i < a->nalts && !covered; i++)
            covered = alt_covers(a->place, a->alts[i], b->place, b->alts[j]);
        if (!covered)
            return false;
    }
    return true;
}

static bool ports_cover(const struct vg_netpat *a, const struct vg_netpat *b)
{
    if (a->any_port)
        return true;
    if (b->any_port)
        return false;
    for (uint32_t j = 0; j < b->nranges; j++) {
        bool in = false;
        for (uint32_t i = 0; i < a->nranges && !in; i++)
            in = a->lo[i] <= b->lo[j] && b->hi[j] <= a->hi[i];
        if (!in)
            return false;
    }
    return true;
}

static bool addr_covers(const struct vg_netpat *a, const struct vg_netpat *b)
{
    if (a->kind == VG_ADDR_ANY)
        return true;
    if (a->kind == VG_ADDR_HOST)
        return b->kind == VG_ADDR_HOST && !strcmp(a->host, b->host);
    if (b->kind != VG_ADDR_V4 && b->kind != VG_ADDR_V6)
        return false;
    return a->ip.prefix <= b->ip.prefix && vg_ip_contains(&a->ip, &b->ip);
}

static bool rule_covers(const struct vg_prule *a, const struct vg_prule *b)
{
    if (a->is_net != b->is_net)
        return false;
    if (!a->is_net)
        return ppat_covers(&a->path, &b->path);
    if (a->net.proto != b->net.proto)
        return false;
    if (a->net.proto == VG_PROTO_UNIX)
        return ppat_covers(&a->path, &b->path);
    return addr_covers(&a->net, &b->net) && ports_cover(&a->net, &b->net);
}

/* The earlier rule that covers rule j in every class it has, if any. */
static const struct vg_prule *shadowing_rule(const struct vg_policy *p, uint32_t j)
{
    const struct vg_prule *b = &p->rules[j], *first = NULL;
    for (int c = 0; c < VG_NPCLASS; c++) {
        if (!(b->classes & VG_CLS_BIT(c)))
            continue;
        const struct vg_prule *found = NULL;
        for (uint32_t k = 0; k < p->nlist[c] && p->list[c][k] < j && !found; k++)
            if (rule_covers(&p->rules[p->list[c][k]], b))
                found = &p->rules[p->list[c][k]];
        if (!found)
            return NULL;
        if (!first)
            first = found;
    }
    return first;
}

static void find_shadowed(struct vg_policy *p)
{
    for (uint32_t j = 0; j < p->nrules; j++) {
        const struct vg_prule *a = shadowing_rule(p, j), *b = &p->rules[j];
        if (!a)
            continue;
        if (a->src.file == b->src.file)
            vg_pol_warnf(p, b->src.file, b->src.line, b->col,
                         "rule can never match: line %u ('%s') matches first", a->src.line,
                         a->src.text);
        else
            vg_pol_warnf(p, b->src.file, b->src.line, b->col,
                         "rule can never match: %s:%u ('%s') matches first", a->src.file,
                         a->src.line, a->src.text);
    }
}

/* Samples of what a sandbox must not hand out; places as in `sample_places`. */
static const struct vg_places sample_places = {"/home/user", "/work", "/tmp"};

static const struct {
    enum vg_class cls;
    const char *path;
    const char *shown;
    const char *why;
} path_samples[] = {
    {VG_CLASS_READ, "/home/user/.ssh/id_ed25519", "~/.ssh/id_ed25519", "the user's SSH keys"},
    {VG_CLASS_READ, "/home/user/.gnupg/private-keys-v1.d/k.key", "~/.gnupg", "the user's GnuPG keys"},
    {VG_CLASS_READ, "/home/user/.aws/credentials", "~/.aws/credentials", "cloud credentials"},
    {VG_CLASS_READ, "/home/user/.netrc", "~/.netrc", "saved passwords"},
    {VG_CLASS_READ, "/root/.ssh/id_rsa", "/root/.ssh/id_rsa", "root's SSH keys"},
    {VG_CLASS_WRITE, "/home/user/.bashrc", "~/.bashrc", "code the user's shell runs outside the sandbox"},
    {VG_CLASS_WRITE, "/home/user/.ssh/authorized_keys", "~/.ssh/authorized_keys", "who may log in as the user"},
    {VG_CLASS_WRITE, "/usr/bin/python3", "/usr/bin/python3", "system programs"},
    {VG_CLASS_WRITE, "/etc/passwd", "/etc/passwd", "system configuration"},
    {VG_CLASS_EXEC, "/tmp/payload", "$TMP/payload", "programs the candidate wrote itself"},
    {VG_CLASS_EXEC, "/work/payload", "$WORK/payload", "programs the candidate wrote itself"},
};

static const struct {
    enum vg_class cls;
    const char *proto;
    const char *ip;
    uint16_t port;
    const char *why;
} net_samples[] = {
    {VG_CLASS_CONNECT, "tcp", "198.51.100.7", 4444, "connections to any host on any port"},
    {VG_CLASS_SEND, "udp", "198.51.100.7", 4444, "datagrams to any host on any port"},
    {VG_CLASS_BIND, "tcp", "0.0.0.0", 4444, "listening on any port for anyone"},
};

static void flag(struct vg_policy *p, bool *flagged, struct vg_verdict v,
                 const char *what, const char *why)
{
    if (!v.rule || v.action != VG_ACT_ALLOW)
        return;
    const struct vg_prule *r = (const struct vg_prule *)((const char *)v.rule -
                                                         offsetof(struct vg_prule, src));
    uint32_t i = (uint32_t)(r - p->rules);
    if (flagged[i])
        return;
    flagged[i] = true;
    vg_pol_warnf(p, r->src.file, r->src.line, r->col,
                 "'%s' defeats the sandbox: it grants %s (%s)", r->src.text, what, why);
}

static void find_dangerous(struct vg_policy *p)
{
    struct vg_err err;
    if (vg_pol_compile(p, &sample_places, &err))
        return;
    bool *flagged = vg_xcalloc(p->nrules + 1, sizeof *flagged);
    for (size_t i = 0; i < VG_ARRAY_LEN(path_samples); i++) {
        char what[128];
        snprintf(what, sizeof what, "%s of %s", vg_pol_class_names[path_samples[i].cls],
                 path_samples[i].shown);
        flag(p, flagged, vg_policy_decide_path(p, path_samples[i].cls, path_samples[i].path),
             what, path_samples[i].why);
    }
    for (size_t i = 0; i < VG_ARRAY_LEN(net_samples); i++) {
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(net_samples[i].port)};
        inet_pton(AF_INET, net_samples[i].ip, &sin.sin_addr);
        char what[64];
        snprintf(what, sizeof what, "%s %s", vg_pol_class_names[net_samples[i].cls],
                 net_samples[i].proto);
        flag(p, flagged, vg_policy_decide_net(p, net_samples[i].cls, net_samples[i].proto,
                                              (const struct sockaddr *)&sin, sizeof sin),
             what, net_samples[i].why);
    }
    free(flagged);
    vg_pol_uncompile(p);
}

/* Did this line make class c allow? */
static bool allowed_by(const struct vg_policy *p, int c, const struct vg_setting_src *s)
{
    return p->def[c] == VG_ACT_ALLOW && p->def_src[c].file == s->file &&
           p->def_src[c].line == s->line;
}

/* The classes a `default allow` line set (the setting that took effect):
 * each call of them no rule matches goes through, unseen by the author.
 * One warning per line, at its first class, naming them all. */
static void find_default_allow(struct vg_policy *p)
{
    for (int c = 0; c < VG_NPCLASS; c++) {
        const struct vg_setting_src *s = &p->def_src[c];
        bool first = s->file && p->def[c] == VG_ACT_ALLOW;
        int last = c;
        for (int k = 0; k < VG_NPCLASS && first; k++)
            if (allowed_by(p, k, s)) {
                first = k >= c;
                last = k;
            }
        if (!first)
            continue;
        struct vg_buf names = {0};
        for (int k = c; k <= last; k++)
            if (allowed_by(p, k, s))
                vg_buf_printf(&names, "%s%s", k == c ? "" : k == last ? " and " : ", ",
                              vg_pol_class_names[k]);
        vg_pol_warnf(p, s->file, s->line, s->col,
                     "'default allow' allows every %s call no rule matches (say what the "
                     "candidate needs and let the rest be refused: 'default deny')",
                     names.data);
        vg_buf_free(&names);
    }
}

void vg_pol_find_warnings(struct vg_policy *p)
{
    find_shadowed(p);
    find_dangerous(p);
    find_default_allow(p);
}
