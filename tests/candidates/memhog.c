/* memhog.c: malloc and touch 16 MiB blocks until 2 GiB are held or
 * malloc fails; report how much it got (stdout) and exit 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK (16u << 20)

int main(void)
{
    size_t held = 0;
    while (held < (2ull << 30)) {
        char *p = malloc(BLOCK);
        if (!p) {
            printf("malloc failed after %zu MiB\n", held >> 20);
            return 1;
        }
        memset(p, 0xa5, BLOCK);
        held += BLOCK;
    }
    printf("held %zu MiB\n", held >> 20);
    return 0;
}
