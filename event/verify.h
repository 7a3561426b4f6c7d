/* verify.h: is a log what vigil wrote?  The chain of every record and the
 * trailer's seal (event/chain.h, docs/FORMAT.md "The chain and the seal"),
 * for `vigil verify`.  Nothing here trusts the input: the same bounds as
 * the reader (vg_mp_check before anything is looked at). */
#ifndef VG_VERIFY_H
#define VG_VERIFY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "event/sigkey.h"
#include "util/util.h"

enum vg_verdict {
    VG_VERIFY_INTACT,    /* every record's chain value holds, and the sealed trailer ends it */
    VG_VERIFY_ALTERED,   /* record `at` is not as written (or its bytes are not a record) */
    VG_VERIFY_TRUNCATED, /* intact up to its last record, but no trailer: cut off (or running) */
    VG_VERIFY_UNSEALED,  /* no chain at all: a log of an earlier version */
    VG_VERIFY_UNSIGNED,  /* intact and sealed, but not signed by the key asked for */
};

struct vg_verify {
    enum vg_verdict verdict;
    uint64_t records;   /* records whose chain value held */
    uint64_t at;        /* ALTERED: the record (0 = the header) */
    uint64_t offset;    /* ALTERED: its first byte; TRUNCATED: where the cut record starts */
    uint64_t cut;       /* TRUNCATED: bytes of a record cut off at the end (0: none) */
    bool signed_log;    /* the seal is signed, and the signature holds for the key it names */
    uint8_t chain[VG_CHAIN_LEN]; /* the last intact record's chain value */
    uint8_t key[VG_PUBKEY_LEN];  /* signed_log: the key the seal names */
    char why[240];      /* ALTERED, UNSIGNED: what is wrong */
};

/* Check the log at path; key: the public key the seal must be signed by,
 * or NULL.  0 with out filled, or -1 with err when the file cannot be
 * read at all. */
int vg_verify_path(const char *path, const uint8_t *key, struct vg_verify *out,
                   struct vg_err *err);
/* The same over bytes in memory (tests, the fuzz target). */
void vg_verify_buf(const uint8_t *p, size_t n, const uint8_t *key, struct vg_verify *out);
#endif
