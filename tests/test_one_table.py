"""One syscall table (issue 22): core/syscalls_rows.h is the only place in
vigil's C sources where a system call's number or name is written.  Code
that makes a raw syscall uses VG_NR_<name>, made from the table's rows, so
a call cannot be added in one place and forgotten in another (the filter,
the decoders, the notify engine's carriers and the log all read the rows).

Python tests that make raw calls in a candidate take the numbers from the
table too (helpers.syscall_nr).

Left out: the table itself; the candidates and workloads (programs run in
the sandbox, which use the C library's SYS_ names as any program would);
the fuzz inputs; and test_syscalls.c, which checks the table's numbers
against the C library's and so must name those."""
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# (path prefix, why it may spell a syscall its own way)
EXEMPT = (
    ("core/syscalls_rows.h", "the table"),
    ("tests/candidates/", "programs run in the sandbox"),
    ("bench/workloads/", "programs run in the sandbox"),
    ("fuzz/corpus/", "fuzz inputs"),
    ("tests/unit/test_syscalls.c", "checks the table against the C library's numbers"),
    ("tests/test_one_table.py", "spells the patterns it looks for"),
)
SKIP_DIRS = {".git", "build", "build-san", "build-fuzz", "debian"}
SOURCE = re.compile(r"\.(c|h|py)$")
# A syscall's number or name from elsewhere: the C library's SYS_<name>
# (lower case: SYS_SECCOMP is a signal's si_code), the kernel's
# __NR_<name>, or a number given to syscall() itself.
RAW_C = re.compile(r"\bSYS_[a-z]\w*|\b__NR_[a-z]\w*|\bsyscall\s*\(\s*[0-9]")
# Python tests run candidates that make raw calls (ctypes): the numbers
# come from the table (helpers.syscall_nr), never a literal bound to a
# SYS_ name or given to syscall().
RAW_PY = re.compile(r"\bSYS_\w+[^=\n]*=\s*[0-9]|\b__NR_[a-z]\w*|\bsyscall\s*\(\s*[0-9]")


def sources():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            path = os.path.relpath(os.path.join(top, name), ROOT)
            if SOURCE.search(name) and not any(path.startswith(p) for p, _ in EXEMPT):
                yield path


def raw_uses():
    found = []
    for path in sources():
        raw = RAW_PY if path.endswith(".py") else RAW_C
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = raw.search(line)
                if m:
                    found.append("%s:%d: %s" % (path, n, m.group(0)))
    return found


def test_no_syscall_number_outside_the_table():
    found = raw_uses()
    assert not found, "syscall numbers or names outside core/syscalls_rows.h " \
        "(use VG_NR_<name> from core/syscalls.h):\n" + "\n".join(found)


def test_the_scan_sees_sources():
    # a scan that reads nothing would pass: it must see the table's users
    seen = set(sources())
    assert {"launcher/filter.c", "tracer/notify/notify_fs.c", "net/egress.c"} <= seen
    assert "core/syscalls_rows.h" not in seen
