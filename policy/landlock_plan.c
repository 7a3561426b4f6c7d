/* landlock_plan.c: the part of a policy the kernel can enforce.  The plan
 * must be a superset of what the policy allows (Landlock never refuses an
 * allowed call), so each allow pattern grants beneath its literal directory
 * prefix; deny rules inside allowed areas are left to the supervisor.  See
 * docs/POLICY.md, "Landlock". */
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"
#include "policy/landlock_rights.h"

#define MAX_LL_PORTS 64

#define LL_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* Adding and removing directory entries: creating, deleting, renaming. */
#define LL_ENTRY (LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
                  LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | \
                  LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | \
                  LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
                  LANDLOCK_ACCESS_FS_MAKE_SYM)

struct plan_rights {
    uint64_t write_file, entry;   /* per ABI */
};

static void add(struct vg_landlock_plan *pl, const char *path, size_t n,
                uint64_t access, bool exact)
{
    if (!n)     /* the parent of "/" is "/" */
        n = 1;
    for (uint32_t i = 0; i < pl->nrules; i++) {
        struct vg_landlock_rule *r = &pl->rules[i];
        if (r->exact == exact && strlen(r->path) == n && !memcmp(r->path, path, n)) {
            r->access |= access;
            return;
        }
    }
    pl->rules = vg_xrealloc(pl->rules, (pl->nrules + 1) * sizeof *pl->rules);
    pl->rules[pl->nrules++] = (struct vg_landlock_rule){vg_xstrndup(path, n), access, exact};
}

/* Length of the directory holding everything a glob can match. */
static size_t dir_prefix(const char *text)
{
    size_t n = vg_glob_literal_len(text);
    while (n > 0 && text[n - 1] != '/')
        n--;
    return n > 1 ? n - 1 : n;   /* drop the slash, but keep "/" */
}

static size_t parent_len(const char *s, size_t n)
{
    while (n > 0 && s[n - 1] != '/')
        n--;
    return n > 1 ? n - 1 : n;
}

/* The dynamic loaders the kernel opens for execution on behalf of every
 * dynamically linked program (binfmt_elf's PT_INTERP), so they need the
 * EXECUTE right wherever exec is handled.  Missing ones are skipped. */
static const char *const elf_loaders[] = {
    "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    "/usr/lib64/ld-linux-x86-64.so.2",
};

/* Exec grants: EXECUTE (and reading, which the kernel needs to load the
 * program) beneath the directory holding everything the pattern can
 * match, exact patterns included: /usr/bin/python3 grants /usr/bin.  A
 * coarser superset than read's, for two reasons: a few directory rules
 * instead of one file rule per program (each costs the sandbox three system
 * calls at start-up), and the supervisor still judges each exec by name. */
static void add_exec(struct vg_landlock_plan *pl, const struct vg_policy *p, uint64_t rights)
{
    for (uint32_t i = 0; i < p->nlist[VG_CLASS_EXEC]; i++) {
        const struct vg_prule *r = &p->rules[p->list[VG_CLASS_EXEC][i]];
        if (r->act != VG_ACT_ALLOW || r->is_net || !r->path.globs)
            continue;
        for (uint32_t j = 0; j < r->path.nalts; j++) {
            const struct vg_glob *g = &r->path.globs[j];
            if (g->text[0] == '/')
                add(pl, g->text, g->exact ? parent_len(g->text, strlen(g->text))
                                          : dir_prefix(g->text), rights, false);
        }
    }
    for (size_t i = 0; i < VG_ARRAY_LEN(elf_loaders); i++)
        add(pl, elf_loaders[i], strlen(elf_loaders[i]), rights, true);
}

void vg_landlock_plan_exec_file(struct vg_landlock_plan *plan, const char *path)
{
    if (path && path[0] == '/' && (plan->handled_fs & LANDLOCK_ACCESS_FS_EXECUTE))
        add(plan, path, strlen(path),
            LANDLOCK_ACCESS_FS_EXECUTE | (plan->handled_fs & LANDLOCK_ACCESS_FS_READ_FILE), true);
}

void vg_landlock_plan_read(struct vg_landlock_plan *plan, const char *path, bool tree)
{
    uint64_t want = LANDLOCK_ACCESS_FS_READ_FILE | (tree ? LANDLOCK_ACCESS_FS_READ_DIR : 0);
    if (path && path[0] == '/' && (plan->handled_fs & want))
        add(plan, path, strlen(path), plan->handled_fs & want, !tree);
}

/* Grants for one allow pattern: read-like (rights on what is beneath) or,
 * with write, also the entry rights creating and removing it need. */
static void add_glob(struct vg_landlock_plan *pl, const struct vg_glob *g,
                     uint64_t rights, const struct plan_rights *pr, bool write)
{
    const char *t = g->text;
    size_t len = strlen(t);
    if (t[0] != '/')
        return;
    if (g->exact) {
        add(pl, t, len, write ? pr->write_file : rights, true);
        if (write)
            add(pl, t, parent_len(t, len), pr->entry, false);
        return;
    }
    add(pl, t, dir_prefix(t), rights, false);
    /* a trailing slash-star-star matches D itself too: removing D needs
     * REMOVE_DIR on its parent */
    if (write && len > 3 && !strcmp(t + len - 3, "/**") && vg_glob_literal_len(t) == len - 2)
        add(pl, t, parent_len(t, len - 3), LANDLOCK_ACCESS_FS_REMOVE_DIR, false);
}

static void add_class(struct vg_landlock_plan *pl, const struct vg_policy *p,
                      enum vg_class cls, uint64_t rights, const struct plan_rights *pr,
                      bool write)
{
    for (uint32_t i = 0; i < p->nlist[cls]; i++) {
        const struct vg_prule *r = &p->rules[p->list[cls][i]];
        if (r->act != VG_ACT_ALLOW || r->is_net || !r->path.globs)
            continue;
        for (uint32_t j = 0; j < r->path.nalts; j++)
            add_glob(pl, &r->path.globs[j], rights, pr, write);
    }
}

/* TCP ports every allow rule of cls names, if finite and few; else false. */
static bool collect_ports(const struct vg_policy *p, enum vg_class cls,
                          uint16_t **ports, uint32_t *n)
{
    uint32_t total = 0;
    *ports = NULL;
    *n = 0;
    for (uint32_t i = 0; i < p->nlist[cls]; i++) {
        const struct vg_prule *r = &p->rules[p->list[cls][i]];
        if (r->act == VG_ACT_ALLOW && r->is_net && r->net.proto == VG_PROTO_TCP)
            total += vg_netpat_nports(&r->net);
    }
    if (total > MAX_LL_PORTS)
        return false;
    *ports = vg_xcalloc(total + 1, sizeof **ports);
    for (uint32_t i = 0; i < p->nlist[cls]; i++) {
        const struct vg_prule *r = &p->rules[p->list[cls][i]];
        if (r->act != VG_ACT_ALLOW || !r->is_net || r->net.proto != VG_PROTO_TCP)
            continue;
        for (uint32_t k = 0; k < r->net.nranges; k++)
            for (uint32_t port = r->net.lo[k]; port <= r->net.hi[k]; port++) {
                bool dup = false;
                for (uint32_t d = 0; d < *n && !dup; d++)
                    dup = (*ports)[d] == port;
                if (!dup)
                    (*ports)[(*n)++] = (uint16_t)port;
            }
    }
    return true;
}

static void plan_net(const struct vg_policy *p, struct vg_landlock_plan *pl)
{
    if (p->def[VG_CLASS_CONNECT] != VG_ACT_ALLOW &&
        collect_ports(p, VG_CLASS_CONNECT, &pl->connect_ports, &pl->nconnect_ports))
        pl->handled_net |= LANDLOCK_ACCESS_NET_CONNECT_TCP;
    if (p->def[VG_CLASS_BIND] != VG_ACT_ALLOW &&
        collect_ports(p, VG_CLASS_BIND, &pl->bind_ports, &pl->nbind_ports))
        pl->handled_net |= LANDLOCK_ACCESS_NET_BIND_TCP;
}

/* Is a at or beneath b (textually)? */
static bool beneath(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (n == 1 && b[0] == '/')
        return a[0] == '/';
    return !strncmp(a, b, n) && (a[n] == '/' || a[n] == 0);
}

/* Drop the rules another rule already grants: each costs the sandbox an
 * open, a landlock_add_rule and a close at start-up (the default policy's
 * exec list alone is 60 files under /usr, which the read grant of /usr covers).
 * An exact rule is only covered by a rule for the same path, since an
 * exact directory grant is narrower than a beneath grant. */
static void prune(struct vg_landlock_plan *plan)
{
    /* Decide on the whole list first, then compact: entries must stay in
     * place while others are compared with them. */
    bool *drop = vg_xcalloc(plan->nrules ? plan->nrules : 1, sizeof *drop);
    for (uint32_t i = 0; i < plan->nrules; i++) {
        const struct vg_landlock_rule *r = &plan->rules[i];
        for (uint32_t j = 0; j < plan->nrules && !drop[i]; j++) {
            const struct vg_landlock_rule *o = &plan->rules[j];
            if (j == i || drop[j] || o->exact || (o->access & r->access) != r->access)
                continue;
            /* of two identical rules keep the first */
            bool same = !strcmp(o->path, r->path) && o->access == r->access && !r->exact;
            drop[i] = beneath(r->path, o->path) && (!same || j < i);
        }
    }
    uint32_t out = 0;
    for (uint32_t i = 0; i < plan->nrules; i++) {
        if (drop[i])
            free((char *)plan->rules[i].path);
        else
            plan->rules[out++] = plan->rules[i];
    }
    plan->nrules = out;
    free(drop);
}

int vg_policy_landlock_plan(const struct vg_policy *p, int abi,
                            struct vg_landlock_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (abi <= 0 || !p->compiled)
        return 0;
    struct plan_rights pr = {LANDLOCK_ACCESS_FS_WRITE_FILE, LL_ENTRY};
    if (abi >= 2)
        pr.entry |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        pr.write_file |= LANDLOCK_ACCESS_FS_TRUNCATE;
    bool read = p->def[VG_CLASS_READ] != VG_ACT_ALLOW;
    if (read) {
        plan->handled_fs |= LL_READ;
        add_class(plan, p, VG_CLASS_READ, LL_READ, &pr, false);
    }
    /* Exec in the kernel as well as in the supervisor: a program outside
     * every exec grant (one the candidate wrote to $WORK, say) cannot be
     * started even if the supervisor were wrong. */
    if (p->def[VG_CLASS_EXEC] != VG_ACT_ALLOW) {
        plan->handled_fs |= LANDLOCK_ACCESS_FS_EXECUTE;
        add_exec(plan, p, LANDLOCK_ACCESS_FS_EXECUTE | (read ? LANDLOCK_ACCESS_FS_READ_FILE : 0));
    } else if (read) {
        add_class(plan, p, VG_CLASS_EXEC, LANDLOCK_ACCESS_FS_READ_FILE, &pr, false);
    }
    if (p->def[VG_CLASS_WRITE] != VG_ACT_ALLOW) {
        plan->handled_fs |= pr.write_file | pr.entry;
        add_class(plan, p, VG_CLASS_WRITE, pr.write_file | pr.entry, &pr, true);
    }
    prune(plan);
    if (abi >= 4)
        plan_net(p, plan);
    return 0;
}

void vg_landlock_plan_free(struct vg_landlock_plan *plan)
{
    for (uint32_t i = 0; i < plan->nrules; i++)
        free((char *)plan->rules[i].path);
    free(plan->rules);
    free(plan->connect_ports);
    free(plan->bind_ports);
    memset(plan, 0, sizeof *plan);
}
