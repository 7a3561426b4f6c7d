/* selfhash.c: see selfhash.h. */
#include "run/selfhash.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read size: large enough that the calls cost nothing beside hashing. */
#define READ_CHUNK (256u * 1024)

/* The thread makes system calls and hashes, nothing else: it takes no
 * lock of libc (no malloc, no stdio), so the sandbox's fork can happen
 * while it runs. */
static void *hash_self(void *arg)
{
    struct vg_selfhash *h = arg;
    struct vg_err err;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    h->ok = vg_fastsha_fd(fd, "/proc/self/exe", h->buf, READ_CHUNK, h->sum, &err) == 0;
    close(fd);
    return NULL;
}

void vg_selfhash_start(struct vg_selfhash *h)
{
    memset(h, 0, sizeof *h);
    h->buf = vg_xmalloc(READ_CHUNK);
    /* every signal blocked in the thread: vigil's own handling (SIGCHLD,
     * SIGINT, ...) must never land on it */
    sigset_t all, old;
    sigfillset(&all);
    if (pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
        return;
    h->started = pthread_create(&h->thread, NULL, hash_self, h) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

const char *vg_selfhash_wait(struct vg_selfhash *h)
{
    if (h->started && !h->joined) {
        pthread_join(h->thread, NULL);
        h->joined = true;
        if (h->ok)
            vg_hex(h->sum, VG_SHA256_LEN, h->hex);
    }
    if (!h->started || h->joined) {
        free(h->buf);
        h->buf = NULL;
    }
    return h->joined && h->ok ? h->hex : NULL;
}

struct build_id {
    char *hex;
    size_t cap;
    bool found;
};

/* The notes of one loaded object's PT_NOTE segments: a GNU build id. */
static void find_note(const uint8_t *p, size_t n, struct build_id *b)
{
    size_t off = 0;
    while (!b->found && n - off >= sizeof(ElfW(Nhdr))) {
        const ElfW(Nhdr) *nh = (const void *)(p + off);
        size_t name = (nh->n_namesz + 3) & ~(size_t)3, desc = (nh->n_descsz + 3) & ~(size_t)3;
        off += sizeof *nh;
        if (name > n - off || desc > n - off - name)
            return;
        if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == sizeof "GNU" &&
            !memcmp(p + off, "GNU", sizeof "GNU") && 2 * nh->n_descsz < b->cap) {
            vg_hex(p + off + name, nh->n_descsz, b->hex);
            b->found = true;
        }
        off += name + desc;
    }
}

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct build_id *b = arg;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_NOTE)
            find_note((const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
                      info->dlpi_phdr[i].p_memsz, b);
    return 1;  /* the first object is the program itself: no other */
}

bool vg_self_build_id(char *hex, size_t cap)
{
    struct build_id b = {.hex = hex, .cap = cap};
    dl_iterate_phdr(each_object, &b);
    return b.found;
}
