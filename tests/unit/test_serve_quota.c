/* test_serve_quota.c: serve/quota.c, admission against a user's quotas,
 * as a pure function of (quota, charges, now), and serve/request.c's
 * checks of a submitted run.  Each row is a situation and what a new run
 * gets: admitted with which grants, or refused by which quota and when it
 * may retry. */
#include "serve/quota.h"
#include "serve/request.h"
#include "tests/unit/check.h"

#define S 1000
#define MIN (60 * S)
#define H (60 * MIN)

struct prior {
    int64_t t_ms;            /* accepted at */
    uint64_t cpu_ms, wall_ms;
    bool ended;              /* settled (its charge is what it used) */
};

struct row {
    const char *what;
    const char *runs, *concurrent, *cpu, *wall, *stored;
    struct prior prior[6];
    unsigned nprior;
    uint64_t stored_bytes;
    int64_t now_ms;
    uint64_t want_cpu, want_wall;
    int refused;             /* -1: admitted */
    uint64_t got_cpu, got_wall; /* admitted: the grants */
    uint64_t retry_s;        /* refused: Retry-After */
};

static const struct row rows[] = {
    {"nothing used: the whole ask", "10/1h", "2", "10m/1h", "1h/1h", "1G", {{0}}, 0, 0,
     10 * S, 60 * S, 60 * S, -1, 60 * S, 60 * S, 0},
    {"the tenth run in the window still passes", "10/1h", "20", "1h/1h", "1h/1h", "1G",
     {{0, 1, 1, true}, {1, 1, 1, true}, {2, 1, 1, true}, {3, 1, 1, true}, {4, 1, 1, true},
      {5, 1, 1, true}}, 6, 0, 10 * S, S, S, -1, S, S, 0},
    {"runs: the window full, retry when the oldest leaves it", "6/1h", "20", "1h/1h", "1h/1h",
     "1G", {{1000, 1, 1, true}, {2000, 1, 1, true}, {3000, 1, 1, true}, {4000, 1, 1, true},
            {5000, 1, 1, true}, {6000, 1, 1, true}}, 6, 0, 10 * MIN, S, S, VG_Q_RUNS, 0, 0,
     (H + 1000 - 10 * MIN + 999) / 1000},
    {"runs: charges older than the window do not count", "1/1m", "20", "1h/1h", "1h/1h", "1G",
     {{0, 1, 1, true}}, 1, 0, MIN, S, S, -1, S, S, 0},
    {"concurrent: two running, a third refused", "10/1h", "2", "1h/1h", "1h/1h", "1G",
     {{0, S, S, false}, {1, S, S, false}}, 2, 0, 10, S, S, VG_Q_CONCURRENT, 0, 0, 1},
    {"cpu: what is left is granted, not more", "10/1h", "20", "10m/1h", "1h/1h", "1G",
     {{0, 9 * MIN, 9 * MIN, true}}, 1, 0, 10 * S, 5 * MIN, 5 * MIN, -1, MIN, 5 * MIN, 0},
    {"cpu: less than a second left refuses; retry when enough expires", "10/1h", "20",
     "10m/1h", "1h/1h", "1G", {{0, 5 * MIN, 1, true}, {10 * S, 5 * MIN - 500, 1, true}}, 2, 0,
     20 * S, MIN, MIN, VG_Q_CPU, 0, 0, (H - 20 * S + 999) / 1000},
    {"cpu: a run that asks less than a second may have it", "10/1h", "20", "10m/1h", "1h/1h",
     "1G", {{0, 10 * MIN - 400, 1, true}}, 1, 0, 1, 300, 300, -1, 300, 300, 0},
    {"a running run holds its whole grant", "10/1h", "20", "10m/1h", "1h/1h", "1G",
     {{0, 10 * MIN, 10 * MIN, false}}, 1, 0, 10, S, S, VG_Q_CPU, 0, 0, H / 1000},
    {"wall: granted what is left", "10/1h", "20", "1h/1h", "2m/1h", "1G",
     {{0, S, 90 * S, true}}, 1, 0, 10, MIN, MIN, -1, MIN, 30 * S, 0},
    {"stored: full refuses, and no wait helps", "10/1h", "20", "1h/1h", "1h/1h", "1M",
     {{0}}, 0, 1 << 20, 10, S, S, VG_Q_STORED, 0, 0, 0},
};

static void setup(const struct row *r, struct vg_quota *q, struct vg_usage *u)
{
    struct vg_err err;
    memset(q, 0, sizeof *q);
    memset(u, 0, sizeof *u);
    CHECK(vg_quota_parse(q, VG_Q_RUNS, r->runs, &err));
    CHECK(vg_quota_parse(q, VG_Q_CONCURRENT, r->concurrent, &err));
    CHECK(vg_quota_parse(q, VG_Q_CPU, r->cpu, &err));
    CHECK(vg_quota_parse(q, VG_Q_WALL, r->wall, &err));
    CHECK(vg_quota_parse(q, VG_Q_STORED, r->stored, &err));
    for (unsigned i = 0; i < r->nprior; i++) {
        char id[16];
        snprintf(id, sizeof id, "r%u", i);
        const struct prior *p = &r->prior[i];
        struct vg_grant g = {.cpu_ms = p->cpu_ms, .wall_ms = p->wall_ms};
        vg_usage_charge(u, id, p->t_ms, &g);
        if (p->ended)
            vg_usage_settle(u, id, p->cpu_ms, p->wall_ms);
    }
    u->stored = r->stored_bytes;
}

static void test_rows(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        struct vg_quota q;
        struct vg_usage u;
        setup(r, &q, &u);
        struct vg_grant g;
        bool ok = vg_quota_admit(&q, &u, r->now_ms, r->want_cpu, r->want_wall, &g);
        bool want = r->refused < 0;
        if (!check(ok == want && g.refused == r->refused, r->what, __FILE__, __LINE__))
            fprintf(stderr, "  got %s refused=%d (%s)\n", ok ? "admitted" : "refused",
                    g.refused, g.why);
        if (want) {
            if (!check(g.cpu_ms == r->got_cpu && g.wall_ms == r->got_wall, r->what, __FILE__, __LINE__))
                fprintf(stderr, "  got cpu %llu wall %llu\n", (unsigned long long)g.cpu_ms,
                        (unsigned long long)g.wall_ms);
        } else if (!check(g.retry_s == r->retry_s, r->what, __FILE__, __LINE__)) {
            fprintf(stderr, "  got retry %llu, want %llu\n", (unsigned long long)g.retry_s,
                    (unsigned long long)r->retry_s);
        }
        if (!want)
            CHECK(strstr(g.why, vg_quota_name((enum vg_quota_kind)r->refused)) != NULL);
        vg_usage_free(&u);
    }
}

/* Admitting runs one after another never lets the window's sum pass the
 * quota, whatever they ask and however much of their grant they use. */
static void test_sum_never_passes(void)
{
    struct vg_quota q = {0};
    struct vg_usage u = {0};
    struct vg_err err;
    CHECK(vg_quota_parse(&q, VG_Q_RUNS, "1000/1h", &err));
    CHECK(vg_quota_parse(&q, VG_Q_CONCURRENT, "3", &err));
    CHECK(vg_quota_parse(&q, VG_Q_CPU, "100s/1h", &err));
    CHECK(vg_quota_parse(&q, VG_Q_WALL, "1h/1h", &err));
    CHECK(vg_quota_parse(&q, VG_Q_STORED, "1G", &err));
    unsigned seed = 7, admitted = 0, live = 0;
    char ids[3][16];
    int64_t now = 0;
    for (int i = 0; i < 2000; i++, now += 100) {
        seed = seed * 1103515245 + 12345;
        uint64_t want = 500 + seed % 20000;
        struct vg_grant g;
        if (live == 3 || !vg_quota_admit(&q, &u, now, want, want, &g)) {
            if (live) { /* the oldest live run ends, using a random part of its grant */
                live--;
                vg_usage_settle(&u, ids[live], (seed >> 8) % 8000, 10);
            }
            continue;
        }
        snprintf(ids[live], sizeof ids[live], "x%d", i);
        vg_usage_charge(&u, ids[live], now, &g);
        live++;
        admitted++;
        CHECK(vg_usage_used(&q, &u, VG_Q_CPU, now) <= q.max[VG_Q_CPU]);
    }
    CHECK(admitted > 10);
    vg_usage_free(&u);
}

static void test_parse(void)
{
    struct vg_quota q = {0};
    struct vg_err err;
    static const struct { int k; const char *text; bool ok; } cases[] = {
        {VG_Q_RUNS, "100/1h", true},   {VG_Q_RUNS, "100", false},  {VG_Q_RUNS, "x/1h", false},
        {VG_Q_RUNS, "100/0", false},   {VG_Q_CPU, "10m/1h", true}, {VG_Q_CPU, "10m", false},
        {VG_Q_CONCURRENT, "4", true},  {VG_Q_CONCURRENT, "4/1h", false},
        {VG_Q_STORED, "512M", true},   {VG_Q_STORED, "lots", false}, {VG_Q_WALL, "1h/1h", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool ok = vg_quota_parse(&q, (enum vg_quota_kind)cases[i].k, cases[i].text, &err);
        if (!check(ok == cases[i].ok, cases[i].text, __FILE__, __LINE__))
            fprintf(stderr, "  %s\n", err.msg);
        if (!ok)
            CHECK(strstr(err.msg, vg_quota_name((enum vg_quota_kind)cases[i].k)) != NULL);
    }
    char buf[48];
    CHECK(vg_quota_parse(&q, VG_Q_CPU, "90s/2h", &err));
    vg_quota_format(&q, VG_Q_CPU, buf, sizeof buf);
    CHECK_STR(buf, "90s/2h");
}

/* A request is refused whole, naming the member, for every trick. */
static void test_requests(void)
{
    static const struct { const char *body; const char *says; } bad[] = {
        {"[1]", "not a JSON object"},
        {"{}", "argv"},
        {"{\"argv\": []}", "argv"},
        {"{\"argv\": [\"true\"], \"colour\": 1}", "unknown member 'colour'"},
        {"{\"argv\": [\"true\"], \"argv\": [\"id\"]}", "given twice"},
        {"{\"argv\": [1]}", "argv[0]"},
        {"{\"argv\": [\"x\"], \"files\": [{\"path\": \"../x\", \"text\": \"\"}]}", "files[0].path"},
        {"{\"argv\": [\"x\"], \"files\": [{\"path\": \"/etc/x\", \"text\": \"\"}]}", "files[0].path"},
        {"{\"argv\": [\"x\"], \"files\": [{\"path\": \"a//b\", \"text\": \"\"}]}", "files[0].path"},
        {"{\"argv\": [\"x\"], \"files\": [{\"path\": \"a/./b\", \"text\": \"\"}]}", "files[0].path"},
        {"{\"argv\": [\"x\"], \"files\": [{\"path\": \"a/\", \"text\": \"\"}]}", "files[0].path"},
        {"{\"argv\": [\"x\"], \"files\": [{\"path\": \"a\", \"text\": \"\", \"base64\": \"\"}]}",
         "both"},
        {"{\"argv\": [\"x\"], \"files\": [{\"path\": \"a\", \"base64\": \"!!\"}]}", "base64"},
        {"{\"argv\": [\"x\"], \"files\": [{\"path\": \"a\", \"text\": \"1\"}, "
         "{\"path\": \"a\", \"text\": \"2\"}]}", "given twice"},
        {"{\"argv\": [\"x\"], \"env\": {\"PATH\": 1}}", "env"},
        {"{\"argv\": [\"x\"], \"env\": {\"A=B\": \"c\"}}", "env"},
        {"{\"argv\": [\"x\"], \"limits\": {\"colour\": \"1\"}}", "unknown limit 'colour'"},
        {"{\"argv\": [\"x\"], \"limits\": {\"memory\": \"lots\"}}", "limits.memory"},
        {"{\"argv\": [\"x\"], \"policy\": \"no-such-policy\"}", "no shipped policy"},
        {"{\"argv\": [\"x\"], \"policy\": \"python\", \"policy_text\": \"version 1\\n\"}", "give one"},
        {"{\"argv\": [\"x\"], \"policy_text\": \"version 1\\nbind /etc /x\\n\"}", "may not bind"},
        {"{\"argv\": [\"x\"], \"policy_text\": \"version 1\\ninclude /etc/shadow\\n\"}",
         "only shipped"},
        {"{\"argv\": [\"x\"], \"policy_text\": \"version 1\\ninclude\\r/etc/shadow\\n\"}",
         "only shipped"},
        {"{\"argv\": [\"x\"], \"policy_text\": \"version 1\\n\\rinclude /etc/shadow\\n\"}",
         "only shipped"},
        {"{\"argv\": [\"x\"], \"policy_text\": \"version 1\\n\\tbind-rw\\r/ /x\\n\"}",
         "may not bind"},
        {"{\"argv\": [\"x\"], \"dry_run\": \"yes\"}", "dry_run"},
        {"{\"argv\": [\"x\"], \"stdin\": \"a\", \"stdin_base64\": \"YQ==\"}", "both"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vg_sreq q;
        struct vg_err err = {{0}};
        int rc = vg_sreq_parse(&q, bad[i].body, strlen(bad[i].body), &err);
        if (!check(rc < 0 && strstr(err.msg, bad[i].says), bad[i].body, __FILE__, __LINE__))
            fprintf(stderr, "  rc %d: %s\n", rc, err.msg);
        if (rc == 0)
            vg_sreq_free(&q);
    }
    const char *good = "{\"argv\": [\"python3\", \"c.py\"], \"files\": [{\"path\": \"d/c.py\", "
                       "\"text\": \"print(1)\"}, {\"path\": \".hidden\", \"base64\": \"AAE=\"}],"
                       " \"env\": {\"LANG\": \"C\"}, \"limits\": {\"time\": \"5s\"}, "
                       "\"stdin\": \"in\", \"task_id\": \"t1\", \"dry_run\": true}";
    struct vg_sreq q;
    struct vg_err err;
    CHECK(vg_sreq_parse(&q, good, strlen(good), &err) == 0);
    CHECK(q.argc == 2 && q.nfiles == 2 && q.files[1].len == 2 && q.nenv == 1);
    CHECK_STR(q.env[0], "LANG=C");
    CHECK(vg_sreq_want_wall_ms(&q) == 5000);
    char **cmd = vg_sreq_command(&q, "/usr/bin/vigil", "/s/r", "r-1", 3000, 5000);
    bool timeout = false, dash = false, dry = false;
    for (char **a = cmd; *a; a++) {
        timeout |= !strcmp(*a, "5000ms");
        dry |= !strcmp(*a, "--dry-run");
        if (!strcmp(*a, "--"))
            dash = !strcmp(a[1], "python3") && !strcmp(a[2], "c.py") && !a[3];
    }
    CHECK(timeout && dash && dry);
    vg_argv_free(cmd);
    vg_sreq_free(&q);
}

int main(void)
{
    test_rows();
    test_sum_never_passes();
    test_parse();
    test_requests();
    return check_done();
}
