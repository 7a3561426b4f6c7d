/* bench_match.c: how fast the policy decides.  For the built-in default
 * policy and for a generated 500-rule policy (with the default's rules at
 * the end, so realistic paths fall through most of the list), decides a
 * realistic mix of paths: Python start-up reads, denied home paths, /tmp
 * writes, work-dir reads, exec lookups.  One line per case: rules,
 * decisions/s, ns/decision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "util/util.h"

static const struct vg_places places = {"/home/user", "/work/cand", "/tmp"};

static const struct {
    enum vg_class cls;
    const char *path;
} mix[] = {
    {VG_CLASS_READ, "/etc/ld.so.cache"},
    {VG_CLASS_READ, "/usr/lib/x86_64-linux-gnu/libc.so.6"},
    {VG_CLASS_READ, "/usr/lib/x86_64-linux-gnu/libm.so.6"},
    {VG_CLASS_READ, "/usr/lib/python3.11/encodings/__init__.py"},
    {VG_CLASS_READ, "/usr/lib/python3.11/__pycache__/os.cpython-311.pyc"},
    {VG_CLASS_READ, "/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so"},
    {VG_CLASS_READ, "/usr/local/lib/python3.11/dist-packages"},
    {VG_CLASS_READ, "/proc/self/maps"},
    {VG_CLASS_READ, "/dev/urandom"},
    {VG_CLASS_READ, "/"},
    {VG_CLASS_READ, "/home/user/.ssh/id_ed25519"},
    {VG_CLASS_READ, "/home/user/.aws/credentials"},
    {VG_CLASS_READ, "/work/cand/src/main.py"},
    {VG_CLASS_READ, "/work/cand/tests/test_main.py"},
    {VG_CLASS_WRITE, "/tmp/pytest-of-user/pytest-1/test_x0/out.txt"},
    {VG_CLASS_WRITE, "/tmp/tmpa8f3k2/data.json"},
    {VG_CLASS_WRITE, "/work/cand/build/out.o"},
    {VG_CLASS_WRITE, "/usr/lib/python3.11/__pycache__/os.cpython-311.pyc"},
    {VG_CLASS_WRITE, "/home/user/.bashrc"},
    {VG_CLASS_EXEC, "/usr/bin/python3.11"},
    {VG_CLASS_EXEC, "/usr/bin/sh"},
    {VG_CLASS_EXEC, "/usr/bin/curl"},
};

/* 500 rules of the kinds real policies have, then the default policy. */
static char *generated_policy(uint32_t n)
{
    static const char *const shapes[] = {
        "allow read /opt/vendor%u/**\n",
        "deny write /srv/data%u/*.log\n",
        "allow exec /usr/local/bin/tool%u-*\n",
        "deny read /var/lib/app%u/{secrets,keys}/**\n",
        "allow read /usr/share/doc/pkg%u/*.[ch]\n",
    };
    struct vg_buf b = {0};
    vg_buf_puts(&b, "version 1\n");
    for (uint32_t i = 0; i < n; i++)
        vg_buf_printf(&b, shapes[i % VG_ARRAY_LEN(shapes)], i);
    vg_buf_puts(&b, strchr(vg_default_policy_text, '\n') + 1);  /* minus its version line */
    return b.data;
}

static uint32_t count_rules(const char *text)
{
    /* rules as vigil check counts them would need the internals; a
     * pattern count per rule line is close enough for the report */
    uint32_t n = 0;
    for (const char *l = text; *l;) {
        size_t len = strcspn(l, "\n");
        if (!strncmp(l, "allow ", 6) || !strncmp(l, "deny ", 5) || !strncmp(l, "kill ", 5)) {
            uint32_t words = 0;
            for (size_t i = 0; i < len && l[i] != '#'; i++)
                words += l[i] != ' ' && (i == 0 || l[i - 1] == ' ');
            n += words > 2 ? words - 2 : 0;
        }
        l += len + (l[len] == '\n');
    }
    return n;
}

static void run_case(const char *name, const char *text)
{
    struct vg_err err;
    struct vg_policy *p = vg_policy_parse(name, text, &err);
    if (!p || vg_policy_compile(p, &places, &err)) {
        fprintf(stderr, "bench_match: %s\n", err.msg);
        exit(1);
    }
    uint64_t rounds = 20000, n = 0, sink = 0;
    uint64_t t0 = vg_now_mono_ns();
    for (uint64_t r = 0; r < rounds; r++)
        for (size_t i = 0; i < VG_ARRAY_LEN(mix); i++, n++)
            sink += vg_policy_decide_path(p, mix[i].cls, mix[i].path).action;
    double secs = (double)(vg_now_mono_ns() - t0) / 1e9;
    printf("%-18s rules %4u  %12.0f decisions/s  %8.1f ns/decision  (checksum %llu)\n", name,
           count_rules(text), (double)n / secs, secs * 1e9 / (double)n,
           (unsigned long long)sink);
    vg_policy_free(p);
}

int main(void)
{
    run_case("default.policy", vg_default_policy_text);
    char *gen = generated_policy(500);
    run_case("generated-500", gen);
    free(gen);
    return 0;
}
