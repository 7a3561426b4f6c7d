/* cmd_report.c: `vigil report BATCHDIR [--by LABEL] [--json] [-o FILE.html]`:
 * the fleet view of a batch (insight/report.h).  Text on stdout by
 * default; --json one object on stdout; -o one self-contained HTML page,
 * written as vigil writes every output file (util/outfile.h: never over a
 * file vigil did not write).  Exit 0; 3 when some log could not be read
 * whole (the report counts what it holds, stderr says which); 1 when there
 * is no report to make (no results, a bad results line, the page not
 * written); 2 usage. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/write_out.h"
#include "insight/report.h"
#include "util/escape.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_INCOMPLETE 3 /* as vigil log: a log truncated or corrupt */
/* Warnings printed one a line; the rest are counted (--json has them all). */
#define MAX_WARNINGS_SHOWN 10
#define MAX_TOP 10000

static const char usage_text[] =
    "usage: vigil report BATCHDIR [--by LABEL] [--json] [-o FILE.html] [--top N]\n"
    "The fleet view of a batch (the --out of vigil batch): per candidate, per\n"
    "group (--by: the value of a label the tasks have, \"labels\": {\"model\":\n"
    "...}) and across the fleet: refusals by class, secrets and home paths\n"
    "touched, network attempts and names refused, programs refused and\n"
    "programs run, writes and deletions outside the workdir, limits hit, how\n"
    "the runs ended, and the candidates' own source lines behind the\n"
    "refusals (with the text of each line).  The categories are the intent\n"
    "summaries of BATCHDIR/results.jsonl, added up; the logs are read for the\n"
    "programs run and the source lines.  BATCHDIR may also be a shard's\n"
    "results file in it.  Text to stdout; --json one object; -o an HTML page\n"
    "with bar charts, one self-contained file (no script, nothing fetched).\n";

static const char usage_tail[] =
    "Exit status: 0; 3 some log could not be read whole (the report counts\n"
    "what it holds); 1 no report (no results, a bad results line, the page\n"
    "not written); 2 usage.\n";

struct report_args {
    const char *by, *out;
    bool json;
    unsigned top;
};

#define AT(field) offsetof(struct report_args, field)

static const struct vg_opt rows[] = {
    {"by", 0, "LABEL", "group the candidates by this label of their tasks",
     .kind = VG_OPT_STRING, .off = AT(by)},
    {"json", 0, NULL, "one JSON object on stdout, every list whole",
     .kind = VG_OPT_FLAG, .off = AT(json)},
    {"output", 'o', "FILE", "write the HTML page there (a new file, or one vigil\n"
     "wrote before); with --json too, the JSON goes to\nstdout as well",
     .kind = VG_OPT_STRING, .off = AT(out)},
    {"top", 0, "N", "items shown per list in the text and the page", .def = "10",
     .kind = VG_OPT_UINT, .off = AT(top), .min = 1, .max = MAX_TOP},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil report runs --by model", "what each model's candidates tried, side by side"},
    {"vigil report runs --by model -o report.html", "the same as one page with charts"},
    {"vigil report runs --json | jq '.fleet.sources.items[:5]'",
     "the five source lines most candidates were refused at"},
};

const struct vg_optcmd vg_report_optcmd = {
    .name = "report", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows),
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

static const struct vg_outfile_kind page_kind = {
    .what = "-o", .signature = VG_REPORT_HTML_MARK, .siglen = sizeof VG_REPORT_HTML_MARK - 1,
    .within = sizeof "<!DOCTYPE html>\n" + sizeof VG_REPORT_HTML_MARK,
};

static int usage_error(const char *fmt, const char *arg)
{
    /* arg is what the caller typed: escaped with the rest of the line */
    char *what = vg_xasprintf(fmt, arg);
    vg_say(stderr, "vigil report: %s (try 'vigil report --help')", what);
    free(what);
    return EXIT_USAGE;
}

static int write_page(const char *path, const struct vg_buf *b)
{
    struct vg_err err;
    if (vg_write_out(path, &page_kind, b, &err) < 0) {
        vg_say(stderr, "vigil report: %s", err.msg);
        return EXIT_FAILED;
    }
    return 0;
}

static int print(const struct vg_buf *b)
{
    if (fwrite(b->data, 1, b->len, stdout) != b->len || fflush(stdout) != 0) {
        vg_say(stderr, "vigil report: stdout: %m");
        return EXIT_FAILED;
    }
    return 0;
}

static void say_warnings(const struct vg_report *r)
{
    size_t n = vg_report_nwarnings(r);
    for (size_t i = 0; i < n && i < MAX_WARNINGS_SHOWN; i++)
        vg_say(stderr, "vigil report: warning: %s", vg_report_warning(r, i));
    if (n > MAX_WARNINGS_SHOWN)
        vg_say(stderr, "vigil report: warning: and %zu more (--json lists them)",
               n - MAX_WARNINGS_SHOWN);
}

int vg_cmd_report(int argc, char **argv)
{
    struct report_args a = {0};
    struct vg_err err;
    int first, rc = vg_opts_parse(&vg_report_optcmd, argc, argv, &a, &first, &err);
    if (rc == VG_OPTS_HELP) {
        vg_opts_help(&vg_report_optcmd, stdout);
        return 0;
    }
    if (rc < 0)
        return usage_error("%s", err.msg);
    if (first != argc - 1)
        return usage_error("%s", "give exactly one BATCHDIR");
    if (a.by && !vg_batch_valid_word(a.by, VG_BATCH_MAX_LABEL_NAME))
        return usage_error("--by '%s': not a label name (letters, digits, '.', '_', '-')", a.by);
    struct vg_report_opts o = {.dir = argv[first], .by = a.by, .top = a.top};
    struct vg_report *r;
    int loaded = vg_report_load(&o, &r, &err);
    if (loaded < 0) {
        vg_say(stderr, "vigil report: %s", err.msg);
        return EXIT_FAILED;
    }
    struct vg_buf b = {0};
    rc = 0;
    if (a.out) {
        vg_report_html(r, &b);
        rc = write_page(a.out, &b);
        b.len = 0;
    }
    if (rc == 0 && (a.json || !a.out)) {
        if (a.json)
            vg_report_json(r, &b);
        else
            vg_report_text(r, &b);
        rc = print(&b);
    }
    say_warnings(r);
    vg_buf_free(&b);
    vg_report_free(r);
    return rc ? rc : loaded > 0 ? EXIT_INCOMPLETE : 0;
}
