/* test_usage.c: launcher/usage.c, the size of a host workdir measured
 * while a child renames a tree in it back and forth (the run's candidate
 * can): a walk racing the renames must neither see the tree twice (a
 * limit hit that is not), nor lose it (usage hidden by renaming), nor take
 * a name that changed kind under it for an unreadable directory. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "launcher/usage.h"
#include "tests/unit/check.h"
#include "util/util.h"

#define DEPTH 6
#define FILES_PER_DIR 50
#define FILE_BYTES (128 << 10)
#define TREE_BYTES ((uint64_t)DEPTH * FILES_PER_DIR * FILE_BYTES)
#define SAMPLES 300
#define LIMIT (TREE_BYTES / 2)
#define BIG_BYTES (LIMIT * 2)

static char dir[64];

static void put(const char *path, size_t bytes)
{
    static char block[FILE_BYTES];
    memset(block, 'x', sizeof block);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        _exit(3);
    for (size_t n = 0; n < bytes; n += sizeof block)
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
            _exit(3);
    close(fd);
}

/* dir/a/s/s/... with FILES_PER_DIR files in each, dir/c, a file and a
 * link that take the tree's name while it is away. */
static void make_tree(void)
{
    snprintf(dir, sizeof dir, "/tmp/vigil-test-usage-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    char path[512];
    int n = snprintf(path, sizeof path, "%s/a", dir);
    for (int d = 0; d < DEPTH; d++) {
        CHECK(mkdir(path, 0755) == 0);
        for (int f = 0; f < FILES_PER_DIR; f++) {
            char file[600];
            snprintf(file, sizeof file, "%s/f%d", path, f);
            put(file, FILE_BYTES);
        }
        n += snprintf(path + n, sizeof path - (size_t)n, "/s");
    }
    char *c = vg_xasprintf("%s/c", dir), *plain = vg_xasprintf("%s/plain", dir),
         *link = vg_xasprintf("%s/link", dir);
    CHECK(mkdir(c, 0755) == 0);
    put(plain, 0);
    CHECK(symlink("c", link) == 0);
    free(c);
    free(plain);
    free(link);
}

/* Until killed: the moves of tests/candidates/rename_churn.c; with grow,
 * first a file of BIG_BYTES inside the tree (carried along by it). */
static pid_t churn(bool grow)
{
    int ready[2];
    if (pipe(ready) < 0)
        return -1;
    pid_t pid = fork();
    if (pid != 0) {   /* back once the child has written what it writes */
        char c;
        close(ready[1]);
        CHECK(pid > 0 && read(ready[0], &c, 1) == 1);
        close(ready[0]);
        return pid;
    }
    close(ready[0]);
    if (chdir(dir) < 0)
        _exit(2);
    if (grow)
        put("a/s/big", BIG_BYTES);
    if (write(ready[1], "r", 1) != 1)
        _exit(2);
    static const char *moves[][2] = {
        {"a", "b"}, {"plain", "a"}, {"a", "plain"}, {"b", "c/a"}, {"link", "a"},
        {"a", "link"}, {"c/a", "a"}, {"a/s", "a/t"}, {"a/t", "a/s"},
    };
    for (;;)
        for (size_t i = 0; i < VG_ARRAY_LEN(moves); i++)
            if (rename(moves[i][0], moves[i][1]) < 0)
                _exit(2);
}

static void remove_tree(void)
{
    char *cmd = vg_xasprintf("rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    free(cmd);
}

static void stop(pid_t pid)
{
    int status;
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));   /* not an exit: every rename worked */
}

/* A tree that only moves adds nothing: never over a limit of half its
 * size (a tree counted twice would be), never blind (a name that became
 * a file or a link between the listing and the open is no unreadable
 * directory). */
static void test_renames_are_not_growth(void)
{
    make_tree();
    struct vg_usage u;
    vg_usage_init(&u, dir, LIMIT);
    CHECK(!u.disk_blind && u.disk_base >= TREE_BYTES);
    pid_t pid = churn(false);
    int over = 0, blind = 0;
    for (int i = 0; i < SAMPLES; i++) {
        vg_usage_sample(&u, true);
        over += u.disk_over;
        blind += u.disk_blind;
        u.disk_over = u.disk_blind = false;
    }
    stop(pid);
    if (!CHECK(over == 0 && blind == 0))
        fprintf(stderr, "  over %d, blind %d of %d samples\n", over, blind, SAMPLES);
    vg_usage_close(&u);
    remove_tree();
}

/* The same moves carrying a file of twice the limit: every sample sees
 * it (it cannot be hidden by renaming). */
static void test_renaming_hides_nothing(void)
{
    make_tree();
    struct vg_usage u;
    vg_usage_init(&u, dir, LIMIT);
    pid_t pid = churn(true);
    int under = 0;
    for (int i = 0; i < SAMPLES; i++) {
        u.disk_over = false;
        vg_usage_sample(&u, true);
        under += !u.disk_over;
    }
    stop(pid);
    if (!CHECK(under == 0))
        fprintf(stderr, "  under the limit in %d of %d samples\n", under, SAMPLES);
    vg_usage_close(&u);
    remove_tree();
}

int main(void)
{
    test_renames_are_not_growth();
    test_renaming_hides_nothing();
    return check_done();
}
