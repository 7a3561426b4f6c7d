/* engine.bpf.c: the kernel engine's file_open decision (issue 27): for the
 * tasks of one cgroup, the path the kernel resolved (bpf_d_path) is walked
 * through the policy's trie (lsm/trie_maps.h, filled by the loader from
 * lsm/lsm_compile.c), the same walk as vg_lsm_trie_decide, and the
 * decision is recorded in a ring buffer before the hook returns; when no
 * record can be reserved the open is refused (nothing allowed unrecorded).
 *
 * The walk is one bpf_loop over the path's bytes: at each '/' or at the
 * end, the component before it is looked up in the edge map; when no edge
 * names it, each of the node's globs is matched against it, a bpf_loop of
 * lsm/glob_step.h's turns (the step vg_lsm_trie_decide runs too), and the
 * mask of those that match picks the child.  A path
 * bpf_d_path cannot give whole is refused, as the notify engine refuses
 * what it cannot resolve. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "lsm/engine.h"
#include "lsm/glob_step.h"

/* vmlinux.h has no macros: the errno and the f_mode bit used here. */
#define ENGINE_EACCES 13
#define ENGINE_FMODE_WRITE 0x2
/* enum vg_action's allow and deny (policy/policy.h). */
#define ENGINE_ALLOW 0
#define ENGINE_DENY 1
/* A power of two multiple of the page size: about 1,000 records. */
#define ENGINE_RING_BYTES (4 * 1024 * 1024)
/* The loader sizes the trie's maps to the policy (bpf_map__set_max_entries). */
#define ENGINE_MAX_NODES 65536
#define ENGINE_MAX_EDGES 262144
#define ENGINE_MAX_GLOBS 4096
#define ENGINE_MAX_KIDS 262144
#define CLS_READ 0
#define CLS_WRITE 1

/* Both serve as masks that bound an index or a size for the verifier. */
_Static_assert((VG_LSM_NAME_MAX & (VG_LSM_NAME_MAX + 1)) == 0, "NAME_MAX a mask");
_Static_assert((VG_LSM_PATH_MAX & (VG_LSM_PATH_MAX + 1)) == 0, "PATH_MAX a mask");

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct engine_settings);
} settings SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, ENGINE_MAX_NODES);
    __type(key, __u32);
    __type(value, struct vg_lsm_node);
} nodes SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, ENGINE_MAX_EDGES);
    __type(key, struct vg_lsm_key);
    __type(value, __u32);
} edges SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, ENGINE_MAX_GLOBS);
    __type(key, __u32);
    __type(value, struct vg_lsm_glob);
} globs SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, ENGINE_MAX_KIDS);
    __type(key, __u32);
    __type(value, __u32);
} kids SEC(".maps");

/* Per CPU: the resolved path and the key being looked up, too big for
 * the 512-byte stack. */
struct scratch {
    char path[ENGINE_PATH_BUF];
    struct vg_lsm_key key;
};
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct scratch);
} scratch SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, ENGINE_RING_BYTES);
} records SEC(".maps");

/* The walk's state, the bpf_loop callback's context. */
struct walk {
    __u32 node;
    __u32 start;        /* where the current component starts */
    __u32 len;          /* the path's length, its NUL aside */
    __u32 cls;
    bool dead;          /* no pattern goes on: only the subs seen count */
    bool broken;        /* a map lookup failed: refuse */
    struct vg_lsm_verdict best;
};

/* A class's verdict among a node's three, by constant offsets only. */
static const struct vg_lsm_verdict *of_class(const struct vg_lsm_verdict *v, __u32 cls)
{
    return cls == CLS_READ ? &v[0] : cls == CLS_WRITE ? &v[1] : &v[2];
}

static void better(struct vg_lsm_verdict *best, const struct vg_lsm_verdict *v)
{
    if (v->prio < best->prio)
        *best = *v;
}

/* One glob's match against the current component, the context of its
 * bpf_loop. */
struct glob_match {
    struct vg_lsm_gm m;
    __u32 id;           /* the glob's */
    bool broken;
};

static long glob_turn(__u32 i, void *ctx)
{
    struct glob_match *g = ctx;
    __u32 zero = 0;
    struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
    struct vg_lsm_glob *pat = bpf_map_lookup_elem(&globs, &g->id);
    (void)i;
    if (!s || !pat) {
        g->broken = true;
        return 1;
    }
    return vg_lsm_gm_step(&g->m, pat, s->path);
}

/* The child of node n (id) for the component [w->start, end) that no
 * edge names: the kid of the mask of its globs that match, or its star. */
static __u32 glob_child(struct walk *w, const struct vg_lsm_node *n, __u32 end)
{
    __u32 mask = 0, clen = end - w->start;
    for (__u32 k = 0; k < VG_LSM_NODE_GLOBS; k++) {
        if (k >= n->nglob)
            break;
        struct glob_match g = {.id = n->glob[k]};
        struct vg_lsm_glob *pat = bpf_map_lookup_elem(&globs, &g.id);
        if (!pat) {
            w->broken = true;
            return VG_LSM_NONE;
        }
        vg_lsm_gm_init(&g.m, w->start, clen);
        bpf_loop(VG_LSM_GM_TURNS(clen, pat->nops), glob_turn, &g, 0);
        if (g.broken || g.m.done == 0) {
            w->broken = true;   /* not ended within its bound: refuse */
            return VG_LSM_NONE;
        }
        mask |= (__u32)(g.m.done == 1) << k;
    }
    if (!mask)
        return n->star;
    __u32 at = n->kids + mask - 1;
    __u32 *kid = bpf_map_lookup_elem(&kids, &at);
    if (!kid) {
        w->broken = true;
        return VG_LSM_NONE;
    }
    return *kid;
}

/* The child of w->node for the component [w->start, end): its edge, or
 * what its globs or its star say. */
static __u32 child(struct walk *w, struct scratch *s, __u32 end)
{
    __u32 clen = end - w->start, next = VG_LSM_NONE, id = w->node;
    if (clen <= VG_LSM_NAME_MAX) {
        __builtin_memset(&s->key, 0, sizeof(s->key));
        s->key.parent = id;
        s->key.len = clen;
        /* the verifier wants the size's bounds from a mask it sees */
        __u32 size = clen;
        barrier_var(size);
        size &= VG_LSM_NAME_MAX;
        if (bpf_probe_read_kernel(s->key.name, size, s->path + (w->start & VG_LSM_PATH_MAX)) == 0) {
            __u32 *c = bpf_map_lookup_elem(&edges, &s->key);
            if (c)
                next = *c;
        }
    }
    if (next == VG_LSM_NONE) {
        struct vg_lsm_node *n = bpf_map_lookup_elem(&nodes, &id);
        if (!n) {
            w->broken = true;
            return VG_LSM_NONE;
        }
        next = glob_child(w, n, end);
    }
    return next;
}

static long step(__u32 i, void *ctx)
{
    struct walk *w = ctx;
    __u32 zero = 0;
    struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
    if (!s) {
        w->broken = true;
        return 1;
    }
    if (i < w->len && s->path[i & VG_LSM_PATH_MAX] != '/')
        return 0;
    if (i > w->start) {
        __u32 next = child(w, s, i);
        if (next == VG_LSM_NONE) {
            w->dead = true;
            return 1;
        }
        w->node = next;
        struct vg_lsm_node *n = bpf_map_lookup_elem(&nodes, &next);
        if (!n) {
            w->broken = true;
            return 1;
        }
        better(&w->best, of_class(n->sub, w->cls));
    }
    w->start = i + 1;
    return i >= w->len;
}

/* Does the path (len bytes) end in VG_LSM_DELETED: a file unlinked since
 * it was opened, reached again through /proc/PID/fd (trie_maps.h)? */
static bool deleted(const struct scratch *s, __u32 len)
{
    static const char suffix[] = VG_LSM_DELETED;
    if (len < VG_LSM_DELETED_LEN)
        return false;
    for (__u32 k = 0; k < VG_LSM_DELETED_LEN; k++)
        if (s->path[(len - VG_LSM_DELETED_LEN + k) & VG_LSM_PATH_MAX] != suffix[k])
            return false;
    return true;
}

/* The walk of trie_maps.h; false when it could not be made. */
static bool decide(struct walk *w, const struct engine_settings *cfg)
{
    __u32 root = 0;
    struct vg_lsm_node *n = bpf_map_lookup_elem(&nodes, &root);
    if (!n)
        return false;
    better(&w->best, of_class(n->sub, w->cls));
    bpf_loop(w->len + 1, step, w, 0);
    if (w->broken)
        return false;
    if (!w->dead) {
        __u32 last = w->node;
        n = bpf_map_lookup_elem(&nodes, &last);
        if (!n)
            return false;
        better(&w->best, of_class(n->end, w->cls));
    }
    if (w->best.prio == VG_LSM_NONE) {
        w->best.rule = VG_LSM_NONE;
        w->best.action = w->cls < VG_LSM_NCLS ? cfg->def.action[w->cls] : ENGINE_DENY;
    }
    return true;
}

SEC("lsm/file_open")
int BPF_PROG(engine_file_open, struct file *file)
{
    __u32 zero = 0;
    struct engine_settings *cfg = bpf_map_lookup_elem(&settings, &zero);
    if (!cfg || cfg->cgroup_id == 0 || bpf_get_current_cgroup_id() != cfg->cgroup_id)
        return 0;
    struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
    if (!s)
        return -ENGINE_EACCES;
    /* f_path is const in newer kernels' types; bpf_d_path only reads it. */
    int plen = bpf_d_path((struct path *)&file->f_path, s->path, sizeof(s->path));
    struct walk w = {
        .cls = (file->f_mode & ENGINE_FMODE_WRITE) ? CLS_WRITE : CLS_READ,
        .best = {.prio = VG_LSM_NONE, .rule = VG_LSM_NONE, .action = ENGINE_DENY},
    };
    bool ok = plen > 1 && plen <= ENGINE_PATH_BUF && s->path[0] == '/';
    if (ok) {
        w.len = (__u32)plen - 1;
        ok = !deleted(s, w.len) && decide(&w, cfg);
    }
    if (!ok)
        w.best = (struct vg_lsm_verdict){.prio = VG_LSM_NONE, .rule = VG_LSM_NONE,
                                         .action = ENGINE_DENY};

    struct engine_record *e = bpf_ringbuf_reserve(&records, sizeof(*e), 0);
    if (!e)
        return -ENGINE_EACCES;  /* no room to record: refuse */
    e->cgroup_id = cfg->cgroup_id;
    e->pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
    e->cls = w.cls;
    e->action = w.best.action;
    e->rule = w.best.rule;
    e->path_len = plen;
    e->ret = w.best.action == ENGINE_ALLOW ? 0 : -ENGINE_EACCES;
    if (bpf_probe_read_kernel(e->path, sizeof(e->path), s->path) != 0)
        e->path[0] = '\0';
    int ret = e->ret;
    bpf_ringbuf_submit(e, 0);
    return ret;
}
