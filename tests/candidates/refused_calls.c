/* refused_calls.c: try, one by one, the calls a sandboxed candidate must
 * never get, and print one line per attempt:  NAME ret=R errno=E
 * Run with the names to try as arguments (default: all). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

/* getpid through the 32-bit entry point (int $0x80, eax = 20). */
static long try_int80(void)
{
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
    if (ret < 0 && ret > -4096) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}

/* getpid (39) with the x32 bit set, through the native `syscall`. */
static long try_x32(void)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(39L | 0x40000000L) : "rcx", "r11", "memory");
    if (ret < 0 && ret > -4096) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}

static long try_io_uring(void)
{
    char params[120];
    memset(params, 0, sizeof params);
    return syscall(425, 8, params);
}

static long try_tiocsti(void)
{
    char c = 'x';
    return ioctl(0, TIOCSTI, &c);
}

static long try_unshare_user(void) { return unshare(CLONE_NEWUSER); }
static long try_mount(void) { return mount("none", "/tmp", "tmpfs", 0, NULL); }
static long try_ptrace(void) { return ptrace(PTRACE_TRACEME, 0, NULL, NULL); }

static long try_bpf(void)
{
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.map_type = BPF_MAP_TYPE_ARRAY;
    attr.key_size = 4;
    attr.value_size = 4;
    attr.max_entries = 1;
    return syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
}

/* keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, create) */
static long try_keyctl(void) { return syscall(SYS_keyctl, 0, -3, 1); }

static const struct {
    const char *name;
    long (*fn)(void);
} attempts[] = {
    {"int80", try_int80},     {"x32", try_x32},           {"io_uring_setup", try_io_uring},
    {"tiocsti", try_tiocsti}, {"unshare_user", try_unshare_user}, {"mount", try_mount},
    {"ptrace_traceme", try_ptrace}, {"bpf", try_bpf},     {"keyctl", try_keyctl},
};

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    for (size_t i = 0; i < sizeof attempts / sizeof attempts[0]; i++) {
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted |= !strcmp(argv[a], attempts[i].name);
        if (!wanted)
            continue;
        errno = 0;
        long r = attempts[i].fn();
        printf("%s ret=%ld errno=%s\n", attempts[i].name, r, r < 0 ? strerrorname_np(errno) : "0");
    }
    return 0;
}
