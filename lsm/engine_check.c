/* engine_check.c: load lsm/engine.bpf.c with a policy's trie (lsm/lsm_compile.c
 * into the maps), open the given files from a cgroup of this process's own,
 * and hold each record the kernel wrote against vg_lsm_trie_decide and
 * vg_policy_decide_path for the same path: the kernel's half of issue 27's
 * differential test, run in a guest (tests/guest/lsm_engine.sh).
 *
 * usage: engine_check [-v] [--full] POLICY [r:|w:|u:]PATH... [@FILE]   (r: read, the
 *        default; w: write; u: the file opened, unlinked, then opened again
 *        for reading through /proc/self/fd, which the engine must refuse:
 *        d_path names it "PATH (deleted)"; @FILE: one such word a line)
 * Exit 0: every open was recorded once, its record agrees with both
 * deciders and the open's result with the record; with --full (a ring
 * buffer of one page, too small for any record) every open was refused
 * and nothing recorded.  1: a check failed.
 * 2: BPF LSM unavailable, or the policy does not compile exactly (the
 * engine's fallback to notify).  3: set-up failed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lsm/engine.h"
#include "lsm/lsm_compile.h"
#include "lsm/probe_cgroup.h"
#include "engine.skel.h"

enum { EXIT_PASS = 0, EXIT_CHECK = 1, EXIT_NO_LSM = 2, EXIT_SETUP = 3 };

#define PROG "vigil-lsm-engine-check"
#define CGROUP_ROOT "/sys/fs/cgroup"
#define ERR_MAX 512
#define MAX_OPENS 16384
/* Opens between two reads of the ring buffer, which holds about 1,000. */
#define CHUNK 128
/* Up to this many opens, each is shown; past it only those that differ. */
#define SHOW_ALL 64
#define LIST_MAX (16 << 20)

struct one_open {
    const char *path;
    char *deleted;      /* u: the path the record names, PATH (deleted) */
    int fd;             /* u: the file, held open past its unlink */
    enum vg_class cls;
    int err;            /* the open's errno, 0: it opened */
    int records;        /* how many records named it */
    bool agrees;        /* its record matched both deciders and err */
};

struct run {
    const struct vg_policy *pol;
    const struct vg_lsm_trie *trie;
    struct one_open open[MAX_OPENS];
    int nopen;
    unsigned pid;
    int records, foreign;
    bool full;          /* --full: no record fits */
};

static int libbpf_say(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level;
    return vfprintf(stderr, fmt, ap);
}

/* The trie into the engine's maps, sized to it before load. */
static int fill_maps(struct engine_bpf *skel, const struct vg_lsm_trie *t)
{
    for (uint32_t i = 0; i < t->nnodes; i++)
        if (bpf_map__update_elem(skel->maps.nodes, &i, sizeof i, &t->nodes[i], sizeof t->nodes[i],
                                 BPF_ANY))
            return -1;
    for (uint32_t i = 0; i < t->nedges; i++)
        if (bpf_map__update_elem(skel->maps.edges, &t->edges[i].key, sizeof t->edges[i].key,
                                 &t->edges[i].child, sizeof t->edges[i].child, BPF_NOEXIST))
            return -1;
    for (uint32_t i = 0; i < t->nglobs; i++)
        if (bpf_map__update_elem(skel->maps.globs, &i, sizeof i, &t->globs[i], sizeof t->globs[i],
                                 BPF_ANY))
            return -1;
    for (uint32_t i = 0; i < t->nkids; i++)
        if (bpf_map__update_elem(skel->maps.kids, &i, sizeof i, &t->kids[i], sizeof t->kids[i],
                                 BPF_ANY))
            return -1;
    return 0;
}

static int set_watch(struct engine_bpf *skel, unsigned long long cgroup, const struct vg_lsm_trie *t)
{
    struct engine_settings cfg = {.cgroup_id = cgroup, .def = t->def};
    unsigned key = 0;
    return bpf_map__update_elem(skel->maps.settings, &key, sizeof key, &cfg, sizeof cfg, BPF_ANY);
}

static const char *action_name(unsigned a)
{
    return a == VG_ACT_ALLOW ? "allow" : a == VG_ACT_DENY ? "deny" : "kill";
}

static int on_record(void *ctx, void *data, size_t size)
{
    struct run *r = ctx;
    const struct engine_record *e = data;
    if (size < sizeof *e)
        return 0;
    r->records++;
    if (e->pid != r->pid) {
        r->foreign++;
        return 0;
    }
    for (int i = 0; i < r->nopen; i++) {
        struct one_open *o = &r->open[i];
        const char *named = o->deleted ? o->deleted : o->path;
        if (e->path_len <= 0 || strcmp(e->path, named) || (unsigned)o->cls != e->cls)
            continue;
        o->records++;
        struct vg_verdict trie = vg_lsm_trie_decide(r->trie, o->cls, named);
        struct vg_verdict core = vg_policy_decide_path(r->pol, o->cls, named);
        /* an unlinked file's: refused by both engines, whatever the rules */
        if (o->deleted)
            core = (struct vg_verdict){VG_ACT_DENY, NULL};
        const struct vg_rule_src *rule = e->rule == VG_LSM_NONE ? NULL
            : e->rule < r->trie->nrules ? r->trie->rules[e->rule] : (const void *)-1;
        int want_err = e->action == VG_ACT_ALLOW ? 0 : EACCES;
        o->agrees = (enum vg_action)e->action == trie.action && rule == trie.rule &&
                    trie.action == core.action && trie.rule == core.rule && o->err == want_err &&
                    e->ret == -want_err;
        if (!o->agrees || r->nopen <= SHOW_ALL)
            printf("%s %-5s %-48s kernel %-5s line %-3u trie %-5s line %-3u core %-5s line %-3u "
                   "open %s\n", o->agrees ? "ok  " : "DIFF",
                   o->cls == VG_CLASS_WRITE ? "write" : "read", named, action_name(e->action),
                   rule && rule != (const void *)-1 ? rule->line : 0, action_name(trie.action),
                   trie.rule ? trie.rule->line : 0, action_name(core.action),
                   core.rule ? core.rule->line : 0, o->err ? strerror(o->err) : "opened");
    }
    return 0;
}

static int try_open(const struct one_open *o)
{
    char fdpath[sizeof "/proc/self/fd/" + 3 * sizeof(int)];
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", o->fd);
    const char *path = o->deleted ? fdpath : o->path;
    int fd = open(path, (o->cls == VG_CLASS_WRITE ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return errno;
    return close(fd) == 0 ? 0 : errno;
}

/* The opens, between watch and unwatch, the records read every CHUNK
 * opens (the ring buffer holds about 1,000); -1 with err. */
static int open_all(struct engine_bpf *skel, struct run *r, struct ring_buffer *rb,
                    unsigned long long cgroup, char *err, size_t errlen)
{
    for (int i = 0; i < r->nopen; i++) {
        struct one_open *o = &r->open[i];
        if (o->deleted && ((o->fd = open(o->path, O_RDONLY | O_CLOEXEC)) < 0 || unlink(o->path))) {
            snprintf(err, errlen, "%s: open and unlink: %s", o->path, strerror(errno));
            return -1;
        }
    }
    if (set_watch(skel, cgroup, r->trie) != 0) {
        snprintf(err, errlen, "settings map: %s", strerror(errno));
        return -1;
    }
    int n = 0;
    for (int i = 0; i < r->nopen && n >= 0; i++) {
        r->open[i].err = try_open(&r->open[i]);
        if ((i + 1) % CHUNK == 0 || i + 1 == r->nopen)
            n = ring_buffer__consume(rb);
    }
    if (set_watch(skel, 0, r->trie) != 0 || n < 0) {
        snprintf(err, errlen, "%s: %s", n < 0 ? "ring_buffer__consume" : "settings map",
                 strerror(n < 0 ? -n : errno));
        return -1;
    }
    return 0;
}

/* Open every file from a cgroup of its own, watched, and judge the records. */
static int run_opens(struct engine_bpf *skel, struct run *r, char *err, size_t errlen)
{
    struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(skel->maps.records), on_record, r, NULL);
    if (!rb) {
        snprintf(err, errlen, "ring_buffer__new: %s", strerror(errno));
        return EXIT_SETUP;
    }
    struct probe_cgroup cg;
    if (probe_cgroup_enter(&cg, CGROUP_ROOT, err, errlen) < 0) {
        ring_buffer__free(rb);
        return EXIT_SETUP;
    }
    int rc = open_all(skel, r, rb, cg.id, err, errlen) ? EXIT_SETUP : EXIT_PASS;
    ring_buffer__free(rb);
    char leave_err[ERR_MAX];
    if (probe_cgroup_leave(&cg, leave_err, sizeof leave_err) < 0 && rc == EXIT_PASS) {
        snprintf(err, errlen, "%s", leave_err);
        rc = EXIT_SETUP;
    }
    if (rc != EXIT_PASS)
        return rc;
    int bad = 0;
    for (int i = 0; i < r->nopen && r->full; i++)
        bad += r->open[i].err != EACCES;
    for (int i = 0; i < r->nopen && !r->full; i++)
        if (r->open[i].records != 1 || !r->open[i].agrees) {
            if (!r->open[i].records)
                printf("MISS %s: no record\n", r->open[i].path);
            bad++;
        }
    bad += r->full && r->records;
    int nread = 0;
    for (int i = 0; i < r->nopen; i++)
        nread += r->open[i].cls == VG_CLASS_READ;
    printf("%s: %s: %d opens (%d read, %d write)%s, %d records (%d of other processes), "
           "%d differ\n", PROG, bad ? "FAIL" : "PASS", r->nopen, nread, r->nopen - nread,
           r->full ? " with a full ring buffer" : "", r->records, r->foreign, bad);
    return bad ? EXIT_CHECK : EXIT_PASS;
}

/* What the verifier made of the program: the instructions it walked and
 * the program's size (the figures issue 27 tracks as the trie grows). */
static void say_verified(const struct engine_bpf *skel)
{
    struct bpf_prog_info info;
    __u32 len = sizeof info;
    memset(&info, 0, sizeof info);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.engine_file_open), &info, &len) == 0)
        printf("%s: file_open loaded: %u instructions verified, %u translated\n", PROG,
               info.verified_insns, info.xlated_prog_len / (unsigned)sizeof(struct bpf_insn));
}

static int load_and_run(struct run *r, bool verbose)
{
    libbpf_set_print(verbose ? libbpf_say : NULL);
    struct engine_bpf *skel = engine_bpf__open();
    if (!skel) {
        fprintf(stderr, "%s: open: %s\n", PROG, strerror(errno));
        return EXIT_SETUP;
    }
    const struct vg_lsm_trie *t = r->trie;
    int rc = EXIT_PASS;
    if (bpf_map__set_max_entries(skel->maps.nodes, t->nnodes) ||
        bpf_map__set_max_entries(skel->maps.edges, t->nedges ? t->nedges : 1) ||
        bpf_map__set_max_entries(skel->maps.globs, t->nglobs ? t->nglobs : 1) ||
        bpf_map__set_max_entries(skel->maps.kids, t->nkids ? t->nkids : 1) ||
        (r->full && bpf_map__set_max_entries(skel->maps.records, (uint32_t)getpagesize()))) {
        fprintf(stderr, "%s: size the maps: %s\n", PROG, strerror(errno));
        rc = EXIT_SETUP;
    } else if (engine_bpf__load(skel)) {
        fprintf(stderr, "%s: BPF LSM unavailable: load: %s\n", PROG, strerror(errno));
        rc = EXIT_NO_LSM;
    } else if (say_verified(skel), fill_maps(skel, t)) {
        fprintf(stderr, "%s: fill the maps: %s\n", PROG, strerror(errno));
        rc = EXIT_SETUP;
    } else if (engine_bpf__attach(skel)) {
        fprintf(stderr, "%s: BPF LSM unavailable: attach lsm/file_open: %s\n", PROG, strerror(errno));
        rc = EXIT_NO_LSM;
    } else {
        char err[ERR_MAX] = "";
        rc = run_opens(skel, r, err, sizeof err);
        if (rc == EXIT_SETUP)
            fprintf(stderr, "%s: %s\n", PROG, err);
    }
    engine_bpf__destroy(skel);
    return rc;
}

/* One [r:|w:]PATH word. */
static int add_open(struct run *r, char *s)
{
    if (r->nopen >= MAX_OPENS) {
        fprintf(stderr, "%s: more than %d opens\n", PROG, MAX_OPENS);
        return EXIT_SETUP;
    }
    enum vg_class cls = !strncmp(s, "w:", 2) ? VG_CLASS_WRITE : VG_CLASS_READ;
    bool unlinked = !strncmp(s, "u:", 2);
    if (!strncmp(s, "w:", 2) || !strncmp(s, "r:", 2) || unlinked)
        s += 2;
    r->open[r->nopen++] = (struct one_open){
        .path = s, .cls = cls, .fd = -1,
        .deleted = unlinked ? vg_xasprintf("%s" VG_LSM_DELETED, s) : NULL};
    return EXIT_PASS;
}

/* @FILE: one such word a line; *keep holds its text, which the opens
 * point into, until the end. */
static int add_list(struct run *r, const char *file, char **keep)
{
    struct vg_err err = {{0}};
    char *s = *keep ? NULL : vg_read_file(file, LIST_MAX, NULL, &err);
    if (!s) {
        fprintf(stderr, "%s: %s\n", PROG, *keep ? "one @FILE only" : err.msg);
        return EXIT_SETUP;
    }
    *keep = s;
    int rc = EXIT_PASS;
    for (char *save, *l = strtok_r(s, "\n", &save); l && rc == EXIT_PASS; l = strtok_r(NULL, "\n", &save))
        rc = add_open(r, l);
    return rc;
}

int main(int argc, char **argv)
{
    int a = 1;
    bool verbose = false, full = false;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-v"))
            verbose = true;
        else if (!strcmp(argv[a], "--full"))
            full = true;
        else
            break;
    }
    if (argc - a < 2) {
        fprintf(stderr, "usage: %s [-v] [--full] POLICY [r:|w:|u:]PATH... [@FILE]\n", PROG);
        return EXIT_SETUP;
    }
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "%s: getcwd: %s\n", PROG, strerror(errno));
        return EXIT_SETUP;
    }
    const char *home = getenv("HOME");
    struct vg_places places = {home && home[0] == '/' ? home : "/root", cwd, "/tmp"};
    struct vg_err err = {{0}};
    struct vg_policy *pol = vg_policy_load(argv[a], &err);
    if (!pol || vg_policy_compile(pol, &places, &err)) {
        fprintf(stderr, "%s: %s\n", PROG, err.msg);
        vg_policy_free(pol);
        return EXIT_SETUP;
    }
    struct vg_lsm_trie trie;
    if (vg_lsm_compile(pol, &trie, &err)) {
        fprintf(stderr, "%s: not exact in the kernel (the notify engine would run): %s\n", PROG, err.msg);
        vg_policy_free(pol);
        return EXIT_NO_LSM;
    }
    struct run *r = calloc(1, sizeof *r);
    if (!r) {
        vg_lsm_trie_free(&trie);
        vg_policy_free(pol);
        return EXIT_SETUP;
    }
    *r = (struct run){.pol = pol, .trie = &trie, .pid = (unsigned)getpid(), .full = full};
    char *list = NULL;
    int rc = EXIT_PASS;
    for (int i = a + 1; i < argc && rc == EXIT_PASS; i++)
        rc = argv[i][0] == '@' ? add_list(r, argv[i] + 1, &list) : add_open(r, argv[i]);
    if (rc == EXIT_PASS)
        rc = load_and_run(r, verbose);
    for (int i = 0; i < r->nopen; i++) {
        free(r->open[i].deleted);
        if (r->open[i].fd >= 0)
            close(r->open[i].fd);
    }
    free(list);
    free(r);
    vg_lsm_trie_free(&trie);
    vg_policy_free(pol);
    return rc;
}
