/* late.c: see late.h.
 *
 * On the wire (a stream socket between two copies of the same binary):
 * a head (counts and the size of what follows) carrying the stdin fd as
 * SCM_RIGHTS, then each rule's access and exactness, then every string
 * NUL-terminated: argv, envp, the rules' paths.  pid 1 checks that the
 * strings are exactly as many as the head says, so a short or garbled
 * message is no command. */
#include "launcher/late.h"

#include "util/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct late_head {
    uint32_t argc, envc, nrules, pad;
    uint64_t bytes; /* what follows the head */
};

struct late_rule {
    uint64_t access;
    uint32_t exact, pad;
};

static uint32_t count(char *const *v)
{
    uint32_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

static void put_strings(struct vg_buf *b, char *const *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        vg_buf_put(b, v[i], strlen(v[i]) + 1);
}

int vg_late_send(int sock, const struct vg_plan *p, int stdin_fd, struct vg_err *err)
{
    const struct vg_landlock_plan *ll = &p->landlock;
    struct late_head h = {.argc = count(p->argv), .envc = count(p->envp), .nrules = ll->nrules};
    struct vg_buf body = {0};
    for (uint32_t i = 0; i < ll->nrules; i++) {
        struct late_rule r = {.access = ll->rules[i].access, .exact = ll->rules[i].exact};
        vg_buf_put(&body, &r, sizeof r);
    }
    put_strings(&body, p->argv, h.argc);
    put_strings(&body, p->envp, h.envc);
    for (uint32_t i = 0; i < ll->nrules; i++)
        vg_buf_put(&body, ll->rules[i].path, strlen(ll->rules[i].path) + 1);
    h.bytes = body.len;
    int rc = 0;
    if (h.bytes > VG_LATE_MAX) {
        errno = E2BIG;
        rc = -1;
    } else if (vg_fd_send(sock, &h, sizeof h, stdin_fd) != (ssize_t)sizeof h ||
               vg_write_all(sock, body.data, body.len) < 0) {
        rc = -1;
    }
    if (rc < 0)
        vg_errf(err, "hand the command to the held sandbox: %s", strerror(errno));
    vg_buf_free(&body);
    return rc;
}

static int read_full(int fd, void *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Point v[0..n) at the next n strings of *at (within end); NULL-terminated. */
static int take_strings(char **v, uint32_t n, char **at, const char *end)
{
    for (uint32_t i = 0; i < n; i++) {
        char *z = memchr(*at, 0, (size_t)(end - *at));
        if (!z)
            return -1;
        v[i] = *at;
        *at = z + 1;
    }
    v[n] = NULL;
    return 0;
}

/* Point held's argv, envp and rules into mem (the body, then room). */
static int point_into(char *mem, const struct late_head *h, struct vg_plan *held)
{
    size_t off = (h->bytes + sizeof(void *) - 1) & ~(sizeof(void *) - 1);
    char **argv = (char **)(mem + off), **envp = argv + h->argc + 1;
    struct vg_landlock_rule *rl = (struct vg_landlock_rule *)(envp + h->envc + 1);
    const struct late_rule *wire = (const struct late_rule *)mem;
    size_t fixed = (size_t)h->nrules * sizeof *wire;
    char *at = mem + fixed, *end = mem + h->bytes;
    if (fixed > h->bytes || !h->argc || take_strings(argv, h->argc, &at, end) < 0 ||
        take_strings(envp, h->envc, &at, end) < 0)
        return -1;
    for (uint32_t i = 0; i < h->nrules; i++) {
        char *z = memchr(at, 0, (size_t)(end - at));
        if (!z)
            return -1;
        rl[i] = (struct vg_landlock_rule){.path = at, .access = wire[i].access,
                                          .exact = wire[i].exact != 0};
        at = z + 1;
    }
    if (at != end)
        return -1;
    held->argv = argv;
    held->envp = envp;
    held->landlock.rules = rl;
    held->landlock.nrules = h->nrules;
    return 0;
}

/* One anonymous mapping holds everything: the body as read, then argv's
 * and envp's pointer arrays and the rules. */
static int lay_out(int sock, const struct late_head *h, struct vg_plan *held)
{
    size_t ptrs = ((size_t)h->argc + 1 + h->envc + 1) * sizeof(char *);
    size_t rules = (size_t)h->nrules * sizeof(struct vg_landlock_rule);
    size_t size = h->bytes + ptrs + rules + 2 * sizeof(void *); /* room to align */
    char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return -1;
    if (read_full(sock, mem, h->bytes) < 0 || point_into(mem, h, held) < 0) {
        munmap(mem, size);
        return -1;
    }
    return 0;
}

int vg_late_recv(int sock, struct vg_plan *held)
{
    struct late_head h;
    int fd = vg_fd_recv(sock, &h, sizeof h);
    if (fd < 0)
        return -1;
    if (h.bytes > VG_LATE_MAX || lay_out(sock, &h, held) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}
