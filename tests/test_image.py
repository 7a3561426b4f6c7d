"""`vigil image`: the store of pinned root file systems (docs/IMAGES.md).
OCI layouts and docker-save tarballs are built here with tarfile, hashlib
and json: layers applied in order with whiteouts and opaque directories,
the tree checked file by file, the digest recomputed independently
(tests/image_digest.py), and hostile layers refused with one line and
nothing left in the store or outside it.  As root and as nobody."""
import glob
import gzip
import io
import json
import os
import shutil
import stat
import tarfile

import pytest

from helpers import NOBODY, caller, nobody_caller, root_caller  # noqa: F401
from image_digest import digest
from oci_layout import oci_of_blobs


def tar(entries, gz=False, mtime=0):
    """A layer: entries are (name, kind, data, mode); kind f d l h c p."""
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, kind, data, mode in entries:
            ti = tarfile.TarInfo(name)
            ti.mode, ti.mtime = mode, mtime
            if kind == "f":
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
                continue
            ti.type = {"d": tarfile.DIRTYPE, "l": tarfile.SYMTYPE, "h": tarfile.LNKTYPE,
                       "c": tarfile.CHRTYPE, "p": tarfile.FIFOTYPE}[kind]
            if kind in "lh":
                ti.linkname = data
            t.addfile(ti)
    raw = b.getvalue()
    return gzip.compress(raw, mtime=0) if gz else raw


def oci(d, layers, gz=False, corrupt=None):
    """An OCI layout in d; corrupt=i changes a byte of layer i's blob."""
    return oci_of_blobs(d, [tar(entries, gz) for entries in layers], gz, corrupt)


def docker_save(path, layers):
    """A docker-save tarball at path, layers as ID/layer.tar members."""
    names = ["l%d/layer.tar" % i for i in range(len(layers))]
    with tarfile.open(path, "w") as t:
        for name, entries in zip(names, layers):
            data = tar(entries)
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
        man = json.dumps([{"Config": "c.json", "RepoTags": ["t:1"], "Layers": names}]).encode()
        ti = tarfile.TarInfo("manifest.json")
        ti.size = len(man)
        t.addfile(ti, io.BytesIO(man))
    return path


BASE = [("etc", "d", None, 0o755), ("etc/hostname", "f", b"base\n", 0o644),
        ("etc/gone", "f", b"x", 0o644), ("opq", "d", None, 0o755),
        ("opq/old", "f", b"old", 0o644), ("bin", "d", None, 0o755),
        ("bin/su", "f", b"\x7fELF", 0o4755), ("usr/lib/alt", "l", "/etc/alternatives/x", 0o777),
        ("ro", "d", None, 0o555), ("ro/f", "f", b"r", 0o444), ("bin/sh", "h", "bin/su", 0o755)]
UPPER = [("etc/.wh.gone", "f", b"", 0o644), ("etc/hostname", "f", b"upper\n", 0o600),
         ("opq/.wh..wh..opq", "f", b"", 0o644), ("opq/new", "f", b"new", 0o640)]
# what the two give, file by file: path -> (kind, mode, content or target)
EXPECTED = {
    "etc": ("d", 0o755, None), "etc/hostname": ("f", 0o600, b"upper\n"),
    "opq": ("d", 0o755, None), "opq/new": ("f", 0o640, b"new"),
    "bin": ("d", 0o755, None), "bin/su": ("f", 0o755, b"\x7fELF"),
    "bin/sh": ("f", 0o755, b"\x7fELF"), "usr": ("d", 0o755, None),
    "usr/lib": ("d", 0o755, None), "usr/lib/alt": ("l", 0o777, "/etc/alternatives/x"),
    "ro": ("d", 0o555, None), "ro/f": ("f", 0o444, b"r"),
}


def store(c):
    return os.path.join(c.home, ".local", "state", "vigil", "images")


def rootfs(c, hexd):
    return os.path.join(store(c), "sha256", hexd, "rootfs")


def tree(root):
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", 0o777, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("d", stat.S_IMODE(st.st_mode), None)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("f", stat.S_IMODE(st.st_mode), f.read())
    return out


def imp(c, src, name="t", stdin=None):
    if stdin is None:
        return c.vigil_raw("image", "import", src, "--name", name)
    import subprocess
    with open(stdin, "rb") as f:
        return subprocess.run(c.argv(["image", "import", "-", "--name", name]), env=c.env(),
                              cwd=c.home, stdin=f, capture_output=True)


def readable(c, d):
    for dirpath, dirs, files in os.walk(d):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)
    return d


def hex_of(p):
    out = p.stdout if isinstance(p.stdout, str) else p.stdout.decode()
    assert p.returncode == 0, p.stderr
    assert out.startswith("sha256:")
    return out.strip()[7:]


def images(c):
    return sorted(glob.glob(os.path.join(store(c), "sha256", "*")))


def nothing_in_tmp(c):
    assert os.listdir(os.path.join(store(c), "tmp")) == []


def test_oci_layers_whiteouts_and_digest(caller):
    c = caller
    src = readable(c, oci(c.dir("oci"), [BASE, UPPER], gz=True))
    h = hex_of(imp(c, src))
    got = tree(rootfs(c, h))
    assert got == EXPECTED
    assert digest(rootfs(c, h)) == h
    man = json.load(open(os.path.join(store(c), "sha256", h, "manifest.json")))
    assert man["digest"] == "sha256:" + h and man["names"] == ["t"]
    assert man["entries"] == len(EXPECTED) and man["setid_bits_stripped"] == 1
    nothing_in_tmp(c)
    # the same content again, as a docker-save tarball and on stdin: the same digest
    ds = docker_save(os.path.join(c.dir("ds"), "s.tar"), [BASE, UPPER])
    os.chmod(ds, 0o644)
    assert hex_of(imp(c, ds, "t2")) == h
    assert hex_of(imp(c, None, "t3", stdin=ds)) == h
    ls = c.vigil_raw("image", "ls")
    assert ls.returncode == 0 and h[:12] in ls.stdout and "t,t2,t3" in ls.stdout
    # a changed byte: another digest
    changed = [*BASE[:1], ("etc/hostname", "f", b"basf\n", 0o644), *BASE[2:]]
    src2 = readable(c, oci(c.dir("oci"), [changed]))
    h2 = hex_of(imp(c, src2, "t4"))
    assert h2 != h and digest(rootfs(c, h2)) == h2
    assert c.vigil_raw("image", "verify", "t").returncode == 0
    assert c.vigil_raw("image", "rm", "t4").returncode == 0
    assert not os.path.exists(os.path.join(store(c), "sha256", h2))
    assert not os.path.exists(os.path.join(store(c), "names", "t4"))


def test_file_times_are_kept_and_not_in_the_digest(caller):
    """Python checks a .pyc against its source's modification time: an
    import that did not keep it would leave every cache of an image stale
    (each module compiled again on every run)."""
    entries = [("lib", "d", None, 0o755), ("lib/m.py", "f", b"X = 1\n", 0o644)]
    hexes = []
    for when in (1234567890, 1700000000):
        src = os.path.join(caller.dir("src"), "oci")
        oci_of_blobs(src, [tar(entries, mtime=when)])
        readable(caller, os.path.dirname(src))
        hexes.append(hex_of(imp(caller, src, name="t%d" % when)))
        assert os.stat(os.path.join(rootfs(caller, hexes[-1]), "lib/m.py")).st_mtime == when
        # removed, so that the next import stores its own copy
        assert caller.vigil_raw("image", "rm", "t%d" % when).returncode == 0
    assert hexes[0] == hexes[1]


def test_verify_sees_a_tampered_file(caller):
    c = caller
    src = readable(c, oci(c.dir("oci"), [BASE]))
    h = hex_of(imp(c, src, "tamper"))
    with open(os.path.join(rootfs(c, h), "etc", "hostname"), "ab") as f:
        f.write(b"!")
    p = c.vigil_raw("image", "verify", "tamper")
    assert p.returncode == 1 and "changed" in p.stderr and len(p.stderr.splitlines()) == 1
    assert c.vigil_raw("image", "rm", h[:12]).returncode == 0
    assert c.vigil_raw("image", "verify", "tamper").returncode == 1


HOSTILE = {
    "dotdot": ([[("../escape", "f", b"x", 0o644)]], '".." in the path refused'),
    "absolute": ([[("/etc/evil", "f", b"x", 0o644)]], "absolute path refused"),
    "symlink-parent": ([[("a", "l", "OUTSIDE", 0o777)], [("a/passwd", "f", b"pwned", 0o644)]],
                       "its parent a is a symlink"),
    "hardlink-outside": ([[("h", "h", "../../etc/passwd", 0o644)]], "outside the tree"),
    "hardlink-absent": ([[("h", "h", "nothere", 0o644)]], "no such file in the tree yet"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_layers_refused(caller, case):
    c = caller
    outside = c.dir("outside")
    layers, msg = HOSTILE[case]
    layers = [[(n, k, d.replace("OUTSIDE", outside) if isinstance(d, str) else d, m)
               for n, k, d, m in layer] for layer in layers]
    before, stored = sorted(os.listdir(outside)), images(c)
    src = readable(c, oci(c.dir("oci"), layers))
    p = imp(c, src, "bad")
    assert p.returncode == 1, p.stderr
    line = p.stderr.strip()
    assert len(line.splitlines()) == 1 and msg in line and "layer" in line, line
    assert sorted(os.listdir(outside)) == before
    assert not os.path.exists(os.path.join(c.home, "escape"))
    assert images(c) == stored
    assert not os.path.exists(os.path.join(store(c), "names", "bad"))
    nothing_in_tmp(c)


def test_corrupt_blob_refused(caller):
    c = caller
    stored = images(c)
    src = readable(c, oci(c.dir("oci"), [BASE, UPPER], corrupt=1))
    p = imp(c, src, "corrupt")
    assert p.returncode == 1 and "not the sha256:" in p.stderr and "layer 2 of 2" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert images(c) == stored
    nothing_in_tmp(c)


def test_size_cap(caller):
    """A header claiming a file bigger than the cap ends the import at once."""
    c = caller
    d = c.dir("ds")
    ti = tarfile.TarInfo("huge")
    ti.size = 3 << 30
    layer = ti.tobuf(tarfile.PAX_FORMAT) + b"\0" * 1024
    path = os.path.join(d, "s.tar")
    with tarfile.open(path, "w") as t:
        for name, data in (("l/layer.tar", layer),
                           ("manifest.json", json.dumps([{"Layers": ["l/layer.tar"]}]).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    os.chmod(path, 0o644)
    p = imp(c, path, "huge")
    assert p.returncode == 1 and "cap" in p.stderr and "huge" in p.stderr, p.stderr
    nothing_in_tmp(c)


def test_device_node_skipped(root_caller):
    c = root_caller
    src = oci(c.dir("oci"), [[("dev", "d", None, 0o755), ("dev/null", "c", None, 0o666),
                              ("dev/fifo", "p", None, 0o644), ("ok", "f", b"1", 0o644)]])
    p = imp(c, src, "dev")
    h = hex_of(p)
    assert "2 device nodes, FIFOs or sockets not created" in p.stderr
    assert tree(rootfs(c, h)) == {"dev": ("d", 0o755, None), "ok": ("f", 0o644, b"1")}
    assert c.vigil_raw("image", "rm", "dev").returncode == 0


def test_usage_errors(root_caller):
    c = root_caller
    for args, msg in ((["image"], "give an action"), (["image", "import", "x"], "--name"),
                      (["image", "import", "x", "--name", "a/b"], "no '/'"),
                      (["image", "frob"], "unknown action")):
        p = c.vigil_raw(*args)
        assert p.returncode in (1, 2) and msg in p.stderr, (args, p.stderr)


def test_a_closed_directory_is_stored_and_removed(root_caller):
    """A layer's directory of mode 0000 with a file in it, and a second
    directory 0000 that the upper layer whites out: the tree keeps the
    first with its mode, `verify` hashes it, and `rm` removes it all (it
    opens such a directory up through its fd, never through its name)."""
    c = root_caller
    base = [("shut", "d", None, 0o755), ("shut/in", "f", b"x", 0o600),
            ("gone", "d", None, 0o755), ("gone/f", "f", b"y", 0o644)]
    base_modes = [("shut", "d", None, 0o000), ("gone", "d", None, 0o000)]
    upper = [(".wh.gone", "f", b"", 0o644)]
    src = readable(c, oci(c.dir("oci"), [base + base_modes, upper]))
    h = hex_of(imp(c, src, "shut"))
    root = rootfs(c, h)
    assert stat.S_IMODE(os.lstat(os.path.join(root, "shut")).st_mode) == 0
    assert not os.path.lexists(os.path.join(root, "gone"))
    assert c.vigil_raw("image", "verify", "shut").returncode == 0
    assert c.vigil_raw("image", "rm", "shut").returncode == 0
    assert not os.path.exists(os.path.join(store(c), "sha256", h))
    nothing_in_tmp(c)


def test_an_import_killed_midway_is_swept_by_the_next(caller):
    """What a SIGKILLed import leaves in tmp/ (no cleanup of its own ran)
    goes at the next import: only an entry vigil named whose pid is dead;
    a live pid's (another import under way) and any other name stay."""
    import subprocess
    c = caller
    imp(c, readable(c, oci(c.dir("oci0"), [BASE])), "first")  # the store exists
    gone = subprocess.Popen(["true"])
    gone.wait()
    tmp = os.path.join(store(c), "tmp")
    dead, live, other = (os.path.join(tmp, n) for n in
                         (f"import-{gone.pid}-a1b2c3", f"import-{os.getpid()}-d4e5f6", "mine"))
    for d in (dead, live, other):
        os.makedirs(os.path.join(d, "rootfs", "etc"))
        with open(os.path.join(d, "rootfs", "etc", "f"), "w") as f:
            f.write("x")
        for p, dirs, files in os.walk(d):  # the caller's own, as its import would leave
            for q in [p] + [os.path.join(p, f) for f in files]:
                os.chown(q, *((0, 0) if c.root else (NOBODY, NOBODY)))
    hex_of(imp(c, readable(c, oci(c.dir("oci1"), [BASE, UPPER])), "second"))
    assert not os.path.exists(dead)
    assert os.path.exists(live) and os.path.exists(other)
    for d in (live, other):  # the store is the session's: later tests find tmp/ empty
        shutil.rmtree(d)
