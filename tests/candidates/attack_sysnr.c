/* attack_sysnr.c: calls made by number that the syscall table must refuse
 * (tests/test_attack_sysnr.py).  One result line per attempt, "NAME
 * ret=R errno=E" (attack_filter.h), plus what a read call returned.
 *   xattr FILE    the *xattrat calls (x86_64 463..466, newer than the C
 *                 library's headers) on FILE, which the policy denies:
 *                 read its user.tok, list its names, set user.pwned,
 *                 remove user.keep
 *   unassigned    every number 470..520, with zero arguments
 *   sockopt       setsockopt options that reroute a packet: an IPv6
 *                 segment routing header, IPv4 loose source route */
#include "attack_filter.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>

enum { NR_SETXATTRAT = 463, NR_GETXATTRAT, NR_LISTXATTRAT, NR_REMOVEXATTRAT };
enum { FIRST_UNASSIGNED = 470, LAST_UNASSIGNED = 520 };

struct xattr_args { /* include/uapi/linux/xattr.h, 6.13 */
    uint64_t value;
    uint32_t size;
    uint32_t flags;
};

static void xattr(const char *file)
{
    char buf[256] = {0};
    struct xattr_args a = {.value = (uintptr_t)buf, .size = sizeof buf - 1};
    long r = syscall(NR_GETXATTRAT, AT_FDCWD, file, 0, "user.tok", &a, sizeof a);
    report("getxattrat", r);
    if (r > 0)
        printf("read %s\n", buf);
    char list[256] = {0};
    r = syscall(NR_LISTXATTRAT, AT_FDCWD, file, 0, list, sizeof list - 1);
    report("listxattrat", r);
    for (long i = 0; i < r; i += (long)strlen(list + i) + 1)
        printf("name %s\n", list + i);
    static char pwned[] = "pwned";
    struct xattr_args w = {.value = (uintptr_t)pwned, .size = sizeof pwned - 1};
    report("setxattrat", syscall(NR_SETXATTRAT, AT_FDCWD, file, 0, "user.pwned", &w, sizeof w));
    report("removexattrat", syscall(NR_REMOVEXATTRAT, AT_FDCWD, file, 0, "user.keep"));
}

static void unassigned(void)
{
    int other = 0;
    for (long nr = FIRST_UNASSIGNED; nr <= LAST_UNASSIGNED; nr++) {
        errno = 0;
        long r = syscall(nr, 0, 0, 0, 0, 0, 0);
        if (r != -1 || errno != ENOSYS) {
            printf("nr %ld ret=%ld errno=%d\n", nr, r, errno);
            other++;
        }
    }
    printf("unassigned tried=%d other=%d\n", LAST_UNASSIGNED - FIRST_UNASSIGNED + 1, other);
}

/* A segment routing header (type 4) with one segment, ::1: valid for
 * seg6_validate_srh, allowed without a capability. */
static void sockopt(void)
{
    unsigned char srh[24] = {0};
    srh[0] = IPPROTO_NONE; /* next header */
    srh[1] = 2;            /* length in 8-byte units, past the first 8 */
    srh[2] = 4;            /* IPV6_SRCRT_TYPE_4 */
    srh[15 + 8] = 1;       /* segment 0: ::1 */
    int s6 = socket(AF_INET6, SOCK_DGRAM, 0);
    report("socket6", s6);
    report("ipv6_rthdr", setsockopt(s6, IPPROTO_IPV6, IPV6_RTHDR, srh, sizeof srh));
    /* a loose source route through 127.0.0.2, padded to 4 bytes */
    unsigned char lsrr[8] = {131 /* IPOPT_LSRR */, 7, 4, 127, 0, 0, 2, 0 /* IPOPT_END */};
    int s4 = socket(AF_INET, SOCK_DGRAM, 0);
    report("socket4", s4);
    report("ip_options", setsockopt(s4, IPPROTO_IP, IP_OPTIONS, lsrr, sizeof lsrr));
    int one = 1;
    report("so_reuseaddr", setsockopt(s4, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
    report("ipv6_v6only", setsockopt(s6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 3 && !strcmp(argv[1], "xattr"))
        xattr(argv[2]);
    else if (argc == 2 && !strcmp(argv[1], "unassigned"))
        unassigned();
    else if (argc == 2 && !strcmp(argv[1], "sockopt"))
        sockopt();
    else
        return 2;
    return 0;
}
