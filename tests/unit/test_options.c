/* test_options.c: cli/options.c, options as rows: every kind of row
 * parsed, bad values and bad options refused with a message naming the
 * option, repeats, "--" and the end of the options, and the real
 * commands' tables: a help entry for every row, no name or letter twice,
 * defaults that apply. */
#include <limits.h>
#include <stddef.h>

#include "cli/options.h"
#include "policy/policy.h"
#include "run/iothread.h"
#include "run/run.h"
#include "tests/unit/check.h"

/* As cli/options.c: help lines fit an 80-column terminal. */
#define HELP_COLS 79
#define ARGV_MAX 32

enum colour { RED, GREEN, BLUE };
struct t_opts {
    bool flag, seen_size;
    int colour, set;
    const char *str;
    const char **list;
    unsigned nlist, count;
    uint64_t size;
    struct vg_limits limits;
    int calls;
};

static const char *const colours[] = {"red", "green", "blue", NULL};

static int count_call(void *dst, const char *v, struct vg_err *err)
{
    struct t_opts *o = dst;
    if (!strcmp(v, "bad")) {
        vg_errf(err, "--call: not '%s'", v);
        return -1;
    }
    o->calls++;
    return 0;
}

#define AT(f) offsetof(struct t_opts, f)
static const struct vg_opt t_rows[] = {
    {"flag", 'f', NULL, "a flag", .kind = VG_OPT_FLAG, .off = AT(flag)},
    {"set", 0, NULL, "sets 7", .kind = VG_OPT_SET, .off = AT(set), .value = 7},
    {"str", 's', "S", "a string", .kind = VG_OPT_STRING, .off = AT(str)},
    {"list", 'l', "L", "a list", .kind = VG_OPT_LIST, .off = AT(list), .count = AT(nlist)},
    {"count", 'n', "N", "2 to 9", .def = "3", .kind = VG_OPT_UINT, .off = AT(count),
     .min = 2, .max = 9},
    {"size", 0, "SIZE", "a size", .def = "4k", .kind = VG_OPT_SIZE, .off = AT(size),
     .seen = VG_OPT_SEEN(struct t_opts, seen_size)},
    {"colour", 0, "C", "red, green\nor blue", .def = "green", .alias = "color",
     .kind = VG_OPT_CHOICE, .off = AT(colour), .choices = colours},
    {"call", 0, "V", "counted", .kind = VG_OPT_CALL, .set = count_call},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
    {.heading = "limits:", .kind = VG_OPT_LIMITS, .off = AT(limits)},
};
static const struct vg_example t_examples[] = {{"t --flag", "sets the flag"}};
static const struct vg_optcmd t_cmd = {
    .name = "t", .usage = "usage: t\n", .epilog = "end\n", .rows = t_rows,
    .n = VG_ARRAY_LEN(t_rows), .examples = t_examples, .nexamples = VG_ARRAY_LEN(t_examples),
};

/* Parse the words of line (space-separated) after a command name. */
static int parse_line(const struct vg_optcmd *c, const char *line, void *dst, int *first,
                      char ***words, struct vg_err *err)
{
    static char buf[512];
    static char *argv[ARGV_MAX + 1];
    int argc = 0;
    snprintf(buf, sizeof buf, "t %s", line);
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && argc < ARGV_MAX;
         w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    argv[argc] = NULL;
    *words = argv;
    err->msg[0] = 0;
    return vg_opts_parse(c, argc, argv, dst, first, err);
}

static void test_every_kind(void)
{
    struct t_opts o = {0};
    struct vg_err err;
    char **w;
    int first;
    CHECK(parse_line(&t_cmd, "-f --set -s a --str b -l x --list y -n 9 --size 1M --color blue "
                     "--call 1 --timeout 5s --timeout 7s op", &o, &first, &w, &err) == 0);
    CHECK(o.flag && o.set == 7 && o.count == 9 && o.size == 1024 * 1024 && o.seen_size);
    CHECK_STR(o.str, "b"); /* the last one given */
    CHECK(o.nlist == 2 && !strcmp(o.list[0], "x") && !strcmp(o.list[1], "y"));
    CHECK(o.colour == BLUE && o.calls == 1);
    CHECK(o.limits.set[VG_LIM_TIME] && o.limits.v[VG_LIM_TIME] == 7000);
    CHECK(!o.limits.set[VG_LIM_CPU]);
    CHECK_STR(w[first], "op");
    free(o.list);
}

static void test_defaults_and_order(void)
{
    struct t_opts o = {0};
    struct vg_err err;
    char **w;
    int first;
    CHECK(parse_line(&t_cmd, "op -f -- -s", &o, &first, &w, &err) == 0);
    /* defaults applied, but not as given */
    CHECK(o.count == 3 && o.size == 4096 && !o.seen_size && o.colour == GREEN);
    /* permuted: options after an operand count, "--" ends them */
    CHECK(o.flag && !o.str && !strcmp(w[first], "op") && !strcmp(w[first + 1], "-s"));
    struct vg_optcmd in_order = t_cmd;
    in_order.in_order = true;
    memset(&o, 0, sizeof o);
    CHECK(parse_line(&in_order, "-s a op -f", &o, &first, &w, &err) == 0);
    CHECK(!o.flag && first == 3 && !strcmp(w[first], "op"));
    memset(&o, 0, sizeof o);
    CHECK(parse_line(&in_order, "-- -f", &o, &first, &w, &err) == 0);
    CHECK(!o.flag && !strcmp(w[first], "-f"));
    memset(&o, 0, sizeof o);
    CHECK(parse_line(&t_cmd, "-f --help --bogus", &o, &first, &w, &err) == VG_OPTS_HELP);
}

/* Refused, with a message that holds want. */
static void refused(const char *line, const char *want)
{
    struct t_opts o = {0};
    struct vg_err err;
    char **w;
    int first;
    bool ok = parse_line(&t_cmd, line, &o, &first, &w, &err) == -1 && strstr(err.msg, want) &&
              !strchr(err.msg, '\n');
    if (!CHECK(ok))
        fprintf(stderr, "  '%s': '%s', wanted '%s'\n", line, err.msg, want);
    free(o.list);
}

static void test_bad(void)
{
    refused("--count 1", "--count must be a whole number from 2 to 9, not '1'");
    refused("-n 10", "--count");
    refused("--count x", "'x'");
    refused("--size lots", "--size must be a size");
    refused("--colour pink", "--colour must be 'red', 'green' or 'blue', not 'pink'");
    refused("--timeout soon", "--timeout: 'soon' is not a duration");
    refused("--procs 0", "--procs: '0' is not");
    refused("--call bad", "--call: not 'bad'");
    refused("--bogus", "unknown option '--bogus'");
    refused("-x", "unknown option '-x'");
    refused("-s", "option '-s' needs a value");
    refused("--str", "option '--str' needs a value");
    refused("--flag=1", "option '--flag' takes no value");
    refused("--c", "option '--c' is ambiguous");
}

static char *help_of(const struct vg_optcmd *c)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!CHECK(f != NULL))
        return NULL;
    vg_opts_help(c, f);
    CHECK(fclose(f) == 0);
    return text;
}

/* "--name" starts an entry of the help: it is documented. */
static bool documented(const char *help, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "--%s", name);
    for (const char *p = help; (p = strstr(p, want)); p++) {
        char next = p[strlen(want)];
        if ((p == help || p[-1] == ' ') && (next == ' ' || next == '\n'))
            return true;
    }
    return false;
}

/* Every long name and alias of c, limits included (shown: not an
 * alias); n of them. */
static size_t names_of(const struct vg_optcmd *c, const char **names, bool *shown, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct vg_opt *r = &c->rows[i];
        if (r->kind == VG_OPT_LIMITS)
            for (int l = 0; l < VG_LIM_COUNT && n < cap; l++) {
                shown[n] = true;
                names[n++] = vg_limit_row((enum vg_limit)l)->flag;
            }
        else if (n < cap) {
            shown[n] = true;
            names[n++] = r->name;
        }
        if (r->alias && n < cap) {
            shown[n] = false;
            names[n++] = r->alias;
        }
    }
    return n;
}

static void check_table(const struct vg_optcmd *c)
{
    enum { CAP = 128 };
    const char *names[CAP];
    bool shown[CAP];
    size_t n = names_of(c, names, shown, CAP);
    CHECK(n < CAP);
    char *help = help_of(c);
    if (!help)
        return;
    for (size_t i = 0; i < n; i++) {
        if (!CHECK(names[i] && names[i][0]))
            continue;
        if (shown[i] && !CHECK(documented(help, names[i])))
            fprintf(stderr, "  %s: --%s has no help\n", c->name, names[i]);
        for (size_t j = i + 1; j < n; j++)
            if (!CHECK(strcmp(names[i], names[j]) != 0))
                fprintf(stderr, "  %s: --%s twice\n", c->name, names[i]);
    }
    for (size_t i = 0; i < c->n; i++) {
        const struct vg_opt *r = &c->rows[i];
        for (size_t j = i + 1; j < c->n && r->letter; j++)
            CHECK(r->letter != c->rows[j].letter);
        CHECK(r->kind == VG_OPT_LIMITS || (r->help && r->help[0]));
        CHECK(!(r->def && r->def_text));
        /* a value where it goes somewhere, none where it does not */
        bool takes = r->kind != VG_OPT_FLAG && r->kind != VG_OPT_SET && r->kind != VG_OPT_STOP &&
                     r->kind != VG_OPT_LIMITS;
        CHECK(takes == (r->arg != NULL));
        CHECK(r->kind != VG_OPT_CALL || r->set);
        CHECK(r->kind != VG_OPT_CHOICE || r->choices);
        CHECK(r->kind != VG_OPT_UINT || r->max <= UINT_MAX);
        for (size_t k = 0; r->choices && r->choices[k]; k++)
            CHECK(strstr(r->help, r->choices[k]) != NULL);
    }
    /* the table's limit lines are as long as their text; the rest fits */
    for (char *line = help, *end; *line; line = end + (*end != 0)) {
        end = line + strcspn(line, "\n");
        bool limit = false;
        for (int l = 0; l < VG_LIM_COUNT; l++)
            limit |= documented(line, vg_limit_row((enum vg_limit)l)->flag) &&
                     strstr(line, "(default ");
        if (!limit && !CHECK(end - line <= HELP_COLS))
            fprintf(stderr, "  %s: long line '%.*s'\n", c->name, (int)(end - line), line);
    }
    /* examples come last, each a command line of this command and a line
     * saying what it does (scripts/man.py makes EXAMPLES of them) */
    char prefix[32];
    snprintf(prefix, sizeof prefix, "vigil %s ", c->name);
    const char *ex = strstr(help, "\n" VG_OPTS_EXAMPLES_HEAD);
    CHECK(c->nexamples == 0 || ex != NULL);
    for (size_t i = 0; c != &t_cmd && i < c->nexamples; i++)
        if (!CHECK(!strncmp(c->examples[i].cmd, prefix, strlen(prefix)) && c->examples[i].what))
            fprintf(stderr, "  %s: example '%s'\n", c->name, c->examples[i].cmd);
    free(help);
}

/* Every command shows itself in use. */
static void test_every_command_has_examples(void)
{
    const struct vg_optcmd *all[] = {&vg_run_optcmd, &vg_batch_optcmd, &vg_log_optcmd,
                                     &vg_learn_optcmd, &vg_check_optcmd, &vg_view_optcmd,
                                     &vg_image_optcmd, &vg_report_optcmd, &vg_verify_optcmd,
                                     &vg_recheck_optcmd, &vg_serve_optcmd, &vg_submit_optcmd};
    for (size_t i = 0; i < VG_ARRAY_LEN(all); i++)
        if (!CHECK(all[i]->nexamples >= 1))
            fprintf(stderr, "  %s: no example\n", all[i]->name);
    char *help = help_of(&t_cmd);
    if (help)
        CHECK(strstr(help, "end\n\nexamples:\n  t --flag\n      sets the flag\n") != NULL);
    free(help);
}

static void test_tables(void)
{
    check_table(&t_cmd);
    check_table(&vg_run_optcmd);
    check_table(&vg_batch_optcmd);
    check_table(&vg_log_optcmd);
    check_table(&vg_learn_optcmd);
    check_table(&vg_check_optcmd);
    check_table(&vg_view_optcmd);
    check_table(&vg_image_optcmd);
    check_table(&vg_report_optcmd);
    check_table(&vg_recheck_optcmd);
}

/* The run's defaults apply, and the one the help shows for --tail is the
 * one run.c uses when it is not given. */
static void test_run_defaults(void)
{
    struct vg_run_opts o = {0};
    struct vg_err err;
    char **w;
    int first;
    CHECK(parse_line(&vg_run_optcmd, "-q true", &o, &first, &w, &err) == 0);
    CHECK(o.quiet && o.tail == VG_TAIL_DEFAULT && !o.tail_set && o.mode == VG_MODE_ENFORCE);
    CHECK(o.engine == VG_ENGINE_DEFAULT && o.py_frames == VG_PYF_REFUSED);
    CHECK_STR(w[first], "true");
}

int main(void)
{
    test_every_kind();
    test_defaults_and_order();
    test_bad();
    test_tables();
    test_every_command_has_examples();
    test_run_defaults();
    return check_done();
}
