/* attack_filter_untraced.c: make a child vigil would not follow
 * (clone with CLONE_UNTRACED, also with junk in the flags' upper half,
 * which the kernel ignores); such a child would write untraced*.txt in the
 * workdir.  Then make children every other way (fork, vfork + exec,
 * posix_spawn, clone, a thread), each of which writes KIND.txt or execs
 * /usr/bin/true, and print "child KIND id=N" (its pid, or a thread's tid,
 * as the sandbox sees it). */
#include "attack_filter.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/wait.h>

#define HIGH_JUNK 0xffffffff00000000ull

extern char **environ;

static void touch(const char *name)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
}

/* Raw clone without a new stack: the child runs on a copy of ours. */
static long clone_writing(uint64_t flags, const char *name)
{
    long r = syscall(SYS_clone, flags, 0, 0, 0, 0);
    if (r == 0) {
        touch(name);
        _exit(0);
    }
    if (r > 0)
        waitpid((pid_t)r, NULL, 0);
    return r;
}

static void *thread_main(void *arg)
{
    (void)arg;
    printf("child thread id=%ld\n", (long)gettid());
    touch("thread.txt");
    return NULL;
}

static void forked(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        touch("fork.txt");
        _exit(0);
    }
    printf("child fork id=%d\n", pid);
    waitpid(pid, NULL, 0);
}

static void vforked(void)
{
    char *argv[] = {"/usr/bin/true", NULL};
    pid_t pid = vfork();
    if (pid == 0) {
        execve(argv[0], argv, environ);
        _exit(127);
    }
    printf("child vfork id=%d\n", pid);
    waitpid(pid, NULL, 0);
}

static void spawned(void)
{
    char *argv[] = {"/usr/bin/true", NULL};
    pid_t pid;
    if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
        return;
    printf("child spawn id=%d\n", pid);
    waitpid(pid, NULL, 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    report("clone_untraced", clone_writing(CLONE_UNTRACED | SIGCHLD, "untraced.txt"));
    report("clone_untraced_hi",
           clone_writing(HIGH_JUNK | CLONE_UNTRACED | SIGCHLD, "untraced_hi.txt"));
    report("clone_untraced_vfork", clone_writing(CLONE_UNTRACED | CLONE_VFORK | SIGCHLD,
                                                 "untraced_vfork.txt"));
    forked();
    vforked();
    spawned();
    long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) {
        touch("clone.txt");
        _exit(0);
    }
    printf("child clone id=%ld\n", pid);
    waitpid((pid_t)pid, NULL, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) == 0)
        pthread_join(t, NULL);
    return 0;
}
