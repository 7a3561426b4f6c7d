/* test_event.c: the run log round trip (writer -> reader), and the reader
 * against hostile input: every truncation, every flipped byte, lying
 * length headers, deep nesting, unknown types; plus disk-full writes and
 * the text/JSON presentation. */
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "event/reader.h"
#include "tests/unit/check.h"
#include "event/writer.h"


static char tmpdir[] = "/tmp/test_event.XXXXXX";
static char *tmp_path(const char *name) { return vg_xasprintf("%s/%s", tmpdir, name); }

/* ---- fixtures: records with every field set ---- */
static const char *const argv3[] = {"curl", "-o", "x"};
static const char *const flags2[] = {"O_WRONLY", "O_CREAT"};
static const char *const envs[] = {"PATH", "HOME"};
static const struct vg_frame frames[] = {
    {0x7f0000001234ull, "/lib/libc.so.6", "openat", 20},
    {0x401000, "/usr/bin/python3", NULL, 0},
};
static const struct vg_limit_rec limits[] = {{"time", 60000, "supervisor"}, {"memory", 1ull << 33, "rlimit"}};
static const struct vg_artifact arts[] = {{"/work/a.py", "ab12"}};
static const struct vg_kv resolved[] = {{"example.com", "93.184.216.34"}, {"b", ""}};
static const char *const scratch2[] = {"/tmp", "/dev/shm"};
static const struct vg_count counts[] = {{VG_CLASS_READ, VG_DEC_ALLOW, 5}, {VG_CLASS_SYSTEM, VG_DEC_WOULD_KILL, 1}};

static struct vg_record full_header(void)
{
    struct vg_record r = {.type = VG_REC_HEADER};
    struct vg_header *h = &r.u.header;
    *h = (struct vg_header){VG_FORMAT_VERSION, "0.1.0", 1700000000123456789ull, 99, "6.1.0 #1",
                            argv3, 3, "/work", 2000000001u, "task-1", "enforce", "ptrace", "p.policy",
                            "cafe", "version 1\ndefault deny\n", limits, 2, arts, 1, resolved, 2, NULL,
                            scratch2, 2, "py312", "sha256:00ff", NULL};
    return r;
}

static struct vg_record full_syscall(void)
{
    struct vg_record r = {.type = VG_REC_SYSCALL};
    struct vg_syscall_ev *e = &r.u.sys;
    e->ts_ns = 12345678;
    e->pid = 12; e->tid = 13; e->hpid = 4012; e->htid = 4013; e->proc = 7;
    e->nr = 257; e->name = "openat"; e->cls = VG_CLASS_WRITE;
    struct vg_args *a = &e->args;
    a->path = "x"; a->resolved = "/work/x"; a->path2 = "y"; a->resolved2 = "/work/y";
    a->flags = 0101; a->flag_names = flags2; a->nflags = 2; a->mode = 0644;
    a->family = "inet6"; a->proto = "tcp"; a->addr = "::1"; a->port = 0;
    a->exe = "/usr/bin/curl"; a->argv = argv3; a->argc = 3; a->env_names = envs; a->nenv = 2;
    e->decision = VG_DEC_WOULD_DENY;
    e->rule.file = "/etc/vigil/default.policy"; e->rule.line = 14; e->rule.text = "deny write /work/**";
    e->err = -5; /* negative on purpose: the whole int range survives */
    e->stack = frames; e->nstack = 2;
    return r;
}

static struct vg_record full_proc(enum vg_proc_kind k)
{
    struct vg_record r = {.type = VG_REC_PROC};
    struct vg_proc_ev *p = &r.u.proc;
    p->ts_ns = 99; p->kind = k; p->pid = 3; p->hpid = 4003; p->proc = 3;
    p->parent = 1; p->ppid = 1; p->clone_flags = 0x11; p->thread = true;
    p->exe = "/bin/sh"; p->argv = argv3; p->argc = 3;
    p->exit_code = -1; p->signal = 9; p->core = true;
    return r;
}

static struct vg_record full_note(void)
{
    struct vg_record r = {.type = VG_REC_NOTE};
    r.u.note = (struct vg_note_ev){0, 5, "timeout", "time limit 60s reached", 3};
    return r;
}

static struct vg_record full_trailer(void)
{
    struct vg_record r = {.type = VG_REC_TRAILER};
    r.u.trailer = (struct vg_trailer){0, 500, "limit", 3, 9, "memory", 500, 4, counts, 2, {0}};
    return r;
}

/* ---- helpers ---- */
static struct vg_log *new_log(const char *name, char **path)
{
    struct vg_err err;
    *path = tmp_path(name);
    struct vg_log *log = vg_log_create(*path, &err);
    CHECK(log != NULL);
    return log;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    struct vg_err err;
    return (uint8_t *)vg_read_file(path, 1 << 26, len, &err);
}

static void spit(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || vg_write_all(fd, p, n) < 0)
        abort();
    close(fd);
}

/* Read every record of a file; returns how many; status/offset out. */
static int read_all(const char *path, struct vg_decoded *out, int max, int *last_rc,
                    enum vg_mp_status *st)
{
    struct vg_err err;
    struct vg_reader *r = vg_reader_open(path, &err);
    if (!r)
        return -1;
    int n = 0, rc;
    struct vg_decoded d;
    while ((rc = vg_reader_next(r, &d)) == 1) {
        if (n < max)
            out[n] = d;
        else
            vg_decoded_free(&d);
        n++;
    }
    *last_rc = rc;
    *st = vg_reader_status(r);
    vg_reader_close(r);
    return n;
}

static void json_of(const struct vg_record *r, struct vg_buf *b)
{
    b->len = 0;
    vg_record_json(r, b);
}

/* ---- round trip, all fields set ---- */
static void check_header(const struct vg_header *a, const struct vg_header *b)
{
    CHECK(a->format == b->format);
    CHECK_STR(a->vigil_version, b->vigil_version);
    CHECK(a->start_wall_ns == b->start_wall_ns && a->start_mono_ns == b->start_mono_ns);
    CHECK_STR(a->kernel, b->kernel);
    CHECK(a->argc == b->argc && b->argc == 3 && streq(b->argv[2], "x"));
    CHECK_STR(a->cwd, b->cwd);
    CHECK_STR(a->task_id, b->task_id);
    CHECK_STR(a->mode, b->mode);
    CHECK_STR(a->engine, b->engine);
    CHECK_STR(a->policy_path, b->policy_path);
    CHECK_STR(a->policy_sha256, b->policy_sha256);
    CHECK_STR(a->policy_text, b->policy_text);
    CHECK(b->nlimits == 2 && b->limits[1].value == 1ull << 33 && streq(b->limits[1].name, "memory") &&
          streq(b->limits[0].enforced_by, "supervisor"));
    CHECK(b->nartifacts == 1 && streq(b->artifacts[0].path, "/work/a.py") && streq(b->artifacts[0].sha256, "ab12"));
    CHECK(b->nresolved == 2 && streq(b->resolved[0].name, "example.com") &&
          streq(b->resolved[0].value, "93.184.216.34") && streq(b->resolved[1].value, ""));
    CHECK(b->nscratch == 2 && streq(b->scratch[0], "/tmp") && streq(b->scratch[1], "/dev/shm"));
    CHECK_STR(b->image_name, "py312");
    CHECK_STR(b->image_digest, "sha256:00ff");
    CHECK(b->host_uid == 2000000001u);
}

static void check_syscall(const struct vg_syscall_ev *a, const struct vg_syscall_ev *b)
{
    CHECK(a->seq == b->seq && a->ts_ns == b->ts_ns);
    CHECK(a->pid == b->pid && a->tid == b->tid && a->hpid == b->hpid && a->htid == b->htid);
    CHECK(a->proc == b->proc && a->nr == b->nr && a->cls == b->cls && a->decision == b->decision);
    CHECK_STR(a->name, b->name);
    const struct vg_args *x = &a->args, *y = &b->args;
    CHECK_STR(x->path, y->path);
    CHECK_STR(x->resolved, y->resolved);
    CHECK_STR(x->path2, y->path2);
    CHECK_STR(x->resolved2, y->resolved2);
    CHECK(x->flags == y->flags && x->mode == y->mode && x->port == y->port);
    CHECK(x->nflags == y->nflags);
    for (uint32_t i = 0; i < x->nflags && i < y->nflags; i++)
        CHECK_STR(x->flag_names[i], y->flag_names[i]);
    CHECK_STR(x->family, y->family);
    CHECK_STR(x->proto, y->proto);
    CHECK_STR(x->addr, y->addr);
    CHECK_STR(x->exe, y->exe);
    CHECK(x->argc == y->argc && x->nenv == y->nenv);
    for (uint32_t i = 0; i < x->argc && i < y->argc; i++)
        CHECK_STR(x->argv[i], y->argv[i]);
    for (uint32_t i = 0; i < x->nenv && i < y->nenv; i++)
        CHECK_STR(x->env_names[i], y->env_names[i]);
    CHECK_STR(a->rule.file, b->rule.file);
    CHECK(a->rule.line == b->rule.line);
    CHECK_STR(a->rule.text, b->rule.text);
    CHECK(a->err == b->err && a->nstack == b->nstack);
    for (uint32_t i = 0; i < a->nstack && i < b->nstack; i++) {
        CHECK(a->stack[i].pc == b->stack[i].pc);
        CHECK_STR(a->stack[i].module, b->stack[i].module);
        CHECK_STR(a->stack[i].symbol, b->stack[i].symbol);
        CHECK(a->stack[i].offset == b->stack[i].offset);
    }
}

static void test_roundtrip_full(void)
{
    char *path;
    struct vg_log *log = new_log("full.msgpack", &path);
    struct vg_record in[7] = {full_header(), full_syscall(), full_proc(VG_PROC_START),
                              full_proc(VG_PROC_EXEC), full_proc(VG_PROC_EXIT), full_note(),
                              full_trailer()};
    for (int i = 0; i < 7; i++)
        CHECK(vg_log_write(log, &in[i]) == 0);
    CHECK(vg_log_count(log) == 7);
    CHECK(in[1].u.sys.seq == 1 && in[6].u.trailer.seq == 6);  /* the writer numbered them */
    CHECK(vg_log_close(log) == 0);

    struct vg_decoded out[8];
    int rc;
    enum vg_mp_status st;
    CHECK(read_all(path, out, 8, &rc, &st) == 7);
    CHECK(rc == 0 && st == VG_MP_OK);
    for (int i = 0; i < 7; i++)
        CHECK(out[i].rec.type == in[i].type);
    check_header(&in[0].u.header, &out[0].rec.u.header);
    check_syscall(&in[1].u.sys, &out[1].rec.u.sys);
    /* kind-specific proc fields: start has parent/ppid/flags/thread, exit
     * has code/signal/core; exec has exe/argv */
    const struct vg_proc_ev *ps = &out[2].rec.u.proc, *pe = &out[3].rec.u.proc, *px = &out[4].rec.u.proc;
    CHECK(ps->kind == VG_PROC_START && ps->parent == 1 && ps->ppid == 1 && ps->clone_flags == 0x11 && ps->thread);
    CHECK(ps->pid == 3 && ps->hpid == 4003 && ps->proc == 3 && ps->seq == 2 && ps->ts_ns == 99);
    CHECK(pe->kind == VG_PROC_EXEC && streq(pe->exe, "/bin/sh") && pe->argc == 3 && streq(pe->argv[0], "curl"));
    CHECK(pe->parent == 0 && pe->exit_code == 0);   /* not an exit: code not written */
    CHECK(px->kind == VG_PROC_EXIT && px->exit_code == -1 && px->signal == 9 && px->core);
    const struct vg_note_ev *n = &out[5].rec.u.note;
    CHECK(n->seq == 5 && n->ts_ns == 5 && streq(n->what, "timeout") && streq(n->detail, "time limit 60s reached") && n->pid == 3);
    const struct vg_trailer *t = &out[6].rec.u.trailer;
    CHECK(t->seq == 6 && t->ts_ns == 500 && streq(t->status, "limit") && t->exit_code == 3 && t->signal == 9);
    CHECK(streq(t->limit, "memory") && t->elapsed_ns == 500 && t->events == 4 && t->ncounts == 2);
    CHECK(t->ncounts == 2 && t->counts[1].cls == VG_CLASS_SYSTEM && t->counts[1].decision == VG_DEC_WOULD_KILL &&
          t->counts[1].n == 1);

    /* decoding loses nothing the writer put out: same JSON both ways */
    struct vg_buf a = {0}, b = {0};
    for (int i = 0; i < 7; i++) {
        json_of(&in[i], &a);
        json_of(&out[i].rec, &b);
        if (!CHECK(!strcmp(a.data, b.data)))
            fprintf(stderr, "  in:  %s\n  out: %s\n", a.data, b.data);
        vg_decoded_free(&out[i]);
    }
    vg_buf_free(&a);
    vg_buf_free(&b);
    free(path);
}

/* ---- round trip, everything unset ---- */
static void test_roundtrip_unset(void)
{
    char *path;
    struct vg_log *log = new_log("unset.msgpack", &path);
    struct vg_record h = {.type = VG_REC_HEADER}, s = {.type = VG_REC_SYSCALL};
    s.u.sys.args.flags = s.u.sys.args.mode = -1;
    s.u.sys.args.port = -1;
    struct vg_record p = {.type = VG_REC_PROC}, n = {.type = VG_REC_NOTE}, t = {.type = VG_REC_TRAILER};
    CHECK(vg_log_write(log, &h) == 0 && vg_log_write(log, &s) == 0 && vg_log_write(log, &p) == 0 &&
          vg_log_write(log, &n) == 0 && vg_log_write(log, &t) == 0);
    CHECK(vg_log_close(log) == 0);

    size_t len;
    uint8_t *raw = slurp(path, &len);
    /* unset fields are left out, not written as nil ... */
    static const char *const absent[] = {"\xa4" "args", "\xa5" "errno", "\xa5" "stack", "\xa6" "policy",
                                         "\xa4" "argv", "\xa6" "limits", "\xa6" "counts", "\xa4" "what",
                                         "\xa7" "default", "\xa4" "core"};
    for (size_t i = 0; i < VG_ARRAY_LEN(absent); i++)
        CHECK(!memmem(raw, len, absent[i], strlen(absent[i])));
    /* ... except the rule, which is nil when the default decided */
    CHECK(memmem(raw, len, "\xa4rule\xc0", 6) != NULL);
    free(raw);

    struct vg_decoded out[5];
    int rc;
    enum vg_mp_status st;
    CHECK(read_all(path, out, 5, &rc, &st) == 5);
    const struct vg_syscall_ev *e = &out[1].rec.u.sys;
    CHECK(e->args.path == NULL && e->args.flags == -1 && e->args.mode == -1 && e->args.port == -1);
    CHECK(e->args.nflags == 0 && e->args.flag_names == NULL && e->rule.file == NULL && e->rule.text == NULL);
    CHECK(e->nstack == 0 && e->err == 0 && e->name == NULL);
    CHECK(out[0].rec.u.header.argc == 0 && out[0].rec.u.header.policy_text == NULL);
    CHECK(out[4].rec.u.trailer.ncounts == 0 && out[4].rec.u.trailer.status == NULL);
    for (int i = 0; i < 5; i++)
        vg_decoded_free(&out[i]);
    free(path);
}

/* A small but varied log: the fixture for the hostile-input tests. */
static uint8_t *small_log(size_t *len, size_t *ends, int *nrec)
{
    char *path;
    struct vg_log *log = new_log("small.msgpack", &path);
    struct vg_record in[] = {full_header(), full_syscall(), full_proc(VG_PROC_START), full_note(),
                             full_proc(VG_PROC_EXIT), full_trailer()};
    for (size_t i = 0; i < VG_ARRAY_LEN(in); i++)
        vg_log_write(log, &in[i]);
    vg_log_close(log);
    uint8_t *raw = slurp(path, len);
    /* record boundaries, found independently of the reader */
    size_t off = 0;
    *nrec = 0;
    while (off < *len) {
        size_t n;
        if (vg_mp_skip(raw + off, *len - off, &n) != VG_MP_OK)
            abort();
        off += n;
        ends[(*nrec)++] = off;
    }
    free(path);
    return raw;
}

static void test_truncation_everywhere(void)
{
    size_t len, ends[16];
    int nrec;
    uint8_t *raw = small_log(&len, ends, &nrec);
    CHECK(nrec == 6);
    char *path = tmp_path("cut.msgpack");
    int bad = 0;
    for (size_t cut = 0; cut <= len; cut++) {
        spit(path, raw, cut);
        int complete = 0;
        while (complete < nrec && ends[complete] <= cut)
            complete++;
        bool boundary = cut == 0 || (complete > 0 && ends[complete - 1] == cut);
        struct vg_decoded out[16];
        int rc;
        enum vg_mp_status st;
        int got = read_all(path, out, 16, &rc, &st);
        for (int i = 0; i < got && i < 16; i++)
            vg_decoded_free(&out[i]);
        if (got != complete || rc != 0 || st != (boundary ? VG_MP_OK : VG_MP_TRUNCATED))
            bad++;
    }
    CHECK(bad == 0);
    free(path);
    free(raw);
}

/* Decode a buffer the way the reader does, entirely in memory. */
static int scan_buffer(const uint8_t *p, size_t len, struct vg_buf *text)
{
    size_t off = 0, n;
    int records = 0;
    while (off < len && vg_mp_skip(p + off, len - off, &n) == VG_MP_OK) {
        struct vg_decoded d;
        struct vg_err err;
        if (vg_record_decode(p + off, n, &d, &err) == 0) {
            text->len = 0;
            vg_record_text(&d.rec, text, true);
            vg_record_json(&d.rec, text);
            vg_decoded_free(&d);
            records++;
        }
        off += n;
    }
    return records;
}

static void test_flipped_bytes(void)
{
    size_t len, ends[16];
    int nrec;
    uint8_t *raw = small_log(&len, ends, &nrec);
    uint8_t *mut = vg_xmalloc(len);
    struct vg_buf text = {0};
    static const uint8_t pokes[] = {0xff, 0x00, 0xdd, 0xdf, 0xc1, 0xdb, 0x80};
    long total = 0;
    for (size_t i = 0; i < len; i++) {
        for (size_t k = 0; k < sizeof pokes + 1; k++) {
            memcpy(mut, raw, len);
            mut[i] = k < sizeof pokes ? pokes[k] : (uint8_t)(raw[i] ^ 0x01);
            total += scan_buffer(mut, len, &text);
        }
    }
    CHECK(total > 0); /* and we are still here */
    /* one of them through the file reader too */
    char *path = tmp_path("flip.msgpack");
    memcpy(mut, raw, len);
    /* the first key's type byte, after the map's header (fixmap, or map
     * 16 for a record of more than 15 entries, its chain value among them) */
    mut[ends[1] + ((raw[ends[1]] & 0xf0) == 0x80 ? 1 : 3)] = 0xc1;
    spit(path, mut, len);
    int rc;
    enum vg_mp_status st;
    struct vg_decoded out[16];
    int got = read_all(path, out, 16, &rc, &st);
    CHECK(got == 2 && rc == -1 && st == VG_MP_CORRUPT);
    for (int i = 0; i < got; i++)
        vg_decoded_free(&out[i]);
    struct vg_err err;
    struct vg_reader *r = vg_reader_open(path, &err);
    struct vg_decoded d;
    while (vg_reader_next(r, &d) == 1)
        vg_decoded_free(&d);
    CHECK(vg_reader_offset(r) == ends[1]);
    CHECK(strstr(vg_reader_error(r), "0xc1") != NULL);
    vg_reader_close(r);
    vg_buf_free(&text);
    free(mut);
    free(raw);
    free(path);
}

static void test_lying_headers(void)
{
    /* an array claiming 2^32-1 elements: corrupt at once, nothing allocated */
    static const uint8_t big_arr[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01};
    size_t n;
    const char *why = NULL;
    CHECK(vg_mp_check(big_arr, sizeof big_arr, &n, &why) == VG_MP_CORRUPT && why);
    static const uint8_t big_map[] = {0xdf, 0xff, 0xff, 0xff, 0xff};
    CHECK(vg_mp_skip(big_map, sizeof big_map, &n) == VG_MP_CORRUPT);
    static const uint8_t big_str[] = {0xdb, 0xff, 0xff, 0xff, 0xff, 'a'};
    CHECK(vg_mp_skip(big_str, sizeof big_str, &n) == VG_MP_CORRUPT);
    /* plausible count, too few bytes: an unfinished record, not corrupt */
    static const uint8_t short_arr[] = {0xdc, 0x01, 0x00, 0x01, 0x02};
    CHECK(vg_mp_skip(short_arr, sizeof short_arr, &n) == VG_MP_TRUNCATED);
    /* handed straight to the decoder (no vg_mp_skip): still refused */
    static const uint8_t rec[] = {0x82, 0xa4, 't', 'y', 'p', 'e', 0xa4, 'n', 'o', 't', 'e',
                                  0xa6, 'd', 'e', 't', 'a', 'i', 'l', 0xdd, 0x7f, 0xff, 0xff, 0xff};
    struct vg_decoded d;
    struct vg_err err;
    CHECK(vg_record_decode(rec, sizeof rec, &d, &err) == -1);
    /* and as a file: the reader stops, saying where */
    char *path = tmp_path("lying.msgpack");
    spit(path, big_arr, sizeof big_arr);
    int rc;
    enum vg_mp_status st;
    struct vg_decoded out[1];
    CHECK(read_all(path, out, 1, &rc, &st) == 0 && rc == -1 && st == VG_MP_CORRUPT);
    free(path);
}

static void test_nesting(void)
{
    uint8_t buf[64];
    size_t n;
    memset(buf, 0x91, 32);      /* 32 nested one-element arrays ... */
    buf[32] = 0x01;             /* ... around a 1 */
    CHECK(vg_mp_skip(buf, 33, &n) == VG_MP_OK && n == 33);
    memset(buf, 0x91, 33);
    buf[33] = 0x01;
    CHECK(vg_mp_skip(buf, 34, &n) == VG_MP_CORRUPT);
    CHECK(vg_mp_skip(buf, 0, &n) == VG_MP_TRUNCATED);
    static const uint8_t scalars[] = {0xc0, 0xc3, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xd8, 1,
                                      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc7, 1, 5, 9};
    size_t off = 0, count = 0;
    while (off < sizeof scalars && vg_mp_skip(scalars + off, sizeof scalars - off, &n) == VG_MP_OK) {
        off += n;
        count++;
    }
    CHECK(off == sizeof scalars && count == 5);
}

/* Pack a record map by hand with msgpack-c: n key/value pairs. */
typedef void (*pack_fn)(msgpack_packer *pk);
static void pk_str(msgpack_packer *pk, const char *s)
{
    msgpack_pack_str(pk, strlen(s));
    msgpack_pack_str_body(pk, s, strlen(s));
}
static void pk_unknown_type(msgpack_packer *pk)
{
    msgpack_pack_map(pk, 3);
    pk_str(pk, "seq"); msgpack_pack_uint64(pk, 1);
    pk_str(pk, "type"); pk_str(pk, "telemetry");
    pk_str(pk, "ts"); msgpack_pack_uint64(pk, 1);
}
static void pk_future_note(msgpack_packer *pk)
{
    msgpack_pack_map(pk, 5);
    pk_str(pk, "what"); pk_str(pk, "warning");   /* "type" is not first */
    pk_str(pk, "type"); pk_str(pk, "note");
    pk_str(pk, "shiny_new_key"); msgpack_pack_array(pk, 2); msgpack_pack_nil(pk); msgpack_pack_double(pk, 1.5);
    pk_str(pk, "seq"); msgpack_pack_uint64(pk, 2);
    pk_str(pk, "ts"); msgpack_pack_uint64(pk, 7);
}
static void pk_bad_port(msgpack_packer *pk)
{
    msgpack_pack_map(pk, 2);
    pk_str(pk, "type"); pk_str(pk, "syscall");
    pk_str(pk, "args"); msgpack_pack_map(pk, 1); pk_str(pk, "port"); pk_str(pk, "443");
}

static void test_schema_evolution(void)
{
    char *path;
    struct vg_log *log = new_log("evolve.msgpack", &path);
    struct vg_record h = full_header();
    vg_log_write(log, &h);
    vg_log_close(log);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    pk_unknown_type(&pk);
    pk_future_note(&pk);
    size_t len;
    uint8_t *raw = slurp(path, &len);
    int fd = open(path, O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && vg_write_all(fd, sb.data, sb.size) == 0);
    close(fd);
    free(raw);
    /* the unknown record is skipped, the unknown key ignored */
    struct vg_decoded out[4];
    int rc;
    enum vg_mp_status st;
    CHECK(read_all(path, out, 4, &rc, &st) == 2 && rc == 0 && st == VG_MP_OK);
    CHECK(out[1].rec.type == VG_REC_NOTE && streq(out[1].rec.u.note.what, "warning") &&
          out[1].rec.u.note.seq == 2 && out[1].rec.u.note.ts_ns == 7);
    vg_decoded_free(&out[0]);
    vg_decoded_free(&out[1]);

    /* decoding the unknown type alone: -1, flagged as unknown */
    msgpack_sbuffer_clear(&sb);
    pk_unknown_type(&pk);
    struct vg_decoded d;
    struct vg_err err;
    CHECK(vg_record_decode((uint8_t *)sb.data, sb.size, &d, &err) == -1 && d.unknown_type);
    CHECK(strstr(err.msg, "telemetry") != NULL);
    /* a wrong type: -1, the message names the field */
    msgpack_sbuffer_clear(&sb);
    pk_bad_port(&pk);
    CHECK(vg_record_decode((uint8_t *)sb.data, sb.size, &d, &err) == -1 && !d.unknown_type);
    CHECK(strstr(err.msg, "args.port") != NULL && strstr(err.msg, "string") != NULL);
    msgpack_sbuffer_destroy(&sb);
    free(path);
}

static void test_follow(void)
{
    size_t len, ends[16];
    int nrec;
    uint8_t *raw = small_log(&len, ends, &nrec);
    char *path = tmp_path("follow.msgpack");
    size_t mid = ends[1] + (ends[2] - ends[1]) / 2;
    spit(path, raw, mid);
    struct vg_err err;
    struct vg_reader *r = vg_reader_open(path, &err);
    struct vg_decoded d;
    int got = 0;
    while (vg_reader_next(r, &d) == 1) {
        vg_decoded_free(&d);
        got++;
    }
    CHECK(got == 2 && vg_reader_status(r) == VG_MP_TRUNCATED && vg_reader_offset(r) == ends[1]);
    int fd = open(path, O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && vg_write_all(fd, raw + mid, len - mid) == 0);
    close(fd);
    while (vg_reader_next(r, &d) == 1) {
        vg_decoded_free(&d);
        got++;
    }
    CHECK(got == nrec && vg_reader_status(r) == VG_MP_OK && vg_reader_offset(r) == len);
    vg_reader_close(r);
    free(raw);
    free(path);
}

/* A record larger than the reader's window (a big policy text) still
 * reads back, whole or, cut short, as truncated. */
static void test_big_record(void)
{
    char *path;
    struct vg_log *log = new_log("big.msgpack", &path);
    size_t n = 300 * 1000;
    char *text = vg_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        text[i] = (char)('a' + i % 26);
    text[n] = 0;
    struct vg_record h = full_header(), t = full_trailer();
    h.u.header.policy_text = text;
    CHECK(vg_log_write(log, &h) == 0 && vg_log_write(log, &t) == 0 && vg_log_close(log) == 0);
    struct vg_decoded out[2];
    int rc;
    enum vg_mp_status st;
    CHECK(read_all(path, out, 2, &rc, &st) == 2 && rc == 0 && st == VG_MP_OK);
    CHECK(streq(out[0].rec.u.header.policy_text, text));
    vg_decoded_free(&out[0]);
    vg_decoded_free(&out[1]);
    CHECK(truncate(path, (off_t)n / 2) == 0);
    CHECK(read_all(path, out, 2, &rc, &st) == 0 && rc == 0 && st == VG_MP_TRUNCATED);
    free(text);
    free(path);
}

static void test_disk_full(void)
{
    struct vg_err err;
    /* a device is never opened by name: give the fd */
    CHECK(vg_log_create("/dev/full", &err) == NULL && strstr(err.msg, "not a regular file"));
    struct vg_log *log = vg_log_from_fd(open("/dev/full", O_WRONLY | O_CLOEXEC), "/dev/full");
    if (!CHECK(log != NULL))
        return;
    struct vg_record h = full_header(), s = full_syscall();
    CHECK(vg_log_write(log, &h) == -1);
    CHECK_STR(vg_log_error(log), "write /dev/full: No space left on device");
    CHECK(vg_log_write(log, &s) == -1);
    CHECK(vg_log_count(log) == 0);
    CHECK(vg_log_close(log) == -1);
    /* a closed fd: EBADF, same story */
    int fd = open("/dev/null", O_WRONLY);
    log = vg_log_from_fd(fd, "run.msgpack");
    close(fd);
    CHECK(vg_log_write(log, &h) == -1);
    CHECK_STR(vg_log_error(log), "write run.msgpack: Bad file descriptor");
    vg_log_close(log);
    CHECK(vg_log_create("/nonexistent/dir/x", &err) == NULL && strstr(err.msg, "/nonexistent/dir/x"));
}

/* The log cap never refuses a record: the one that reaches the room
 * left before the end's reserve is written whole, and from then on the
 * log says it is full (the supervisor ends the run; its end still fits). */
static void test_log_cap(void)
{
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    struct vg_log *log = vg_log_from_fd(fd, "capped.msgpack");
    if (!CHECK(log != NULL))
        return;
    struct vg_record s = full_syscall();
    CHECK(vg_log_write(log, &s) == 0);
    uint64_t one = vg_log_bytes(log);
    CHECK(one > 0 && !vg_log_full(log)); /* no cap set: never full */
    vg_log_cap(log, VG_LOG_END_RESERVE + 2 * one + one / 2);
    CHECK(!vg_log_full(log));
    CHECK(vg_log_write(log, &s) == 0 && !vg_log_full(log));
    CHECK(vg_log_write(log, &s) == 0 && vg_log_full(log)); /* crossed: written, and full */
    CHECK(vg_log_write(log, &s) == 0 && vg_log_count(log) == 4 && vg_log_bytes(log) == 4 * one);
    vg_log_close(log);
}

static void test_names(void)
{
    for (int i = 0; i < VG_CLASS_NCLASSES; i++)
        CHECK(vg_class_from_name(vg_class_name(i)) == i);
    for (int i = 0; i < VG_DEC_NDECISIONS; i++)
        CHECK(vg_decision_from_name(vg_decision_name(i)) == i);
    for (int i = 0; i < VG_REC_NTYPES; i++)
        CHECK(vg_rec_type_from_name(vg_rec_type_name(i)) == i);
    for (int i = 0; i < VG_PROC_NKINDS; i++)
        CHECK(vg_proc_kind_from_name(vg_proc_kind_name(i)) == i);
    CHECK_STR(vg_decision_name(VG_DEC_WOULD_DENY), "would-deny");
    CHECK(vg_class_from_name("READ") == -1 && vg_decision_from_name(NULL) == -1);
}

static void test_presentation(void)
{
    struct vg_record r = {.type = VG_REC_SYSCALL};
    struct vg_syscall_ev *e = &r.u.sys;
    static const char *const ro[] = {"O_RDONLY"};
    e->ts_ns = 12345678;
    e->pid = 12;
    e->name = "openat";
    e->cls = VG_CLASS_READ;
    e->args = (struct vg_args){.path = "/home/u/.ssh/id_rsa", .resolved = "/home/u/.ssh/id_rsa",
                               .flags = 0, .flag_names = ro, .nflags = 1, .mode = -1, .port = -1};
    e->decision = VG_DEC_DENY;
    e->rule.file = "/etc/vigil/default.policy";
    e->rule.line = 14;
    e->err = EACCES;
    struct vg_buf b = {0};
    vg_record_text(&r, &b, false);
    CHECK_STR(b.data, "+0.012345 [12] read    openat \"/home/u/.ssh/id_rsa\" O_RDONLY -> deny (default.policy:14) EACCES");
    b.len = 0;
    vg_record_text(&r, &b, true);
    CHECK(strstr(b.data, "\033[31mdeny\033[0m") != NULL);
    b.len = 0;
    vg_record_summary(&r, &b);
    CHECK_STR(b.data, "openat \"/home/u/.ssh/id_rsa\" O_RDONLY -> deny (default.policy:14) EACCES");

    /* a made-up name: escaped in text, valid JSON */
    e->args.path = e->args.resolved = "/tmp/\xff\x1b[2J\n";
    e->rule.file = NULL;
    e->decision = VG_DEC_WOULD_DENY;
    b.len = 0;
    vg_record_text(&r, &b, true);
    CHECK(strstr(b.data, "\"/tmp/\\xff\\x1b[2J\\n\"") && strstr(b.data, "\033[33mwould-deny\033[0m (default)"));
    CHECK(!strchr(b.data, '\n'));
    b.len = 0;
    vg_record_json(&r, &b);
    CHECK(strstr(b.data, "\"path\":\"/tmp/\\ufffd\\u001b[2J\\n\"") != NULL);
    CHECK(strstr(b.data, "\"rule\":null") && strstr(b.data, "\"type\":\"syscall\""));

    struct vg_record c = full_syscall();
    b.len = 0;
    vg_record_text(&c, &b, false);
    CHECK(strstr(b.data, "[12] write   openat /usr/bin/curl [\"curl\",\"-o\",\"x\"]") != NULL);

    struct vg_record p = full_proc(VG_PROC_START);
    p.u.proc.thread = false;
    b.len = 0;
    vg_record_text(&p, &b, false);
    CHECK_STR(b.data, "+0.000000 [3] proc    start 3 parent 1 (fork)");
    p = full_proc(VG_PROC_EXIT);
    b.len = 0;
    vg_record_text(&p, &b, false);
    CHECK_STR(b.data, "+0.000000 [3] proc    exit 3 signal SIGKILL (core dumped)");
    struct vg_record t = full_trailer();
    b.len = 0;
    vg_record_text(&t, &b, false);
    CHECK(strstr(b.data, "trailer limit exit 3 signal SIGKILL limit memory elapsed 0.000000s events 4 allow 5 would-kill 1"));
    vg_buf_free(&b);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
#if !defined(__SANITIZE_ADDRESS__)
    /* An absurd allocation (the 64 GB an array header can ask for) must
     * fail loudly here instead of quietly succeeding on overcommit. */
    struct rlimit rl = {1ull << 30, 1ull << 30};
    setrlimit(RLIMIT_AS, &rl);
#endif
    test_roundtrip_full();
    test_roundtrip_unset();
    test_truncation_everywhere();
    test_flipped_bytes();
    test_lying_headers();
    test_nesting();
    test_schema_evolution();
    test_follow();
    test_big_record();
    test_disk_full();
    test_log_cap();
    test_names();
    test_presentation();
    check_rmtree(tmpdir);
    return check_done();
}
