/* uring.c: see uring.h.  A ring of RING_ENTRIES submission slots used one
 * request at a time by the notification thread, with raw system calls
 * (vigil's dependencies do not include liburing): submit one entry, wait
 * for its completion in the same io_uring_enter. */
#include "tracer/notify/uring.h"

#include <errno.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

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
    *r = (struct vg_uring){.fd = -1, .personality = -1};
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    int fd = (int)syscall(SYS_io_uring_setup, RING_ENTRIES, &p);
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
    int id = (int)syscall(SYS_io_uring_register, r->fd, IORING_REGISTER_PERSONALITY, NULL, 0);
    if (id < 0)
        return -1;
    r->personality = id;
    return 0;
}

bool vg_uring_ready(const struct vg_uring *r)
{
    return r->fd >= 0 && r->personality >= 0;
}

int vg_uring_openat2(struct vg_uring *r, int dirfd, const char *path, const struct open_how *how)
{
    if (!vg_uring_ready(r))
        return -ENOSYS;
    struct open_how cached = *how;
    cached.resolve |= RESOLVE_CACHED;
    unsigned tail = *r->sq_tail, slot = tail & *r->sq_mask;
    struct io_uring_sqe *sqe = (struct io_uring_sqe *)r->sqes + slot;
    memset(sqe, 0, sizeof *sqe);
    sqe->opcode = IORING_OP_OPENAT2;
    sqe->fd = dirfd;
    sqe->addr = (uint64_t)(uintptr_t)path;
    sqe->len = sizeof cached;
    sqe->off = (uint64_t)(uintptr_t)&cached;
    sqe->personality = (uint16_t)r->personality;
    r->sq_array[slot] = slot;
    atomic_store_explicit((_Atomic unsigned *)r->sq_tail, tail + 1, memory_order_release);
    int n;
    do
        n = (int)syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
    while (n < 0 && errno == EINTR);
    if (n != 1) {
        /* The entry may still be in the ring, naming this frame's memory:
         * nothing is ever submitted through this ring again. */
        vg_uring_free(r);
        return -EAGAIN;
    }
    unsigned head = *r->cq_head;
    /* Submitted; its completion may not be in when a signal ended the wait. */
    while (atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire) == head)
        if (syscall(SYS_io_uring_enter, r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0 &&
            errno != EINTR) {
            vg_uring_free(r); /* cannot happen with a live ring */
            return -EAGAIN;
        }
    const struct io_uring_cqe *cqe = (const struct io_uring_cqe *)r->cqes + (head & *r->cq_mask);
    int res = cqe->res;
    atomic_store_explicit((_Atomic unsigned *)r->cq_head, head + 1, memory_order_release);
    return res;
}

void vg_uring_free(struct vg_uring *r)
{
    unmap(r->sq_map, r->sq_len);
    unmap(r->cq_map, r->cq_len);
    unmap(r->sqe_map, r->sqe_len);
    if (r->fd >= 0)
        close(r->fd);
    *r = (struct vg_uring){.fd = -1, .personality = -1};
}
