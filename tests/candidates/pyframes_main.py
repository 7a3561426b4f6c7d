"""Candidate for tests/test_pyframes.py: refused opens (of /pyframes/*,
which no policy allows) from known lines, each marked "MARK: name": in
the main script, in an imported module, in a thread, in a Python
subprocess, and under a deep recursion (more frames than vigil keeps).
The test finds each line by its mark and compares it with the record."""
import os
import subprocess
import sys
import threading

import pyframes_mod  # MARK: import

DEPTH = 80


def attempt(path):
    try:
        open(path)  # MARK: attempt
    except OSError:
        pass


def read_secret():
    try:
        open("/pyframes/main")  # MARK: main
    except OSError:
        pass


class Fetcher:
    def in_thread(self):
        try:
            open("/pyframes/thread")  # MARK: thread
        except OSError:
            pass


def deep(n):
    if n == 0:
        attempt("/pyframes/deep")  # MARK: deep
    else:
        deep(n - 1)  # MARK: recurse


def child():
    try:
        open("/pyframes/child")  # MARK: child
    except OSError:
        pass


if __name__ == "__main__":
    if sys.argv[1:] == ["child"]:
        child()
        sys.exit(0)
    read_secret()  # MARK: call_main
    pyframes_mod.probe()  # MARK: call_mod
    t = threading.Thread(target=Fetcher().in_thread)
    t.start()
    t.join()
    deep(DEPTH)
    subprocess.run([sys.executable, __file__, "child"], check=True)  # MARK: call_child
    print("pyframes done")
