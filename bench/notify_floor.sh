#!/bin/sh
# bench/notify_floor.sh: cost per audited open, in one run: the floor
# micro-benchmark's modes (/work/shared/tools/floor.c or $FLOOR_SRC: bare,
# ptrace stop, user-notify CONTINUE, user-notify + ADDFD; each also with
# sync wake-up and pinned to one CPU) beside vigil's two engines (with and
# without --cpuset 0) and strace --seccomp-bpf on the same loop, then the
# issue's ratios.  vigil's and strace's figures are (run with N opens - run
# with none) / N, so start-up is not counted; every figure is the whole
# iteration (the open+close itself included, as in the floor), the median
# of ROUNDS runs (3); --cpuset 0 puts vigil and the candidate on one CPU,
# as the floor's -pin modes.  Run as root.  N=200000 by default.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-200000}
ROUNDS=${ROUNDS:-3}
FLOOR_SRC=${FLOOR_SRC:-/work/shared/tools/floor.c}
S=$(mktemp -d /dev/shm/vigil-nbench.XXXXXX)
trap 'rm -rf "$S"' EXIT INT TERM
gcc -O2 "$FLOOR_SRC" -o "$S/floor" -lseccomp
cc -O2 -static -o "$S/calls" "$ROOT/bench/workloads/calls.c"
chmod 755 "$S" "$S/calls"
echo "== floor ($N open+close per mode; us per iteration)"
for m in none trace trace-pin notify notify-sync notify-pin addfd addfd-sync addfd-pin addfd-sync-pin; do
  us=$("$S/floor" "$m" 2>&1 | sed -n 's/^\([^ ]*\) *openat+close: \([0-9.]*\) us.*/\2/p')
  printf '  %-16s %8s\n' "$m" "$us"
  eval "floor_$(echo "$m" | tr - _)=\$us"
done
now() { date +%s.%N; }
run() { # engine, extra flag, opens
  "$ROOT/vigil" run -q -o "$S/log.msgpack" --engine "$1" $2 -- "$S/calls" open "$3" >/dev/null
}
strace_run() { # opens
  strace -f --seccomp-bpf -e trace=open,openat -o /dev/null "$S/calls" open "$1" >/dev/null
}
per_open() { # t0 t1 t2: ((t2 - t1) - (t1 - t0)) / N in us
  echo "(($3 - $2) - ($2 - $1)) * 1000000 / $N" | bc -l
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "== vigil and strace (us per audited open, start-up subtracted; median of $ROUNDS)"
# --cpuset 0: vigil and the candidate on one CPU, as the floor's -pin modes
for eng in ptrace notify; do
  for flag in "" "--cpuset=0"; do
    us=$(for r in $(seq "$ROUNDS"); do
      t0=$(now); run "$eng" "$flag" 0; t1=$(now); run "$eng" "$flag" "$N"; t2=$(now)
      per_open "$t0" "$t1" "$t2"
    done | median)
    printf '  %-16s %8.2f\n' "$eng${flag:+ $flag}" "$us"
    if [ -n "$flag" ]; then eval "pinned_$eng=\$us"; else eval "vigil_$eng=\$us"; fi
  done
done
t0=$(now); strace_run 0; t1=$(now); strace_run "$N"; t2=$(now)
strace_us=$(per_open "$t0" "$t1" "$t2")
printf '  %-16s %8.2f\n' "strace-seccomp" "$strace_us"
ratio() { printf '  %-52s %6.2f (target %s)\n' "$1" "$(echo "$2" | bc -l)" "$3"; }
echo "== ratios (this run)"
ratio "notify / floor addfd-sync" "$vigil_notify / $floor_addfd_sync" "<= 1.2"
ratio "notify / ptrace engine" "$vigil_notify / $vigil_ptrace" "<= 0.5"
ratio "notify added / strace --seccomp-bpf added" \
  "($vigil_notify - $floor_none) / ($strace_us - $floor_none)" "<= 0.2"
ratio "one CPU: notify / floor addfd-sync-pin" "$pinned_notify / $floor_addfd_sync_pin" "<= 1.2"
ratio "one CPU: notify / ptrace engine" "$pinned_notify / $pinned_ptrace" "<= 0.5"
ratio "one CPU: notify added / strace --seccomp-bpf added" \
  "($pinned_notify - $floor_none) / ($strace_us - $floor_none)" "<= 0.2"
ratio "floor addfd-sync / ptrace engine (what the target asks is below this)" \
  "$floor_addfd_sync / $vigil_ptrace" "-"
