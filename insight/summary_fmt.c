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
        size_t shown = l->n < VG_SUM_TEXT_ITEMS ? l->n : VG_SUM_TEXT_ITEMS;
        for (size_t i = 0; i < shown; i++)
            text_item(&l->items[i], (enum vg_sum_cat)c, b);
        if (l->n > shown || l->more)
            vg_buf_printf(b, "  ... and %zu more (vigil log --summary --json lists them)\n",
                          l->n - shown + (l->more ? 1 : 0));
    }
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
    vg_json_obj_end(j);
}
