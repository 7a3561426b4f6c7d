/* selfhash.h: the SHA-256 of the vigil binary that runs (/proc/self/exe),
 * for the log's seal.  Hashed by a thread of its own while the run goes
 * on (a few MB: about a millisecond, which no run should wait for), read
 * once: the running binary cannot change under it (a running executable
 * cannot be opened for writing, and /proc/self/exe is its inode even if
 * its name now points elsewhere). */
#ifndef VG_SELFHASH_H
#define VG_SELFHASH_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/fastsha.h"

struct vg_selfhash {
    pthread_t thread;
    bool started, joined, ok;
    uint8_t sum[VG_SHA256_LEN];
    char hex[2 * VG_SHA256_LEN + 1];
    void *buf;   /* the thread's read buffer, allocated before it starts */
};

/* Start hashing; on failure the hash is simply missing from the seal. */
void vg_selfhash_start(struct vg_selfhash *h);
/* Wait for it: the hex digest, or NULL if it could not be made.  Safe to
 * call again, and without a start. */
const char *vg_selfhash_wait(struct vg_selfhash *h);
#endif
