#!/bin/sh
# examples/demo.sh: run the bundled sloppy candidate under vigil's default
# policy, then show what it tried and where the records are.  `make demo`.
set -eu
cd "$(dirname "$0")/.."
out=${DEMO_DIR:-$(mktemp -d /tmp/vigil-demo-XXXXXX)}
mkdir -p "$out"
log=$out/run.msgpack
result=$out/result.json

echo "== vigil run -- python3 examples/sloppy_cleanup.py"
set +e
./vigil run -o "$log" --result "$result" --task-id demo -- python3 examples/sloppy_cleanup.py
code=$?
set -e
echo
echo "== what the candidate tried and was refused (vigil log --deny)"
./vigil log --deny --color never "$log"
echo
echo "== what it tried, by intent (vigil log --summary)"
./vigil log --summary "$log"
echo
echo "== the same candidate as a dry run: nothing refused, everything recorded"
./vigil run -q --dry-run -o "$out/dry.msgpack" -- python3 examples/sloppy_cleanup.py >/dev/null 2>&1 || true
./vigil log --deny --color never "$out/dry.msgpack"
echo
echo "exit status $code; result record: $result"
echo "log: $log  (read it with: ./vigil log $log   or   ./vigil view $log)"
