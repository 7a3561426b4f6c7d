/* chain.h: the log's hash chain and the seal's signature, as bytes
 * (docs/FORMAT.md, "The chain and the seal").  Every record is a msgpack
 * map whose last entry is "chain": a 32-byte bin, the record's chain value
 *     h_i = SHA-256(h_{i-1} || the record's bytes before that value)
 * with h_-1 all zero bytes.  Raw bytes, not a re-encoding: any msgpack
 * reader can find them, and no two encodings of one record can disagree.
 * A signed trailer has one entry more, "sig": a 64-byte bin, the ed25519
 * signature of VG_SEAL_CONTEXT || h_trailer.  The writer (event/writer.c)
 * appends them; the verifier (event/verify.c) checks them. */
#ifndef VG_EVENT_CHAIN_H
#define VG_EVENT_CHAIN_H
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"

/* The bytes of the key and the bin header before each value, exactly as
 * written (fixstr key, bin 8): a record whose tail differs was not
 * written by vigil. */
#define VG_CHAIN_KEY_BYTES "\xa5" "chain" "\xc4\x20"
#define VG_CHAIN_KEY_LEN 8
#define VG_SIG_KEY_BYTES "\xa3" "sig" "\xc4\x40"
#define VG_SIG_KEY_LEN 6
#define VG_CHAIN_TAIL (VG_CHAIN_KEY_LEN + VG_CHAIN_LEN)
#define VG_SIG_TAIL (VG_SIG_KEY_LEN + VG_SIG_LEN)

/* What a seal's signature signs, before the trailer's chain value: a
 * signature made for this can serve no other purpose the key may have. */
#define VG_SEAL_CONTEXT "vigil log seal v1\n"
#define VG_SEAL_CONTEXT_LEN (sizeof VG_SEAL_CONTEXT - 1)
#define VG_SEAL_MSG_LEN (VG_SEAL_CONTEXT_LEN + VG_CHAIN_LEN)

/* out := SHA-256(prev || p[0..n)): one link (out may be prev). */
void vg_chain_step(const uint8_t prev[VG_CHAIN_LEN], const uint8_t *p, size_t n,
                   uint8_t out[VG_CHAIN_LEN]);
/* The message a seal's signature signs, for a trailer whose chain value
 * is chain. */
void vg_seal_message(const uint8_t chain[VG_CHAIN_LEN], uint8_t msg[VG_SEAL_MSG_LEN]);
#endif
