/* test_cpu_limits.c: the two CPU limits, `cpu` (each process) and
 * `cputotal` (the whole run): how cputotal is written and read, which
 * RLIMIT_CPU a run gets where no cgroup counts its CPU time, how long the
 * CPU watch sleeps between two readings as the budget runs out, and what
 * it makes of the cgroup files it reads (v1 cpuacct.usage, v2 cpu.stat),
 * on files laid out as the kernel's. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "launcher/cgroup.h"
#include "launcher/cpuwatch.h"
#include "launcher/limits.h"
#include "tests/unit/check.h"
#include "tests/unit/policy_text.h"

#define MS 1000000ull   /* ns */

static void test_written_and_read(void)
{
    uint64_t v;
    char buf[32];
    CHECK(vg_limit_from_name("cputotal") == VG_LIM_CPUTOTAL);
    CHECK(!strcmp(vg_limit_row(VG_LIM_CPUTOTAL)->flag, "cpu-total"));
    CHECK(vg_limit_row(VG_LIM_CPUTOTAL)->def == 0);              /* none unless asked */
    CHECK(vg_limit_parse(VG_LIM_CPUTOTAL, "2s", &v) && v == 2000);
    CHECK(vg_limit_parse(VG_LIM_CPUTOTAL, "1500ms", &v) && v == 1500);  /* not rounded */
    CHECK(!vg_limit_parse(VG_LIM_CPUTOTAL, "0", &v) && !vg_limit_parse(VG_LIM_CPUTOTAL, "2x", &v));
    vg_limit_format(VG_LIM_CPUTOTAL, 2000, buf, sizeof buf);
    CHECK_STR(buf, "2s");
    struct vg_policy *p = pol("version 1\nlimit cputotal 2.5s\n");
    CHECK(vg_policy_limits(p)->set[VG_LIM_CPUTOTAL] && vg_policy_limits(p)->v[VG_LIM_CPUTOTAL] == 2500);
    vg_policy_free(p);
}

/* Without a cpuacct group, cputotal is RLIMIT_CPU too: the lower of the
 * two, in whole seconds, rounded up. */
static void test_rlimit_fallback(void)
{
    struct vg_enforce e = {0};
    struct vg_limits l;
    uint64_t s = 0;
    vg_limits_defaults(&l);                          /* cpu 30s, no cputotal */
    e.how[VG_LIM_CPU] = VG_MECH_RLIMIT;
    CHECK(vg_enforce_rlimit(&e, &l, RLIMIT_CPU, &s) && s == 30);
    l.v[VG_LIM_CPUTOTAL] = 1500;
    e.how[VG_LIM_CPUTOTAL] = VG_MECH_RLIMIT;
    CHECK(vg_enforce_rlimit(&e, &l, RLIMIT_CPU, &s) && s == 2);
    l.v[VG_LIM_CPUTOTAL] = 90 * 1000;
    CHECK(vg_enforce_rlimit(&e, &l, RLIMIT_CPU, &s) && s == 30);
    e.how[VG_LIM_CPUTOTAL] = VG_MECH_CGROUP_V1;      /* the watch holds it */
    l.v[VG_LIM_CPUTOTAL] = 1500;
    CHECK(vg_enforce_rlimit(&e, &l, RLIMIT_CPU, &s) && s == 30);
    CHECK(!vg_enforce_rlimit(&e, &l, RLIMIT_NOFILE, &s));  /* files: not an rlimit here */
}

/* Never longer than what is left spread over every CPU, nor than the
 * other samplers' period, nor shorter than the floor. */
static void test_sleeps_shrink_with_the_budget(void)
{
    struct vg_cpu_watch w = {.fd = 0, .budget_ns = 2000 * MS, .ncpus = 4};
    CHECK(vg_cpu_watch_next_ns(&w) == VG_CPUWATCH_MAX_NS);
    w.used_ns = 1900 * MS;
    CHECK(vg_cpu_watch_next_ns(&w) == 25 * MS);
    w.used_ns = 1999 * MS;
    CHECK(vg_cpu_watch_next_ns(&w) == VG_CPUWATCH_MIN_NS);
    w.used_ns = 5000 * MS;
    CHECK(vg_cpu_watch_next_ns(&w) == VG_CPUWATCH_MIN_NS);
    w.fd = -1;
    CHECK(vg_cpu_watch_next_ns(&w) == 0);            /* no watch */
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* A group laid out as the kernel's, read the way the supervisor does. */
static void check_group(int version, const char *usage_text, uint64_t budget_ms, bool over,
                        uint64_t used_ns)
{
    char dir[] = "/tmp/vigil-cpu-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    if (version == 2) {
        put(dir, "cpu.stat", usage_text);
    } else {
        put(dir, "cpuacct.usage", usage_text);
        put(dir, "cpuacct.usage_user", "3000000\n");
    }
    struct vg_cgroup cg = {.dir = {[VG_CG_CPUACCT] = dir}, .version = {[VG_CG_CPUACCT] = version}};
    struct vg_cpu_watch w;
    vg_cpu_watch_init(&w, &cg, budget_ms, 2);
    CHECK(w.fd >= 0);
    CHECK(vg_cpu_watch_sample(&w) == over && w.over == over);
    CHECK(w.used_ns == used_ns);
    vg_cpu_watch_close(&w);
    CHECK(w.fd == -1);
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, version == 2 ? "cpu.stat" : "cpuacct.usage");
    unlink(path);
    snprintf(path, sizeof path, "%s/cpuacct.usage_user", dir);
    unlink(path);
    CHECK(rmdir(dir) == 0);
}

static void test_reads_the_groups_count(void)
{
    check_group(1, "5000000\n", 10, false, 5 * MS);
    check_group(1, "12000000\n", 10, true, 12 * MS);
    check_group(2, "usage_usec 5000\nuser_usec 3000\nsystem_usec 2000\n", 10, false, 5 * MS);
    check_group(2, "nr_periods 0\nusage_usec 11000\n", 10, true, 11 * MS);
    /* what cannot be read is not under the limit */
    check_group(1, "junk\n", 10, true, 0);
    check_group(2, "user_usec 3000\n", 10, true, 0);
    /* no budget, or no group: no watch */
    struct vg_cpu_watch w;
    struct vg_cgroup none = {0};
    vg_cpu_watch_init(&w, &none, 10, 2);
    CHECK(w.fd == -1 && !vg_cpu_watch_sample(&w));
}

/* The result's CPU time: the group's total, split as user and the rest. */
static void test_the_result_reads_the_split(void)
{
    char dir[] = "/tmp/vigil-cpu-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    put(dir, "cpu.stat", "usage_usec 5000\nuser_usec 3500\nsystem_usec 1400\n");
    struct vg_cgroup cg = {.dir = {[VG_CG_CPUACCT] = dir}, .version = {[VG_CG_CPUACCT] = 2}};
    struct vg_cg_usage u;
    vg_cgroup_read(&cg, &u);
    CHECK(u.have_cpu && u.cpu_user_ns == 3500000 && u.cpu_sys_ns == 1500000);
    char path[128];
    snprintf(path, sizeof path, "%s/cpu.stat", dir);
    unlink(path);
    CHECK(rmdir(dir) == 0);
}

int main(void)
{
    test_written_and_read();
    test_rlimit_fallback();
    test_sleeps_shrink_with_the_budget();
    test_reads_the_groups_count();
    test_the_result_reads_the_split();
    return check_done();
}
