/* recheck_setup.c: what a run's header decides for its recheck
 * (recheck_int.h): the new policy as this run would have had it (its
 * image's trees, its workdir as $WORK), the run's own policy's audit set
 * (so what its log can hold), the command file, vigil's resolver, the
 * refusals cap, and the lines of what cannot be known about this run. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insight/recheck_int.h"
#include "net/dns.h"
#include "util/path.h"

#define BUILTIN_NAME "(builtin) default.policy" /* the header's path for the built-in */
#define DEFAULT_WORK "/tmp/work"                /* a header without cwd: the default workdir */
#define TMP_DIR "/tmp"
#define DIGEST_PREFIX "sha256:"
#define UNKNOWN_LINE_MAX 1024

/* What the run's sends to vigil's resolver are allowed by (net/dns.h). */
static const struct vg_rule_src resolver_rule = {
    .file = "(vigil)", .line = 0, .text = "vigil's resolver, " VG_DNS_ADDR ":53 (net/dns.h)",
};

void vg_recheck_unknown(struct vg_recheck_run *run, const char *fmt, ...)
{
    char line[UNKNOWN_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < run->nunknown; i++)
        if (!strcmp(run->unknown[i], line))
            return;
    run->unknown = vg_xrealloc(run->unknown, (run->nunknown + 1) * sizeof *run->unknown);
    run->unknown[run->nunknown++] = vg_xstrdup(line);
}

static void audit_of(const struct vg_policy *p, struct vg_audit_set *a)
{
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        a->cls[c] = vg_policy_audits(p, (enum vg_class)c);
    a->lookups = vg_policy_audits_lookups(p);
}

/* A run on an image: the new policy's paths are that image's files, when
 * this store has it. */
static void on_image(struct vg_recheck *R, const struct vg_header *h)
{
    struct vg_err why;
    if (!h->image_digest)
        return;
    if (vg_image_find(h->image_digest, &R->img, &why) == 0)
        R->trees = vg_trees_of_root(R->img.rootfs, &why);
    if (!R->trees)
        vg_recheck_unknown(R->run, "the run was on image %s, which this store does not have "
                           "(%s): the new policy's paths were resolved on the host's trees",
                           h->image_digest, why.msg);
}

static const struct vg_trees *trees(const struct vg_recheck *R)
{
    return R->trees ? R->trees : &vg_system_trees;
}

/* The new policy names an image: its runs would be on that image, and
 * this log is of other files. */
static void image_line(struct vg_recheck *R, const struct vg_header *h)
{
    const char *ref = vg_policy_image(R->pol, NULL, NULL);
    struct vg_image_ref img = {0};
    struct vg_err why;
    size_t n = strlen(DIGEST_PREFIX);
    if (!ref)
        return;
    bool same = h->image_digest && !strncmp(h->image_digest, DIGEST_PREFIX, n) &&
                vg_image_find(ref, &img, &why) == 0 && !strcmp(h->image_digest + n, img.hex);
    vg_image_ref_free(&img);
    if (!same)
        vg_recheck_unknown(R->run, "the new policy names image %s; the run was on %s: a run "
                           "under it would see other files", ref,
                           h->image_digest ? h->image_digest : "the host's trees");
}

/* The run's own policy, when the file the header names is still what it
 * was (same SHA-256): what it audited is what the log can hold. */
static void load_old(struct vg_recheck *R, const struct vg_header *h)
{
    struct vg_err err;
    struct vg_policy *p = NULL;
    if (h->policy_path && !strcmp(h->policy_path, BUILTIN_NAME))
        p = vg_policy_parse_in("default.policy", vg_default_policy_text, trees(R), &err);
    else if (h->policy_path)
        p = vg_policy_load_in(h->policy_path, trees(R), &err);
    if (p && h->policy_sha256 && !strcmp(vg_policy_sha256(p), h->policy_sha256)) {
        R->old_known = true;
        audit_of(p, &R->old_audit);
    }
    vg_policy_free(p);
}

/* argv[0] named a file vigil took in (the header's artifacts hold it as
 * given): it is the command, whose exec needs no rule (core/decide.c). */
static void command_of(struct vg_recheck *R, const struct vg_header *h)
{
    const char *cmd = h->argc ? h->argv[0] : NULL;
    for (uint32_t i = 0; cmd && !R->command && i < h->nartifacts; i++) {
        if (!h->artifacts[i].path || strcmp(h->artifacts[i].path, cmd))
            continue;
        char *joined = cmd[0] == '/' ? vg_xstrdup(cmd) : vg_xasprintf("%s/%s", R->cwd, cmd);
        R->command = vg_path_normalize(joined);
        free(joined);
    }
}

static const struct vg_limit_rec *header_limit(const struct vg_header *h, enum vg_limit l)
{
    for (uint32_t i = 0; i < h->nlimits; i++)
        if (h->limits[i].name && !strcmp(h->limits[i].name, vg_limit_name(l)))
            return &h->limits[i];
    return NULL;
}

/* The refusals cap a run under the new policy has: its own `limit
 * refusals`, else the one this run had (a flag's, or the old policy's,
 * which the header cannot tell apart), else the table's default. */
static void cap_of(struct vg_recheck *R, const struct vg_header *h)
{
    const struct vg_limits *l = vg_policy_limits(R->pol);
    const struct vg_limit_rec *had = header_limit(h, VG_LIM_REFUSALS);
    struct vg_limits def;
    vg_limits_defaults(&def);
    R->run->cap = l->set[VG_LIM_REFUSALS] ? l->v[VG_LIM_REFUSALS]
                  : had                   ? had->value
                                          : def.v[VG_LIM_REFUSALS];
}

/* Limits are held by the kernel, not decided per call: one the new policy
 * sets otherwise than the run had is said, not rechecked. */
static void limits_differ(struct vg_recheck *R, const struct vg_header *h)
{
    const struct vg_limits *l = vg_policy_limits(R->pol);
    for (int i = 0; i < VG_LIM_COUNT; i++) {
        const struct vg_limit_rec *had = header_limit(h, (enum vg_limit)i);
        if (i == VG_LIM_REFUSALS || !l->set[i] || (had && had->value == l->v[i]))
            continue;
        char now[32], then[32] = "none";
        vg_limit_format((enum vg_limit)i, l->v[i], now, sizeof now);
        if (had)
            vg_limit_format((enum vg_limit)i, had->value, then, sizeof then);
        vg_recheck_unknown(R->run, "limit %s: the new policy's %s, the run's %s (limits are "
                           "held by the kernel, not decided per call: not rechecked)",
                           vg_limit_name((enum vg_limit)i), now, then);
    }
}

/* Every run has vigil's resolver in its network namespace (net/dns.h). */
static int resolver_of(struct vg_recheck *R, struct vg_err *err)
{
    R->resolver = (struct vg_resolver){.addr = {.family = AF_INET, .port = VG_DNS_PORT},
                                       .rule = &resolver_rule};
    if (inet_pton(AF_INET, VG_DNS_ADDR, R->resolver.addr.ip.a) == 1)
        return 0;
    vg_errf(err, "vigil's resolver address %s does not parse", VG_DNS_ADDR);
    return -1;
}

int vg_recheck_setup(struct vg_recheck *R, const struct vg_header *h, struct vg_err *err)
{
    struct vg_recheck_run *run = R->run;
    R->cwd = vg_xstrdup(h->cwd ? h->cwd : DEFAULT_WORK);
    run->dry_run = h->mode && !strcmp(h->mode, "dry-run");
    run->task_id = h->task_id ? vg_xstrdup(h->task_id) : NULL;
    run->old_policy = vg_xstrdup(h->policy_path ? h->policy_path : "?");
    on_image(R, h);
    struct vg_places places = {.home = R->o->home, .work = R->cwd, .tmp = TMP_DIR};
    struct vg_err why;
    R->pol = vg_policy_load_in(R->o->policy, trees(R), &why);
    if (!R->pol || vg_policy_compile_run(R->pol, &places, NULL, 0, &why) < 0) {
        vg_errf(err, "%s: the new policy for this run: %s", R->run->log, why.msg);
        return -1;
    }
    audit_of(R->pol, &R->audit);
    load_old(R, h);
    command_of(R, h);
    cap_of(R, h);
    limits_differ(R, h);
    image_line(R, h);
    vg_recheck_fs_init(&R->fs, R->cwd);
    return resolver_of(R, err);
}

/* A class the new policy has stopped and the run's did not: its calls
 * ran unrecorded, and are not in the log to be decided. */
static void unrecorded(struct vg_recheck *R)
{
    static const char tail[] = "ran unrecorded: not in the log, not rechecked";
    for (int c = 0; c < VG_CLASS_NCLASSES; c++) {
        if (!R->audit.cls[c] || (R->old_known ? R->old_audit.cls[c] : R->seen[c]))
            continue;
        if (R->old_known)
            vg_recheck_unknown(R->run, "%s calls: the run's policy did not audit them, so they %s",
                               vg_class_name((enum vg_class)c), tail);
        else
            vg_recheck_unknown(R->run, "%s calls: the log has none, and the run's policy (%s) is "
                               "not at hand to say whether it audited them", 
                               vg_class_name((enum vg_class)c), R->run->old_policy);
    }
    if (R->audit.lookups && R->old_known && !R->old_audit.lookups)
        vg_recheck_unknown(R->run, "stat-like lookups (the new policy's `audit lookups`) %s",
                           tail);
}

void vg_recheck_setup_end(struct vg_recheck *R)
{
    if (R->pol)
        unrecorded(R);
}

void vg_recheck_teardown(struct vg_recheck *R)
{
    vg_policy_free(R->pol);
    vg_trees_free(R->trees); /* after the policy, which points into them */
    vg_image_ref_free(&R->img);
    vg_recheck_fs_free(&R->fs);
    free(R->cwd);
    free(R->command);
    free(R->image.exe);
}
