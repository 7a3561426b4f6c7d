/* progress.c: what `vigil batch` tells its caller as tasks finish.  On a
 * terminal, one line redrawn in place (a bar, counts, rate, time left);
 * otherwise one plain line per finished task, for logs and schedulers.
 * Everything goes to stderr: stdout stays free for the caller. */
#include <stdio.h>
#include <string.h>

#include "batch/batch.h"
#include "util/escape.h"

#define BAR_WIDTH 30
#define NS_PER_S 1e9

static void eta(char *buf, size_t cap, double secs)
{
    if (secs < 0)
        snprintf(buf, cap, "?");
    else if (secs < 60)
        snprintf(buf, cap, "%.0fs", secs);
    else if (secs < 3600)
        snprintf(buf, cap, "%.0fm%02.0fs", secs / 60, (double)((long)secs % 60));
    else
        snprintf(buf, cap, "%.1fh", secs / 3600);
}

static void draw_bar(const struct vg_progress *p)
{
    unsigned finished = p->done + p->skipped;
    double elapsed = (double)(vg_now_mono_ns() - p->start_ns) / NS_PER_S;
    double rate = elapsed > 0 ? p->done / elapsed : 0;
    char left[32];
    eta(left, sizeof left, rate > 0 ? (p->total - finished) / rate : -1);
    char bar[BAR_WIDTH + 1];
    unsigned fill = p->total ? finished * BAR_WIDTH / p->total : 0;
    memset(bar, '#', fill);
    memset(bar + fill, '.', BAR_WIDTH - fill);
    bar[BAR_WIDTH] = 0;
    fprintf(stderr, "\r[%s] %u/%u  failed %u  running %u  %.1f/s  ETA %s \033[K", bar, finished,
            p->total, p->failed, p->running, rate, left);
    fflush(stderr);
}

void vg_progress_task(struct vg_progress *p, const struct vg_batch_task *t, const char *status,
                      double secs)
{
    if (p->bar) {
        draw_bar(p);
        return;
    }
    if (t)
        vg_say(stderr, "vigil batch: %u/%u %s %s %.2fs", p->done + p->skipped, p->total,
               t->id, status ? status : "no result", secs);
}

void vg_progress_end(struct vg_progress *p)
{
    if (p->bar) {
        draw_bar(p);
        fputc('\n', stderr);
    }
    vg_say(stderr, "vigil batch: %u tasks: %u run, %u already done, %u failed", p->total,
           p->done, p->skipped, p->failed);
}
