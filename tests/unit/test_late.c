/* test_late.c: the late part of a held sandbox's plan (launcher/late.c)
 * arrives whole, with its fd, and nothing that is not a whole message is
 * taken for a command: a cut body, a head without an fd, a body whose
 * strings are fewer than its head says. */
#include <fcntl.h>
#include <sys/socket.h>

#include "check.h"
#include "launcher/late.h"
#include "util/fdpass.h"

static char *argv_in[] = {"python3", "c.py", "", NULL};
static char *envp_in[] = {"PATH=/usr/bin", "A=b=c", NULL};

static void plan_in(struct vg_plan *p, struct vg_landlock_rule *rules)
{
    memset(p, 0, sizeof *p);
    p->argv = argv_in;
    p->envp = envp_in;
    rules[0] = (struct vg_landlock_rule){.path = "/tmp/work/c.py", .access = 5, .exact = true};
    rules[1] = (struct vg_landlock_rule){.path = "/usr", .access = 1 << 20, .exact = false};
    p->landlock.rules = rules;
    p->landlock.nrules = 2;
}

static void round_trip(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    struct vg_plan in, out;
    struct vg_landlock_rule rules[2];
    plan_in(&in, rules);
    struct vg_err err = {{0}};
    int null = open("/dev/null", O_RDONLY);
    CHECK(vg_late_send(sv[0], &in, null, &err) == 0);
    memset(&out, 0, sizeof out);
    int fd = vg_late_recv(sv[1], &out);
    CHECK(fd >= 0 && fd != null);
    CHECK_STR(out.argv[0], "python3");
    CHECK_STR(out.argv[1], "c.py");
    CHECK_STR(out.argv[2], "");
    CHECK(out.argv[3] == NULL);
    CHECK_STR(out.envp[1], "A=b=c");
    CHECK(out.envp[2] == NULL);
    CHECK(out.landlock.nrules == 2);
    CHECK_STR(out.landlock.rules[0].path, "/tmp/work/c.py");
    CHECK(out.landlock.rules[0].access == 5 && out.landlock.rules[0].exact);
    CHECK_STR(out.landlock.rules[1].path, "/usr");
    CHECK(out.landlock.rules[1].access == 1 << 20 && !out.landlock.rules[1].exact);
    close(fd);
    close(null);
    close(sv[0]);
    close(sv[1]);
}

/* The head as late.c writes it: argc, envc, nrules, pad, bytes. */
struct head {
    uint32_t argc, envc, nrules, pad;
    uint64_t bytes;
};

/* A head and body written by hand; what pid 1 makes of it. */
static int recv_of(const struct head *h, const void *body, size_t len, bool with_fd)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    int null = open("/dev/null", O_RDONLY);
    CHECK(vg_fd_send(sv[0], h, sizeof *h, with_fd ? null : -1) == (ssize_t)sizeof *h);
    CHECK(write(sv[0], body, len) == (ssize_t)len);
    close(sv[0]); /* EOF after what was written */
    struct vg_plan out = {0};
    int fd = vg_late_recv(sv[1], &out);
    if (fd >= 0)
        close(fd);
    close(null);
    close(sv[1]);
    return fd;
}

static void refusals(void)
{
    static const char body[] = "true\0PATH=/bin\0";
    struct head whole = {.argc = 1, .envc = 1, .bytes = sizeof body - 1};
    CHECK(recv_of(&whole, body, sizeof body - 1, true) >= 0);
    CHECK(recv_of(&whole, body, sizeof body - 1, false) < 0);    /* no stdin */
    CHECK(recv_of(&whole, body, sizeof body - 3, true) < 0);     /* cut: EOF */
    struct head more = {.argc = 2, .envc = 1, .bytes = sizeof body - 1};
    CHECK(recv_of(&more, body, sizeof body - 1, true) < 0);      /* a string short */
    struct head fewer = {.argc = 1, .envc = 0, .bytes = sizeof body - 1};
    CHECK(recv_of(&fewer, body, sizeof body - 1, true) < 0);     /* one left over */
    struct head none = {.argc = 0, .envc = 2, .bytes = sizeof body - 1};
    CHECK(recv_of(&none, body, sizeof body - 1, true) < 0);      /* no command */
    struct head rules = {.argc = 1, .envc = 1, .nrules = 1, .bytes = sizeof body - 1};
    CHECK(recv_of(&rules, body, sizeof body - 1, true) < 0);     /* a rule's room is text */
    struct head huge = {.argc = 1, .envc = 1, .bytes = (uint64_t)VG_LATE_MAX + 1};
    CHECK(recv_of(&huge, body, sizeof body - 1, true) < 0);
}

int main(void)
{
    round_trip();
    refusals();
    return check_done();
}
