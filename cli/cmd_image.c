/* cmd_image.c: `vigil image import|build|ls|rm|verify`: the store of pinned
 * root file systems (image/image.h, image/build.h, docs/IMAGES.md).  Exit
 * 0; 1 when the import, build, removal or check fails (verify: the stored
 * tree changed); 2 for usage errors. */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "image/build.h"
#include "image/image.h"
#include "util/escape.h"

static const char usage_text[] =
    "usage: vigil image import SRC --name NAME\n"
    "       vigil image build SPEC --name NAME\n"
    "       vigil image ls\n"
    "       vigil image rm NAME|DIGEST\n"
    "       vigil image verify NAME|DIGEST\n"
    "Keep root file systems in a store addressed by the SHA-256 of their\n"
    "content (~/.local/state/vigil/images; docs/IMAGES.md defines the digest).\n"
    "import unpacks SRC, an OCI image layout directory, a 'docker save'\n"
    "tarball, or - for one on stdin, layer by layer (whiteouts honoured),\n"
    "checks each blob against its digest, refuses any entry that would land\n"
    "outside the tree, drops setuid/setgid bits and makes no device node,\n"
    "and prints the digest.  build makes the tree with Debian's mmdebstrap\n"
    "from SPEC, a file or a shipped spec's name (python, node, c): a few\n"
    "lines naming a suite, a mirror, a variant, packages and files to add.\n"
    "It stores the tree as import does, less what would make two builds\n"
    "differ, with every installed package's version in its manifest: the\n"
    "same spec and package versions give the same digest.  build needs root,\n"
    "or mmdebstrap's unshare mode (newuidmap, /etc/subuid).  ls lists the\n"
    "images; rm removes one and its names (not one a run has); verify\n"
    "hashes the stored tree again.  A DIGEST is sha256:HEX, HEX, or its\n"
    "first 12 or more digits.  vigil run --image NAME runs a candidate on one.\n";

static const char usage_tail[] =
    "Exit status: 0; 1 when an import, a build, a removal or a verify fails;\n"
    "2 usage.\n";

struct image_args {
    const char *name;
};

#define AT(field) offsetof(struct image_args, field)

static const struct vg_opt rows[] = {
    {"name", 'n', "NAME", "import, build: the name to give the image (letters, digits\n"
     "and . _ : @ + -; an existing name moves to the new image)",
     .kind = VG_OPT_STRING, .off = AT(name)},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil image import ./python-oci --name py312", "import an OCI layout as py312"},
    {"vigil image import - --name py312 < python.tar",
     "import a 'docker save' tarball from stdin"},
    {"vigil image build python --name python",
     "build the shipped python spec (-p image-python runs on it)"},
    {"vigil image build ./my.spec --name mine", "build an image from a spec of one's own"},
    {"vigil image verify py312", "check that the stored tree still has its digest"},
};

const struct vg_optcmd vg_image_optcmd = {
    .name = "image", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows),
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

static int usage_error(const char *what)
{
    vg_say(stderr, "vigil image: %s (try 'vigil image --help')", what);
    return 2;
}

static int fail(const char *action, const struct vg_err *err)
{
    vg_say(stderr, "vigil image %s: %s", action, err->msg);
    return 1;
}

static int do_import(const char *src, const char *name)
{
    struct vg_import_result r;
    struct vg_err err;
    if (vg_image_import(src, name, &r, &err) < 0)
        return fail("import", &err);
    printf("sha256:%s\n", r.sum.hex);
    vg_say(stderr, "vigil: image %s sha256:%.12s: %zu layers, %" PRIu64 " entries, %" PRIu64
                   " bytes%s", name, r.sum.hex, r.layers, r.sum.entries, r.sum.bytes,
           r.existed ? " (the same content was already stored)" : "");
    if (r.skipped)
        vg_say(stderr, "vigil: note: %zu device nodes, FIFOs or sockets not created", r.skipped);
    if (r.stripped)
        vg_say(stderr, "vigil: note: setuid/setgid bits dropped from %zu files", r.stripped);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int do_build(const char *spec, const char *name)
{
    struct vg_build_result r;
    struct vg_err err;
    if (vg_image_build(spec, name, &r, &err) < 0) {
        vg_build_result_free(&r);
        return fail("build", &err);
    }
    printf("sha256:%s\n", r.r.sum.hex);
    vg_say(stderr, "vigil: image %s sha256:%.12s: built from %s (mmdebstrap, %s mode), %zu "
                   "packages, %" PRIu64 " entries, %" PRIu64 " bytes%s", name, r.r.sum.hex,
           r.spec, r.mode, r.packages, r.r.sum.entries, r.r.sum.bytes,
           r.r.existed ? " (the same content was already stored)" : "");
    if (r.r.skipped)
        vg_say(stderr, "vigil: note: %zu device nodes, FIFOs or sockets not created", r.r.skipped);
    if (r.r.stripped)
        vg_say(stderr, "vigil: note: setuid/setgid bits dropped from %zu files", r.r.stripped);
    vg_build_result_free(&r);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int do_ls(void)
{
    struct vg_image_info *v;
    size_t n;
    struct vg_err err;
    if (vg_image_list(&v, &n, &err) < 0)
        return fail("ls", &err);
    printf("%-24s %-12s %12s %8s  %s\n", "NAME", "DIGEST", "BYTES", "ENTRIES", "CREATED");
    for (size_t i = 0; i < n; i++) {
        char *names = vg_esc_dup(v[i].names ? v[i].names : "-");
        printf("%-24s %.12s %12" PRIu64 " %8" PRIu64 "  %s\n", names, v[i].hex, v[i].bytes,
               v[i].entries, v[i].created ? v[i].created : "?");
        free(names);
    }
    vg_image_info_free(v, n);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int do_rm(const char *ref)
{
    char hex[VG_IMAGE_HEX];
    struct vg_err err;
    if (vg_image_remove(ref, hex, &err) < 0)
        return fail("rm", &err);
    vg_say(stderr, "vigil: removed image sha256:%s", hex);
    return 0;
}

static int do_verify(const char *ref)
{
    struct vg_image_sum sum;
    struct vg_err err;
    int rc = vg_image_verify(ref, &sum, &err);
    if (rc != 0)
        return fail("verify", &err);
    vg_say(stderr, "vigil: image %s sha256:%s: ok, %" PRIu64 " entries", ref, sum.hex,
           sum.entries);
    return 0;
}

int vg_cmd_image(int argc, char **argv)
{
    struct image_args a = {0};
    struct vg_err err;
    int first, rc = vg_opts_parse(&vg_image_optcmd, argc, argv, &a, &first, &err);
    if (rc == VG_OPTS_HELP) {
        vg_opts_help(&vg_image_optcmd, stdout);
        return 0;
    }
    if (rc < 0)
        return usage_error(err.msg);
    int nargs = argc - first;
    const char *action = nargs > 0 ? argv[first] : "";
    bool import = !strcmp(action, "import"), build = !strcmp(action, "build");
    if (a.name && !import && !build)
        return usage_error("--name is for import and build");
    if (import && (nargs != 2 || !a.name))
        return usage_error("import takes SRC and --name NAME");
    if (build && (nargs != 2 || !a.name))
        return usage_error("build takes SPEC and --name NAME");
    if (import || build)
        return import ? do_import(argv[first + 1], a.name) : do_build(argv[first + 1], a.name);
    if (!strcmp(action, "ls"))
        return nargs == 1 ? do_ls() : usage_error("ls takes no arguments");
    if (!strcmp(action, "rm") || !strcmp(action, "verify")) {
        if (nargs != 2)
            return usage_error(action[0] == 'r' ? "rm takes one NAME or DIGEST"
                                                : "verify takes one NAME or DIGEST");
        return action[0] == 'r' ? do_rm(argv[first + 1]) : do_verify(argv[first + 1]);
    }
    return usage_error(nargs ? "unknown action (import, build, ls, rm, verify)"
                             : "give an action: import, build, ls, rm or verify");
}
