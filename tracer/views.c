/* views.c: see views.h. */
#include "tracer/views.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "net/dns.h"
#include "policy/dns_table.h"
#include "net/net.h"

void vg_fs_node_of(const struct stat *st, struct vg_fs_node *node)
{
    *node = (struct vg_fs_node){.dir = S_ISDIR(st->st_mode), .dev = st->st_dev,
                                .ino = st->st_ino, .ctime = st->st_ctim};
}

/* The sandbox's files now, through its root: path is absolute (decide.h). */
static int root_stat(void *arg, const char *path, bool follow, struct vg_fs_node *out)
{
    int root_fd = *(const int *)arg;
    struct stat st;
    if (root_fd < 0)
        return EBADF;
    if (fstatat(root_fd, path + 1, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
        return errno;
    vg_fs_node_of(&st, out);
    return 0;
}

struct vg_fs_view vg_fs_view_at(const int *root_fd)
{
    return (struct vg_fs_view){.stat = root_stat, .arg = (void *)root_fd};
}

/* arg: the engine's context, whose network plan and resolver's table
 * these read. */
static bool plan_special(void *arg, const struct vg_ip *ip)
{
    const struct vg_engine_ctx *ctx = arg;
    return vg_net_special(ctx->net, ip);
}

static const char *table_name(void *arg, const struct vg_ip *ip, struct vg_arena *a)
{
    const struct vg_engine_ctx *ctx = arg;
    char name[VG_DNS_NAME_MAX + 1];
    return vg_dns_table_name(ctx->dns, ip, name, sizeof name) ? vg_arena_strdup(a, name) : NULL;
}

static const struct vg_rule_src resolver_rule = {
    .file = "(vigil)", .line = 0,
    .text = "allow send udp " VG_DNS_ADDR ":53: vigil's resolver (net/dns.h)",
};

/* vigil's resolver in the sandbox's namespace (net/dns.h). */
static bool resolver_of(struct vg_resolver *r)
{
    *r = (struct vg_resolver){
        .addr = {.family = AF_INET, .port = VG_DNS_PORT},
        .rule = &resolver_rule,
    };
    return inet_pton(AF_INET, VG_DNS_ADDR, r->addr.ip.a) == 1;
}

void vg_decide_ctx_of(const struct vg_engine_ctx *ctx, const struct vg_fs_view *fs,
                      const struct vg_net_view *net, struct vg_decide_ctx *d)
{
    *d = (struct vg_decide_ctx){
        .pol = ctx->pol, .dry_run = ctx->opts->mode == VG_MODE_DRY_RUN, .audited = ctx->audited,
        .artifacts = ctx->artifacts, .nartifacts = ctx->nartifacts,
        .command_path = ctx->command_path, .command_id = &ctx->command_id,
        .masked = ctx->masked, .nmasked = ctx->nmasked, .fs = fs, .net = net,
    };
}

/* The network view of the run: with no resolver, no names and no way to
 * one.  res holds the resolver it points to. */
static struct vg_net_view net_view(const struct vg_engine_ctx *ctx, struct vg_resolver *res)
{
    bool dns = ctx->dns && resolver_of(res);
    return (struct vg_net_view){.special = plan_special, .arg = (void *)ctx,
                                .name_of = dns ? table_name : NULL,
                                .names = dns ? ctx->dns : NULL, .resolver = dns ? res : NULL};
}

void vg_decide_call(const struct vg_engine_ctx *ctx, struct vg_call *call, int root_fd,
                    struct vg_call_verdict *v)
{
    struct vg_resolver res;
    struct vg_fs_view fs = vg_fs_view_at(&root_fd);
    struct vg_net_view net = net_view(ctx, &res);
    struct vg_decide_ctx d;
    vg_decide_ctx_of(ctx, &fs, &net, &d);
    vg_decide(&d, call, v);
}

void vg_decide_exec_image(const struct vg_engine_ctx *ctx, const char *exe, const struct stat *st,
                          struct vg_call_verdict *v)
{
    struct vg_fs_node node;
    if (exe && st)
        vg_fs_node_of(st, &node);
    struct vg_exec_image img = {.exe = exe, .node = exe && st ? &node : NULL};
    struct vg_decide_ctx d;
    vg_decide_ctx_of(ctx, NULL, NULL, &d); /* the image is judged on its name and node */
    vg_decide_exec(&d, &img, v);
}
