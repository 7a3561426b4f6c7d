/* policy_int.h: the policy's internal representation, shared by the files
 * of policy/ (parse, compile/decide, warnings, print, Landlock plan).
 * Nothing outside policy/ includes this. */
#ifndef VG_POLICY_INT_H
#define VG_POLICY_INT_H
#include "policy/glob.h"
#include "policy/netpat.h"
#include "policy/policy.h"

/* The classes rules can name: read .. send (system is the baseline's). */
#define VG_NPCLASS VG_CLASS_SYSTEM
#define VG_CLS_BIT(c) (1u << (c))
#define VG_CLS_NET_MASK (VG_CLS_BIT(VG_CLASS_CONNECT) | VG_CLS_BIT(VG_CLASS_BIND) | \
                         VG_CLS_BIT(VG_CLASS_SEND))
#define VG_CLS_ALL_MASK ((1u << VG_NPCLASS) - 1)

extern const char *const vg_pol_class_names[VG_NPCLASS];
extern const char *const vg_pol_action_names[3];

/* The places a pattern may start with. */
enum vg_place { VG_PLACE_NONE, VG_PLACE_HOME, VG_PLACE_WORK, VG_PLACE_TMP };
const char *vg_place_path(enum vg_place pl, const struct vg_places *places);
const char *vg_place_var(enum vg_place pl);    /* "~", "$WORK", "$TMP" */

/* A path pattern: place + the rest as written, braces expanded: alts
 * [0, nwritten).  After them, the forms those resolve to in the read-only
 * trees (policy/resolve.c): alts[i] for i >= nwritten is what
 * alts[from[i - nwritten]] names there. */
struct vg_ppat {
    enum vg_place place;
    char **alts;
    uint32_t nalts;
    uint32_t nwritten;
    uint32_t *from;
    struct vg_glob *globs;     /* one per alt, after compile */
};

struct vg_prule {
    enum vg_action act;
    uint32_t classes;          /* VG_CLS_BIT()s */
    uint32_t col;              /* of the pattern, for warnings */
    struct vg_rule_src src;    /* file owned by the policy, text by the rule */
    bool is_net;
    struct vg_netpat net;      /* is_net */
    struct vg_ppat path;       /* path rules, and the path of unix rules */
};

/* Where a setting came from; file NULL when built in. */
struct vg_setting_src {
    const char *file;
    uint32_t line;
    uint32_t col;
};

struct vg_pbind {
    enum vg_place src_place, dst_place;
    char *src_rest, *dst_rest; /* dst_rest NULL: same as src */
    char *src_text;            /* as written, for printing */
    char *src_exp, *dst_exp;   /* after compile */
    struct vg_bind out;        /* what vg_policy_bind returns */
};

struct vg_policy {
    char *path;
    struct vg_buf text;
    char sha256[65];
    struct vg_prule *rules;
    uint32_t nrules;
    uint32_t *list[VG_NPCLASS];     /* rule indices per class, in order */
    uint32_t nlist[VG_NPCLASS];
    enum vg_action def[VG_NPCLASS];
    struct vg_setting_src def_src[VG_NPCLASS];
    bool audit[VG_NPCLASS];
    bool audit_lookups;             /* `audit lookups` */
    struct vg_limits limits;
    struct vg_setting_src limit_src[VG_LIM_COUNT];
    struct vg_pbind *binds;
    uint32_t nbinds;
    struct vg_env *env;
    uint32_t nenv;
    const char *image;              /* `image REF` (kept in strs) */
    struct vg_setting_src image_src;
    char **warn;
    uint32_t nwarn;
    const struct vg_trees *ro;      /* where literal paths were resolved */
    char **strs;                    /* file names and other owned strings */
    uint32_t nstrs;
    bool compiled;
};

/* Keep s (malloc'd) until the policy is freed; returns it. */
const char *vg_pol_keep(struct vg_policy *p, char *s);
void vg_pol_warnf(struct vg_policy *p, const char *file, uint32_t line,
                  uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

void vg_pol_rule_free(struct vg_prule *r);

/* Compile against places; resolve: look host names up (else they match
 * nothing).  vg_pol_uncompile drops the compiled state. */
int vg_pol_compile(struct vg_policy *p, const struct vg_places *places, struct vg_err *err);
void vg_pol_uncompile(struct vg_policy *p);

/* Add the resolved forms of rules' literal paths in p->ro, and warn of
 * literal paths there that do not exist (policy/resolve.c). */
void vg_pol_resolve_rules(struct vg_policy *p);

/* Shadowed rules and grants that defeat the sandbox (policy/warn.c). */
void vg_pol_find_warnings(struct vg_policy *p);

/* Expand a place-relative path: place + rest, squashed.  malloc'd. */
char *vg_pol_expand_literal(enum vg_place pl, const char *rest,
                            const struct vg_places *places);
#endif
