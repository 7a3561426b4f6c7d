#!/bin/sh
# bench/notify_floor.sh: cost per audited open, in one run: the floor
# micro-benchmark's modes (/work/shared/tools/floor.c or $FLOOR_SRC: bare,
# ptrace stop, user-notify CONTINUE, user-notify + ADDFD; each also with
# sync wake-up and pinned to one CPU) beside vigil's two engines (with and
# without --cpus 1).  vigil's figure is (run with N opens - run with none)
# / N, so start-up is not counted.  Run as root.  N=200000 by default.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-200000}
FLOOR_SRC=${FLOOR_SRC:-/work/shared/tools/floor.c}
S=$(mktemp -d /dev/shm/vigil-nbench.XXXXXX)
trap 'rm -rf "$S"' EXIT INT TERM
gcc -O2 "$FLOOR_SRC" -o "$S/floor" -lseccomp
cc -O2 -static -o "$S/calls" "$ROOT/bench/workloads/calls.c"
chmod 755 "$S" "$S/calls"
echo "== floor ($N open+close per mode; us per iteration)"
for m in none trace trace-pin notify notify-sync notify-pin addfd addfd-sync addfd-pin addfd-sync-pin; do
  "$S/floor" "$m" 2>&1 | sed -n 's/^\([^ ]*\) *openat+close: \([0-9.]*\) us.*/\2/p' |
    { read -r us; printf '  %-16s %8s\n' "$m" "$us"; }
done
now() { date +%s.%N; }
run() { # engine, extra flag, opens
  "$ROOT/vigil" run -q -o "$S/log.msgpack" --engine "$1" $2 -- "$S/calls" open "$3" >/dev/null
}
echo "== vigil (us per audited open, start-up subtracted)"
for eng in ptrace notify; do
  for flag in "" "--cpus=1"; do
    t0=$(now); run "$eng" "$flag" 0; t1=$(now); run "$eng" "$flag" "$N"; t2=$(now)
    printf '  %-16s %8.2f\n' "$eng${flag:+ $flag}" \
      "$(echo "(($t2 - $t1) - ($t1 - $t0)) * 1000000 / $N" | bc -l)"
  done
done
