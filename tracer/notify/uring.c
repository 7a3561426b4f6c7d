/* uring.c: see uring.h.  A ring of RING_ENTRIES submission slots used one
 * request at a time by the notification thread, with raw system calls
 * (vigil's dependencies do not include liburing): submit the open (and the
 * close of the fd left to it, if any), wait for their completions in the
 * same io_uring_enter. */
#include "tracer/notify/uring.h"

#include <errno.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/syscalls.h"

#define RING_ENTRIES 2

static void *map_ring(int fd, size_t len, off_t what)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, what);
    return p == MAP_FAILED ? NULL : p;
}

static void unmap(void *p, size_t len)
{
    if (p)
        munmap(p, len);
}

int vg_uring_init(struct vg_uring *r)
{
    *r = (struct vg_uring){.fd = -1, .personality = -1, .linger = -1};
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    int fd = (int)syscall(VG_NR_io_uring_setup, RING_ENTRIES, &p);
    if (fd < 0)
        return -1;
    r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    r->sqe_len = p.sq_entries * sizeof(struct io_uring_sqe);
    r->sq_map = map_ring(fd, r->sq_len, IORING_OFF_SQ_RING);
    r->cq_map = map_ring(fd, r->cq_len, IORING_OFF_CQ_RING);
    r->sqe_map = map_ring(fd, r->sqe_len, IORING_OFF_SQES);
    r->fd = fd;
    if (!r->sq_map || !r->cq_map || !r->sqe_map) {
        int e = errno;
        vg_uring_free(r);
        errno = e;
        return -1;
    }
    char *sq = r->sq_map, *cq = r->cq_map;
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->cq_head = (unsigned *)(cq + p.cq_off.head);
    r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r->cqes = cq + p.cq_off.cqes;
    r->sqes = r->sqe_map;
    return 0;
}

int vg_uring_take_creds(struct vg_uring *r)
{
    if (r->fd < 0) {
        errno = ENOSYS;
        return -1;
    }
    int id = (int)syscall(VG_NR_io_uring_register, r->fd, IORING_REGISTER_PERSONALITY, NULL, 0);
    if (id < 0)
        return -1;
    r->personality = id;
    return 0;
}

bool vg_uring_ready(const struct vg_uring *r)
{
    return r->fd >= 0 && r->personality >= 0;
}

static void put_sqe(struct vg_uring *r, unsigned at, const struct io_uring_sqe *e)
{
    unsigned slot = at & *r->sq_mask;
    struct io_uring_sqe *sqe = (struct io_uring_sqe *)r->sqes + slot;
    *sqe = *e;
    r->sq_array[slot] = slot;
}

/* Submit n entries (put_sqe'd from the tail) and reap their n completions
 * into res[user_data].  False when the ring cannot be trusted any more: it
 * is freed, and what it was asked may or may not have run. */
static bool run_entries(struct vg_uring *r, unsigned n, int *res)
{
    atomic_store_explicit((_Atomic unsigned *)r->sq_tail, *r->sq_tail + n, memory_order_release);
    int got;
    do
        got = (int)syscall(VG_NR_io_uring_enter, r->fd, n, n, IORING_ENTER_GETEVENTS, NULL, 0);
    while (got < 0 && errno == EINTR);
    if (got != (int)n) {
        /* An entry may still be in the ring, naming the caller's memory:
         * nothing is ever submitted through this ring again. */
        r->linger = -1; /* its close may have run: never closed twice */
        vg_uring_free(r);
        return false;
    }
    for (unsigned done = 0; done < n; done++) {
        unsigned head = *r->cq_head;
        /* Submitted; its completion may not be in when a signal ended the wait. */
        while (atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire) == head)
            if (syscall(VG_NR_io_uring_enter, r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0 &&
                errno != EINTR) {
                r->linger = -1;
                vg_uring_free(r); /* cannot happen with a live ring */
                return false;
            }
        const struct io_uring_cqe *cqe =
            (const struct io_uring_cqe *)r->cqes + (head & *r->cq_mask);
        if (cqe->user_data < n)
            res[cqe->user_data] = cqe->res;
        atomic_store_explicit((_Atomic unsigned *)r->cq_head, head + 1, memory_order_release);
    }
    return true;
}

enum { ENTRY_OPEN, ENTRY_CLOSE };

int vg_uring_openat2(struct vg_uring *r, int dirfd, const char *path, const struct open_how *how)
{
    if (!vg_uring_ready(r))
        return -ENOSYS;
    struct open_how cached = *how;
    cached.resolve |= RESOLVE_CACHED;
    unsigned tail = *r->sq_tail, n = 0;
    put_sqe(r, tail + n++, &(struct io_uring_sqe){
        .opcode = IORING_OP_OPENAT2, .fd = dirfd, .addr = (uint64_t)(uintptr_t)path,
        .len = sizeof cached, .off = (uint64_t)(uintptr_t)&cached,
        .personality = (uint16_t)r->personality, .user_data = ENTRY_OPEN});
    if (r->linger >= 0) /* vigil's own fd: closed as vigil */
        put_sqe(r, tail + n++, &(struct io_uring_sqe){
            .opcode = IORING_OP_CLOSE, .fd = r->linger, .user_data = ENTRY_CLOSE});
    int res[2] = {-EAGAIN, 0};
    if (!run_entries(r, n, res))
        return -EAGAIN;
    r->linger = -1; /* closed (a failed close of an fd of ours closes it too) */
    return res[ENTRY_OPEN];
}

void vg_uring_close_later(struct vg_uring *r, int fd)
{
    if (r->fd < 0 || r->linger >= 0) {
        close(fd); /* no ring to close it with, or one waits already */
        return;
    }
    r->linger = fd;
}

void vg_uring_free(struct vg_uring *r)
{
    if (r->linger >= 0)
        close(r->linger);
    unmap(r->sq_map, r->sq_len);
    unmap(r->cq_map, r->cq_len);
    unmap(r->sqe_map, r->sqe_len);
    if (r->fd >= 0)
        close(r->fd);
    *r = (struct vg_uring){.fd = -1, .personality = -1, .linger = -1};
}
