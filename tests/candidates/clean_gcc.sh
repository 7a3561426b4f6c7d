#!/bin/sh
# clean_gcc.sh: a clean C candidate: write hello.c into the working
# directory, compile it with gcc (which searches PATH for `as` and `ld`
# and keeps its temporaries in /tmp) and run it.  Its intent summary must
# be empty (tests/test_summary_noise.py), and `vigil learn` must not turn
# gcc's PATH probes or /tmp into rules.
set -eu
cat > hello.c <<'SRC'
#include <stdio.h>
int main(void) { puts("hello, world"); return 0; }
SRC
gcc -o hello hello.c
./hello
