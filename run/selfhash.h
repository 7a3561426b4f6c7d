/* selfhash.h: what says which vigil wrote a log, for the seal: the
 * build id the linker put in the binary (free: it is in memory), and,
 * for a signed log, the SHA-256 of the binary that runs (/proc/self/exe).
 * The SHA-256 is made by a thread of its own while the run goes on: a few
 * MB of binary cost the run 2-3 ms of start-up measured here (2 CPUs),
 * paid only where the log is to be evidence.  Read once: the running
 * binary cannot change under it (a running executable cannot be opened
 * for writing, and /proc/self/exe is its inode even if its name now
 * points elsewhere). */
#ifndef VG_SELFHASH_H
#define VG_SELFHASH_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/fastsha.h"

struct vg_selfhash {
    pthread_t thread;
    bool started, joined, ok;
    uint8_t sum[VG_SHA256_LEN];
    char hex[2 * VG_SHA256_LEN + 1];
    void *buf;   /* the thread's read buffer, allocated before it starts */
};

/* The GNU build id of the vigil binary (hex, into hex[cap]); false when
 * it has none. */
bool vg_self_build_id(char *hex, size_t cap);
/* Start hashing; on failure the hash is simply missing from the seal. */
void vg_selfhash_start(struct vg_selfhash *h);
/* Wait for it: the hex digest, or NULL if it could not be made.  Safe to
 * call again, and without a start. */
const char *vg_selfhash_wait(struct vg_selfhash *h);
#endif
