/* attack_exec_victim.c: the program a policy denies executing.  It needs
 * no libc (built -static -nostdlib): its very first instructions print
 * "VICTIM-RAN" and create the file named by its first argument (or
 * "victim-ran" in its cwd), so any instruction it runs is visible from
 * outside the sandbox.  The exec check must kill it before it runs one. */
#include <fcntl.h>
#include <sys/syscall.h>

static long sys3(long nr, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static const char said[] = "VICTIM-RAN\n";

__attribute__((used)) static void start_c(long *sp)
{
    sys3(SYS_write, 1, (long)said, sizeof said - 1);
    long argc = sp[0];
    const char *marker = argc > 1 ? (const char *)sp[2] : "victim-ran";
    long fd = sys3(SYS_open, (long)marker, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        sys3(SYS_write, fd, (long)said, sizeof said - 1);
    sys3(SYS_exit_group, 0, 0, 0);
}

/* The kernel enters at _start with the stack pointer on argc. */
__asm__(".globl _start\n_start:\n mov %rsp, %rdi\n and $-16, %rsp\n call start_c\n hlt\n");
