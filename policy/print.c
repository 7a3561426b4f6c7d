/* print.c: the normalized form of a policy, one line per rule or setting,
 * each with the file:line it came from (what `vigil check` shows). */
#include <stdio.h>

#include "policy/policy_int.h"
#include "util/escape.h"

/* What came from a policy file or its name (a rule's words, a file name,
 * an env value) goes out escaped (util/escape.h): a policy under review
 * cannot draw on the reviewer's terminal, nor forge a line of the listing. */
static void put(FILE *out, const char *s)
{
    struct vg_buf b = {0};
    vg_esc_puts(&b, s, VG_ESC_TEXT);
    if (b.len)
        fwrite(b.data, 1, b.len, out);
    vg_buf_free(&b);
}

static void origin(FILE *out, const struct vg_setting_src *s)
{
    if (s->file) {
        put(out, s->file);
        fprintf(out, ":%u: ", s->line);
    } else
        fprintf(out, "(built-in): ");
}

static void print_defaults(const struct vg_policy *p, FILE *out)
{
    for (int c = 0; c < VG_NPCLASS; c++) {
        origin(out, &p->def_src[c]);
        fprintf(out, "default %s %s\n", vg_pol_action_names[p->def[c]], vg_pol_class_names[c]);
    }
    bool any = false;
    for (int c = 0; c < VG_NPCLASS; c++)
        if (p->audit[c]) {
            fprintf(out, "%s%s", any ? " " : "audit ", vg_pol_class_names[c]);
            any = true;
        }
    if (any)
        fputc('\n', out);
    if (p->audit_lookups)
        fputs("audit lookups\n", out);
}

static void print_settings(const struct vg_policy *p, FILE *out)
{
    for (int l = 0; l < VG_LIM_COUNT; l++) {
        char v[48];
        if (!p->limits.set[l])
            continue;
        vg_limit_format((enum vg_limit)l, p->limits.v[l], v, sizeof v);
        origin(out, &p->limit_src[l]);
        fprintf(out, "limit %s %s\n", vg_limit_name((enum vg_limit)l), v);
    }
    for (uint32_t i = 0; i < p->nbinds; i++) {
        const struct vg_pbind *b = &p->binds[i];
        fprintf(out, "%s ", b->out.rw ? "bind-rw" : "bind");
        put(out, b->src_text);
        if (b->dst_rest) {
            fprintf(out, " %s", vg_place_var(b->dst_place));
            put(out, b->dst_rest);
        }
        fputc('\n', out);
    }
    if (p->image) {
        origin(out, &p->image_src);
        fputs("image ", out);
        put(out, p->image);
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < p->nenv; i++) {
        fputs(p->env[i].value ? "env set " : "env pass ", out);
        put(out, p->env[i].name);
        if (p->env[i].value) {
            fputc('=', out);
            put(out, p->env[i].value);
        }
        fputc('\n', out);
    }
}

/* What a rule's literal paths resolve to in the read-only trees, when
 * that differs from what it says (policy/resolve.c): "  (= A, B)". */
static void print_resolved(const struct vg_ppat *pp, FILE *out)
{
    for (uint32_t i = pp->nwritten; i < pp->nalts; i++) {
        fputs(i == pp->nwritten ? "  (= " : ", ", out);
        put(out, pp->alts[i]);
    }
    if (pp->nalts > pp->nwritten)
        fputc(')', out);
}

void vg_policy_print(const struct vg_policy *p, FILE *out)
{
    fputs("# policy ", out);
    put(out, p->path);
    if (p->ro && p->ro->root) {
        fputs("\n# paths resolved in the image tree ", out);
        put(out, p->ro->root);
    }
    fprintf(out, "\n# sha256 %s\n", p->sha256);
    fprintf(out, "# %u rules; the first that matches decides\n", p->nrules);
    for (uint32_t i = 0; i < p->nrules; i++) {
        put(out, p->rules[i].src.file);
        fprintf(out, ":%u: ", p->rules[i].src.line);
        put(out, p->rules[i].src.text);
        print_resolved(&p->rules[i].path, out);
        fputc('\n', out);
    }
    print_defaults(p, out);
    print_settings(p, out);
}
