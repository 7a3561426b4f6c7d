/* test_viewer_model.c: the viewer's model without a terminal: indexing,
 * per-record metadata, filters, search, the process tree, the summary
 * statistics, the detail and summary text, replay arithmetic, follow mode
 * (appended records, a record cut in half), and damaged logs. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "event/reader.h"
#include "event/writer.h"
#include "viewer/view_filter.h"
#include "viewer/model.h"
#include "viewer/replay.h"
#include "viewer/report.h"

static char tmpdir[] = "/tmp/test_viewer_model.XXXXXX";

/* ---- a small run: two processes, every kind of record ---- */
static const char *const cand_argv[] = {"python3", "x.py"};
static const char *const curl_argv[] = {"curl", "-s", "https://example.com/"};
static const char *const ro[] = {"O_RDONLY"};
static const struct vg_frame frames[] = {
    {0x7f0000001234ull, "/lib/libc.so.6", "open64", 0x1b},
    {0x401000, "/usr/bin/python3", NULL, 0},
};
static const struct vg_limit_rec limits[] = {{"time", 60000, "supervisor"},
                                             {"memory", 512ull << 20, "rlimit"}};
static const struct vg_count counts[] = {{VG_CLASS_READ, VG_DEC_ALLOW, 1}};

enum { N_RECORDS = 15 };

static struct vg_record header(void)
{
    struct vg_record r = {.type = VG_REC_HEADER};
    r.u.header = (struct vg_header){
        .format = VG_FORMAT_VERSION, .vigil_version = "0.1.0", .kernel = "6.1",
        .argv = cand_argv, .argc = 2, .cwd = "/work", .mode = "enforce", .engine = "ptrace",
        .policy_path = "p.policy", .policy_text = "version 1\ndeny read ~/.ssh/**\n",
        .limits = limits, .nlimits = 2,
    };
    return r;
}

static struct vg_record proc(enum vg_proc_kind k, uint64_t id, uint64_t parent, int32_t pid,
                             uint64_t ts)
{
    struct vg_record r = {.type = VG_REC_PROC};
    r.u.proc = (struct vg_proc_ev){.ts_ns = ts, .kind = k, .pid = pid, .hpid = pid + 1000,
                                   .proc = id, .parent = parent, .ppid = parent ? 1 : 0};
    if (k == VG_PROC_EXEC) {
        r.u.proc.exe = id == 1 ? "/usr/bin/python3" : "/usr/bin/curl";
        r.u.proc.argv = id == 1 ? cand_argv : curl_argv;
        r.u.proc.argc = id == 1 ? 2 : 3;
    }
    if (k == VG_PROC_EXIT && id == 2)
        r.u.proc.exit_code = -1, r.u.proc.signal = 9;
    return r;
}

static struct vg_record sys(const char *name, enum vg_class cls, enum vg_decision d, uint64_t id,
                            const char *path, uint64_t ts)
{
    struct vg_record r = {.type = VG_REC_SYSCALL};
    struct vg_syscall_ev *s = &r.u.sys;
    *s = (struct vg_syscall_ev){.ts_ns = ts, .pid = (int32_t)id, .tid = (int32_t)id,
                                .proc = id, .name = name, .cls = cls, .decision = d,
                                .rule.text = "default deny"};
    s->args.flags = s->args.mode = -1;
    s->args.port = -1;
    s->args.path = path;
    if (d != VG_DEC_ALLOW) {
        s->rule.file = "p.policy";
        s->rule.line = 2;
        s->rule.text = "deny read ~/.ssh/**";
        s->err = 13;
        s->stack = frames;
        s->nstack = 2;
    }
    if (cls == VG_CLASS_READ) {
        s->args.flag_names = ro;
        s->args.nflags = 1;
        s->args.flags = 0;
    }
    return r;
}

static struct vg_record connect_rec(uint64_t ts)
{
    struct vg_record r = sys("connect", VG_CLASS_CONNECT, VG_DEC_DENY, 2, NULL, ts);
    r.u.sys.args.family = "inet";
    r.u.sys.args.proto = "tcp";
    r.u.sys.args.addr = "93.184.216.34";
    r.u.sys.args.port = 443;
    return r;
}

/* The records of the run, in order; ts in milliseconds apart. */
static struct vg_record nth(int i)
{
    const uint64_t ms = 1000000;
    switch (i) {
    case 0: return header();
    case 1: return proc(VG_PROC_START, 1, 0, 1, 0);
    case 2: return proc(VG_PROC_EXEC, 1, 0, 1, 1 * ms);
    case 3: return sys("openat", VG_CLASS_READ, VG_DEC_ALLOW, 1, "/work/x.py", 2 * ms);
    case 4: return sys("openat", VG_CLASS_READ, VG_DEC_DENY, 1, "/home/u/.ssh/id_rsa", 3 * ms);
    case 5: return proc(VG_PROC_START, 2, 1, 2, 4 * ms);
    case 6: return proc(VG_PROC_EXEC, 2, 1, 2, 5 * ms);
    case 7: return connect_rec(6 * ms);
    case 8: return sys("openat", VG_CLASS_WRITE, VG_DEC_WOULD_DENY, 2, "/etc/passwd", 7 * ms);
    case 9: return sys("openat", VG_CLASS_READ, VG_DEC_DENY, 2, "/home/u/.ssh/id_rsa", 8 * ms);
    case 10: {
        struct vg_record r = {.type = VG_REC_NOTE};
        r.u.note = (struct vg_note_ev){.ts_ns = 9 * ms, .what = "limit", .detail = "procs", .pid = 2};
        return r;
    }
    case 11: return proc(VG_PROC_EXIT, 2, 1, 2, 10 * ms);
    case 12: return sys("mount", VG_CLASS_SYSTEM, VG_DEC_KILL, 1, NULL, 11 * ms);
    case 13: return proc(VG_PROC_EXIT, 1, 0, 1, 12 * ms);
    default: {
        struct vg_record r = {.type = VG_REC_TRAILER};
        r.u.trailer = (struct vg_trailer){.ts_ns = 13 * ms, .status = "ok", .elapsed_ns = 13 * ms,
                                          .events = 14, .counts = counts, .ncounts = 1};
        return r;
    }
    }
}

/* Write records [0, n) to path; returns the byte offset after each. */
static void write_log(const char *path, int n, uint64_t *ends)
{
    struct vg_err err;
    struct vg_log *log = vg_log_create(path, &err);
    if (!log)
        abort();
    for (int i = 0; i < n; i++) {
        struct vg_record r = nth(i);
        if (vg_log_write(log, &r) < 0)
            abort();
        struct stat st;
        if (ends && stat(path, &st) == 0)
            ends[i] = (uint64_t)st.st_size;  /* one write(2) per record */
    }
    vg_log_close(log);
}

static char *path_of(const char *name)
{
    return vg_xasprintf("%s/%s", tmpdir, name);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    struct vg_err err;
    return (uint8_t *)vg_read_file(path, 1 << 26, len, &err);
}

static void spit(const char *path, const void *p, size_t n, int flags)
{
    int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);
    if (fd < 0 || vg_write_all(fd, p, n) < 0)
        abort();
    close(fd);
}

static bool lines_have(const struct vw_lines *l, const char *needle)
{
    for (size_t i = 0; i < l->n; i++)
        if (strstr(l->v[i].text, needle))
            return true;
    return false;
}

static struct vw_model *open_ok(const char *path, bool follow)
{
    struct vg_err err = {{0}};
    struct vw_model *m = vw_model_open(path, follow, &err);
    if (!m)
        fprintf(stderr, "open %s: %s\n", path, err.msg);
    return m;
}

/* The run of nth(), written once by test_index. */
static struct vw_model *open_run(void)
{
    char *path = path_of("run.log");
    struct vw_model *m = open_ok(path, false);
    free(path);
    return m;
}

/* ---- tests ---- */

static void test_index(void)
{
    char *path = path_of("run.log");
    write_log(path, N_RECORDS, NULL);
    struct vw_model *m = open_ok(path, false);
    if (!CHECK(m)) {
        free(path);
        return;
    }
    CHECK(m->n == N_RECORDS);
    CHECK(m->has_header && m->has_trailer && m->tail == VW_TAIL_CLEAN);
    CHECK(m->meta[0].type == VG_REC_HEADER && m->meta[0].off == 0);
    CHECK(m->meta[4].type == VG_REC_SYSCALL && m->meta[4].cls == VG_CLASS_READ &&
          m->meta[4].decision == VG_DEC_DENY && m->meta[4].pid == 1 && m->meta[4].proc == 1 &&
          m->meta[4].ts_ns == 3000000);
    CHECK(m->meta[10].type == VG_REC_NOTE && m->meta[10].pid == 2);
    CHECK(m->meta[N_RECORDS - 1].type == VG_REC_TRAILER);
    for (size_t i = 1; i < m->n; i++)
        CHECK(m->meta[i].off == m->meta[i - 1].off + m->meta[i - 1].len);
    CHECK(strstr(vw_model_summary(m, 4), "/home/u/.ssh/id_rsa") != NULL);
    CHECK(strstr(vw_model_summary(m, 7), "93.184.216.34:443") != NULL);
    char warn[256];
    vw_model_warning(m, false, warn, sizeof warn);
    CHECK(warn[0] == 0);
    /* Decoding on demand, through the cache, gives back the same record. */
    struct vg_err err;
    const struct vg_record *r = vw_model_record(m, 7, &err);
    CHECK(r && r->type == VG_REC_SYSCALL && r->u.sys.args.port == 443);
    for (size_t i = 0; i < m->n; i++)
        CHECK(vw_model_record(m, i, &err) != NULL);
    r = vw_model_record(m, 7 + VW_CACHE_SLOTS, &err);
    CHECK(r == NULL);  /* past the end */
    r = vw_model_record(m, 4, &err);
    CHECK(r && !strcmp(r->u.sys.args.path, "/home/u/.ssh/id_rsa"));
    vw_model_close(m);
    free(path);
}

static size_t count_rows(struct vw_model *m, struct vw_filter *f)
{
    struct vw_rows rows = {0};
    vw_rows_rebuild(&rows, m, f);
    size_t n = rows.n;
    vw_rows_free(&rows);
    return n;
}

static void test_filters(void)
{
    struct vw_model *m = open_run();
    if (!CHECK(m))
        return;
    struct vw_filter f = {.cls = -1};
    CHECK(!vw_filter_active(&f) && count_rows(m, &f) == N_RECORDS);
    f.decisions = VW_REFUSED_MASK;  /* deny x2 (read), deny connect, would-deny, kill */
    CHECK(count_rows(m, &f) == 5);
    f.cls = VG_CLASS_READ;
    CHECK(count_rows(m, &f) == 2);
    f.decisions = 0;
    CHECK(count_rows(m, &f) == 3);
    f = (struct vw_filter){.cls = -1, .proc = 2, .pid = 2};
    /* start, exec, connect, write, read, note (by pid), exit */
    CHECK(count_rows(m, &f) == 7);
    f = (struct vw_filter){.cls = -1, .text = "id_rsa"};
    CHECK(count_rows(m, &f) == 2);
    f.text = "ID_RSA";  /* a capital: case matters */
    CHECK(count_rows(m, &f) == 0);
    f.text = "Id_rsa";
    CHECK(count_rows(m, &f) == 0);
    f.text = "passwd";
    CHECK(count_rows(m, &f) == 1);
    char d[128];
    f = (struct vw_filter){.decisions = VW_REFUSED_MASK, .cls = VG_CLASS_READ, .proc = 2,
                           .pid = 2, .text = "ssh"};
    vw_filter_describe(&f, d, sizeof d);
    CHECK(!strcmp(d, "denials class=read pid=2 text='ssh'"));
    f = (struct vw_filter){.cls = -1};
    vw_filter_describe(&f, d, sizeof d);
    CHECK(!strcmp(d, "none"));

    /* Search and next/previous denial wrap around the shown rows. */
    struct vw_rows rows = {0};
    vw_rows_rebuild(&rows, m, &f);
    CHECK(vw_find_text(m, &rows, rows.n, 0, 1, "id_rsa") == 4);
    CHECK(vw_find_text(m, &rows, rows.n, 4, 1, "id_rsa") == 9);
    CHECK(vw_find_text(m, &rows, rows.n, 9, 1, "id_rsa") == 4);
    CHECK(vw_find_text(m, &rows, rows.n, 4, -1, "id_rsa") == 9);
    CHECK(vw_find_text(m, &rows, rows.n, 0, 1, "nothing like this") == -1);
    CHECK(vw_find_text(m, &rows, 5, 4, 1, "id_rsa") == 4);  /* only 5 rows shown */
    CHECK(vw_find_refused(m, &rows, rows.n, 0, 1) == 4);
    CHECK(vw_find_refused(m, &rows, rows.n, 4, 1) == 7);
    CHECK(vw_find_refused(m, &rows, rows.n, 4, -1) == 12);
    CHECK(vw_rows_upto(&rows, 5) == 5 && vw_rows_lower(&rows, 100) == rows.n);
    vw_rows_free(&rows);
    vw_model_close(m);
}

static void test_tree_and_stats(void)
{
    struct vw_model *m = open_run();
    if (!CHECK(m))
        return;
    const struct vw_proctree *t = &m->tree;
    CHECK(t->n == 2);
    const struct vw_proc *p1 = vw_tree_find(t, 1), *p2 = vw_tree_find(t, 2);
    if (!CHECK(p1 && p2))
        return;
    CHECK(p2->parent == 1 && p2->pid == 2 && p2->started && p2->exited);
    CHECK(p2->sig == 9 && p2->nexec == 1 && !strcmp(p2->execs[0].exe, "/usr/bin/curl"));
    CHECK(!strcmp(vw_proc_cmd(p2), "curl -s https://example.com/"));
    CHECK(!strcmp(vw_proc_cmd(p1), "python3 x.py"));
    CHECK(p1->denials == 2 && p1->events == 3 && p2->denials == 3 && p2->events == 3);
    CHECK(p1->exited && p1->exit_code == 0 && p1->exit_ns == 12000000);
    struct vw_lines l = {0};
    vw_tree_lines(t, &l, false);
    CHECK(l.n == 2 && l.v[0].ref == 1 && l.v[1].ref == 2);
    CHECK(l.n == 2 && strstr(l.v[0].text, "pid 1") && strstr(l.v[0].text, "python3 x.py") &&
          strstr(l.v[0].text, "exit 0") && strstr(l.v[0].text, "2/3 denied"));
    CHECK(l.n == 2 && !strncmp(l.v[1].text, "`- pid 2", 8) && strstr(l.v[1].text, "signal 9") &&
          strstr(l.v[1].text, "curl -s https://example.com/"));
    vw_lines_clear(&l);

    const struct vw_stats *s = &m->stats;
    CHECK(s->counts[VG_CLASS_READ][VG_DEC_ALLOW] == 1 && s->counts[VG_CLASS_READ][VG_DEC_DENY] == 2);
    CHECK(s->counts[VG_CLASS_SYSTEM][VG_DEC_KILL] == 1);
    CHECK(s->denied_paths.n == 2 && s->destinations.n == 1 && s->programs.n == 2);
    const struct vw_strent **v = vw_strtab_sorted(&s->denied_paths, 1);
    CHECK(!strcmp(v[0]->s, "/home/u/.ssh/id_rsa") && v[0]->n == 2);
    free(v);
    CHECK(!strcmp(s->destinations.ents[0].s, "connect tcp 93.184.216.34:443") &&
          s->destinations.ents[0].denied == 1);

    vw_report_summary(m, false, &l);
    CHECK(lines_have(&l, "python3 x.py"));
    CHECK(lines_have(&l, "60s") && lines_have(&l, "512 MiB"));
    CHECK(lines_have(&l, "ended     ok"));
    CHECK(lines_have(&l, "/home/u/.ssh/id_rsa"));
    CHECK(lines_have(&l, "connect tcp 93.184.216.34:443"));
    CHECK(lines_have(&l, "/usr/bin/curl"));
    CHECK(lines_have(&l, "limit: procs"));
    vw_lines_clear(&l);

    struct vg_err err;
    const struct vg_record *r = vw_model_record(m, 4, &err);
    if (CHECK(r)) {
        vw_report_record(r, &l);
        CHECK(lines_have(&l, "deny read ~/.ssh/**"));
        CHECK(lines_have(&l, "p.policy:2"));
        CHECK(lines_have(&l, "EACCES"));
        CHECK(lines_have(&l, "/lib/libc.so.6  open64+0x1b"));
        CHECK(lines_have(&l, "stack (2 frames)"));
        vw_lines_clear(&l);
    }
    r = vw_model_record(m, 0, &err);
    if (CHECK(r)) {
        vw_report_record(r, &l);
        CHECK(lines_have(&l, "python3 x.py") && lines_have(&l, "deny read ~/.ssh/**"));
        vw_lines_clear(&l);
    }
    vw_model_close(m);
}

static void test_damaged(void)
{
    uint64_t ends[N_RECORDS];
    char *path = path_of("cut.log");
    write_log(path, N_RECORDS - 1, ends);  /* no trailer */
    size_t len;
    uint8_t *raw = slurp(path, &len);
    /* Cut the last record in half, like a killed supervisor. */
    size_t cut = ends[N_RECORDS - 3] + (ends[N_RECORDS - 2] - ends[N_RECORDS - 3]) / 2;
    spit(path, raw, cut, O_TRUNC);
    struct vw_model *m = open_ok(path, false);
    if (CHECK(m)) {
        char warn[256], want[64];
        CHECK(m->n == N_RECORDS - 2 && m->tail == VW_TAIL_PARTIAL && !m->has_trailer);
        vw_model_warning(m, false, warn, sizeof warn);
        snprintf(want, sizeof want, "truncated at byte %llu: no trailer",
                 (unsigned long long)ends[N_RECORDS - 3]);
        CHECK(!strcmp(warn, want));
        vw_model_warning(m, true, warn, sizeof warn);
        CHECK(warn[0] == 0);  /* following: no trailer yet is normal */
        vw_model_close(m);
    }
    /* Garbage in the middle: everything before it, and a warning. */
    uint8_t junk[] = {0xc1, 0xc1, 0xc1};
    spit(path, raw, ends[5], O_TRUNC);
    spit(path, junk, sizeof junk, O_APPEND);
    spit(path, raw + ends[5], len - ends[5], O_APPEND);
    m = open_ok(path, false);
    if (CHECK(m)) {
        char warn[256], want[64];
        CHECK(m->n == 6 && m->tail == VW_TAIL_CORRUPT);
        vw_model_warning(m, false, warn, sizeof warn);
        snprintf(want, sizeof want, "corrupt at byte %llu", (unsigned long long)ends[5]);
        CHECK(!strncmp(warn, want, strlen(want)));
        vw_model_close(m);
    }
    /* A msgpack map that is no vigil record, in the middle: a row of its
     * own, a warning, and the rest still shown. */
    static const uint8_t odd[] = {0x81, 0xa4, 't', 'y', 'p', 'e', 0x05};  /* {"type": 5} */
    spit(path, raw, ends[5], O_TRUNC);
    spit(path, odd, sizeof odd, O_APPEND);
    spit(path, raw + ends[5], len - ends[5], O_APPEND);
    m = open_ok(path, false);
    if (CHECK(m)) {
        char warn[512];
        CHECK(m->n == N_RECORDS && m->meta[6].type == VW_TYPE_BAD);
        CHECK(m->meta[7].type == VG_REC_PROC && m->meta[8].type == VG_REC_SYSCALL);
        vw_model_warning(m, false, warn, sizeof warn);
        CHECK(strstr(warn, "1 undecodable (first at byte") != NULL);
        CHECK(strstr(vw_model_summary(m, 6), "undecodable record") != NULL);
        vw_model_close(m);
    }
    free(raw);
    free(path);
}

static void test_not_a_log(void)
{
    char *path = path_of("junk");
    struct vg_err err = {{0}};
    spit(path, "", 0, O_TRUNC);
    CHECK(vw_model_open(path, false, &err) == NULL && strstr(err.msg, "empty file"));
    struct vw_model *m = vw_model_open(path, true, &err);  /* a run that just began */
    CHECK(m && m->n == 0);
    vw_model_close(m);
    spit(path, "hello world\n", 12, O_TRUNC);
    CHECK(vw_model_open(path, false, &err) == NULL && strstr(err.msg, "not a vigil log"));
    static const uint8_t map[] = {0x81, 0xa1, 'a', 0x01};
    spit(path, map, sizeof map, O_TRUNC);
    CHECK(vw_model_open(path, true, &err) == NULL && strstr(err.msg, "not a vigil log"));
    /* A log that starts with anything but the header is not one either. */
    char *other = path_of("nohdr.log");
    uint64_t ends[4];
    write_log(other, 4, ends);
    size_t len;
    uint8_t *raw = slurp(other, &len);
    spit(path, raw + ends[0], len - ends[0], O_TRUNC);
    CHECK(vw_model_open(path, false, &err) == NULL && strstr(err.msg, "not a header"));
    CHECK(vw_model_open("/nonexistent/x.log", false, &err) == NULL &&
          strstr(err.msg, "No such file"));
    CHECK(vw_model_open(tmpdir, false, &err) == NULL && (strstr(err.msg, "not a regular file") || strstr(err.msg, "is a directory")));
    free(raw);
    free(other);
    free(path);
}

static void test_follow(void)
{
    uint64_t ends[N_RECORDS];
    char *full = path_of("full.log"), *path = path_of("grow.log");
    write_log(full, N_RECORDS, ends);
    size_t len;
    uint8_t *raw = slurp(full, &len);
    spit(path, raw, ends[3], O_TRUNC);
    struct vw_model *m = open_ok(path, true);
    if (!CHECK(m))
        return;
    struct vg_err err;
    CHECK(m->n == 4 && vw_model_refresh(m, &err) == 0);
    /* Half a record: nothing new yet, and no complaint. */
    size_t mid = ends[6] + (ends[7] - ends[6]) / 2;
    spit(path, raw + ends[3], mid - ends[3], O_APPEND);
    CHECK(vw_model_refresh(m, &err) == 3 && m->n == 7 && m->tail == VW_TAIL_PARTIAL);
    spit(path, raw + mid, len - mid, O_APPEND);
    CHECK(vw_model_refresh(m, &err) == N_RECORDS - 7 && m->n == N_RECORDS);
    CHECK(m->tail == VW_TAIL_CLEAN && m->has_trailer);
    /* Everything derived grew with it. */
    CHECK(m->tree.n == 2 && m->stats.destinations.n == 1);
    struct vw_filter f = {.decisions = VW_REFUSED_MASK, .cls = -1};
    struct vw_rows rows = {0};
    vw_rows_rebuild(&rows, m, &f);
    CHECK(rows.n == 5 && rows.scanned == N_RECORDS);
    vw_rows_free(&rows);
    /* A file cut shorter under us is noticed, not read past its end. */
    CHECK(truncate(path, (off_t)ends[2]) == 0);
    CHECK(vw_model_refresh(m, &err) == 0 && m->shrank);
    CHECK(vw_model_record(m, 10, &err) == NULL);
    char warn[256];
    vw_model_warning(m, true, warn, sizeof warn);
    CHECK(strstr(warn, "file shrank") != NULL);
    vw_model_close(m);
    free(raw);
    free(full);
    free(path);
}

static void test_replay(void)
{
    struct vw_model *m = open_run();
    if (!CHECK(m))
        return;
    struct vw_replay r;
    vw_replay_init(&r);
    CHECK(vw_replay_speed(&r) == 1 && vw_replay_visible(&r, m) == N_RECORDS);
    const uint64_t ms = 1000000, t0 = 5000 * ms;
    vw_replay_toggle(&r, m, 0, t0);
    CHECK(r.active && r.playing && vw_replay_visible(&r, m) == 1);
    vw_replay_tick(&r, m, t0 + 1 * ms);  /* log time 1 ms: records with ts <= 1 ms */
    CHECK(vw_replay_visible(&r, m) == 3);
    vw_replay_toggle(&r, m, 0, t0 + 2 * ms);  /* pause: the clock stops */
    vw_replay_tick(&r, m, t0 + 50 * ms);
    CHECK(!r.playing && vw_replay_visible(&r, m) == 3);
    vw_replay_step(&r, m, 0);
    CHECK(vw_replay_visible(&r, m) == 4 && r.clock_ns == 2 * ms);
    CHECK(vw_replay_faster(&r, 1) && vw_replay_speed(&r) == 2);
    vw_replay_toggle(&r, m, 0, t0 + 100 * ms);
    vw_replay_tick(&r, m, t0 + 102 * ms);  /* 2 ms at 2x: log time 6 ms */
    CHECK(vw_replay_visible(&r, m) == 8);
    vw_replay_tick(&r, m, t0 + 200 * ms);
    CHECK(!r.active && vw_replay_visible(&r, m) == N_RECORDS);  /* done: all shown */
    for (int i = 0; i < 10; i++)
        vw_replay_faster(&r, 1);
    CHECK(vw_replay_speed(&r) == 64 && !vw_replay_faster(&r, 1));
    for (int i = 0; i < 10; i++)
        vw_replay_faster(&r, -1);
    CHECK(vw_replay_speed(&r) == 0.25);
    /* Starting from the middle hides what follows the selection. */
    vw_replay_toggle(&r, m, 7, t0);
    CHECK(vw_replay_visible(&r, m) == 8 && r.clock_ns == 6 * ms);
    vw_model_close(m);
}

static void test_strtab(void)
{
    struct vw_strtab t = {0};
    for (int i = 0; i < 1000; i++) {
        char s[16];
        snprintf(s, sizeof s, "s%d", i % 100);
        vw_strtab_add(&t, s, i % 3 == 0);
    }
    CHECK(t.n == 100);
    const char *a = vw_strtab_intern(&t, "s7")->s;
    CHECK(a == vw_strtab_intern(&t, "s7")->s && t.n == 100);
    vw_strtab_add(&t, "s42", 0);
    const struct vw_strent **v = vw_strtab_sorted(&t, 0);
    CHECK(!strcmp(v[0]->s, "s42") && v[0]->n == 11);
    free(v);
    vw_strtab_free(&t);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_index();
    test_filters();
    test_tree_and_stats();
    test_damaged();
    test_not_a_log();
    test_follow();
    test_replay();
    test_strtab();
    check_rmtree(tmpdir);
    return check_done();
}
