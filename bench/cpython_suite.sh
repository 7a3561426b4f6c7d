#!/bin/sh
# bench/cpython_suite.sh: CPython's own test suite, bare and under vigil's
# observe-only policy (policies/observe.policy: allow all, audit all), with
# both engines; prints every per-test difference from the bare run.
#
# Not part of `make test`: it takes about a minute (the modules below take
# ~15 s bare each run).  Run as root from a built worktree:
#     apt-get install -y libpython3.11-testsuite
#     make vigil && sh bench/cpython_suite.sh [MODULE...]
# Output goes to $OUT (default /tmp/vigil-cpython-suite); exit status 1 if
# any test differs.  Every difference seen so far is explained in
# docs/SECURITY.md ("CPython's own test suite").
#
# The comparison: both sides run as uid 65534 (setpriv), with a minimal
# environment, /usr/bin/python3, the suite's temp dir in a fresh scratch
# directory (bare: TMPDIR=$OUT/bare; vigil: its private /tmp) and cwd a
# directory the user owns.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/vigil-cpython-suite}
NOBODY=65534
MODULES=${*:-test_os test_shutil test_posix test_tempfile test_stat test_pathlib test_glob test_fileio}
[ "$(id -u)" = 0 ] || { echo "run as root (to become uid $NOBODY)" >&2; exit 2; }
python3 -c 'import test.test_os' 2>/dev/null || /usr/bin/python3 -c 'import test.test_os' ||
    { echo "install libpython3.11-testsuite" >&2; exit 2; }

rm -rf "$OUT"
mkdir -p "$OUT/bare" "$OUT/home" "$OUT/logs"
cp "$ROOT/vigil" "$OUT/vigil"
cp -r "$ROOT/policies" "$OUT/policies"      # `-p observe` finds it beside the binary
chmod -R a+rX "$OUT"
chown "$NOBODY:$NOBODY" "$OUT/bare" "$OUT/home" "$OUT/logs"

as_nobody() {
    (cd "$OUT/home" && setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
        env -i PATH=/usr/bin:/bin HOME="$OUT/home" "$@")
}
# generous limits: the suite forks, opens many files and fills /tmp
LIMITS="--timeout 600 --cpu 600 --tmpfs 512M --memory 2G --procs 256 --files 1024"

echo "bare..."
as_nobody TMPDIR="$OUT/bare" python3 -m test -v $MODULES >"$OUT/bare.out" 2>&1 || true
for engine in notify ptrace; do
    echo "vigil run --engine $engine..."
    # shellcheck disable=SC2086
    as_nobody "$OUT/vigil" run -q -p observe --engine $engine $LIMITS \
        -o "$OUT/logs/$engine.msgpack" --result "$OUT/logs/$engine.json" \
        -- python3 -m test -v $MODULES >"$OUT/$engine.out" 2>&1 || true
done

python3 - "$OUT" <<'PY'
import re, sys
out = sys.argv[1]
START = re.compile(r'^(test\w*) \(([\w.]+)\)(.*)$')
STATES = ('ok', 'FAIL', 'ERROR', 'skipped', 'expected failure', 'unexpected success')

def parse(path):
    """test id -> status, from `python3 -m test -v`; a test that printed
    something has its status on a later line."""
    res, pending = {}, None
    for line in open(path, errors='replace').read().splitlines():
        m = START.match(line)
        if m:
            pending = m.group(2)
            if ' ... ' in m.group(3):
                st = m.group(3).split(' ... ', 1)[1].strip()
                if st.startswith(STATES):
                    res[pending], pending = st, None
            continue
        if pending:
            s = line.strip().split('... ')[-1]
            if s.startswith(STATES):
                res[pending], pending = s, None
    # a skip reason may name the run's pid (a temp file name): not a difference
    return {k: re.sub(r'@test_\d+_', '@test_N_', v) for k, v in res.items()}

bare = parse(f'{out}/bare.out')
differ = 0
for engine in ('notify', 'ptrace'):
    got = parse(f'{out}/{engine}.out')
    counts = {}
    for st in got.values():
        counts[st.split()[0]] = counts.get(st.split()[0], 0) + 1
    print(f'{engine}: {len(got)} tests (bare {len(bare)}), {counts}')
    for t in sorted(set(bare) | set(got)):
        if bare.get(t) != got.get(t):
            differ = 1
            print(f'  DIFF {t}: bare {bare.get(t)!r}, vigil {got.get(t)!r}')
sys.exit(differ)
PY
