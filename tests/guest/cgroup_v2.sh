#!/bin/sh
# cgroup_v2.sh: run inside the guest (tests/guest/run-guest.sh), where
# cgroup v2 is the only hierarchy, as on a stock Debian 12 host: a run
# with limits gets its own v2 group, its pid 1 is born in it (clone3's
# CLONE_INTO_CGROUP: no move, so no RCU grace period), the limits hold
# there, and the group is gone afterwards.
set -eu
fail() { echo "cgroup_v2: FAIL: $*"; exit 1; }
log=/tmp/cg2.msgpack pol=/tmp/cg2.policy
# the guest's programs are busybox's, in /bin (not the usual /usr/bin)
printf 'version 1\nallow exec /bin/**\nallow read /bin/**\ninclude <default>\n' > "$pol"
out=$(./vigil run -q -p "$pol" -o "$log" --memory 64M --procs 32 -- /bin/cat /proc/self/cgroup) ||
    fail "vigil run exited $?"
# Born in its group, pid 1's new cgroup namespace is rooted there, so the
# candidate sees "/"; a pid 1 born in vigil's group and moved after would
# see its group's name (/vigil-PID) under that root.
[ "$out" = "0::/" ] || fail "the candidate's cgroup: $out (moved, not born in it?)"
ls -d /sys/fs/cgroup/vigil-* 2>/dev/null && fail "a group is left behind"
# the memory limit is the group's: a candidate over it is killed
if ./vigil run -q -p "$pol" -o "$log" --memory 32M -- /bin/sh -c \
    'x=$(head -c 100000000 /dev/zero | tr "\0" a); echo ${#x}' >/dev/null 2>&1; then
    fail "a 100 MB string fit under --memory 32M"
fi
echo "cgroup_v2: PASS: born in its group, its limit held, nothing left"
