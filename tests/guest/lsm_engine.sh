#!/bin/sh
# lsm_engine.sh: the kernel engine's file_open program against the
# user-space deciders, in a guest whose kernel allows BPF LSM (issue 27):
#   tests/guest/run-guest.sh --quiet --with build/lsm/engine_check tests/guest/lsm_engine.sh
# (build it first: make -f lsm/engine.mk lsm-engine).  A policy over a
# fresh tree in /tmp (each pattern kind, first match, deny and kill), the
# files opened for read and write from a watched cgroup; every record must
# agree with vg_lsm_trie_decide, vg_policy_decide_path and the open's own
# result (lsm/engine_check.c); with a ring buffer too small for a record,
# every open must be refused.  Then wildcards inside components (each
# element and its meeting with literal, `*` and `**` rules), the shipped
# default and c policies over the guest's trees, and a policy the kernel
# cannot hold exactly (nine different globs at one place) refused: exit 2,
# the engine's fallback to notify.
set -u
CHECK=${1:-build/lsm/engine_check}
TREE_ROOT=$(pwd)  # run-guest.sh runs the command in the tree's root
d=$(mktemp -d /tmp/lsm-engine.XXXXXX) || exit 3
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/work/data/private" "$d/etc" "$d/usr/bin" "$d/home/.ssh" "$d/pub/a/b" "$d/pub/x/b" || exit 3
files="work/a.py work/data/x.csv work/data/private/key etc/passwd etc/shadow usr/bin/tool
       home/.ssh/id_rsa pub/a/b/c pub/x/b/c pub/top"
for f in $files; do : >"$d/$f" || exit 3; done
cat >"$d/t.policy" <<POLICY
version 1
default deny
deny read $d/work/data/private/**
kill read $d/home/.ssh/**
allow read $d/work/** $d/etc/* $d/pub/** $d/usr/bin/tool
deny read $d/etc/shadow
allow write $d/work/**
kill write $d/etc/shadow
deny write $d/pub/*/b/**
allow write $d/pub/**
POLICY
opens=
for f in $files; do opens="$opens r:$d/$f w:$d/$f"; done
# directories too: an open for reading (ls) is a read of the directory
for f in work work/data/private etc pub/a/b home; do opens="$opens r:$d/$f"; done
# shellcheck disable=SC2086 # one word per open
"$CHECK" "$d/t.policy" $opens
rc=$?
[ $rc = 0 ] || exit $rc

# The guest's own trees and the source tree (9p): every file and directory
# (symlinks aside: a record names the file reached), a policy with `**`
# inside and at the end, `*`, first match across overlaps; write opens of
# the fresh tree's files and /etc's (a tmpfs here: opened, not changed).
tree="$TREE_ROOT"
cat >"$d/tree.policy" <<POLICY
version 1
default deny
deny read $tree/tests/** $tree/*/README.md /etc/shadow
deny read $tree/**/unit/** /usr/**/x86_64-linux-gnu/*
kill read /root/**
allow read /usr/** /lib/** /bin/* /sbin/* /etc/* $tree/** $d/**
allow write $d/work/** /etc/passwd
deny write $d/*/data/**
allow write $d/**
POLICY
{
    find /usr /lib /bin /sbin /etc "$d" -xdev \( -type f -o -type d \) 2>/dev/null
    find "$tree" -xdev -name .git -prune -o \( -type f -o -type d \) -print 2>/dev/null | head -n 6000
} | sed 's/^/r:/' >"$d/opens"
find "$d" /etc -xdev -type f 2>/dev/null | sed 's/^/w:/' >>"$d/opens"
"$CHECK" "$d/tree.policy" "@$d/opens" || exit $?

# a ring buffer with no room: every open refused, even an allowed one
"$CHECK" --full "$d/t.policy" "r:$d/work/a.py" "r:$d/pub/top" || exit $?

# Wildcards inside components, over a fresh tree of names each element
# takes or misses (the names hold wildcards: no pathname expansion from
# here on).
set -f
g="$d/g"
mkdir -p "$g/d" "$g/lib/py3" "$g/lib/pyc" || exit 3
gfiles="abc axc a.c 1x a.txt y.txt x.txt 7 ab9 *lit qlit ]b ab d/xay d/x-y d/xzy d/]q d/xq
        d/q1 d/abc lib/py3/m.pyc lib/py3/m.pyo lib/pyc/libz.so.1 lib/pyc/libz.so.10 d/.hidden
        d/..x"
for f in $gfiles; do : >"$g/$f" || exit 3; done
cat >"$d/glob.policy" <<POLICY
version 1
default deny
deny read $g/a?c $g/[!x-z]*.txt $g/[^0-9]?
allow read $g/abc $g/*.txt $g/d/x[a-c-]y $g/[]a]b
kill read $g/**/*.pyo
allow read $g/\\*lit $g/d/.[!.]* $g/d/..?*
allow read $g/lib/**/*.py[co] $g/lib/**/lib*.so.[0-9]
deny read $g/lib/**/*.so*
allow read $g/* $g/**
allow write $g/*[0-9] $g/d/[!]]q $g/d/??
deny write $g/d/*
allow write $g/**
POLICY
opens=
for f in $gfiles; do opens="$opens r:$g/$f w:$g/$f"; done
# shellcheck disable=SC2086 # one word per open
"$CHECK" "$d/glob.policy" $opens r:"$g" r:"$g/d" r:"$g/lib" || exit $?

# The shipped policies with globs inside components (python3.[0-9]*,
# x86_64-linux-gnu-*, llvm-*, java's /etc/java-*/** for reading), as a run
# in the source tree has them (\$WORK the tree, ~ /root), over the guest's
# trees, a few /etc/java* names (/etc is a tmpfs here) and the source
# tree: read every file and directory, write the fresh tree's.
mkdir -p /etc/java-17/security /etc/java /etc/javax-1 || exit 3
: >/etc/java-17/security/java.security && : >/etc/java-x && : >/etc/java/y || exit 3
{
    find /usr /lib /bin /sbin /etc "$d" -xdev \( -type f -o -type d \) 2>/dev/null
    find "$TREE_ROOT" -xdev -name .git -prune -o \( -type f -o -type d \) -print 2>/dev/null |
        head -n 2000
} | sed 's/^/r:/' >"$d/sys-opens"
find "$d" -xdev -type f 2>/dev/null | sed 's/^/w:/' >>"$d/sys-opens"
for pol in default c java; do
    VIGIL_POLICY_DIR="$TREE_ROOT/policies" "$CHECK" "$TREE_ROOT/policies/$pol.policy" "@$d/sys-opens" ||
        exit $?
done

# A file unlinked while open, opened again through /proc/self/fd: the
# kernel's path for it ends in " (deleted)", no path of the tree, refused
# even where the policy allows the file (t.policy: $d/work/** and
# $d/pub/**), as the notify engine refuses what it cannot resolve.
: >"$d/work/gone.py" && : >"$d/pub/gone" || exit 3
"$CHECK" "$d/t.policy" "u:$d/work/gone.py" "u:$d/pub/gone" "r:$d/work/a.py" || exit $?

{
    echo "version 1"
    for i in 0 1 2 3 4 5 6 7 8; do echo "allow read $d/work/$i*"; done
} >"$d/toomany.policy"
"$CHECK" "$d/toomany.policy" "r:$d/work/a.py"
rc=$?
if [ $rc != 2 ]; then
    echo "lsm_engine.sh: FAIL: nine globs at one place: exit $rc, not 2 (refused)" >&2
    exit 1
fi
echo "lsm_engine.sh: PASS"
