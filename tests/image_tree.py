"""A small runnable image made from the host's own files, for the tests of
`vigil run --image`: dash and a few tools, python3 with its standard
library, their shared libraries (as ldd lists them), a minimal /etc, and
whatever the test adds.  Written as one OCI layer with tarfile; imported
with `vigil image import`.

root_layer() is the image every test runs on under VIGIL_TEST_IMAGE=1
(tests/helpers.py, `make test-image`): what the layer-1 and layer-2 attack
tests' candidates need and no more (the candidates and these tests name
their programs: dash and the coreutils below; C candidates are built on the
host against its glibc; Python ones import only the standard library)."""
import functools
import io
import os
import subprocess
import tarfile

from oci_layout import oci_of_blobs

PROGRAMS = ["/usr/bin/dash", "/usr/bin/cat", "/usr/bin/ls", "/usr/bin/env", "/usr/bin/id",
            "/usr/bin/python3.11"]
# the standard library without what no candidate of a test imports
STDLIB = "/usr/lib/python3.11"
SKIP = {"__pycache__", "lib2to3", "idlelib", "tkinter", "ensurepip", "pydoc_data",
        "turtledemo", "test", "site-packages", "dist-packages"}
# The test root's programs beside PROGRAMS: what the attack tests' shell
# strings, policies and candidates run (grep them for /usr/bin/ and sh -c),
# and the few tools a shell candidate reaches for.
ROOT_PROGRAMS = ["/usr/bin/" + p for p in (
    "true", "false", "echo", "printf", "sleep", "tr", "chmod", "mkfifo", "touch", "rm",
    "mkdir", "ln", "mv", "cp", "head", "wc", "od", "sha256sum", "stat", "readlink",
    "uname", "whoami", "sort", "grep", "sed", "test")]
# lib-dynload's extension modules the test root leaves out, and with them
# their libraries (sqlite, Berkeley DB, NIS's krb5, curses): no candidate
# imports them.
DYNLOAD_SKIP = ("_test", "xx", "_ctypes_test", "_curses", "_dbm", "_sqlite3", "nis",
                "readline", "ossaudiodev")
ETC = {
    "etc/passwd": b"root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000::/tmp/work:/bin/sh\n",
    "etc/group": b"root:x:0:\nsandbox:x:1000:\n",
    "etc/hostname": b"image\n",
    "etc/hosts": b"127.0.0.1 localhost\n::1 localhost\n",
    "etc/resolv.conf": b"",
    "etc/nsswitch.conf": b"passwd: files\ngroup: files\nhosts: files dns\n",
    "etc/os-release": b"ID=vigil-test-image\n",
}


def libs_of(prog):
    out = subprocess.run(["ldd", prog], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        for p in parts:
            if p.startswith("/"):
                yield os.path.realpath(p), p
                break


class Layer:
    def __init__(self):
        self.buf = io.BytesIO()
        self.t = tarfile.open(fileobj=self.buf, mode="w", format=tarfile.PAX_FORMAT)
        self.seen = set()

    def dirs(self, rel):
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d and d not in self.seen:
                self.seen.add(d)
                ti = tarfile.TarInfo(d)
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                self.t.addfile(ti)

    def data(self, rel, data, mode=0o644, mtime=0):
        if rel in self.seen:
            return
        self.dirs(rel)
        self.seen.add(rel)
        ti = tarfile.TarInfo(rel)
        ti.size, ti.mode, ti.mtime = len(data), mode, mtime
        self.t.addfile(ti, io.BytesIO(data))

    def link(self, rel, target):
        if rel in self.seen:
            return
        self.dirs(rel)
        self.seen.add(rel)
        ti = tarfile.TarInfo(rel)
        ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, target, 0o777
        self.t.addfile(ti)

    def host(self, path, as_rel=None):
        """The host's file, its mtime kept (Python checks its caches by it)."""
        st = os.stat(path)
        with open(path, "rb") as f:
            self.data(as_rel or path.lstrip("/"), f.read(), st.st_mode & 0o755, int(st.st_mtime))

    def close(self):
        self.t.close()
        return self.buf.getvalue()


def runnable_layer(extra=None, links=None, pycache=False):
    """The layer's bytes.  extra: {relative path: bytes} added to it;
    links: {relative path: target}; pycache: with the standard library's
    byte code as the host has it (a benchmark's start-up)."""
    return _layer(PROGRAMS, extra, links, pycache)


@functools.lru_cache(maxsize=None)
def root_layer():
    """The test root (built once per session: ~40 MB, imported in about a
    second): runnable_layer's tree with ROOT_PROGRAMS, the standard
    library's byte code (Python would otherwise compile every module it
    imports on each run: the tree is read-only) and the libraries of its
    extension modules (ctypes' libffi, ssl's libcrypto...)."""
    return _layer(PROGRAMS + ROOT_PROGRAMS, None, None, True, dynload_libs=True)


def _program(lay, prog):
    """prog and its shared libraries, each at the canonical directory of
    the name the loader asks for (/lib64/ld-linux-x86-64.so.2 lands in
    usr/lib64: /lib64 is the image's link there)."""
    lay.host(prog)
    for real, named in libs_of(prog):
        lay.host(real, os.path.realpath(os.path.dirname(named)).lstrip("/") + "/" +
                 os.path.basename(named))


def _layer(programs, extra, links, pycache, dynload_libs=False):
    lay = Layer()
    for top, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64"),
                        ("sbin", "usr/sbin")):
        lay.link(top, target)
    for d in ("tmp", "proc", "dev", "root", "home", "var", "opt"):
        lay.dirs(d + "/x")
    for prog in programs:
        _program(lay, prog)
    lay.link("usr/bin/sh", "dash")
    lay.link("usr/bin/python3", "python3.11")
    for dirpath, dirs, files in os.walk(STDLIB):
        skip = SKIP - ({"__pycache__"} if pycache else set())
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith("config-"))
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            if os.path.basename(dirpath) == "lib-dynload" and dynload_libs:
                if f.startswith(DYNLOAD_SKIP):
                    continue
                _program(lay, p)
                continue
            lay.host(p)
    for rel, data in {**ETC, **(extra or {})}.items():
        lay.data(rel, data)
    for rel, target in (links or {}).items():
        lay.link(rel, target)
    return lay.close()


def layout_with(d, layer):
    """An OCI layout in d holding one layer (bytes)."""
    return oci_of_blobs(d, [layer])
