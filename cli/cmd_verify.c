/* cmd_verify.c: `vigil verify LOG [--key PUB]`: is LOG what vigil wrote?
 * (event/verify.h; docs/FORMAT.md, "The chain and the seal").  One line:
 * on stdout when the log is intact and sealed, on stderr otherwise. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "event/verify.h"
#include "util/escape.h"
#include "util/fastsha.h"

/* Exit statuses (also in the help's epilog and docs/FORMAT.md). */
enum {
    EXIT_INTACT = 0,
    EXIT_ALTERED = 1,    /* a record not as written, or not signed by --key */
    EXIT_USAGE = 2,      /* usage, a file that cannot be read, a key file that is no key */
    EXIT_INCOMPLETE = 3, /* truncated (no seal yet), or not sealed (an earlier version) */
};

static const char usage_text[] =
    "usage: vigil verify LOG [--key PUB]\n"
    "Check that LOG is what vigil wrote: every record's chain value (a SHA-256\n"
    "over the record's bytes and the chain before it), then the trailer's seal,\n"
    "which binds the chain to the candidate's files, the policy, the image,\n"
    "vigil's own binary, the engine, the kernel, the times and the counts.\n"
    "It says: intact and sealed; altered at record N (changed, dropped, moved,\n"
    "or bytes that are no record); truncated after record N (no seal: the\n"
    "supervisor was killed, or the run is still going; every record before\n"
    "the cut is intact); or not sealed (a log of an earlier version).  A log\n"
    "someone rewrote whole can be chained again by them: only a signature\n"
    "(vigil run --sign-key) checked against your own key (--key) shows it\n"
    "is not (docs/SECURITY.md).\n";

static const char usage_tail[] =
    "Exit status: 0 intact and sealed (with --key: signed by that key); 1\n"
    "altered, or not signed by the key given; 2 usage, or LOG or PUB cannot be\n"
    "read; 3 truncated or not sealed.\n";

struct verify_args {
    const char *log, *key;
};

#define AT(field) offsetof(struct verify_args, field)

static const struct vg_opt rows[] = {
    {"key", 'k', "PUB", "the seal must be signed by this ed25519 key: a public\n"
     "key PEM (openssl pkey -in KEY -pubout), or the private key file itself",
     .kind = VG_OPT_STRING, .off = AT(key)},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil verify run.msgpack", "check the chain and the seal of a log"},
    {"vigil verify run.msgpack --key seal.pub",
     "and that vigil run --sign-key with your key sealed it"},
};

const struct vg_optcmd vg_verify_optcmd = {
    .name = "verify", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows),
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

static int usage_error(const char *what)
{
    vg_say(stderr, "vigil verify: %s (try 'vigil verify --help')", what);
    return EXIT_USAGE;
}

/* The key's first 16 hex digits: enough to tell keys apart on a line. */
#define KEY_SHOWN 16

static void say_signed(const struct vg_verify *v, const char *path, const char *chain,
                       bool checked)
{
    char key[2 * VG_PUBKEY_LEN + 1];
    vg_hex(v->key, VG_PUBKEY_LEN, key);
    key[KEY_SHOWN] = 0;
    if (!v->signed_log)
        vg_say(stdout, "vigil: %s: intact and sealed: %llu records, chain %s; not signed", path,
               (unsigned long long)v->records, chain);
    else
        vg_say(stdout, "vigil: %s: intact and sealed: %llu records, chain %s; signed by key %s%s",
               path, (unsigned long long)v->records, chain, key,
               checked ? " (the key given)" : " (not checked: give --key to check it is yours)");
}

int vg_cmd_verify(int argc, char **argv)
{
    struct verify_args a = {0};
    struct vg_err err;
    int first, rc = vg_opts_parse(&vg_verify_optcmd, argc, argv, &a, &first, &err);
    if (rc == VG_OPTS_HELP) {
        vg_opts_help(&vg_verify_optcmd, stdout);
        return EXIT_INTACT;
    }
    if (rc < 0)
        return usage_error(err.msg);
    if (first != argc - 1)
        return usage_error("give exactly one LOG");
    a.log = argv[first];
    uint8_t key[VG_PUBKEY_LEN];
    if (a.key && vg_pubkey_load(a.key, key, &err) < 0) {
        vg_say(stderr, "vigil: verify: %s", err.msg);
        return EXIT_USAGE;
    }
    struct vg_verify v;
    if (vg_verify_path(a.log, a.key ? key : NULL, &v, &err) < 0) {
        vg_say(stderr, "vigil: verify: %s", err.msg);
        return EXIT_USAGE;
    }
    char chain[2 * VG_CHAIN_LEN + 1];
    vg_hex(v.chain, VG_CHAIN_LEN, chain);
    unsigned long long at = v.at, off = v.offset, n = v.records;
    switch (v.verdict) {
    case VG_VERIFY_INTACT:
        say_signed(&v, a.log, chain, a.key != NULL);
        return EXIT_INTACT;
    case VG_VERIFY_ALTERED:
        vg_say(stderr, "vigil: %s: altered at record %llu (byte %llu): %s; the %llu records "
               "before it are intact", a.log, at, off, v.why, n);
        return EXIT_ALTERED;
    case VG_VERIFY_UNSIGNED:
        vg_say(stderr, "vigil: %s: intact and sealed (%llu records), but %s, not by the key given",
               a.log, n, v.why);
        return EXIT_ALTERED;
    case VG_VERIFY_TRUNCATED:
        if (n == 0)
            vg_say(stderr, "vigil: %s: truncated: no complete record", a.log);
        else
            vg_say(stderr, "vigil: %s: truncated after record %llu: no seal (the supervisor was "
                   "killed, or the run is still going); records 0-%llu are intact, chain %s%s",
                   a.log, n - 1, n - 1, chain, v.cut ? ", then part of a record" : "");
        return EXIT_INCOMPLETE;
    case VG_VERIFY_UNSEALED:
        vg_say(stderr, "vigil: %s: not sealed: %s", a.log, v.why);
        return EXIT_INCOMPLETE;
    }
    return EXIT_ALTERED;
}
