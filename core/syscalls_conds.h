/* syscalls_conds.h: the argument conditions of the syscall table's rows,
 * one COND per condition: a row with conditions is acted on (refused by
 * the baseline, or stopped for a decision) only when one of them holds,
 * and runs otherwise.  The seccomp filter is built from this list
 * (launcher/filter.c) and vg_filter_classify answers from it, so the two
 * cannot disagree.  A baseline row with conditions has CO among its flags
 * (syscalls_rows.h); a condition on a row that is not decoded fails the
 * filter's build.  Not a normal header: included by core/syscalls.c with
 * COND defined.
 *
 * COND(name, comparison, ...)  every comparison holds:
 *   IS(n, v)       int argument n == v (its low 32 bits: the kernel ignores
 *                  the upper half of an int, so the filter must too)
 *   HAS(n, bit)    flag bit set in argument n
 *   ABOVE(n, v)    argument n > v (the whole register, unsigned)
 *   NONZERO(n)     argument n != 0
 *   SOCKOPT(level, option)  setsockopt(fd, level, optname, ...) */

/* pushing input into a terminal (TIOCSTI), the console's own requests */
COND(ioctl, IS(1, TIOCSTI)) COND(ioctl, IS(1, TIOCLINUX))
/* socket families other than unix, inet and inet6 */
COND(socket, IS(0, AF_UNSPEC)) COND(socket, IS(0, 3)) COND(socket, IS(0, 4))
COND(socket, IS(0, 5)) COND(socket, IS(0, 6)) COND(socket, IS(0, 7))
COND(socket, IS(0, 8)) COND(socket, IS(0, 9)) COND(socket, ABOVE(0, AF_INET6))
/* new namespaces, and children the tracer would not follow (the kernel
 * takes clone's flags on their low 32 bits, where all of these are) */
COND(clone, HAS(0, CLONE_NEWNS)) COND(clone, HAS(0, CLONE_NEWUTS))
COND(clone, HAS(0, CLONE_NEWIPC)) COND(clone, HAS(0, CLONE_NEWUSER))
COND(clone, HAS(0, CLONE_NEWPID)) COND(clone, HAS(0, CLONE_NEWNET))
COND(clone, HAS(0, CLONE_NEWCGROUP)) COND(clone, HAS(0, CLONE_UNTRACED))
/* a filter with a user-notification listener: its RET_USER_NOTIF would
 * outrank RET_TRACE and hide calls from vigil (prctl(PR_SET_SECCOMP)
 * cannot ask for one) */
COND(seccomp, IS(0, SECCOMP_SET_MODE_FILTER), HAS(1, SECCOMP_FILTER_FLAG_NEW_LISTENER))
/* sendto without an address is a plain send on a connected socket:
 * nothing to decide */
COND(sendto, NONZERO(4))
/* Socket options that change where a packet goes, so that it would not
 * go (only) to the address connect or sendto was decided on: IPv6
 * routing headers (source routes) and the hop-by-hop and destination
 * options that go with them, in both the RFC 3542 and the RFC 2292
 * spellings, and IPv4's options (LSRR/SSRR source routes).  Refused
 * EPERM (the row's errno): what the kernel answers a caller without
 * CAP_NET_RAW for all of these but IPV6_RTHDR. */
SOCKOPT(IPPROTO_IPV6, IPV6_RTHDR) SOCKOPT(IPPROTO_IPV6, IPV6_2292RTHDR)
SOCKOPT(IPPROTO_IPV6, IPV6_2292PKTOPTIONS) SOCKOPT(IPPROTO_IPV6, IPV6_DSTOPTS)
SOCKOPT(IPPROTO_IPV6, IPV6_RTHDRDSTOPTS) SOCKOPT(IPPROTO_IPV6, IPV6_2292DSTOPTS)
SOCKOPT(IPPROTO_IPV6, IPV6_HOPOPTS) SOCKOPT(IPPROTO_IPV6, IPV6_2292HOPOPTS)
SOCKOPT(IPPROTO_IP, IP_OPTIONS)
/* Options that pick the device, the routing mark or a foreign source
 * address: they need CAP_NET_RAW or CAP_NET_ADMIN in the network
 * namespace's owner, and the candidate, although root of the user
 * namespace that owns its network namespace, has no capability left
 * (launcher/sandbox.c empties every set): the kernel refuses them
 * EPERM already; the filter does too, should a capability ever stay. */
SOCKOPT(SOL_SOCKET, SO_BINDTODEVICE) SOCKOPT(SOL_SOCKET, SO_BINDTOIFINDEX)
SOCKOPT(SOL_SOCKET, SO_MARK) SOCKOPT(IPPROTO_IP, IP_TRANSPARENT)
SOCKOPT(IPPROTO_IPV6, IPV6_TRANSPARENT)
