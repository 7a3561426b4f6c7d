/* own_tables.c: a thread with a file table or an fs_struct of its own.
 *   own_tables files    a clone()d thread without CLONE_FILES opens a file,
 *                       then fstat/fchmod/ftruncate/write/fsync on it
 *   own_tables unshare  a pthread that unshare(CLONE_FILES)s, then the same
 *   own_tables cwd      a clone()d thread without CLONE_FS chdirs into sub/
 *                       and sets umask 077, then creates "rel" (relative)
 *   own_tables fscwd    a pthread that unshare(CLONE_FS)s, then the same
 * in the current directory.  Prints one word per step (ok or the errno's
 * name) and, for the cwd cases, where "rel" landed and its mode: the same
 * bare and under vigil.  The thread's own fds are numbers the main thread
 * does not have (it closes its copy of the numbers first). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STACK_SIZE (256 * 1024)
#define STEPS 8
#define PAD_FDS 8 /* the thread's numbers are above what the main thread holds */

static const char *step_name[STEPS];
static int step_err[STEPS];
static int nsteps;

static void step(const char *name, int r)
{
    if (nsteps < STEPS) {
        step_name[nsteps] = name;
        step_err[nsteps] = r < 0 ? errno : 0;
        nsteps++;
    }
}

static void file_calls(void)
{
    /* numbers the main thread will not have: opened after the tables split,
     * above the pad the main thread closes */
    int pad[PAD_FDS];
    for (int i = 0; i < PAD_FDS; i++)
        pad[i] = open("/dev/null", O_RDONLY);
    int fd = open("own.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
    step("open", fd);
    struct stat st;
    step("fstat", fstat(fd, &st));
    step("fchmod", fchmod(fd, 0600));
    step("ftruncate", ftruncate(fd, 3));
    step("write", (int)write(fd, "abc", 3));
    step("fsync", fsync(fd));
    step("close", close(fd));
    for (int i = 0; i < PAD_FDS; i++)
        close(pad[i]);
}

static void cwd_calls(void)
{
    step("chdir", chdir("sub"));
    umask(077);
    int fd = open("rel", O_WRONLY | O_CREAT | O_TRUNC, 0666);
    step("open", fd);
    step("close", close(fd));
    step("mkdir", mkdir("reldir", 0777));
}

static const char *mode;

static int clone_main(void *arg)
{
    (void)arg;
    if (!strcmp(mode, "files"))
        file_calls();
    else
        cwd_calls();
    return 0;
}

static void *pthread_main(void *arg)
{
    (void)arg;
    int what = !strcmp(mode, "unshare") ? CLONE_FILES : CLONE_FS;
    step("unshare", unshare(what));
    if (what == CLONE_FILES)
        file_calls();
    else
        cwd_calls();
    return NULL;
}

/* A thread of this process (CLONE_THREAD) with its own file table or
 * fs_struct: the flags glibc's pthreads use, less CLONE_FILES or CLONE_FS. */
static int clone_thread(int without)
{
    static pid_t ctid = 1;
    char *stack = malloc(STACK_SIZE);
    if (!stack)
        return -1;
    int flags = (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                 CLONE_SYSVSEM | CLONE_CHILD_CLEARTID) & ~without;
    /* the thread uses this thread's TLS (errno): this one only waits, in
     * raw futex calls, until the kernel clears ctid at its exit */
    pid_t tid = clone(clone_main, stack + STACK_SIZE, flags, NULL, NULL, NULL, &ctid);
    if (tid < 0)
        return -1;
    pid_t now;
    while ((now = __atomic_load_n(&ctid, __ATOMIC_ACQUIRE)) != 0)
        syscall(SYS_futex, &ctid, FUTEX_WAIT, now, NULL, NULL, 0);
    return 0; /* the stack stays: the kernel may still be leaving it */
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "files";
    umask(022);
    if (!strcmp(mode, "cwd") || !strcmp(mode, "fscwd"))
        if (mkdir("sub", 0755) < 0 && errno != EEXIST)
            return 2;
    if (!strcmp(mode, "files") || !strcmp(mode, "cwd")) {
        if (clone_thread(!strcmp(mode, "files") ? CLONE_FILES : CLONE_FS) < 0)
            return 2;
    } else {
        pthread_t th;
        if (pthread_create(&th, NULL, pthread_main, NULL) != 0 || pthread_join(th, NULL) != 0)
            return 2;
    }
    for (int i = 0; i < nsteps; i++)
        printf("%s=%s\n", step_name[i], step_err[i] ? strerrorname_np(step_err[i]) : "ok");
    if (!strcmp(mode, "cwd") || !strcmp(mode, "fscwd")) {
        struct stat st;
        const char *where[] = {"rel", "sub/rel", "reldir", "sub/reldir"};
        for (size_t i = 0; i < sizeof where / sizeof *where; i++)
            if (stat(where[i], &st) == 0)
                printf("%s mode=%o\n", where[i], st.st_mode & 0777);
        printf("cwd-here=%s\n", access("sub", F_OK) == 0 ? "yes" : "no");
    } else {
        struct stat st;
        if (stat("own.txt", &st) == 0)
            printf("own.txt size=%lld mode=%o\n", (long long)st.st_size, st.st_mode & 0777);
    }
    return 0;
}
