/* sigkey.h: the ed25519 keys that sign a log's seal (libsodium), read
 * from the PEM files OpenSSL writes:
 *     openssl genpkey -algorithm ed25519 -out seal.key
 *     openssl pkey -in seal.key -pubout -out seal.pub
 * (PKCS#8 for the private key, SubjectPublicKeyInfo for the public one;
 * nothing else is accepted: no passphrase, no other algorithm). */
#ifndef VG_SIGKEY_H
#define VG_SIGKEY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

#define VG_PUBKEY_LEN 32
#define VG_SEED_LEN 32
#define VG_SECRET_LEN 64 /* libsodium's form: the seed, then the public key */
#define VG_SIGNATURE_LEN 64
/* Larger is no key file. */
#define VG_KEYFILE_MAX 4096

struct vg_sigkey {
    uint8_t secret[VG_SECRET_LEN];
    uint8_t pub[VG_PUBKEY_LEN];
};

/* The 32 key bytes of one PEM text (text[0..n), NUL not needed): a
 * PRIVATE KEY block (private true: the seed) or a PUBLIC KEY block.
 * false with *why saying what is wrong.  Pure: the fuzz target's entry. */
bool vg_pem_ed25519(const char *text, size_t n, bool private_key, uint8_t out[32],
                    const char **why);
/* A private key file (vigil run --sign-key).  -1 with err naming the file. */
int vg_sigkey_load(const char *path, struct vg_sigkey *k, struct vg_err *err);
/* A public key file (vigil verify --key), or a private key file: its
 * public half.  -1 with err naming the file. */
int vg_pubkey_load(const char *path, uint8_t pub[VG_PUBKEY_LEN], struct vg_err *err);
void vg_sigkey_sign(const struct vg_sigkey *k, const uint8_t *msg, size_t n,
                    uint8_t sig[VG_SIGNATURE_LEN]);
bool vg_sig_good(const uint8_t pub[VG_PUBKEY_LEN], const uint8_t *msg, size_t n,
                 const uint8_t sig[VG_SIGNATURE_LEN]);
/* Overwrite the secret (the key is not used again). */
void vg_sigkey_wipe(struct vg_sigkey *k);
#endif
