/* cmd_view.c: `vigil view [--follow] FILE`: open the log (reporting a
 * missing or foreign file on one line before the screen is touched), then
 * hand it to the terminal viewer. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/statedir.h"
#include "viewer/model.h"
#include "viewer/viewer.h"
#include "util/escape.h"

static const char usage[] =
    "usage: vigil view [--follow] [FILE]\n"
    "\n"
    "Browse a run log in the terminal: the events with their decisions, the\n"
    "detail of each (rule, stack), the process tree and a summary; filter,\n"
    "search, replay at any speed.  Press ? inside for every key.  Without FILE,\n"
    "the latest log vigil run wrote to its state directory.\n"
    "\n"
    "  -f, --follow   keep reading the file as it grows (like tail -f)\n"
    "  -h, --help     this text\n";

static int view(const char *path, bool follow);

int vg_cmd_view(int argc, char **argv)
{
    bool follow = false;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--follow") || !strcmp(argv[i], "-f")) {
            follow = true;
        } else if (argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--")) {
            vg_say(stderr, "vigil: view: unknown option '%s' (try 'vigil view --help')",
                   argv[i]);
            return 2;
        } else if (!strcmp(argv[i], "--") && i + 1 < argc && !path) {
            path = argv[++i];
        } else if (path) {
            vg_say(stderr, "vigil: view: one FILE only ('%s' is extra)", argv[i]);
            return 2;
        } else {
            path = argv[i];
        }
    }
    char *latest = NULL;
    if (!path) {
        struct vg_err err = {{0}};
        if (!(path = latest = vg_state_latest_log(&err))) {
            vg_say(stderr, "vigil: view: %s", err.msg);
            return 2;
        }
        vg_say(stderr, "vigil: view %s", latest);
    }
    int rc = view(path, follow);
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
