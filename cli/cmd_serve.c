/* cmd_serve.c: `vigil serve`: the options, then serve/ (docs/SERVE.md). */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "serve/serve.h"
#include "util/escape.h"
#include "util/sharedir.h"

#define EXIT_USAGE 2
#define EXIT_FAILED 1
#define ROOT_STATE "/var/lib/vigil-serve"
#define DEFAULT_SOCKET "serve.sock"

static const char usage_text[] =
    "usage: vigil serve [--listen unix:PATH|tcp:HOST:PORT]... [--state DIR] [OPTIONS]\n"
    "Run other users' candidates, each under its own vigil run in a fresh\n"
    "sandbox, behind an HTTP/JSON API (docs/SERVE.md): per-user quotas, a fair\n"
    "queue, prepared sandboxes, and a service log of every step.  On a unix\n"
    "socket the caller is who the kernel says (SO_PEERCRED); on TCP only users\n"
    "with a token in --config get in.  SIGTERM or SIGINT stops it: running\n"
    "runs are cancelled, queued runs wait on disk for the next start.\n";

static const char usage_tail[] =
    "Exit status: 0 after a clean stop; 1 it could not start; 2 usage.\n";

struct serve_args {
    struct vg_serve_opts o;
};

#define AT(field) offsetof(struct serve_args, o.field)

static const struct vg_opt rows[] = {
    {"listen", 'l', "ADDR", "unix:PATH (every local user, known by uid) or tcp:HOST:PORT\n"
     "(token users only); repeatable; systemd's sockets (LISTEN_FDS) replace them",
     .def_text = "unix:STATE/serve.sock",
     .kind = VG_OPT_LIST, .off = AT(listen), .count = AT(nlisten)},
    {"state", 's', "DIR", "runs, results, logs, quotas and the service log",
     .def_text = ROOT_STATE " as root, else $XDG_STATE_HOME/vigil/serve",
     .kind = VG_OPT_STRING, .off = AT(state)},
    {"config", 'c', "FILE", "users, their tokens and quotas (docs/SERVE.md)",
     .kind = VG_OPT_STRING, .off = AT(config)},
    {"workers", 'w', "N", "runs at once on the machine", .def_text = "the number of CPUs",
     .kind = VG_OPT_UINT, .off = AT(workers), .min = 1, .max = 4096},
    {"pool", 0, "N", "sandboxes kept prepared ahead", .def = "0",
     .kind = VG_OPT_UINT, .off = AT(pool), .min = 0, .max = 256},
    {"pool-policy", 0, "NAME", "the shipped policy prepared sandboxes have", .def = "default",
     .kind = VG_OPT_STRING, .off = AT(pool_policy)},
    {"uid-range", 0, "FIRST-LAST", "host uids for the candidates, one per running run (root)",
     .def = "200000-200999", .kind = VG_OPT_STRING, .off = AT(uid_range)},
    {"max-body", 0, "SIZE", "the largest request", .def = "16M",
     .kind = VG_OPT_SIZE, .off = AT(max_body)},
    {"quota-runs", 0, "N/WINDOW", "runs a user may submit per sliding window", .def = "1000/1h",
     .kind = VG_OPT_STRING, .off = AT(quota[VG_Q_RUNS]), .heading = "default quotas (--config "
     "sets them per user):"},
    {"quota-concurrent", 0, "N", "runs of a user queued or running at once", .def = "4",
     .kind = VG_OPT_STRING, .off = AT(quota[VG_Q_CONCURRENT])},
    {"quota-cpu", 0, "DUR/WINDOW", "CPU time of a user's runs per window", .def = "1h/1h",
     .kind = VG_OPT_STRING, .off = AT(quota[VG_Q_CPU])},
    {"quota-wall", 0, "DUR/WINDOW", "wall-clock time of a user's runs per window",
     .def = "4h/1h", .kind = VG_OPT_STRING, .off = AT(quota[VG_Q_WALL])},
    {"quota-stored", 0, "SIZE", "bytes of a user's stored runs", .def = "1G",
     .kind = VG_OPT_STRING, .off = AT(quota[VG_Q_STORED])},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil serve --listen unix:/run/vigil/serve.sock --pool 4",
     "serve local users on a socket, four sandboxes kept ready"},
    {"vigil serve --config /etc/vigil/serve.conf --listen tcp:0.0.0.0:8080",
     "serve the config's token users over TCP"},
};

const struct vg_optcmd vg_serve_optcmd = {
    .name = "serve", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows),
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

static int usage_error(const char *what)
{
    vg_say(stderr, "vigil serve: %s (try 'vigil serve --help')", what);
    return EXIT_USAGE;
}

/* The default state directory: root's system one, else the user's. */
static char *default_state(void)
{
    if (geteuid() == 0)
        return vg_xstrdup(ROOT_STATE);
    const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (x && *x == '/')
        return vg_xasprintf("%s/vigil/serve", x);
    return home && *home == '/' ? vg_xasprintf("%s/.local/state/vigil/serve", home) : NULL;
}

int vg_cmd_serve(int argc, char **argv)
{
    struct serve_args a = {0};
    struct vg_err err;
    int first, rc = vg_opts_parse(&vg_serve_optcmd, argc, argv, &a, &first, &err);
    if (rc == VG_OPTS_HELP) {
        vg_opts_help(&vg_serve_optcmd, stdout);
        return 0;
    }
    if (rc < 0)
        return usage_error(err.msg);
    if (first < argc)
        return usage_error("it takes no operands");
    char self[PATH_MAX];
    if (!vg_self_exe(self, sizeof self))
        return usage_error("cannot find the vigil binary (/proc/self/exe)");
    a.o.vigil = self;
    char *state = a.o.state ? NULL : default_state();
    if (!a.o.state && !state)
        return usage_error("no --state and no HOME to put it in");
    if (state)
        a.o.state = state;
    char *sock = NULL;
    const char *one[1];
    if (!a.o.nlisten) {
        sock = vg_xasprintf("unix:%s/%s", a.o.state, DEFAULT_SOCKET);
        one[0] = sock;
        a.o.listen = one;
        a.o.nlisten = 1;
    }
    if (a.o.nlisten > VG_SERVE_MAX_LISTEN)
        rc = usage_error("too many --listen addresses");
    else if (vg_serve(&a.o, &err) < 0)
        rc = (vg_say(stderr, "vigil serve: %s", err.msg), EXIT_FAILED);
    free(sock);
    free(state);
    if (a.o.listen != one)
        free(a.o.listen);
    return rc;
}
