"""write_host.py [PATH...]: try to overwrite, append to, truncate, replace
and delete each host file named on the command line or in $TARGETS
(colon-separated), and to create a new file next to it; print one line
per attempt."""
import os
import sys


def attempt(what, fn):
    try:
        fn()
        print(what, "ok", flush=True)
    except OSError as e:
        print(what, "failed", e.errno, flush=True)


def write(path, mode):
    with open(path, mode) as f:
        f.write("owned by the sandbox\n")


targets = sys.argv[1:] + [p for p in os.environ.get("TARGETS", "").split(":") if p]
for path in targets:
    attempt("write " + path, lambda: write(path, "w"))
    attempt("append " + path, lambda: write(path, "a"))
    attempt("truncate " + path, lambda: os.truncate(path, 0))
    attempt("create " + path, lambda: write(path + ".new", "w"))
    attempt("replace " + path, lambda: os.rename("/etc/hostname", path))
    attempt("unlink " + path, lambda: os.unlink(path))
