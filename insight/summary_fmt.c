/* summary_fmt.c: the intent summary as text (`vigil log --summary`) and
 * as JSON (`--summary --json`, the result record's "summary"). */
#include <inttypes.h>

#include "event/reader.h"
#include "insight/summary.h"
#include "util/json.h"

/* Heading and JSON key of each category. */
static const struct {
    const char *key, *title;
} cats[VG_SUM_NCATS] = {
    [VG_SUM_SECRETS] = {"secrets", "secrets and home paths touched"},
    [VG_SUM_NETWORK] = {"network", "network attempts"},
    [VG_SUM_EXEC] = {"exec", "programs the policy does not allow"},
    [VG_SUM_WRITES] = {"writes", "writes outside the workdir"},
    [VG_SUM_DELETIONS] = {"deletions", "deletions outside the workdir"},
};

/* Noise, by kind: its JSON key and what the text calls it. */
static const struct {
    const char *key, *text;
} noises[VG_NOISE_NKINDS] = {
    [VG_NOISE_PROBE] = {"probes", "PATH probes"},
    [VG_NOISE_SCRATCH] = {"scratch", "the sandbox's own scratch"},
    [VG_NOISE_RESOLVER] = {"resolver", "vigil's resolver"},
    [VG_NOISE_NSCD] = {"nscd", "nscd"},
};

/* Items shown per category in the text; the JSON has them all. */
#define VG_SUM_TEXT_ITEMS 12
#define NS_PER_S 1000000000u
#define NS_PER_US 1000u

static void put_decisions(struct vg_buf *b, unsigned mask, const char *sep)
{
    bool first = true;
    for (int d = 0; d < VG_DEC_NDECISIONS; d++) {
        if (!(mask & (1u << d)))
            continue;
        vg_buf_printf(b, "%s%s", first ? "" : sep, vg_decision_name(d));
        first = false;
    }
}

static void text_item(const struct vg_sum_item *it, enum vg_sum_cat c, struct vg_buf *b)
{
    vg_buf_puts(b, "  ");
    vg_text_escaped(b, it->what);
    if (it->host) {
        vg_buf_puts(b, " (");
        vg_text_escaped(b, it->host);
        vg_buf_puts(b, ")");
    }
    vg_buf_printf(b, "  x%" PRIu64 "  first +%" PRIu64 ".%06" PRIu64 "  ", it->count,
                  it->first_ts / NS_PER_S, it->first_ts % NS_PER_S / NS_PER_US);
    put_decisions(b, it->decisions, "/");
    if (!it->found && (c == VG_SUM_SECRETS || c == VG_SUM_EXEC))
        vg_buf_puts(b, " (not found)");
    if (it->source) {
        vg_buf_puts(b, "  from ");
        vg_text_escaped(b, it->source);
    }
    if (it->paths.len) {
        vg_buf_puts(b, "\n      tried: ");
        vg_text_escaped(b, it->paths.data);
    }
    vg_buf_puts(b, "\n");
}

/* The names refused, on one line: "names refused: pypi.org (NXDOMAIN
 * x6), ..." (a dry run's would-deny says so).  How many it showed. */
static size_t text_names(const struct vg_sum_list *l, struct vg_buf *b)
{
    size_t shown = 0;
    for (size_t i = 0; i < l->n && shown < VG_SUM_TEXT_ITEMS; i++) {
        const struct vg_sum_item *it = &l->items[i];
        if (!it->dns)
            continue;
        vg_buf_puts(b, shown++ ? ", " : "  names refused: ");
        vg_text_escaped(b, it->host ? it->host : "");
        vg_buf_puts(b, " (");
        if (it->decisions != 1u << VG_DEC_DENY) {
            put_decisions(b, it->decisions, "/");
            vg_buf_puts(b, ", ");
        }
        vg_text_escaped(b, it->rcodes.data ? it->rcodes.data : "?");
        vg_buf_printf(b, " x%" PRIu64 ")", it->count);
    }
    if (shown)
        vg_buf_puts(b, "\n");
    return shown;
}

static void text_cat(const struct vg_sum_list *l, enum vg_sum_cat c, struct vg_buf *b)
{
    size_t shown = text_names(l, b);
    for (size_t i = 0; i < l->n && shown < VG_SUM_TEXT_ITEMS; i++)
        if (!l->items[i].dns) {
            text_item(&l->items[i], c, b);
            shown++;
        }
    if (l->n > shown || l->more)
        vg_buf_printf(b, "  ... and %zu more (vigil log --summary --json lists them)\n",
                      l->n - shown + (l->more ? 1 : 0));
}

/* One line for what was left out as noise, when anything was. */
static void text_noise(const struct vg_summary *s, struct vg_buf *b)
{
    const char *sep = "not attempts (noise): ";
    for (int k = VG_NOISE_NONE + 1; k < VG_NOISE_NKINDS; k++) {
        if (!s->noise[k])
            continue;
        vg_buf_printf(b, "%s%s x%" PRIu64, sep, noises[k].text, s->noise[k]);
        sep = ", ";
    }
    if (sep[0] == ',')
        vg_buf_puts(b, "\n");
}

void vg_summary_text(const struct vg_summary *s, struct vg_buf *b)
{
    for (int c = 0; c < VG_SUM_NCATS; c++) {
        const struct vg_sum_list *l = &s->cat[c];
        if (!l->total) {
            vg_buf_printf(b, "%s: none\n", cats[c].title);
            continue;
        }
        vg_buf_printf(b, "%s: %" PRIu64 " attempt%s\n", cats[c].title, l->total,
                      l->total == 1 ? "" : "s");
        text_cat(l, (enum vg_sum_cat)c, b);
    }
    text_noise(s, b);
}

static void json_item(const struct vg_sum_item *it, struct vg_json *j)
{
    vg_json_obj_begin(j);
    vg_json_key(j, "what"); vg_json_str(j, it->what);
    if (it->host) {
        vg_json_key(j, "host");
        vg_json_str(j, it->host);
    }
    vg_json_key(j, "count"); vg_json_uint(j, it->count);
    vg_json_key(j, "first_ts"); vg_json_uint(j, it->first_ts);
    vg_json_key(j, "decisions");
    vg_json_arr_begin(j);
    for (int d = 0; d < VG_DEC_NDECISIONS; d++)
        if (it->decisions & (1u << d))
            vg_json_str(j, vg_decision_name(d));
    vg_json_arr_end(j);
    vg_json_key(j, "found"); vg_json_bool(j, it->found);
    vg_json_key(j, "source"); vg_json_str(j, it->source);
    if (it->paths.len) {
        vg_json_key(j, "tried");
        vg_json_strn(j, it->paths.data, it->paths.len);
    }
    if (it->dns) {
        vg_json_key(j, "rcode");
        vg_json_strn(j, it->rcodes.data, it->rcodes.len);
    }
    vg_json_obj_end(j);
}

void vg_summary_json(const struct vg_summary *s, struct vg_json *j)
{
    vg_json_obj_begin(j);
    for (int c = 0; c < VG_SUM_NCATS; c++) {
        const struct vg_sum_list *l = &s->cat[c];
        vg_json_key(j, cats[c].key);
        vg_json_obj_begin(j);
        vg_json_key(j, "count"); vg_json_uint(j, l->total);
        vg_json_key(j, "untracked"); vg_json_uint(j, l->more);
        vg_json_key(j, "items");
        vg_json_arr_begin(j);
        for (size_t i = 0; i < l->n; i++)
            json_item(&l->items[i], j);
        vg_json_arr_end(j);
        vg_json_obj_end(j);
    }
    /* counts only, no "items": nothing here is an attempt */
    vg_json_key(j, "noise");
    vg_json_obj_begin(j);
    for (int k = VG_NOISE_NONE + 1; k < VG_NOISE_NKINDS; k++) {
        vg_json_key(j, noises[k].key);
        vg_json_uint(j, s->noise[k]);
    }
    vg_json_obj_end(j);
    vg_json_obj_end(j);
}
