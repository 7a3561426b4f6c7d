#!/bin/sh
# bench/run.sh: vigil's benchmark suite.  `make bench` builds vigil and the
# C micro-benchmarks, installs the peers (bwrap, firejail, hyperfine, strace)
# and runs this.  BENCH_QUICK=1 for the ~2-minute version; the full one
# takes about 12 minutes.  Method and latest numbers: bench/README.md.
# Raw outputs go to bench/results/ (latest.json, summary.md, micro.txt,
# bench.txt); the compact tables go to stdout.  Run as root (the peers and
# the sandbox need it on these machines).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT="$ROOT/bench/results"
BUILD="${BUILD:-build}"
VIGIL="$ROOT/vigil"
PY=/usr/bin/python3   # the system one: no version manager shim in the timings

[ -x "$VIGIL" ] || { echo "bench: $VIGIL missing: run 'make bench'" >&2; exit 1; }
for tool in /usr/bin/strace /usr/bin/bwrap; do
  [ -x "$tool" ] || { echo "bench: $tool missing: run './scripts/install-deps.sh bench'" >&2; exit 1; }
done
mkdir -p "$OUT"

# Everything the runs write (logs, the work dir, gcc's temporaries) lives on
# a tmpfs, so that the disk does not add its own noise.
SCRATCH=$(mktemp -d /dev/shm/vigil-bench.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT INT TERM

# The loop program is static: no loader, so its only audited calls are the
# loop's own and the exec that starts it.
# peakrss reports the peak RSS of what it runs (see its header for why a
# launcher of its own).
CALLS="$SCRATCH/calls"
PEAKRSS="$SCRATCH/peakrss"
for prog in calls peakrss; do
  cc -O2 -static -Wall -Wextra -Werror -o "$SCRATCH/$prog" "$ROOT/bench/workloads/$prog.c"
done

quick=""
[ "${BENCH_QUICK:-0}" = 1 ] && quick=--quick
start=$(date +%s)
$PY "$ROOT/bench/bench.py" $quick --root "$ROOT" --vigil "$VIGIL" --calls "$CALLS" --peakrss "$PEAKRSS" \
    --scratch "$SCRATCH" --out "$OUT" ${BENCH_ONLY:+--only "$BENCH_ONLY"} | tee "$OUT/bench.txt"

# The other engineers' micro-benchmarks, when they are built: each prints
# its own figures (policy decisions/s, log records/s, viewer open/search).
: > "$OUT/micro.txt"
for name in bench_match bench_reader bench_decode bench_view bench_chain; do
  bin="$ROOT/$BUILD/bench/$name"
  [ -x "$bin" ] || { echo "($name: not built)" >> "$OUT/micro.txt"; continue; }
  echo "-- $name" >> "$OUT/micro.txt"
  # Their scratch files go to the tmpfs too; a stuck one is stopped.
  if ! (cd "$SCRATCH" && BENCH_QUICK="${BENCH_QUICK:-0}" timeout 300 "$bin") >> "$OUT/micro.txt" 2>&1; then
    echo "($name failed or timed out)" >> "$OUT/micro.txt"
  fi
done
echo
echo "== Micro-benchmarks (build/bench/*)"
cat "$OUT/micro.txt"
{
  echo
  echo "#### Micro-benchmarks (build/bench/*)"
  echo
  echo '```'
  cat "$OUT/micro.txt"
  echo '```'
} >> "$OUT/summary.md"
echo
echo "bench: $(( $(date +%s) - start )) s; results in $OUT (summary.md, latest.json)"
