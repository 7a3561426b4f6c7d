/* glob_step.h: one step of the kernel engine's in-component glob match
 * (lsm/trie_maps.h, struct vg_lsm_glob), the one source of the matcher
 * that the BPF program (lsm/engine.bpf.c, a bpf_loop callback) and its
 * user-space twin (lsm/lsm_compile.c) both run, so that the two cannot
 * drift apart.
 *
 * It is policy/glob.c's comp_matches, one loop turn a call: `*` with one
 * backtrack point, every other element a set of bytes (a letter, `?`, a
 * [...] class, already folded to a set by the compiler).  Each turn either
 * moves the pattern on, or moves the component on, or backtracks; the
 * backtrack point only moves forward, so VG_LSM_GM_TURNS(len, nops) turns
 * always end it (each run of pattern moves between two backtracks is at
 * most nops long, and there are at most len backtracks).  A match that has
 * not ended after that many turns is a broken invariant, and both callers
 * refuse the path.
 *
 * The indexes are masked (PATH_MAX, GLOB_OPS): no-ops for the trie's own
 * data, bounds the verifier can see. */
#ifndef VIGIL_LSM_GLOB_STEP_H
#define VIGIL_LSM_GLOB_STEP_H
#include "lsm/trie_maps.h"

/* The turns a match of a component of len bytes against nops ops takes at
 * most: (len + 1) runs of at most nops + 1 turns, then the final stars. */
#define VG_LSM_GM_TURNS(len, nops) (((len) + 1) * ((nops) + 1) + (nops) + 1)

/* What a match is at. */
struct vg_lsm_gm {
    unsigned int start;     /* the component's first byte in the path */
    unsigned int len;       /* its length */
    unsigned int pi, si;    /* the next op, the next byte */
    unsigned int star;      /* the op after the last `*` seen; VG_LSM_NONE: none yet */
    unsigned int star_si;   /* the byte that `*` is to take next on a backtrack */
    int done;               /* 0 going on, 1 matched, -1 not */
};

static inline void vg_lsm_gm_init(struct vg_lsm_gm *m, unsigned int start, unsigned int len)
{
    m->start = start;
    m->len = len;
    m->pi = 0;
    m->si = 0;
    m->star = VG_LSM_NONE;
    m->star_si = 0;
    m->done = 0;
}

/* One turn of the match of path[start, start + len) against g; 1 when it
 * has ended (m->done says how). */
static inline int vg_lsm_gm_step(struct vg_lsm_gm *m, const struct vg_lsm_glob *g,
                                 const char *path)
{
    unsigned int nops = g->nops;
    if (m->si < m->len) {
        if (m->pi < nops && g->op[m->pi & (VG_LSM_GLOB_OPS - 1)].star) {
            m->star = ++m->pi;
            m->star_si = m->si;
            return 0;
        }
        if (m->pi < nops) {
            unsigned char c = (unsigned char)path[(m->start + m->si) & VG_LSM_PATH_MAX];
            const struct vg_lsm_gop *op = &g->op[m->pi & (VG_LSM_GLOB_OPS - 1)];
            if ((op->set[(c >> 3) & (VG_LSM_SET_BYTES - 1)] >> (c & 7)) & 1) {
                m->pi++;
                m->si++;
                return 0;
            }
        }
        if (m->star == VG_LSM_NONE) {
            m->done = -1;
            return 1;
        }
        m->pi = m->star;
        m->si = ++m->star_si;
        return 0;
    }
    if (m->pi < nops && g->op[m->pi & (VG_LSM_GLOB_OPS - 1)].star) {
        m->pi++;
        return 0;
    }
    m->done = m->pi == nops ? 1 : -1;
    return 1;
}
#endif
