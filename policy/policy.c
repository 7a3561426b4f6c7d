/* policy.c: the policy object's life cycle, its getters, and the limit
 * (the limits' table is limit_table.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"

const char *const vg_pol_class_names[VG_NPCLASS] = {
    "read", "write", "exec", "connect", "bind", "send",
};
const char *const vg_pol_action_names[3] = {"allow", "deny", "kill"};

const char *vg_pol_keep(struct vg_policy *p, char *s)
{
    p->strs = vg_xrealloc(p->strs, (p->nstrs + 1) * sizeof *p->strs);
    p->strs[p->nstrs++] = s;
    return s;
}

void vg_pol_warnf(struct vg_policy *p, const char *file, uint32_t line,
                  uint32_t col, const char *fmt, ...)
{
    char m[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    p->warn = vg_xrealloc(p->warn, (p->nwarn + 1) * sizeof *p->warn);
    p->warn[p->nwarn++] = vg_xasprintf("%s:%u:%u: warning: %s", file, line, col, m);
}

void vg_policy_free(struct vg_policy *p)
{
    if (!p)
        return;
    vg_pol_uncompile(p);
    for (uint32_t i = 0; i < p->nrules; i++)
        vg_pol_rule_free(&p->rules[i]);
    free(p->rules);
    for (int c = 0; c < VG_NPCLASS; c++)
        free(p->list[c]);
    for (uint32_t i = 0; i < p->nbinds; i++) {
        free(p->binds[i].src_rest);
        free(p->binds[i].dst_rest);
        free(p->binds[i].src_text);
    }
    free(p->binds);
    free(p->env);
    for (uint32_t i = 0; i < p->nwarn; i++)
        free(p->warn[i]);
    free(p->warn);
    for (uint32_t i = 0; i < p->nstrs; i++)
        free(p->strs[i]);
    free(p->strs);
    vg_buf_free(&p->text);
    free(p->path);
    free(p);
}

uint32_t vg_policy_nwarnings(const struct vg_policy *p) { return p->nwarn; }
const char *vg_policy_warning(const struct vg_policy *p, uint32_t i)
{
    return i < p->nwarn ? p->warn[i] : NULL;
}

const struct vg_limits *vg_policy_limits(const struct vg_policy *p) { return &p->limits; }
uint32_t vg_policy_nbinds(const struct vg_policy *p) { return p->nbinds; }
const struct vg_bind *vg_policy_bind(const struct vg_policy *p, uint32_t i)
{
    return i < p->nbinds ? &p->binds[i].out : NULL;
}
uint32_t vg_policy_nenv(const struct vg_policy *p) { return p->nenv; }
const char *vg_policy_image(const struct vg_policy *p, const char **file, uint32_t *line)
{
    if (file)
        *file = p->image_src.file;
    if (line)
        *line = p->image_src.line;
    return p->image;
}
const struct vg_env *vg_policy_env(const struct vg_policy *p, uint32_t i)
{
    return i < p->nenv ? &p->env[i] : NULL;
}

const char *vg_policy_text(const struct vg_policy *p) { return p->text.data; }
const char *vg_policy_sha256(const struct vg_policy *p) { return p->sha256; }

bool vg_policy_audits(const struct vg_policy *p, enum vg_class cls)
{
    if (cls >= VG_NPCLASS)
        return true;    /* the baseline's refusals are always recorded */
    /* Lookups are decided as reads: asking for them intercepts reads. */
    if (p->def[cls] != VG_ACT_ALLOW || p->audit[cls] ||
        (cls == VG_CLASS_READ && p->audit_lookups))
        return true;
    for (uint32_t i = 0; i < p->nlist[cls]; i++)
        if (p->rules[p->list[cls][i]].act != VG_ACT_ALLOW)
            return true;
    return false;
}

bool vg_policy_audits_lookups(const struct vg_policy *p)
{
    return p->audit_lookups;
}

