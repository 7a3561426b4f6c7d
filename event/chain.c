/* chain.c: see chain.h. */
#include "event/chain.h"

#include <string.h>

#include "util/fastsha.h"

_Static_assert(VG_CHAIN_LEN == VG_SHA256_LEN, "a chain value is a SHA-256");
_Static_assert(sizeof VG_CHAIN_KEY_BYTES - 1 == VG_CHAIN_KEY_LEN &&
               sizeof VG_SIG_KEY_BYTES - 1 == VG_SIG_KEY_LEN, "tail layouts");

void vg_chain_step(const uint8_t prev[VG_CHAIN_LEN], const uint8_t *p, size_t n,
                   uint8_t out[VG_CHAIN_LEN])
{
    uint8_t h[VG_CHAIN_LEN];
    memcpy(h, prev, sizeof h);  /* out may be prev */
    vg_fastsha2(h, sizeof h, p, n, out);
}

void vg_seal_message(const uint8_t chain[VG_CHAIN_LEN], uint8_t msg[VG_SEAL_MSG_LEN])
{
    memcpy(msg, VG_SEAL_CONTEXT, VG_SEAL_CONTEXT_LEN);
    memcpy(msg + VG_SEAL_CONTEXT_LEN, chain, VG_CHAIN_LEN);
}
