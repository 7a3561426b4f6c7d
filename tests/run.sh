#!/bin/sh
# tests/run.sh: run the tests: C unit tests, then the pytest suite (which
# drives the real vigil binary on real candidates).  Isolation tests run
# twice inside pytest: as root and, through setpriv, as uid 65534.
#   tests/run.sh              make test's tier: every test not marked soak,
#                             in JOBS pytest-xdist workers (default 2)
#   JOBS=1 tests/run.sh -m soak   make soak's tier (one worker: timing wants the CPUs)
#   tests/run.sh tests/F.py   only that file (or node ids), one worker
#                             unless JOBS says otherwise
# Tiers, and which tests run under both engines: tests/conftest.py.
#   VIGIL     binary under test (default ./vigil)
#   UNIT_DIR  where the unit test binaries are (default build/tests)
#   JOBS      pytest-xdist workers (1: no xdist)
set -eu
cd "$(dirname "$0")/.."
VIGIL=${VIGIL:-$PWD/vigil}
UNIT_DIR=${UNIT_DIR:-$PWD/build/tests}
export VIGIL UNIT_DIR
PY=/usr/bin/python3   # Debian's, which has python3-msgpack, pytest and pytest-xdist
# Files or node ids given: only those; otherwise the whole suite.
case "${1:-}" in
  tests/*) where="" jobs=${JOBS:-1} ;;
  *) where=tests jobs=${JOBS:-2} ;;
esac
workers=""
if [ "$jobs" -gt 1 ]; then
  if $PY -c 'import xdist' 2>/dev/null; then
    workers="-n $jobs"
  else
    echo "tests/run.sh: no pytest-xdist (./scripts/install-deps.sh test): one worker" >&2
  fi
fi
# shellcheck disable=SC2086
exec $PY -m pytest -q -p no:cacheprovider $workers $where "$@"
