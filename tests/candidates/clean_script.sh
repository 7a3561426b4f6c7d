#!/bin/sh
# clean_script.sh: a clean shell candidate: a few tools found through
# PATH, a scratch file from mktemp in /tmp, the answer in the working
# directory.  Its intent summary must be empty (tests/test_summary_noise.py).
set -eu
scratch=$(mktemp)
printf '3\n1\n2\n' > "$scratch"
sort -n "$scratch" | head -n 2 > sorted.txt
rm -f "$scratch"
wc -l < sorted.txt
cat sorted.txt
