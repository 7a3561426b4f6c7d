/* first_instruction.c: the candidate of the start-up latency bench
 * (bench/hold.py).  Its first act, before any C library or loader code
 * runs (there is none: -static -nostdlib, its own _start), is to read
 * CLOCK_MONOTONIC with a raw system call and write the 8 bytes of
 * nanoseconds to stdout; then it exits.  CLOCK_MONOTONIC is the host's in
 * every sandbox measured (none has a time namespace), so the driver
 * subtracts the moment it asked for the run.
 * Build: gcc -O2 -static -nostdlib -fno-stack-protector -o first_instruction first_instruction.c */
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

static long raw3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

void _start(void)
{
    struct timespec ts;
    raw3(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0);
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    long ok = raw3(SYS_write, 1, (long)&ns, sizeof ns) == (long)sizeof ns;
    raw3(SYS_exit_group, ok ? 0 : 1, 0, 0);
    for (;;)
        ;
}
