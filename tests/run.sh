#!/bin/sh
# tests/run.sh: run every test: C unit tests, then the pytest suite (which
# drives the real vigil binary on real candidates).  Isolation tests run
# twice inside pytest: as root and, through setpriv, as uid 65534.
#   VIGIL     binary under test (default ./vigil)
#   UNIT_DIR  where the unit test binaries are (default build/tests)
set -eu
cd "$(dirname "$0")/.."
VIGIL=${VIGIL:-$PWD/vigil}
UNIT_DIR=${UNIT_DIR:-$PWD/build/tests}
export VIGIL UNIT_DIR
PY=/usr/bin/python3   # Debian's, which has python3-msgpack and pytest
# Files or node ids given: only those; otherwise the whole suite.
case "${1:-}" in
  tests/*) exec $PY -m pytest -q -p no:cacheprovider "$@" ;;
esac
exec $PY -m pytest -q -p no:cacheprovider tests "$@"
