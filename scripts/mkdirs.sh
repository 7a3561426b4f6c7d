#!/bin/sh
# mkdirs.sh LIST DESTDIR DIR...: make each DESTDIR/DIR and its missing
# parents, one component at a time, and append to LIST (one path a line,
# without DESTDIR) each directory this call created, parents first.  `make uninstall` removes exactly those
# (when empty), children first, so it never removes a directory that was
# there before the install, such as /usr/local/share/man/man1.
set -eu
list=$1
dest=$2
shift 2
# a staging DESTDIR is the packager's, not part of what is installed
[ -z "$dest" ] || mkdir -p "$dest"
for d in "$@"; do
  case $d in /*) ;; *) echo "mkdirs.sh: $d: not an absolute path" >&2; exit 2 ;; esac
  missing=""
  p=$d
  while [ "$p" != / ] && [ ! -d "$dest$p" ]; do
    missing="$p
$missing"
    p=$(dirname "$p")
  done
  printf '%s' "$missing" | while IFS= read -r m; do
    [ -n "$m" ] || continue
    mkdir -m 755 "$dest$m"
    printf '%s\n' "$m" >> "$list"
  done
done
