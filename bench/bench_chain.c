/* bench_chain.c: the log chain's cost per record (event/chain.h), apart
 * from everything else a record costs: vg_chain_step over records of the
 * open loop's size, and a whole vg_log_write of one such record to
 * /dev/null, in ns.  BENCH_QUICK=1: fewer rounds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event/chain.h"
#include "event/writer.h"

/* An allowed openat record of bench/workloads/calls.c is about this long. */
#define RECORD_BYTES 300

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
    long n = getenv("BENCH_QUICK") && !strcmp(getenv("BENCH_QUICK"), "1") ? 200000 : 2000000;
    static uint8_t rec[RECORD_BYTES];
    uint8_t h[VG_CHAIN_LEN] = {0};
    memset(rec, 0x5a, sizeof rec);
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        vg_chain_step(h, rec, sizeof rec, h);
    double step = (now_ns() - t0) / (double)n;

    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    struct vg_log *log = vg_log_from_fd(fd, "/dev/null");
    const char *flags[] = {"O_RDONLY", "O_CLOEXEC"};
    struct vg_record r = {.type = VG_REC_SYSCALL};
    r.u.sys = (struct vg_syscall_ev){.pid = 2, .tid = 2, .hpid = 4242, .htid = 4242, .proc = 2,
                                     .nr = 257, .name = "openat", .cls = VG_CLASS_READ,
                                     .decision = VG_DEC_ALLOW, .carried = true, .installed = true};
    r.u.sys.args = (struct vg_args){.path = "/etc/hostname", .resolved = "/etc/hostname",
                                    .flags = 0x80000, .flag_names = flags, .nflags = 2,
                                    .mode = -1, .port = -1};
    r.u.sys.rule = (struct vg_rule_src){"bench/bench.policy", 16, "allow read /usr/** /etc/**"};
    t0 = now_ns();
    for (long i = 0; i < n; i++) {
        r.u.sys.ts_ns = (uint64_t)i;
        if (vg_log_write(log, &r) < 0)
            return 1;
    }
    double write = (now_ns() - t0) / (double)n;
    vg_log_close(log);
    printf("chain step, %d-byte record: %.0f ns\n", RECORD_BYTES, step);
    printf("vg_log_write of an allowed openat record to /dev/null, chain included: %.0f ns\n",
           write);
    return 0;
}
