#!/bin/sh
# fuzz/run.sh [SECONDS]: build every fuzz/fuzz_*.c as a libFuzzer target
# (ASan + UBSan) into build-fuzz/ and run each for SECONDS (default 60) on a
# scratch copy of its seed corpus: fuzz/corpus/<name>/ and the folders
# extra_seeds names, whose files have another use (the repo is never
# written: new inputs and crash artifacts stay under build-fuzz/).  Exits
# non-zero when a target fails to build or finds a crash, leak, timeout or
# an allocation over 1 GB.
set -eu
cd "$(dirname "$0")/.."
SECS=${1:-60}
OUT=build-fuzz
CC=${FUZZ_CC:-clang}
mkdir -p "$OUT/artifacts"

./scripts/embed.sh vg_default_policy_text policies/default.policy > "$OUT/default_policy.c"
LIB="util/*.c event/*.c policy/*.c net/dns_wire.c image/spec.c"
[ -f launcher/landlock.c ] && LIB="$LIB launcher/landlock.c"
CFLAGS="-std=gnu11 -D_GNU_SOURCE -I. -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"

# The seed folders of a target kept elsewhere, so that a file lives once:
# the broken policies, each with the error tests/test_check.py expects of
# it, and the shipped policies; the shipped image specs.
extra_seeds() {
    case $1 in
        policy) echo tests/policy policies ;;
        spec) echo specs ;;
    esac
}

status=0
for src in fuzz/fuzz_*.c; do
    [ -f "$src" ] || continue
    bin="$OUT/$(basename "$src" .c)"
    name=$(basename "$src" .c | sed 's/^fuzz_//')
    echo "== build $bin"
    # shellcheck disable=SC2086 # LIB is a list of globs
    if ! $CC $CFLAGS $(pkg-config --cflags msgpack libsodium libcrypto) -o "$bin" "$src" $LIB \
            "$OUT/default_policy.c" $(pkg-config --libs msgpack libsodium libcrypto) -lm; then
        echo "fuzz: $src does not build" >&2
        status=1
        continue
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-fuzz-$name.XXXXXX")
    mkdir -p "$work/corpus"
    if [ -d "fuzz/corpus/$name" ]; then
        cp -R "fuzz/corpus/$name/." "$work/corpus/"
    fi
    extra=$(extra_seeds "$name")
    for dir in $extra; do
        mkdir -p "$work/corpus/$dir"      # libFuzzer reads a corpus recursively
        cp -R "$dir/." "$work/corpus/$dir/"
    done
    echo "== run $bin for ${SECS}s (corpus fuzz/corpus/$name${extra:+ and $extra})"
    if ! "$bin" -max_total_time="$SECS" -timeout=10 -malloc_limit_mb=1024 \
            -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="$OUT/artifacts/$name-" "$work/corpus" \
            > "$OUT/$name.log" 2>&1; then
        echo "fuzz: $name FAILED; see $OUT/$name.log and $OUT/artifacts/" >&2
        tail -n 40 "$OUT/$name.log" >&2
        status=1
    else
        grep -E "^stat::number_of_executed_units|^Done" "$OUT/$name.log" || true
    fi
    rm -rf "$work"
done
exit $status
