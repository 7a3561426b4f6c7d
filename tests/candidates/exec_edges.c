/* exec_edges: execs /usr/bin/true with arguments and environment strings
 * at the places a reader of them can get wrong: one ending on the last
 * byte of a page the next page of which is unmapped, an empty one, one of
 * 300 bytes (past what vigil reads ahead), one of 5000 (across pages), and
 * 150 environment variables (more than one read ahead holds).  The test
 * compares the exec record with what it passed. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096
#define NENV 150

static char long300[301], long5000[5001];
static char envbuf[NENV][16];

int main(void)
{
    char *m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || munmap(m + PAGE, PAGE) < 0) {
        perror("mmap");
        return 1;
    }
    /* "edge-eee...e" and "EDGE=1", each ending on the page's last byte */
    char *edge_env = m + PAGE - sizeof "EDGE=1";
    memcpy(edge_env, "EDGE=1", sizeof "EDGE=1");
    char *edge_arg = edge_env - 40;
    memset(edge_arg, 'e', 39);
    memcpy(edge_arg, "edge-", 5);
    edge_arg[39] = 0;
    memset(long300, 'x', 300);
    memset(long5000, 'y', 5000);
    char *argv[] = {"/usr/bin/true", edge_arg, "", long300, long5000, "end", NULL};
    char *envp[NENV + 4];
    int n = 0;
    for (int i = 0; i < NENV; i++) {
        snprintf(envbuf[i], sizeof envbuf[i], "V%d=%d", i, i);
        envp[n++] = envbuf[i];
    }
    static char longenv[400] = "LONGVAR=";
    memset(longenv + 8, 'z', 300);
    envp[n++] = longenv;
    envp[n++] = edge_env;
    envp[n] = NULL;
    execve(argv[0], argv, envp);
    perror("execve");
    return 1;
}
