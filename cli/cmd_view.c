/* cmd_view.c: `vigil view [--follow] [FILE]`: parse its option rows
 * (cli/options.h), open the log (reporting a missing or foreign file on one
 * line before the screen is touched), then hand it to the terminal viewer. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "util/statedir.h"
#include "viewer/model.h"
#include "viewer/viewer.h"
#include "util/escape.h"

static const char usage_text[] =
    "usage: vigil view [--follow] [FILE]\n"
    "\n"
    "Browse a run log in the terminal: the events with their decisions, the\n"
    "detail of each (rule, stack), the process tree and a summary; filter,\n"
    "search, replay at any speed.  Press ? inside for every key.  Without FILE,\n"
    "the latest log vigil run wrote to its state directory.\n"
    "\n";

struct view_opts {
    bool follow;
};

#define AT(field) offsetof(struct view_opts, field)

static const struct vg_opt rows[] = {
    {"follow", 'f', NULL, "keep reading the file as it grows (like tail -f)",
     .kind = VG_OPT_FLAG, .off = AT(follow)},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil view run.msgpack",
     "browse a finished run"},
    {"vigil view --follow run.msgpack",
     "watch a run that is still going"},
};

const struct vg_optcmd vg_view_optcmd = {
    .name = "view", .usage = usage_text, .rows = rows, .n = VG_ARRAY_LEN(rows),
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

static int view(const char *path, bool follow);

int vg_cmd_view(int argc, char **argv)
{
    struct view_opts o = {false};
    struct vg_err perr;
    int first, r = vg_opts_parse(&vg_view_optcmd, argc, argv, &o, &first, &perr);
    if (r == VG_OPTS_HELP) {
        vg_opts_help(&vg_view_optcmd, stdout);
        return 0;
    }
    if (r < 0) {
        vg_say(stderr, "vigil view: %s (try 'vigil view --help')", perr.msg);
        return 2;
    }
    if (argc - first > 1) {
        vg_say(stderr, "vigil view: one FILE only ('%s' is extra)", argv[first + 1]);
        return 2;
    }
    const char *path = first < argc ? argv[first] : NULL;
    char *latest = NULL;
    if (!path) {
        struct vg_err err = {{0}};
        if (!(path = latest = vg_state_latest_log(&err))) {
            vg_say(stderr, "vigil: view: %s", err.msg);
            return 2;
        }
        vg_say(stderr, "vigil: view %s", latest);
    }
    int rc = view(path, o.follow);
    free(latest);
    return rc;
}

/* Open path and run the viewer on it; the exit status. */
static int view(const char *path, bool follow)
{
    /* A missing or foreign file is the more useful complaint, and cheap
     * to find from the first record. */
    struct vg_err err = {{0}};
    if (vw_model_check(path, follow, &err) < 0) {
        vg_say(stderr, "vigil: view: %s", err.msg);
        return 2;
    }
    if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
        vg_say(stderr, "vigil: view needs a terminal; use 'vigil log %s' for text or --json",
               path);
        return 2;
    }
    struct vw_model *m = vw_model_open(path, follow, &err);
    if (!m) {
        vg_say(stderr, "vigil: view: %s", err.msg);
        return 2;
    }
    int rc = vw_ui_run(m, follow);
    vw_model_close(m);
    return rc;
}
