/* fuzz_verify.c: libFuzzer target for `vigil verify`: the input as a log
 * (event/verify.h, without a key and with one), and as a key file
 * (event/sigkey.h's PEM reader, both forms).  Neither may crash, leak or
 * read out of bounds; a log the verifier calls intact must also read as
 * intact when its bytes come in one by one through the file reader's
 * windowing, and its verdict must not depend on a key it is not signed by. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "event/verify.h"

/* A key no fuzzed log is signed by (its bytes are arbitrary). */
static const uint8_t other_key[VG_PUBKEY_LEN] = {1, 2, 3, 4, 5, 6, 7, 8};

static void verify_file(const uint8_t *data, size_t size, struct vg_verify *out)
{
    static int fd = -1;
    if (fd < 0)
        fd = memfd_create("verify", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct vg_err err;
    if (vg_verify_path(path, NULL, out, &err) < 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vg_verify a, b, c;
    vg_verify_buf(data, size, NULL, &a);
    vg_verify_buf(data, size, other_key, &b);
    verify_file(data, size, &c);
    if (a.verdict != c.verdict || a.records != c.records || a.at != c.at)
        abort();  /* the file's windowing changed the verdict */
    if (a.verdict == VG_VERIFY_INTACT && b.verdict != VG_VERIFY_UNSIGNED)
        abort();  /* intact for a key it is not signed by */
    uint8_t key[32];
    const char *why;
    vg_pem_ed25519((const char *)data, size, true, key, &why);
    vg_pem_ed25519((const char *)data, size, false, key, &why);
    return 0;
}
