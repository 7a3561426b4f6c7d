/* cmd_submit.c: `vigil submit`: one run through vigil serve, as `vigil
 * run` would show it: the candidate's output on ours, its exit status as
 * ours; a refusal names the quota (docs/SERVE.md). */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "serve/client.h"
#include "util/base64.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/jsonr.h"

#define EXIT_VIGIL 125
#define DEFAULT_SERVER "unix:/run/vigil/serve.sock"
#define FILE_MAX (16u << 20)
#define WAIT_S "2"
#define HTTP_CREATED 201
#define HTTP_OK 200
#define HTTP_TOO_MANY 429

static const char usage_text[] =
    "usage: vigil submit [--server ADDR] [OPTIONS] [--] COMMAND [ARGS...]\n"
    "Submit COMMAND to vigil serve, wait for it, print the candidate's stdout and\n"
    "stderr, and exit with its exit status, as vigil run would.  Files given\n"
    "with --file are sent with it, into the run's working directory.  Ctrl-C\n"
    "cancels the run.\n";

static const char usage_tail[] =
    "Exit status: the candidate's (as vigil run's: 124 time limit, 128+N killed by\n"
    "signal N); 125 the server refused the run (the quota is named) or failed;\n"
    "0 with --detach once the run is accepted; 2 usage.\n";

struct submit_args {
    const char *server, *policy, *image, *task_id, *stdin_file, *token_file;
    const char **files;
    unsigned nfiles;
    const char **limits;
    unsigned nlimits;
    const char **env;
    unsigned nenv;
    bool dry_run, detach;
};

#define AT(field) offsetof(struct submit_args, field)

static const struct vg_opt rows[] = {
    {"server", 'S', "ADDR", "unix:PATH or http://HOST:PORT", .def_text =
     "$VIGIL_SERVER, else " DEFAULT_SERVER, .kind = VG_OPT_STRING, .off = AT(server)},
    {"token-file", 0, "FILE", "the bearer token for a TCP server (else $VIGIL_TOKEN)",
     .kind = VG_OPT_STRING, .off = AT(token_file)},
    {"policy", 'p', "NAME", "a shipped policy by name", .kind = VG_OPT_STRING, .off = AT(policy)},
    {"file", 'f', "LOCAL[:PATH]", "send LOCAL, into the working directory (as PATH)",
     .kind = VG_OPT_LIST, .off = AT(files), .count = AT(nfiles)},
    {"stdin", 0, "FILE", "the candidate's stdin (- for ours); default none",
     .kind = VG_OPT_STRING, .off = AT(stdin_file)},
    {"limit", 'L', "NAME=VALUE", "a limit of vigil-policy(5) (timeout=10s is time=10s)",
     .kind = VG_OPT_LIST, .off = AT(limits), .count = AT(nlimits)},
    {"image", 0, "IMAGE", "a stored image of the server's", .kind = VG_OPT_STRING, .off = AT(image)},
    {"env", 'e', "NAME=VALUE", "set an environment variable", .kind = VG_OPT_LIST,
     .off = AT(env), .count = AT(nenv)},
    {"task-id", 0, "ID", "recorded in the run's log and result", .kind = VG_OPT_STRING,
     .off = AT(task_id)},
    {"dry-run", 0, NULL, "refuse nothing, record what would be refused", .kind = VG_OPT_FLAG,
     .off = AT(dry_run)},
    {"detach", 'd', NULL, "print the run's id and return once it is accepted",
     .kind = VG_OPT_FLAG, .off = AT(detach)},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil submit -p python -f cand.py -- python3 cand.py",
     "run cand.py on the local vigil serve under the python policy"},
    {"vigil submit --server http://evalbox:8080 --token-file ~/.vigil-token -- ./a.out",
     "the same over TCP, as a token user"},
};

const struct vg_optcmd vg_submit_optcmd = {
    .name = "submit", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows), .in_order = true,
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

static volatile sig_atomic_t interrupted;
static void on_int(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int fail(const char *what)
{
    vg_say(stderr, "vigil submit: %s", what);
    return EXIT_VIGIL;
}

/* A file's bytes as base64 into the JSON; -1 with err. */
static int put_bytes(struct vg_json *j, const char *key, const char *path, struct vg_err *err)
{
    size_t len;
    char *data = vg_read_file(path, FILE_MAX, &len, err);
    if (!data)
        return -1;
    struct vg_buf b = {0};
    vg_b64_encode(&b, (const uint8_t *)data, len);
    vg_json_key(j, key);
    vg_json_strn(j, b.data ? b.data : "", b.len);
    vg_buf_free(&b);
    free(data);
    return 0;
}

static int put_stdin(struct vg_json *j, const char *which, struct vg_err *err)
{
    return put_bytes(j, "stdin_base64", strcmp(which, "-") ? which : "/dev/stdin", err);
}

static int put_files(struct vg_json *j, const struct submit_args *a, struct vg_err *err)
{
    vg_json_key(j, "files");
    vg_json_arr_begin(j);
    for (unsigned i = 0; i < a->nfiles; i++) {
        char *local = vg_xstrdup(a->files[i]), *colon = strchr(local, ':');
        const char *remote = colon ? colon + 1 : strrchr(local, '/') ? strrchr(local, '/') + 1
                                                                     : local;
        if (colon)
            *colon = '\0';
        struct stat st;
        vg_json_obj_begin(j);
        vg_json_key(j, "path"), vg_json_str(j, remote);
        if (stat(local, &st) == 0 && (st.st_mode & S_IXUSR))
            vg_json_key(j, "executable"), vg_json_bool(j, true); /* as it is here */
        int rc = put_bytes(j, "base64", local, err);
        vg_json_obj_end(j);
        free(local);
        if (rc < 0)
            return -1;
    }
    vg_json_arr_end(j);
    return 0;
}

static void put_pairs(struct vg_json *j, const char *key, const char **kv, unsigned n)
{
    vg_json_key(j, key);
    vg_json_obj_begin(j);
    for (unsigned i = 0; i < n; i++) {
        const char *eq = strchr(kv[i], '=');
        char *name = vg_xstrndup(kv[i], eq ? (size_t)(eq - kv[i]) : strlen(kv[i]));
        vg_json_key(j, !strcmp(name, "timeout") ? "time" : name);
        vg_json_str(j, eq ? eq + 1 : "");
        free(name);
    }
    vg_json_obj_end(j);
}

static int request_body(const struct submit_args *a, char **argv, int argc, struct vg_buf *b,
                        struct vg_err *err)
{
    struct vg_json j;
    vg_json_init(&j, b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "argv");
    vg_json_arr_begin(&j);
    for (int i = 0; i < argc; i++)
        vg_json_str(&j, argv[i]);
    vg_json_arr_end(&j);
    if (a->policy)
        vg_json_key(&j, "policy"), vg_json_str(&j, a->policy);
    if (a->image)
        vg_json_key(&j, "image"), vg_json_str(&j, a->image);
    if (a->task_id)
        vg_json_key(&j, "task_id"), vg_json_str(&j, a->task_id);
    if (a->dry_run)
        vg_json_key(&j, "dry_run"), vg_json_bool(&j, true);
    if (a->nlimits)
        put_pairs(&j, "limits", a->limits, a->nlimits);
    if (a->nenv)
        put_pairs(&j, "env", a->env, a->nenv);
    if (a->nfiles && put_files(&j, a, err) < 0)
        return -1;
    if (a->stdin_file && put_stdin(&j, a->stdin_file, err) < 0)
        return -1;
    vg_json_obj_end(&j);
    return 0;
}

/* The answer's "error", or the whole body. */
static void say_refusal(const struct vg_answer *an)
{
    struct vg_err e;
    struct vg_jv *v = vg_jv_parse(an->body.data ? an->body.data : "", an->body.len, &e);
    const char *msg = v ? vg_jv_str(v, "error") : NULL;
    vg_say(stderr, "vigil submit: %d: %s", an->status, msg ? msg : an->body.data ? an->body.data : "");
    vg_jv_free(v);
}

static int copy_stream(const struct vg_client *c, const char *id, const char *name, FILE *to)
{
    char *path = vg_xasprintf("/v1/runs/%s/%s", id, name);
    struct vg_answer an;
    struct vg_err err;
    int rc = vg_client_call(c, "GET", path, NULL, 0, &an, &err);
    free(path);
    if (rc < 0 || an.status != HTTP_OK) {
        if (rc == 0)
            vg_answer_free(&an);
        return -1;
    }
    fwrite(an.body.data, 1, an.body.len, to);
    fflush(to);
    vg_answer_free(&an);
    return 0;
}

/* Waits for the run's end; its exit status for ours. */
static int await(const struct vg_client *c, const char *id)
{
    char *path = vg_xasprintf("/v1/runs/%s?wait=" WAIT_S, id);
    bool cancelled = false;
    int code = EXIT_VIGIL;
    for (;;) {
        if (interrupted && !cancelled) {
            char *cp = vg_xasprintf("/v1/runs/%s/cancel", id);
            struct vg_answer an;
            struct vg_err err;
            if (vg_client_call(c, "POST", cp, "{}", 2, &an, &err) == 0)
                vg_answer_free(&an);
            free(cp);
            cancelled = true;
        }
        struct vg_answer an;
        struct vg_err err;
        if (vg_client_call(c, "GET", path, NULL, 0, &an, &err) < 0) {
            free(path);
            return fail(err.msg);
        }
        struct vg_jv *v = an.status == HTTP_OK ? vg_jv_parse(an.body.data, an.body.len, &err) : NULL;
        const char *state = v ? vg_jv_str(v, "state") : NULL;
        bool done = state && strcmp(state, "queued") && strcmp(state, "running");
        if (!state)
            say_refusal(&an);
        if (done) {
            const struct vg_jv *ec = vg_jv_get(v, "exit_code");
            code = ec && ec->type == VG_JNUM ? atoi(ec->s) : EXIT_VIGIL;
            const char *e = vg_jv_str(v, "error");
            copy_stream(c, id, "stdout", stdout);
            copy_stream(c, id, "stderr", stderr);
            if (e && strcmp(state, "finished"))
                vg_say(stderr, "vigil submit: run %s %s: %s", id, state, e);
            else if (e)
                vg_say(stderr, "vigil submit: run %s: %s", id, e);
        }
        vg_jv_free(v);
        vg_answer_free(&an);
        if (done || !state)
            break;
    }
    free(path);
    return code;
}

static int submit(const struct vg_client *c, const struct submit_args *a, char **argv, int argc)
{
    struct vg_buf body = {0};
    struct vg_err err;
    if (request_body(a, argv, argc, &body, &err) < 0) {
        vg_buf_free(&body);
        return fail(err.msg);
    }
    struct vg_answer an;
    int rc = vg_client_call(c, "POST", "/v1/runs", body.data, body.len, &an, &err);
    vg_buf_free(&body);
    if (rc < 0)
        return fail(err.msg);
    struct vg_jv *v = an.status == HTTP_CREATED ? vg_jv_parse(an.body.data, an.body.len, &err) : NULL;
    const char *id = v ? vg_jv_str(v, "id") : NULL;
    if (!id) {
        say_refusal(&an);
        vg_jv_free(v);
        vg_answer_free(&an);
        return EXIT_VIGIL;
    }
    char *mine = vg_xstrdup(id);
    vg_jv_free(v);
    vg_answer_free(&an);
    if (a->detach) {
        printf("%s\n", mine);
        free(mine);
        return 0;
    }
    rc = await(c, mine);
    free(mine);
    return rc;
}

static char *read_token(const char *file, struct vg_err *err)
{
    size_t len;
    char *t = file ? vg_read_file(file, 4096, &len, err) : NULL;
    if (!t && !file && getenv("VIGIL_TOKEN"))
        t = vg_xstrdup(getenv("VIGIL_TOKEN"));
    for (size_t n = t ? strlen(t) : 0; n && (t[n - 1] == '\n' || t[n - 1] == '\r'); n--)
        t[n - 1] = '\0';
    return t;
}

int vg_cmd_submit(int argc, char **argv)
{
    struct submit_args a = {0};
    struct vg_err err;
    int first, rc = vg_opts_parse(&vg_submit_optcmd, argc, argv, &a, &first, &err);
    if (rc == VG_OPTS_HELP) {
        vg_opts_help(&vg_submit_optcmd, stdout);
        return 0;
    }
    if (rc < 0 || first >= argc) {
        vg_say(stderr, "vigil submit: %s (try 'vigil submit --help')",
               rc < 0 ? err.msg : "no command given");
        return 2;
    }
    const char *server = a.server ? a.server : getenv("VIGIL_SERVER") ? getenv("VIGIL_SERVER")
                                                                      : DEFAULT_SERVER;
    struct vg_client c;
    if (vg_client_parse(&c, server, &err) < 0)
        return fail(err.msg);
    char *token = read_token(a.token_file, &err);
    if (a.token_file && !token)
        rc = fail(err.msg);
    else {
        c.token = token;
        struct sigaction sa = {.sa_handler = on_int};
        sigaction(SIGINT, &sa, NULL);
        rc = submit(&c, &a, argv + first, argc - first);
    }
    free(token);
    free(a.files);
    free(a.limits);
    free(a.env);
    vg_client_free(&c);
    return rc;
}
