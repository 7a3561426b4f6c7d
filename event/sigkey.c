/* sigkey.c: see sigkey.h.  An ed25519 key in OpenSSL's PEM is a fixed
 * DER prefix (the algorithm's OID) and the 32 key bytes, so it is checked
 * byte for byte against that prefix rather than parsed as ASN.1: a file
 * that is anything else is refused, whole. */
#include "event/sigkey.h"

#include <sodium.h>
#include <string.h>

#include "util/base64.h"

/* DER of a PKCS#8 ed25519 private key (RFC 8410): SEQUENCE { version 0,
 * AlgorithmIdentifier { 1.3.101.112 }, OCTET STRING { OCTET STRING seed } } */
static const uint8_t priv_prefix[] = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
                                      0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
/* SubjectPublicKeyInfo: SEQUENCE { AlgorithmIdentifier, BIT STRING key } */
static const uint8_t pub_prefix[] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
                                     0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
#define PRIV_BEGIN "-----BEGIN PRIVATE KEY-----"
#define PRIV_END "-----END PRIVATE KEY-----"
#define PUB_BEGIN "-----BEGIN PUBLIC KEY-----"
#define PUB_END "-----END PUBLIC KEY-----"
/* The DER of either form, with room for a longer body to be noticed. */
#define DER_MAX 64

static const char *find(const char *hay, size_t n, const char *needle)
{
    return memmem(hay, n, needle, strlen(needle));
}

bool vg_pem_ed25519(const char *text, size_t n, bool private_key, uint8_t out[32],
                    const char **why)
{
    const char *begin = private_key ? PRIV_BEGIN : PUB_BEGIN;
    const char *end = private_key ? PRIV_END : PUB_END;
    const uint8_t *prefix = private_key ? priv_prefix : pub_prefix;
    size_t plen = private_key ? sizeof priv_prefix : sizeof pub_prefix;
    const char *b = find(text, n, begin);
    if (!b) {
        *why = private_key ? "no '" PRIV_BEGIN "' line (an encrypted key or another format?)"
                           : "no '" PUB_BEGIN "' line";
        return false;
    }
    const char *body = b + strlen(begin);
    const char *e = find(body, n - (size_t)(body - text), end);
    if (!e) {
        *why = "the PEM block has no end line";
        return false;
    }
    uint8_t der[DER_MAX];
    long len = vg_b64_decode(body, (size_t)(e - body), der, sizeof der);
    if (len < 0) {
        *why = "the PEM block is not base64";
        return false;
    }
    if ((size_t)len != plen + 32 || memcmp(der, prefix, plen)) {
        *why = "not an ed25519 key (openssl genpkey -algorithm ed25519 makes one)";
        return false;
    }
    memcpy(out, der + plen, 32);
    sodium_memzero(der, sizeof der);
    return true;
}

static int load(const char *path, bool private_key, uint8_t out[32], struct vg_err *err)
{
    size_t n;
    char *text = vg_read_file(path, VG_KEYFILE_MAX, &n, err);
    if (!text)
        return -1;
    const char *why = NULL;
    bool ok = vg_pem_ed25519(text, n, private_key, out, &why);
    sodium_memzero(text, n);
    free(text);
    if (!ok) {
        vg_errf(err, "%s: %s", path, why);
        return -1;
    }
    return 0;
}

/* libsodium picks its implementations at init; once is enough, and it
 * is cheap (it is only called where a key is used). */
static int sodium_ready(struct vg_err *err)
{
    if (sodium_init() < 0) {
        vg_errf(err, "libsodium cannot be initialised");
        return -1;
    }
    return 0;
}

int vg_sigkey_load(const char *path, struct vg_sigkey *k, struct vg_err *err)
{
    uint8_t seed[VG_SEED_LEN];
    if (sodium_ready(err) < 0 || load(path, true, seed, err) < 0)
        return -1;
    _Static_assert(crypto_sign_SECRETKEYBYTES == VG_SECRET_LEN &&
                   crypto_sign_PUBLICKEYBYTES == VG_PUBKEY_LEN &&
                   crypto_sign_SEEDBYTES == VG_SEED_LEN && crypto_sign_BYTES == VG_SIGNATURE_LEN,
                   "ed25519 sizes");
    int rc = crypto_sign_seed_keypair(k->pub, k->secret, seed);
    sodium_memzero(seed, sizeof seed);
    if (rc != 0) {
        vg_errf(err, "%s: the key cannot be used", path);
        return -1;
    }
    return 0;
}

int vg_pubkey_load(const char *path, uint8_t pub[VG_PUBKEY_LEN], struct vg_err *err)
{
    if (sodium_ready(err) < 0)
        return -1;
    struct vg_err perr;
    if (load(path, false, pub, &perr) == 0)
        return 0;
    /* not a public key: perhaps the private one, whose public half will do */
    struct vg_sigkey k;
    if (vg_sigkey_load(path, &k, err) < 0) {
        vg_errf(err, "%s", perr.msg);
        return -1;
    }
    memcpy(pub, k.pub, VG_PUBKEY_LEN);
    vg_sigkey_wipe(&k);
    return 0;
}

void vg_sigkey_sign(const struct vg_sigkey *k, const uint8_t *msg, size_t n,
                    uint8_t sig[VG_SIGNATURE_LEN])
{
    crypto_sign_detached(sig, NULL, msg, n, k->secret);
}

bool vg_sig_good(const uint8_t pub[VG_PUBKEY_LEN], const uint8_t *msg, size_t n,
                 const uint8_t sig[VG_SIGNATURE_LEN])
{
    return sodium_init() >= 0 && crypto_sign_verify_detached(sig, msg, n, pub) == 0;
}

void vg_sigkey_wipe(struct vg_sigkey *k)
{
    sodium_memzero(k, sizeof *k);
}
