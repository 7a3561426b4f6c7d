#!/bin/sh
# embed.sh SYMBOL FILE: print a C file defining `const char SYMBOL[]` with
# FILE's bytes, so a text file can be compiled into the binary.
set -eu
printf '/* generated from %s by scripts/embed.sh; do not edit */\n' "$2"
printf 'const char %s[] =\n' "$1"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/\\n"/' "$2"
printf ';\n'
