/* options.c: the row machinery of cli/options.h.  A row stands for one
 * option, except a VG_OPT_LIMITS row, which stands for one option per limit
 * of policy/limit_table.c: a "slot" is one option either way. */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "policy/policy.h"

/* getopt_long's val for slot k (short options return their letter). */
#define VAL_BASE 256
/* The help text starts after the widest "--name VALUE", up to this many
 * columns: one long name does not push every other help text right. */
#define SPEC_COL_MAX 18
#define INDENT "  "
#define LETTER_COL "    " /* "-x, " */
#define SPEC_LEN 64
/* Help lines fit an 80-column terminal. */
#define HELP_COLS 79

/* One option as the help and the messages see it. */
struct slot {
    const struct vg_opt *row;
    int sub;               /* VG_OPT_LIMITS: the limit; else 0 */
    const char *name, *arg, *help;
    const char *def;       /* NULL: none */
    char limit_def[32];    /* VG_OPT_LIMITS: the table's, formatted */
};

static size_t nsubs(const struct vg_opt *r)
{
    return r->kind == VG_OPT_LIMITS ? VG_LIM_COUNT : 1;
}

static size_t count_slots(const struct vg_optcmd *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += nsubs(&c->rows[i]);
    return n;
}

static const char *limit_metavar(enum vg_limit l)
{
    static const char *const metavar[] = {
        [VG_LK_MS] = "DUR", [VG_LK_SECONDS] = "DUR", [VG_LK_SIZE] = "SIZE",
        [VG_LK_COUNT] = "N", [VG_LK_CPUS] = "CPUS",
    };
    return metavar[vg_limit_row(l)->kind];
}

static void slot_of_row(const struct vg_opt *r, int sub, struct slot *s)
{
    *s = (struct slot){.row = r, .sub = sub, .name = r->name, .arg = r->arg, .help = r->help};
    if (r->kind == VG_OPT_LIMITS) {
        const struct vg_limit_row *l = vg_limit_row((enum vg_limit)sub);
        s->name = l->flag;
        s->arg = limit_metavar((enum vg_limit)sub);
        s->help = l->what;
        if (l->def)
            vg_limit_format((enum vg_limit)sub, l->def, s->limit_def, sizeof s->limit_def);
        else
            snprintf(s->limit_def, sizeof s->limit_def, "none");
        s->def = s->limit_def;
        return;
    }
    s->def = r->def ? r->def : r->def_text;
}

/* Slot k in the order of the rows. */
static void slot_at(const struct vg_optcmd *c, size_t k, struct slot *s)
{
    for (size_t i = 0; i < c->n; i++) {
        size_t m = nsubs(&c->rows[i]);
        if (k < m) {
            slot_of_row(&c->rows[i], (int)k, s);
            return;
        }
        k -= m;
    }
    *s = (struct slot){0};
}

static bool row_of_letter(const struct vg_optcmd *c, int ch, struct slot *s)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].letter && c->rows[i].letter == ch) {
            slot_of_row(&c->rows[i], 0, s);
            return true;
        }
    return false;
}

/* ---- one value into the command's struct ---- */

static int bad_choice(const struct slot *s, const char *v, struct vg_err *err)
{
    struct vg_buf b = {0};
    const char *const *ch = s->row->choices;
    for (size_t i = 0; ch[i]; i++)
        vg_buf_printf(&b, "%s'%s'", i == 0 ? "" : ch[i + 1] ? ", " : " or ", ch[i]);
    vg_errf(err, "--%s must be %s, not '%s'", s->name, b.data, v);
    vg_buf_free(&b);
    return -1;
}

static int put_choice(const struct slot *s, const char *v, int *out, struct vg_err *err)
{
    for (int i = 0; s->row->choices[i]; i++)
        if (!strcmp(v, s->row->choices[i])) {
            *out = i;
            return 0;
        }
    return bad_choice(s, v, err);
}

static int put_uint(const struct slot *s, const char *v, unsigned *out, struct vg_err *err)
{
    uint64_t x;
    if (!vg_parse_u64(v, &x) || x < s->row->min || x > s->row->max) {
        vg_errf(err, "--%s must be a whole number from %llu to %llu, not '%s'", s->name,
                (unsigned long long)s->row->min, (unsigned long long)s->row->max, v);
        return -1;
    }
    *out = (unsigned)x;
    return 0;
}

static int put_size(const struct slot *s, const char *v, uint64_t *out, struct vg_err *err)
{
    if (!vg_parse_size(v, out)) {
        vg_errf(err, "--%s must be a size (bytes, or with k, M or G: 4k), not '%s'", s->name, v);
        return -1;
    }
    return 0;
}

static int put_limit(const struct slot *s, const char *v, struct vg_limits *l, struct vg_err *err)
{
    enum vg_limit which = (enum vg_limit)s->sub;
    uint64_t x;
    if (!vg_limit_parse(which, v, &x)) {
        char syntax[160];
        vg_limit_syntax(which, syntax, sizeof syntax);
        vg_errf(err, "--%s: '%s' is not %s", s->name, v, syntax);
        return -1;
    }
    l->v[which] = x;
    l->set[which] = true;
    return 0;
}

static void put_list(const struct vg_opt *r, const char *v, void *dst)
{
    const char ***list = (const char ***)((char *)dst + r->off);
    unsigned *n = (unsigned *)((char *)dst + r->count);
    *list = vg_xrealloc((void *)*list, (*n + 1) * sizeof **list);
    (*list)[(*n)++] = v;
}

/* 0, -1 with err, or a VG_OPT_STOP row's value.  given: from the command
 * line (the row's seen bool says so), not a default. */
static int give(const struct slot *s, const char *v, void *dst, bool given, struct vg_err *err)
{
    const struct vg_opt *r = s->row;
    void *at = (char *)dst + r->off;
    int rc = 0;
    switch (r->kind) {
    case VG_OPT_FLAG: *(bool *)at = true; break;
    case VG_OPT_SET: *(int *)at = r->value; break;
    case VG_OPT_STRING: *(const char **)at = v; break;
    case VG_OPT_LIST: put_list(r, v, dst); break;
    case VG_OPT_UINT: rc = put_uint(s, v, at, err); break;
    case VG_OPT_SIZE: rc = put_size(s, v, at, err); break;
    case VG_OPT_CHOICE: rc = put_choice(s, v, at, err); break;
    case VG_OPT_LIMITS: rc = put_limit(s, v, at, err); break;
    case VG_OPT_CALL: rc = r->set(dst, v, err); break;
    case VG_OPT_STOP: return r->value;
    }
    if (rc == 0 && given && r->seen)
        *(bool *)((char *)dst + r->seen - 1) = true;
    return rc;
}

static int apply_defaults(const struct vg_optcmd *c, void *dst, struct vg_err *err)
{
    for (size_t i = 0; i < c->n; i++) {
        struct slot s;
        slot_of_row(&c->rows[i], 0, &s);
        if (c->rows[i].def && give(&s, c->rows[i].def, dst, false, err) != 0)
            return -1;
    }
    return 0;
}

/* ---- getopt_long ---- */

struct table {
    struct option *longs;  /* slot k at k, then the aliases; {0} ends it */
    char *shorts;
};

static void build(const struct vg_optcmd *c, struct table *t)
{
    size_t n = count_slots(c), k = 0, j = 0;
    t->longs = vg_xcalloc(2 * n + 1, sizeof *t->longs);
    t->shorts = vg_xcalloc(2 * c->n + 2, 1);
    if (c->in_order)
        t->shorts[j++] = '+';
    for (; k < n; k++) {
        struct slot s;
        slot_at(c, k, &s);
        t->longs[k] = (struct option){s.name, s.arg ? required_argument : no_argument, NULL,
                                      VAL_BASE + (int)k};
    }
    for (size_t i = 0, base = 0; i < c->n; base += nsubs(&c->rows[i]), i++) {
        const struct vg_opt *r = &c->rows[i];
        if (r->alias)
            t->longs[k++] = (struct option){r->alias, t->longs[base].has_arg, NULL,
                                            VAL_BASE + (int)base};
        if (r->letter) {
            t->shorts[j++] = r->letter;
            if (r->arg)
                t->shorts[j++] = ':';
        }
    }
}

/* A prefix of two or more long names: getopt_long says '?' for it too
 * (an exact name, or a prefix of one, it takes). */
static bool ambiguous(const struct option *longs, const char *word)
{
    const char *name = word + strspn(word, "-");
    size_t len = strcspn(name, "="), hits = 0;
    for (const struct option *o = longs; o->name; o++)
        hits += len > 0 && !strncmp(o->name, name, len);
    return hits >= 2;
}

/* getopt_long said '?': which option, and what is wrong with it. */
static int refuse(const struct vg_optcmd *c, const struct table *t, char **argv,
                  struct vg_err *err)
{
    struct slot s;
    if (optopt >= VAL_BASE) {
        slot_at(c, (size_t)(optopt - VAL_BASE), &s);
        vg_errf(err, "option '--%s' %s", s.name, s.arg ? "needs a value" : "takes no value");
    } else if (optopt && row_of_letter(c, optopt, &s)) {
        vg_errf(err, "option '-%c' needs a value", optopt);
    } else if (optopt) {
        vg_errf(err, "unknown option '-%c'", optopt);
    } else if (ambiguous(t->longs, argv[optind - 1])) {
        vg_errf(err, "option '%s' is ambiguous: give more of its name", argv[optind - 1]);
    } else {
        vg_errf(err, "unknown option '%s'", argv[optind - 1]);
    }
    return -1;
}

int vg_opts_parse(const struct vg_optcmd *c, int argc, char **argv, void *dst, int *first,
                  struct vg_err *err)
{
    *first = argc;
    if (apply_defaults(c, dst, err) < 0)
        return -1;
    struct table t;
    build(c, &t);
    opterr = 0;
    optind = 0; /* glibc: start over, also its state within a word */
    int ch, rc = 0;
    while (rc == 0 && (ch = getopt_long(argc, argv, t.shorts, t.longs, NULL)) != -1) {
        struct slot s;
        if (ch >= VAL_BASE)
            slot_at(c, (size_t)(ch - VAL_BASE), &s);
        if (ch == '?' || (ch < VAL_BASE && !row_of_letter(c, ch, &s)))
            rc = refuse(c, &t, argv, err);
        else
            rc = give(&s, optarg, dst, true, err);
    }
    if (rc == 0)
        *first = optind;
    free(t.longs);
    free(t.shorts);
    return rc;
}

/* ---- --help ---- */

static void spec_of(const struct slot *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "--%s%s%s", s->name, s->arg ? " " : "", s->arg ? s->arg : "");
}

static int spec_width(const struct vg_optcmd *c)
{
    size_t w = 0;
    for (size_t k = 0, n = count_slots(c); k < n; k++) {
        struct slot s;
        char spec[SPEC_LEN];
        slot_at(c, k, &s);
        spec_of(&s, spec, sizeof spec);
        if (strlen(spec) > w)
            w = strlen(spec);
    }
    return (int)(w < SPEC_COL_MAX ? w : SPEC_COL_MAX);
}

static bool any_letter(const struct vg_optcmd *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].letter)
            return true;
    return false;
}

/* Text whose lines after the first start at column indent; the length
 * of its last line. */
static size_t print_lines(const char *text, int indent, FILE *f)
{
    size_t len = 0;
    for (const char *p = text; *p;) {
        len = strcspn(p, "\n");
        fprintf(f, "%.*s", (int)len, p);
        p += len;
        if (*p == '\n' && *++p)
            fprintf(f, "\n%*s", indent, "");
    }
    return len;
}

/* "  -x, --name VALUE  help (default D)", its further lines under the
 * help's first.  A default that would run past the line starts a line of
 * its own, but a limit's: those lines are the table's, one per limit,
 * where tests and scripts look for "--flag VALUE what (default D)". */
static void print_slot(const struct slot *s, int width, bool letters, FILE *f)
{
    static const char open[] = " (default ";
    char spec[SPEC_LEN], lead[sizeof LETTER_COL];
    spec_of(s, spec, sizeof spec);
    if (s->row->letter)
        snprintf(lead, sizeof lead, "-%c, ", s->row->letter);
    else
        snprintf(lead, sizeof lead, "%s", letters ? LETTER_COL : "");
    fprintf(f, INDENT "%s%-*s ", lead, width, spec);
    int indent = (int)(strlen(INDENT) + strlen(lead)) + width + 1;
    size_t col = print_lines(s->help, indent, f) + (size_t)indent;
    if (s->def) {
        if (s->row->kind != VG_OPT_LIMITS && col + strlen(open) + strcspn(s->def, "\n") > HELP_COLS)
            fprintf(f, "\n%*s(default ", indent, "");
        else
            fputs(open, f);
        print_lines(s->def, indent, f);
        fputc(')', f);
    }
    fputc('\n', f);
}

void vg_opts_help(const struct vg_optcmd *c, FILE *f)
{
    int width = spec_width(c);
    bool letters = any_letter(c);
    fputs(c->usage, f);
    for (size_t k = 0, n = count_slots(c); k < n; k++) {
        struct slot s;
        slot_at(c, k, &s);
        if (s.row->heading && s.sub == 0)
            fprintf(f, INDENT "%s\n", s.row->heading);
        print_slot(&s, width, letters, f);
    }
    if (c->epilog)
        fputs(c->epilog, f);
    vg_opts_examples(c->examples, c->nexamples, f);
}

void vg_opts_examples(const struct vg_example *ex, size_t n, FILE *f)
{
    if (!n)
        return;
    fputs("\n" VG_OPTS_EXAMPLES_HEAD, f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, INDENT "%s\n" INDENT INDENT INDENT "%s\n", ex[i].cmd, ex[i].what);
}

size_t vg_opts_count(const struct vg_optcmd *c)
{
    return count_slots(c);
}

void vg_opts_view(const struct vg_optcmd *c, size_t k, struct vg_opt_view *v)
{
    struct slot s;
    slot_at(c, k, &s);
    *v = (struct vg_opt_view){.name = s.name, .letter = s.sub ? 0 : s.row->letter, .arg = s.arg,
                              .choices = s.row->choices};
}
