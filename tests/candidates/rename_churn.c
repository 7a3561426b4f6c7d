/* rename_churn.c: moves a directory tree back and forth under the workdir
 * as fast as it can for SECONDS (argv[1], default 3), so that a walk of the
 * workdir meets names that vanish, move under it, or reappear elsewhere.
 * argv[2], argv[3]: files in each directory of the tree and their size
 * (default 4, 1 byte); argv[4]: bytes of one more file written inside the
 * tree before the churn, carried along by it (default none).  Exits 0
 * after printing "churned N". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 6

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int files_per_dir = 4;
static long file_bytes = 1;

static int make_tree(void)
{
    char path[512] = "a";
    for (int d = 0; d < DEPTH; d++) {
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            return -1;
        for (int f = 0; f < files_per_dir; f++) {
            char file[600];
            snprintf(file, sizeof file, "%s/f%d", path, f);
            FILE *fp = fopen(file, "w");
            if (!fp)
                return -1;
            for (long b = 0; b < file_bytes; b++)
                fputc('x', fp);
            fclose(fp);
        }
        strncat(path, "/s", sizeof path - strlen(path) - 1);
    }
    if (mkdir("c", 0755) < 0 && errno != EEXIST)
        return -1;
    FILE *fp = fopen("plain", "w");   /* a file and a link that take the tree's name */
    if (!fp)
        return -1;
    fclose(fp);
    return symlink("c", "link") < 0 && errno != EEXIST ? -1 : 0;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3;
    if (argc > 2)
        files_per_dir = atoi(argv[2]);
    if (argc > 3)
        file_bytes = atol(argv[3]);
    if (make_tree() < 0) {
        perror("make_tree");
        return 2;
    }
    long big = argc > 4 ? atol(argv[4]) : 0;
    FILE *fp = big ? fopen("a/s/big", "w") : NULL;
    if (big && !fp)
        return 2;
    for (long b = 0; b < big; b++)
        fputc('x', fp);
    if (fp && fclose(fp) != 0)
        return 2;
    /* a -> b -> c/a -> a, a sub-directory in and out (names the walker
     * may be reading and ones it may already have passed), and while the
     * tree is away a plain file, then a symlink, under its name */
    const char *moves[][2] = { {"a", "b"}, {"plain", "a"}, {"a", "plain"},
                               {"b", "c/a"}, {"link", "a"}, {"a", "link"},
                               {"c/a", "a"}, {"a/s", "a/t"}, {"a/t", "a/s"} };
    const size_t nmoves = sizeof moves / sizeof moves[0];
    unsigned long n = 0;
    double end = now() + secs;
    while (now() < end) {
        for (size_t i = 0; i < nmoves; i++)
            if (rename(moves[i][0], moves[i][1]) < 0) {
                perror(moves[i][0]);
                return 2;
            }
        n++;
    }
    printf("churned %lu\n", n);
    return 0;
}
