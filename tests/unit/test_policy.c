/* test_policy.c: the policy engine as the tracer and `vigil check` see it:
 * matching (globs, canonical forms, places, networks), precedence,
 * includes, settings, audit semantics and the Landlock plan. */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/policy.h"
#include "tests/unit/policy_text.h"
#include "launcher/landlock.h"
#include "util/sha256.h"

static int passed, failed;
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                      \
    } while (0)

static const char *parse_error(const char *text)
{
    static struct vg_err err;
    memset(&err, 0, sizeof err);
    struct vg_policy *p = vg_policy_parse("t.policy", text, &err);
    vg_policy_free(p);
    return p ? "(parsed)" : err.msg;
}

static enum vg_action rd(const struct vg_policy *p, const char *path)
{
    return vg_policy_decide_path(p, VG_CLASS_READ, path).action;
}

static bool allowed(const struct vg_policy *p, const char *path)
{
    return rd(p, path) == VG_ACT_ALLOW;
}

static void test_globs(void)
{
    struct vg_policy *p = pol("version 1\n"
                              "allow read /a/*.py /b/**/c /d/** /e/?.txt /f/{x,y}z /g/[ab]1 /h/[!a]2 /i/[a-c]3\n");
    CHECK(allowed(p, "/a/x.py"));
    CHECK(allowed(p, "/a/.hidden.py"));
    CHECK(!allowed(p, "/a/b/x.py"));
    CHECK(!allowed(p, "/a/x.pyc"));
    CHECK(allowed(p, "/b/c"));
    CHECK(allowed(p, "/b/x/c"));
    CHECK(allowed(p, "/b/x/y/c"));
    CHECK(!allowed(p, "/b/xc"));
    CHECK(!allowed(p, "/b/c/d"));
    CHECK(allowed(p, "/d"));
    CHECK(allowed(p, "/d/x"));
    CHECK(allowed(p, "/d/x/y/z"));
    CHECK(!allowed(p, "/dx"));
    CHECK(!allowed(p, "/"));
    CHECK(allowed(p, "/e/1.txt"));
    CHECK(!allowed(p, "/e/12.txt"));
    CHECK(allowed(p, "/f/xz") && allowed(p, "/f/yz"));
    CHECK(!allowed(p, "/f/zz"));
    CHECK(allowed(p, "/g/a1") && allowed(p, "/g/b1") && !allowed(p, "/g/c1"));
    CHECK(allowed(p, "/h/b2") && !allowed(p, "/h/a2"));
    CHECK(allowed(p, "/i/b3") && !allowed(p, "/i/d3"));
    vg_policy_free(p);

    p = pol("version 1\nallow read /** \n");
    CHECK(allowed(p, "/") && allowed(p, "/x/y"));
    vg_policy_free(p);
    /* stars that would make a naive matcher backtrack exponentially */
    p = pol("version 1\nallow read /**/**/**/**/*a*a*a*a*a*a*a*b\n");
    CHECK(!allowed(p, "/x/y/z/w/v/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    CHECK(allowed(p, "/x/aaaaaaaab"));
    vg_policy_free(p);
}

static void test_canonical_forms(void)
{
    struct vg_policy *p = pol("version 1\nallow read /usr/lib /etc/\nallow read /opt//x/**\n");
    CHECK(allowed(p, "/usr/lib"));
    CHECK(allowed(p, "/usr/lib/"));
    CHECK(allowed(p, "/usr//lib"));
    CHECK(allowed(p, "/etc"));
    CHECK(allowed(p, "/opt/x/y"));
    CHECK(!allowed(p, "/usr/lib/x"));
    char *longp = malloc(10000);
    memset(longp, 'a', 9999);
    longp[0] = '/';
    longp[9999] = 0;
    CHECK(rd(p, longp) == VG_ACT_DENY);
    free(longp);
    vg_policy_free(p);
}

static void test_places(void)
{
    struct vg_policy *p = pol("version 1\nallow read ~/a $HOME/b $WORK/** $TMP/*.txt\n"
                              "bind ~/data /data\nbind-rw $WORK\n");
    CHECK(allowed(p, "/home/u/a"));
    CHECK(allowed(p, "/home/u/b"));
    CHECK(allowed(p, "/work/cand"));
    CHECK(allowed(p, "/work/cand/src/x.c"));
    CHECK(allowed(p, "/tmp/x.txt"));
    CHECK(!allowed(p, "/tmp/x.bin"));
    CHECK(vg_policy_nbinds(p) == 2);
    CHECK(!strcmp(vg_policy_bind(p, 0)->src, "/home/u/data"));
    CHECK(!strcmp(vg_policy_bind(p, 0)->dst, "/data") && !vg_policy_bind(p, 0)->rw);
    CHECK(!strcmp(vg_policy_bind(p, 1)->dst, "/work/cand") && vg_policy_bind(p, 1)->rw);
    vg_policy_free(p);

    /* a place is matched literally, even with glob characters in it */
    struct vg_err err;
    struct vg_places odd = {"/home/we*rd", "/w", "/tmp"};
    p = vg_policy_parse("t.policy", "version 1\nallow read ~/x\n", &err);
    CHECK(p && vg_policy_compile(p, &odd, &err) == 0);
    CHECK(allowed(p, "/home/we*rd/x"));
    CHECK(!allowed(p, "/home/weird/x"));
    struct vg_places rel = {"home", "/w", "/tmp"};
    CHECK(vg_policy_compile(p, &rel, &err) == -1);
    vg_policy_free(p);
}

static struct vg_verdict inet(const struct vg_policy *p, enum vg_class cls, const char *proto,
                              const char *addr, uint16_t port)
{
    struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, addr, &s4.sin_addr) == 1)
        return vg_policy_decide_net(p, cls, proto, (struct sockaddr *)&s4, sizeof s4);
    if (inet_pton(AF_INET6, addr, &s6.sin6_addr) != 1)
        abort();
    return vg_policy_decide_net(p, cls, proto, (struct sockaddr *)&s6, sizeof s6);
}

static bool conn(const struct vg_policy *p, const char *proto, const char *addr, uint16_t port)
{
    return inet(p, VG_CLASS_CONNECT, proto, addr, port).action == VG_ACT_ALLOW;
}

static void test_net(void)
{
    struct vg_policy *p = pol("version 1\n"
                              "allow connect tcp 10.0.0.0/8:* [fe80::/10]:443 [::ffff:192.168.1.1]:22\n"
                              "allow connect tcp 127.0.0.1:80-90,443 udp *:53\n"
                              "allow net tcp [::1]:8080\n");
    CHECK(conn(p, "tcp", "10.1.2.3", 1));
    CHECK(!conn(p, "tcp", "11.0.0.1", 1));
    CHECK(conn(p, "tcp", "::ffff:10.9.9.9", 5));        /* mapped v6 hits the v4 rule */
    CHECK(conn(p, "tcp", "fe80::1", 443) && !conn(p, "tcp", "fe80::1", 444));
    CHECK(!conn(p, "tcp", "fec0::1", 443));
    CHECK(conn(p, "tcp", "192.168.1.1", 22));           /* mapped rule, v4 socket */
    CHECK(conn(p, "tcp", "127.0.0.1", 85) && conn(p, "tcp", "127.0.0.1", 443));
    CHECK(!conn(p, "tcp", "127.0.0.1", 91) && !conn(p, "tcp", "127.0.0.1", 79));
    CHECK(conn(p, "udp", "8.8.8.8", 53) && !conn(p, "tcp", "8.8.8.8", 53));
    CHECK(!conn(p, "udp", "8.8.8.8", 54));
    CHECK(inet(p, VG_CLASS_BIND, "tcp", "::1", 8080).action == VG_ACT_ALLOW);
    CHECK(inet(p, VG_CLASS_SEND, "tcp", "::1", 8080).action == VG_ACT_ALLOW);
    CHECK(inet(p, VG_CLASS_BIND, "tcp", "10.0.0.1", 1).action == VG_ACT_DENY);
    struct vg_verdict v = inet(p, VG_CLASS_CONNECT, "tcp", "127.0.0.1", 80);
    CHECK(v.rule && v.rule->line == 3 && !strcmp(v.rule->text, "allow connect tcp 127.0.0.1:80-90,443"));
    vg_policy_free(p);

    p = pol("version 1\nallow connect unix /run/x.sock $TMP/*.sock @abs*\n");
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    strcpy(un.sun_path, "/run/x.sock");
    CHECK(vg_policy_decide_net(p, VG_CLASS_CONNECT, "unix", (struct sockaddr *)&un, sizeof un).action == VG_ACT_ALLOW);
    strcpy(un.sun_path, "/tmp/a.sock");
    CHECK(vg_policy_decide_net(p, VG_CLASS_CONNECT, "unix", (struct sockaddr *)&un, sizeof un).action == VG_ACT_ALLOW);
    strcpy(un.sun_path, "/run/y.sock");
    CHECK(vg_policy_decide_net(p, VG_CLASS_CONNECT, "unix", (struct sockaddr *)&un, sizeof un).action == VG_ACT_DENY);
    memcpy(un.sun_path, "\0abstract1", 10);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 10);
    CHECK(vg_policy_decide_net(p, VG_CLASS_CONNECT, "unix", (struct sockaddr *)&un, len).action == VG_ACT_ALLOW);
    memcpy(un.sun_path, "\0other", 6);
    len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 6);
    CHECK(vg_policy_decide_net(p, VG_CLASS_CONNECT, "unix", (struct sockaddr *)&un, len).action == VG_ACT_DENY);
    vg_policy_free(p);
}

static void test_hosts(void)
{
    /* Names are never resolved at compile: a host-name rule matches only
     * what vigil's resolver handed out in the run (tests/unit/test_dns.c),
     * so without that table even localhost's 127.0.0.1 is not matched,
     * and nothing is looked up (no warning). */
    struct vg_policy *p = pol("version 1\nallow connect tcp localhost:8000 no-such-host.invalid:*\n");
    CHECK(vg_policy_nwarnings(p) == 0);
    CHECK(!conn(p, "tcp", "127.0.0.1", 8000));
    CHECK(!conn(p, "tcp", "10.1.1.1", 80));
    vg_policy_free(p);
}

static void test_precedence(void)
{
    struct vg_policy *p = pol("version 1\ndeny read /a/secret\nallow read /a/**\nkill read /b\n");
    struct vg_verdict v = vg_policy_decide_path(p, VG_CLASS_READ, "/a/secret");
    CHECK(v.action == VG_ACT_DENY && v.rule && v.rule->line == 2);
    CHECK(v.rule && !strcmp(v.rule->file, "t.policy") && !strcmp(v.rule->text, "deny read /a/secret"));
    v = vg_policy_decide_path(p, VG_CLASS_READ, "/a/other");
    CHECK(v.action == VG_ACT_ALLOW && v.rule && v.rule->line == 3);
    CHECK(rd(p, "/b") == VG_ACT_KILL);
    v = vg_policy_decide_path(p, VG_CLASS_READ, "/c");
    CHECK(v.action == VG_ACT_DENY && v.rule == NULL);  /* built-in default */
    CHECK(vg_policy_decide_path(p, VG_CLASS_WRITE, "/a/other").action == VG_ACT_DENY);
    vg_policy_free(p);

    p = pol("version 1\nallow read /a/**\ndeny read /a/secret\n");
    CHECK(allowed(p, "/a/secret"));
    CHECK(vg_policy_nwarnings(p) == 1 && strstr(vg_policy_warning(p, 0), "t.policy:3:11: warning: rule can never match"));
    vg_policy_free(p);

    p = pol("version 1\ndefault allow read\ndefault kill exec\ndefault deny\ndefault allow read\n");
    CHECK(rd(p, "/x") == VG_ACT_ALLOW);
    CHECK(vg_policy_decide_path(p, VG_CLASS_EXEC, "/x").action == VG_ACT_KILL);
    CHECK(vg_policy_decide_path(p, VG_CLASS_WRITE, "/x").action == VG_ACT_DENY);
    /* line 5 has no effect; line 4 sets the rest; line 2 lets reads through */
    CHECK(vg_policy_nwarnings(p) == 2);
    CHECK(strstr(vg_policy_warning(p, 0), "t.policy:5:1: warning: ") != NULL);
    CHECK(strstr(vg_policy_warning(p, 1),
                 "t.policy:2:1: warning: 'default allow' allows every read call") != NULL);
    vg_policy_free(p);

    /* one warning per line, naming the classes that line made allow */
    p = pol("version 1\ndefault deny exec\ndefault allow\n");
    CHECK(vg_policy_nwarnings(p) == 1 &&
          strstr(vg_policy_warning(p, 0), "t.policy:3:1: warning: 'default allow' allows every "
                                          "read, write, connect, bind and send call"));
    vg_policy_free(p);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        perror(path);
        exit(1);
    }
}

static void test_includes(void)
{
    char dir[] = "/tmp/vg_test_policy_XXXXXX", path[1024], msg[600];
    struct vg_err err = {{0}};
    if (!mkdtemp(dir))
        abort();
#define F(name) (snprintf(path, sizeof path, "%s/%s", dir, name), path)
    write_file(F("sub.policy"), "version 1\nallow read /inc/**\ndeny read /a/x\n");
    write_file(F("main.policy"), "version 1\ndeny read /inc/secret\ninclude sub.policy\nallow read /a/**\n");
    struct vg_policy *p = vg_policy_load(F("main.policy"), &err);
    CHECK(p != NULL);
    if (p) {
        CHECK(vg_policy_compile(p, &places, &err) == 0);
        CHECK(rd(p, "/inc/secret") == VG_ACT_DENY);
        CHECK(allowed(p, "/inc/ok"));
        struct vg_verdict v = vg_policy_decide_path(p, VG_CLASS_READ, "/a/x");
        CHECK(v.action == VG_ACT_DENY && v.rule && v.rule->line == 3 && strstr(v.rule->file, "sub.policy"));
        const char *t = vg_policy_text(p);
        snprintf(msg, sizeof msg, "# file: %s/main.policy\nversion 1\n", dir);
        CHECK(!strncmp(t, msg, strlen(msg)));
        snprintf(msg, sizeof msg, "# file: %s/sub.policy\nversion 1\nallow read /inc/**\n", dir);
        CHECK(strstr(t, msg) != NULL);
        char hex[65];
        vg_sha256_buf(t, strlen(t), hex);
        CHECK(!strcmp(hex, vg_policy_sha256(p)));
        vg_policy_free(p);
    }

    write_file(F("c1.policy"), "version 1\ninclude c2.policy\n");
    write_file(F("c2.policy"), "version 1\n\ninclude c1.policy\n");
    CHECK(vg_policy_load(F("c1.policy"), &err) == NULL);
    snprintf(msg, sizeof msg, "%s/c2.policy:3:9: include cycle: %s/c1.policy -> %s/c2.policy -> %s/c1.policy",
             dir, dir, dir, dir);
    CHECK(!strcmp(err.msg, msg));

    write_file(F("nf.policy"), "version 1\ninclude nope.policy\n");
    CHECK(vg_policy_load(F("nf.policy"), &err) == NULL);
    snprintf(msg, sizeof msg, "%s/nf.policy:2:9: include not found: '%s/nope.policy'", dir, dir);
    CHECK(!strcmp(err.msg, msg));

    write_file(F("self.policy"), "version 1\ninclude self.policy\n");
    CHECK(vg_policy_load(F("self.policy"), &err) == NULL && strstr(err.msg, "include cycle"));

    write_file(F("bad.policy"), "version 1\nallow read /ok\n");
    write_file(F("inc_bad.policy"), "version 1\ninclude bad.policy\n");
    write_file(F("bad.policy"), "version 1\n\nallow write relative\n");
    CHECK(vg_policy_load(F("inc_bad.policy"), &err) == NULL);
    snprintf(msg, sizeof msg, "%s/bad.policy:3:13: pattern must be absolute", dir);
    CHECK(!strncmp(err.msg, msg, strlen(msg)));

    /* the built-in policy can be included from anywhere */
    write_file(F("b.policy"), "version 1\nallow read /extra/**\ninclude <default>\n");
    p = vg_policy_load(F("b.policy"), &err);
    CHECK(p && vg_policy_compile(p, &places, &err) == 0);
    CHECK(p && allowed(p, "/extra/x") && allowed(p, "/usr/bin/python3"));
    CHECK(p && vg_policy_decide_path(p, VG_CLASS_READ, "/usr/lib/x").rule &&
          !strcmp(vg_policy_decide_path(p, VG_CLASS_READ, "/usr/lib/x").rule->file, "default.policy"));
    vg_policy_free(p);

    /* a shipped policy by name, as -p NAME finds it ($VIGIL_POLICY_DIR first) */
    write_file(F("shipped-x.policy"), "version 1\nkill write /usr/**\n");
    write_file(F("uses.policy"), "version 1\ninclude <shipped-x>\ninclude <default>\n");
    setenv("VIGIL_POLICY_DIR", dir, 1);
    p = vg_policy_load(F("uses.policy"), &err);
    CHECK(p && vg_policy_compile(p, &places, &err) == 0);
    CHECK(p && vg_policy_decide_path(p, VG_CLASS_WRITE, "/usr/lib/x").action == VG_ACT_KILL);
    CHECK(p && allowed(p, "/usr/bin/python3"));
    vg_policy_free(p);
    write_file(F("uses.policy"), "version 1\ninclude <no-such>\n");
    CHECK(vg_policy_load(F("uses.policy"), &err) == NULL &&
          strstr(err.msg, "uses.policy:2:9: no shipped policy 'no-such'"));
    unsetenv("VIGIL_POLICY_DIR");

    const char *names[] = {"sub", "main", "c1", "c2", "nf", "self", "bad", "inc_bad", "b",
                           "shipped-x", "uses"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(msg, sizeof msg, "%s.policy", names[i]);
        unlink(F(msg));
    }
    rmdir(dir);
#undef F
}

static void test_settings(void)
{
    struct vg_policy *p = pol("version 1\nlimit time 1.5s\nlimit cpu 1500ms\nlimit memory 512M\n"
                              "limit procs 64\nenv pass TERM\nenv set A=b=c\nenv set A=ignored\n");
    const struct vg_limits *l = vg_policy_limits(p);
    CHECK(l->set[VG_LIM_TIME] && l->v[VG_LIM_TIME] == 1500);
    CHECK(l->set[VG_LIM_CPU] && l->v[VG_LIM_CPU] == 2);     /* rounded up */
    CHECK(l->v[VG_LIM_MEMORY] == 512ull << 20);
    CHECK(l->v[VG_LIM_PROCS] == 64 && !l->set[VG_LIM_FILES]);
    CHECK(vg_policy_nenv(p) == 2);
    CHECK(!strcmp(vg_policy_env(p, 0)->name, "TERM") && vg_policy_env(p, 0)->value == NULL);
    CHECK(!strcmp(vg_policy_env(p, 1)->name, "A") && !strcmp(vg_policy_env(p, 1)->value, "b=c"));
    vg_policy_free(p);

    uint64_t v;
    CHECK(vg_limit_from_name("tmpfs") == VG_LIM_TMPFS && vg_limit_from_name("x") == -1);
    CHECK(vg_limit_parse(VG_LIM_OUTPUT, "1M", &v) && v == 1 << 20);
    CHECK(!vg_limit_parse(VG_LIM_FILES, "12x", &v) && !vg_limit_parse(VG_LIM_FILES, "0", &v));
    char buf[32];
    vg_limit_format(VG_LIM_MEMORY, 512ull << 20, buf, sizeof buf);
    CHECK(!strcmp(buf, "512M"));
    vg_limit_format(VG_LIM_TIME, 1500, buf, sizeof buf);
    CHECK(!strcmp(buf, "1500ms"));
}

/* The storm caps are rows like the others: a policy word, a flag, a
 * default, a range (a log cap below what a run's end needs is refused). */
static void test_storm_caps(void)
{
    struct vg_policy *p = pol("version 1\nlimit refusals 1000\nlimit log 2M\n");
    const struct vg_limits *l = vg_policy_limits(p);
    CHECK(l->set[VG_LIM_REFUSALS] && l->v[VG_LIM_REFUSALS] == 1000);
    CHECK(l->set[VG_LIM_LOG] && l->v[VG_LIM_LOG] == 2ull << 20);
    vg_policy_free(p);
    struct vg_limits d;
    vg_limits_defaults(&d);
    CHECK(d.v[VG_LIM_REFUSALS] == 1000 && d.v[VG_LIM_LOG] == 64ull << 20);
    CHECK(vg_limit_from_name("refusals") == VG_LIM_REFUSALS && vg_limit_from_name("log") == VG_LIM_LOG);
    CHECK(!strcmp(vg_limit_row(VG_LIM_LOG)->flag, "log-size"));
    CHECK(vg_limit_row(VG_LIM_REFUSALS)->fallback == VG_MECH_SUPERVISOR &&
          vg_limit_row(VG_LIM_LOG)->fallback == VG_MECH_SUPERVISOR);
    uint64_t v;
    CHECK(!vg_limit_parse(VG_LIM_REFUSALS, "0", &v) && vg_limit_parse(VG_LIM_REFUSALS, "1", &v));
    CHECK(!vg_limit_parse(VG_LIM_LOG, "512k", &v) && vg_limit_parse(VG_LIM_LOG, "1M", &v));
    CHECK(!strcmp(parse_error("version 1\nlimit log 64k\n"),
                  "t.policy:2:11: bad value '64k' for limit log (a size like 512M, 64k or 1G, at least 1M)"));
}

static void test_audit(void)
{
    struct vg_policy *p = pol("version 1\ndefault allow\naudit exec\ndeny write /etc/**\n");
    CHECK(!vg_policy_audits(p, VG_CLASS_READ));     /* all allowed, nobody asked */
    CHECK(vg_policy_audits(p, VG_CLASS_EXEC));      /* audit line */
    CHECK(vg_policy_audits(p, VG_CLASS_WRITE));     /* a deny rule */
    CHECK(vg_policy_audits(p, VG_CLASS_SYSTEM));
    vg_policy_free(p);
    p = pol("version 1\ndefault allow read\n");
    CHECK(!vg_policy_audits(p, VG_CLASS_READ) && vg_policy_audits(p, VG_CLASS_WRITE));
    vg_policy_free(p);
    p = pol("version 1\ndefault allow\naudit all\n");
    for (int c = 0; c < VG_CLASS_SYSTEM; c++)
        CHECK(vg_policy_audits(p, (enum vg_class)c));
    CHECK(!vg_policy_audits_lookups(p));            /* not part of all: an opt-in */
    vg_policy_free(p);
    /* `audit lookups`, alone or among classes */
    p = pol("version 1\ndefault allow\naudit lookups\n");
    CHECK(vg_policy_audits_lookups(p) && vg_policy_audits(p, VG_CLASS_READ)); /* implied */
    CHECK(!vg_policy_audits(p, VG_CLASS_WRITE));
    vg_policy_free(p);
    p = pol("version 1\ndefault allow\naudit lookups read\n");
    CHECK(vg_policy_audits_lookups(p) && vg_policy_audits(p, VG_CLASS_READ));
    vg_policy_free(p);
    CHECK(!strncmp(parse_error("version 1\naudit lookup\n"), "t.policy:2:7: unknown class 'lookup'", 36));
}

static void test_errors(void)
{
    CHECK(!strcmp(parse_error("allow read /x\n"), "t.policy:1:1: missing 'version 1' line (it must come first)"));
    CHECK(!strcmp(parse_error("# only a comment\n"), "t.policy:1:1: missing 'version 1' line (the file has no rules)"));
    CHECK(!strncmp(parse_error("version 1\n\nallow raed /x\n"), "t.policy:3:7: unknown class 'raed'", 34));
    CHECK(!strcmp(parse_error("version 1\nallow read /a/{b\n"), "t.policy:2:15: unclosed '{'"));
    CHECK(!strcmp(parse_error("version 1\nallow connect tcp 10.0.0.0/33:80\n"),
                  "t.policy:2:27: bad CIDR prefix '/33' (IPv4 allows 0-32)"));
    CHECK(!strcmp(parse_error("version 1\nallow connect tcp 1.2.3.4:70000\n"),
                  "t.policy:2:27: bad port '70000' (0-65535, LO-HI or *)"));
    CHECK(!strcmp(parse_error("version 1\n  limit memory 12Q # c\n"),
                  "t.policy:2:16: bad value '12Q' for limit memory (a size like 512M, 64k or 1G, at least 16M)"));
    CHECK(!strcmp(parse_error("version 1\nfrobnicate\n"), "t.policy:2:1: unknown keyword 'frobnicate'"));
    CHECK(!strcmp(parse_error("version 1\n"), "(parsed)"));
}

static bool plan_has(const struct vg_landlock_plan *pl, const char *path, uint64_t access, bool exact)
{
    for (uint32_t i = 0; i < pl->nrules; i++)
        if (!strcmp(pl->rules[i].path, path) && (pl->rules[i].access & access) == access &&
            pl->rules[i].exact == exact)
            return true;
    return false;
}

/* Does some beneath-rule at or above path grant access? */
static bool plan_grants(const struct vg_landlock_plan *pl, const char *path, uint64_t access)
{
    for (uint32_t i = 0; i < pl->nrules; i++) {
        const char *r = pl->rules[i].path;
        size_t n = strlen(r);
        bool above = !strncmp(path, r, n) && (path[n] == '/' || path[n] == 0);
        if (above && !pl->rules[i].exact && (pl->rules[i].access & access) == access)
            return true;
    }
    return false;
}

static void test_landlock_plan(void)
{
    struct vg_err err;
    struct vg_policy *p = vg_policy_parse("default.policy", vg_default_policy_text, &err);
    CHECK(p && vg_policy_compile(p, &places, &err) == 0);
    struct vg_landlock_plan pl;
    vg_policy_landlock_plan(p, 7, &pl);
    CHECK(pl.handled_fs & LANDLOCK_ACCESS_FS_READ_FILE);
    CHECK(pl.handled_fs & LANDLOCK_ACCESS_FS_WRITE_FILE);
    CHECK(pl.handled_fs & LANDLOCK_ACCESS_FS_TRUNCATE);
    /* exec is handled: the programs the policy runs, the loader, nothing
     * the candidate can write */
    CHECK(pl.handled_fs & LANDLOCK_ACCESS_FS_EXECUTE);
    CHECK(plan_grants(&pl, "/usr/bin/python3", LANDLOCK_ACCESS_FS_EXECUTE));
    CHECK(plan_has(&pl, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                   LANDLOCK_ACCESS_FS_EXECUTE, true));
    CHECK(!plan_grants(&pl, "/work/cand/a.out", LANDLOCK_ACCESS_FS_EXECUTE));
    CHECK(!plan_grants(&pl, "/tmp/a.out", LANDLOCK_ACCESS_FS_EXECUTE));
    CHECK(plan_has(&pl, "/work/cand", LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_WRITE_FILE, false));
    CHECK(plan_has(&pl, "/tmp", LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_READ_FILE, false));
    CHECK(plan_has(&pl, "/usr", LANDLOCK_ACCESS_FS_READ_FILE, false));
    /* exec grants the directories of its programs, not one rule per program */
    CHECK(plan_grants(&pl, "/usr/bin/python3", LANDLOCK_ACCESS_FS_READ_FILE));
    CHECK(plan_has(&pl, "/usr/bin", LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE, false));
    vg_landlock_plan_exec_file(&pl, "/work/cand/a.out");
    CHECK(plan_has(&pl, "/work/cand/a.out", LANDLOCK_ACCESS_FS_EXECUTE, true));
    CHECK(pl.nrules < 30);
    CHECK(plan_has(&pl, "/dev/null", LANDLOCK_ACCESS_FS_WRITE_FILE, true));
    CHECK(plan_has(&pl, "/", LANDLOCK_ACCESS_FS_READ_DIR, true));
    CHECK(!plan_has(&pl, "/home/u", LANDLOCK_ACCESS_FS_READ_FILE, false));
    CHECK(pl.handled_net == (LANDLOCK_ACCESS_NET_CONNECT_TCP | LANDLOCK_ACCESS_NET_BIND_TCP));
    CHECK(pl.nconnect_ports == 0 && pl.nbind_ports == 0);
    vg_landlock_plan_free(&pl);
    vg_policy_landlock_plan(p, 1, &pl);
    CHECK(!(pl.handled_fs & LANDLOCK_ACCESS_FS_TRUNCATE) && !(pl.handled_fs & LANDLOCK_ACCESS_FS_REFER));
    CHECK(pl.handled_net == 0);
    vg_landlock_plan_free(&pl);
    vg_policy_landlock_plan(p, 0, &pl);
    CHECK(pl.handled_fs == 0 && pl.nrules == 0);
    vg_landlock_plan_free(&pl);
    vg_policy_free(p);

    p = pol("version 1\nallow connect tcp 127.0.0.1:8000-8009 [::1]:8000-8009 udp *:*\n"
            "allow bind tcp *:*\ndefault allow read write\n");
    vg_policy_landlock_plan(p, 4, &pl);
    /* no exec rule: only the loaders may be executed */
    CHECK(pl.handled_fs == LANDLOCK_ACCESS_FS_EXECUTE);
    CHECK(!plan_grants(&pl, "/usr/bin/python3", LANDLOCK_ACCESS_FS_EXECUTE));
    CHECK(pl.handled_net == LANDLOCK_ACCESS_NET_CONNECT_TCP);   /* bind: any port */
    CHECK(pl.nconnect_ports == 10);
    vg_landlock_plan_free(&pl);
    vg_policy_landlock_plan(p, 3, &pl);
    CHECK(pl.handled_net == 0);
    vg_landlock_plan_free(&pl);
    vg_policy_free(p);
}

/* For real: a child restricted to writing beneath one directory. */
static void test_landlock_apply(void)
{
    int abi = vg_landlock_abi();
    if (abi <= 0) {
        printf("landlock not available: apply test skipped\n");
        return;
    }
    char dir[] = "/tmp/vg_ll_XXXXXX", other[] = "/tmp/vg_ll_other_XXXXXX";
    if (!mkdtemp(dir) || !mkdtemp(other))
        abort();
    char text[256];
    snprintf(text, sizeof text, "version 1\ndefault allow read exec\nallow write %s/**\n", dir);
    struct vg_policy *p = pol(text);
    struct vg_landlock_plan pl;
    vg_policy_landlock_plan(p, abi, &pl);
    pid_t pid = fork();
    if (pid == 0) {
        struct vg_err err;
        char path[300];
        if (vg_landlock_apply(&pl, abi, NULL, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            _exit(10);
        }
        snprintf(path, sizeof path, "%s/inside", dir);
        FILE *f = fopen(path, "w");
        if (!f)
            _exit(11);
        fclose(f);
        snprintf(path, sizeof path, "%s/outside", other);
        if (fopen(path, "w") || errno != EACCES)
            _exit(12);
        if (mkdir("/tmp/vg_ll_never", 0700) == 0 || errno != EACCES)
            _exit(13);
        _exit(0);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char path[300];
    snprintf(path, sizeof path, "%s/inside", dir);
    CHECK(access(path, F_OK) == 0);
    unlink(path);
    rmdir(dir);
    rmdir(other);
    vg_landlock_plan_free(&pl);
    vg_policy_free(p);
}

int main(void)
{
    test_globs();
    test_canonical_forms();
    test_places();
    test_net();
    test_hosts();
    test_precedence();
    test_includes();
    test_settings();
    test_storm_caps();
    test_audit();
    test_errors();
    test_landlock_plan();
    test_landlock_apply();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
