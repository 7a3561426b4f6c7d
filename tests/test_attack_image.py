"""Attacks on `vigil image import|rm` (docs/IMAGES.md, docs/SECURITY.md
"vigil never harms what it did not create"): a hostile OCI layout, a
hostile docker-save tarball, hostile layers, a tampered store and odd
names.  Each test is judged from the outside: a sentinel directory
outside the store hashes the same before and after, nothing appears in
$HOME beside the state directory, the store's tmp/ is empty, a refused
input gives one line on stderr and a non-zero exit, and vigil never
hangs (every call has a timeout).  As root and as nobody."""
import gzip
import hashlib
import io
import json
import os
import stat
import subprocess
import tarfile

import pytest

from helpers import NOBODY, caller, nobody_caller, root_caller  # noqa: F401
from oci_layout import blob
from test_image import BASE, docker_save, hex_of, images, oci, readable, rootfs, store, tar, tree

TIMEOUT = 20  # seconds: every vigil call; a hang is a failure, not a wait
GIB = 1 << 30


# ---- judging from the outside ----

def snapshot(root):
    """Everything observable of a directory tree: type, mode, owner, link
    count, content or target of each entry (never following a link)."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in [""] + dirs + files:
            p = os.path.join(dirpath, n) if n else dirpath
            st = os.lstat(p)
            rec = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_nlink)
            if stat.S_ISLNK(st.st_mode):
                rec += (os.readlink(p),)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    rec += (hashlib.sha256(f.read()).hexdigest(),)
            out[os.path.relpath(p, root)] = rec
    return out


class Outside:
    """A sentinel directory outside the store (a root-only secret in it
    when the caller is root), and what $HOME holds, before the attack."""

    def __init__(self, c):
        self.c = c
        # a test that failed may have stored "atk": start without it
        c.vigil_raw("image", "rm", "atk", timeout=TIMEOUT)
        self.dir = c.dir("sentinel")
        os.makedirs(os.path.join(self.dir, "sub"))
        for rel, data in (("victim", b"do not touch\n"), ("sub/passwd", b"root:x:0:0\n")):
            with open(os.path.join(self.dir, rel), "wb") as f:
                f.write(data)
        self.secret = os.path.join(self.dir, "secret")
        with open(self.secret, "wb") as f:
            f.write(b"root only\n")
        os.chmod(self.secret, 0o600)
        self.before = snapshot(self.dir)
        self.home = self.listing()
        self.stored = images(c)

    def listing(self):
        return sorted(n for n in os.listdir(self.c.home) if n != ".local")

    def intact(self, stored_same=True):
        assert snapshot(self.dir) == self.before, "the sentinel outside the store changed"
        assert self.listing() == self.home, "something was created in $HOME"
        tmp = os.path.join(store(self.c), "tmp")
        assert not os.path.isdir(tmp) or os.listdir(tmp) == [], os.listdir(tmp)
        if stored_same:
            assert images(self.c) == self.stored


def imp(c, src, name="atk", stdin=None):
    return subprocess.run(c.argv(["image", "import", src, "--name", name]), env=c.env(),
                          cwd=c.home, stdin=stdin, capture_output=True, text=True,
                          errors="replace", timeout=TIMEOUT)


def vigil(c, *args):
    return c.vigil_raw(*args, timeout=TIMEOUT)


def refused(p, *msgs):
    """Exit 1 (2 for usage), one line, naming what was wrong."""
    line = p.stderr.strip()
    assert p.returncode in (1, 2), (p.returncode, p.stdout, p.stderr)
    assert p.stdout == "", p.stdout
    assert len(line.splitlines()) == 1, line
    for m in msgs:
        assert m in line, line
    return line


def held(o, p, *msgs):
    """p refused, nothing outside changed, no name given."""
    refused(p, *msgs)
    o.intact()
    no_name(o.c)


def no_name(c, name="atk"):
    assert not os.path.lexists(os.path.join(store(c), "names", name))


def layout(c, layers, gz=False):
    return readable(c, oci(c.dir("oci"), layers, gz))


def index_manifest(src):
    """The manifest descriptor index.json names, and the manifest."""
    idx = json.load(open(os.path.join(src, "index.json")))
    d = idx["manifests"][0]
    return d, json.load(open(os.path.join(src, "blobs", "sha256", d["digest"][7:])))


def rewrite_index(src, index):
    with open(os.path.join(src, "index.json"), "w") as f:
        json.dump(index, f)


def with_layer_descs(c, src, descs):
    """src's manifest with these layer descriptors, index.json pointing at it."""
    _, man = index_manifest(src)
    man["layers"] = descs
    d = blob(src, json.dumps(man).encode())
    d["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    rewrite_index(src, {"schemaVersion": 2, "manifests": [d]})
    readable(c, src)


def layer_path(src, i=0):
    _, man = index_manifest(src)
    return os.path.join(src, "blobs", "sha256", man["layers"][i]["digest"][7:])


# ---- the OCI layout itself is hostile ----

def test_symlinked_layer_blob_is_refused(caller):
    """blobs/sha256/HEX a symlink to a host file whose bytes are that very
    layer (so its digest checks): following it would import a file of the
    host's, root-only here, that the layout does not hold.  A layout's
    blobs are its own regular files: a symlink is refused."""
    c, o = caller, Outside(caller)
    src = layout(c, [[("f", "f", b"host secret layer\n", 0o644)]])
    lp = layer_path(src)
    os.replace(lp, o.secret)  # the secret *is* the layer, root-only
    o.before = snapshot(o.dir)
    os.symlink(o.secret, lp)
    held(o, imp(c, src), "symlink")


@pytest.mark.parametrize("what", ["index.json", "oci-layout", "blobs", "blobs/sha256"])
def test_symlinked_layout_file_is_refused(caller, what):
    """index.json, oci-layout or a blobs directory a symlink (to a copy of
    itself outside): the layout is read through no symlink."""
    c, o = caller, Outside(caller)
    src = layout(c, [BASE])
    real, away = os.path.join(src, what), os.path.join(o.dir, "moved")
    os.rename(real, away)
    os.symlink(away, real)
    o.before = snapshot(o.dir)
    held(o, imp(c, src), "symlink")


@pytest.mark.parametrize("what", ["index.json", "oci-layout", "layer", "manifest"])
def test_fifo_in_the_layout_does_not_hang(caller, what):
    """A FIFO where a file should be: an open must not block on it."""
    c, o = caller, Outside(caller)
    src = layout(c, [BASE])
    path = {"index.json": os.path.join(src, "index.json"),
            "oci-layout": os.path.join(src, "oci-layout"),
            "layer": layer_path(src),
            "manifest": os.path.join(src, "blobs", "sha256",
                                     index_manifest(src)[0]["digest"][7:])}[what]
    os.unlink(path)
    os.mkfifo(path, 0o666)
    held(o, imp(c, src))


def test_source_that_is_a_fifo_or_a_device_is_refused(caller):
    c, o = caller, Outside(caller)
    fifo = os.path.join(c.dir("fifo"), "src.tar")
    os.mkfifo(fifo, 0o666)
    refused(imp(c, fifo), "neither")
    held(o, imp(c, "/dev/zero"), "neither")


BAD_DIGESTS = ["sha256:../../../etc/passwd", "sha256:" + "A" * 64, "sha256:" + "a" * 63,
               "sha256:" + "a" * 65, "sha512:" + "a" * 128, "a" * 64,
               "sha256:" + "a" * 60 + "/../", "sha256:" + "a" * 64 + "\n", ""]


@pytest.mark.parametrize("dg", BAD_DIGESTS)
def test_bad_descriptor_digest_refused(caller, dg):
    """A layer descriptor's digest that is not sha256: and 64 lowercase hex
    digits: refused before any path is built from it."""
    c, o = caller, Outside(caller)
    src = layout(c, [BASE])
    _, man = index_manifest(src)
    desc = dict(man["layers"][0], digest=dg)
    with_layer_descs(c, src, [desc])
    refused(imp(c, src), "no sha256 digest")
    # and the same as index.json's manifest descriptor
    idx = json.load(open(os.path.join(src, "index.json")))
    idx["manifests"][0]["digest"] = dg
    rewrite_index(src, idx)
    held(o, imp(c, src), "no sha256 digest")


def test_nested_index_chain_and_self_reference_end(caller):
    """Indexes nested deeper than the cap end the import; an index naming
    a blob that is not its own content (the only "loop" a content address
    allows) fails its digest check."""
    c, o = caller, Outside(caller)
    src = layout(c, [BASE])
    d, _ = index_manifest(src)
    for _ in range(8):
        d = blob(src, json.dumps({"schemaVersion": 2, "manifests": [d]}).encode())
        d["mediaType"] = "application/vnd.oci.image.index.v1+json"
    rewrite_index(src, {"schemaVersion": 2, "manifests": [d]})
    readable(c, src)
    refused(imp(c, src), "nested more than")
    # a "self-referencing" index: its descriptor names index.json's own text
    text = json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.index.v1+json",
         "digest": "sha256:" + "0" * 64, "size": 10}]}).encode()
    with open(os.path.join(src, "blobs", "sha256", "0" * 64), "wb") as f:
        f.write(text)
    with open(os.path.join(src, "index.json"), "wb") as f:
        f.write(text)
    readable(c, src)
    held(o, imp(c, src), "does not match")


@pytest.mark.parametrize("kind", ["huge", "deep", "notjson", "size-lies"])
def test_hostile_index_json(caller, kind):
    c, o = caller, Outside(caller)
    src = layout(c, [BASE])
    path = os.path.join(src, "index.json")
    if kind == "huge":
        data = b'{"manifests": [' + b'{"a": 1},' * (1 << 20) + b'{}]}'
    elif kind == "deep":
        data = b"[" * 200000 + b"]" * 200000
    elif kind == "notjson":
        data = b"\xff\xfe\0garbage"
    else:  # a manifest descriptor claiming 1 EiB
        idx = json.load(open(path))
        idx["manifests"][0]["size"] = 1 << 60
        data = json.dumps(idx).encode()
    with open(path, "wb") as f:
        f.write(data)
    held(o, imp(c, src))


# ---- docker-save tarballs ----

def raw_tar(path, members):
    """A tarball of (TarInfo fields, data) members, in order."""
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for fields, data in members:
            ti = tarfile.TarInfo(fields.pop("name"))
            for k, v in fields.items():
                setattr(ti, k, v)
            if data is not None:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
            else:
                t.addfile(ti)
    os.chmod(path, 0o644)
    return path


def manifest(layers):
    return json.dumps([{"Config": "c.json", "Layers": layers}]).encode()


@pytest.mark.parametrize("member", ["../x/layer.tar", "/etc/passwd", "a/../../layer.tar",
                                    "link/layer.tar", "sym.tar", "hard.tar", "dir",
                                    "missing.tar", ""])
def test_docker_save_layer_paths_refused(caller, member):
    """manifest.json's Layers: a traversal, an absolute path, a member
    that is a symlink, hard link or directory, or none: refused, and
    nothing outside is read as a layer."""
    c, o = caller, Outside(caller)
    good = tar([("etc", "d", None, 0o755), ("etc/x", "f", b"x", 0o644)])
    path = os.path.join(c.dir("ds"), "s.tar")
    raw_tar(path, [
        ({"name": "ok.tar"}, good),
        ({"name": "link", "type": tarfile.SYMTYPE, "linkname": o.dir}, None),
        ({"name": "sym.tar", "type": tarfile.SYMTYPE, "linkname": "ok.tar"}, None),
        ({"name": "hard.tar", "type": tarfile.LNKTYPE, "linkname": "ok.tar"}, None),
        ({"name": "dir", "type": tarfile.DIRTYPE}, None),
        ({"name": "manifest.json"}, manifest([member])),
    ])
    held(o, imp(c, path))


def test_docker_save_duplicate_members_read_consistently(caller):
    """Two manifest.json and two members of one name: whichever vigil
    takes, both passes read the same one and the tree is one of them."""
    c, o = caller, Outside(caller)
    a = tar([("which", "f", b"first", 0o644)])
    b = tar([("which", "f", b"second", 0o644), ("extra", "f", b"2", 0o644)])
    path = os.path.join(c.dir("ds"), "s.tar")
    raw_tar(path, [({"name": "manifest.json"}, manifest(["l.tar"])), ({"name": "l.tar"}, a),
                   ({"name": "l.tar"}, b),
                   ({"name": "manifest.json"}, manifest(["l.tar", "l.tar"]))])
    h = hex_of(imp(c, path))
    assert tree(rootfs(c, h)) in ({"which": ("f", 0o644, b"first")},
                                 {"which": ("f", 0o644, b"second"), "extra": ("f", 0o644, b"2")})
    o.intact(stored_same=False)
    assert vigil(c, "image", "rm", "atk").returncode == 0
    o.intact()


# ---- hostile layers ----

def oci_import(c, layers, gz=False):
    return imp(c, layout(c, layers, gz))


def test_write_through_a_hard_link_replaces_the_name(caller):
    """b a hard link of a; a later layer (and a later entry of the same
    layer) writes b: b is a new file, a keeps its content."""
    c, o = caller, Outside(caller)
    l1 = [("a", "f", b"AAAA", 0o644), ("b", "h", "a", 0o644), ("c", "f", b"C", 0o644),
          ("d", "h", "c", 0o644), ("d", "f", b"D", 0o600)]
    l2 = [("b", "f", b"B", 0o600)]
    h = hex_of(oci_import(c, [l1, l2]))
    got = tree(rootfs(c, h))
    assert got == {"a": ("f", 0o644, b"AAAA"), "b": ("f", 0o600, b"B"),
                   "c": ("f", 0o644, b"C"), "d": ("f", 0o600, b"D")}
    root = rootfs(c, h)
    assert all(os.lstat(os.path.join(root, n)).st_nlink == 1 for n in "abcd")
    o.intact(stored_same=False)
    assert vigil(c, "image", "rm", "atk").returncode == 0


def test_hard_link_to_a_symlink_or_directory_refused(caller):
    c, o = caller, Outside(caller)
    for target in (("s", "l", o.secret, 0o777), ("dd", "d", None, 0o755)):
        p = oci_import(c, [[target, ("h", "h", target[0], 0o644)]])
        held(o, p, "hard link")


@pytest.mark.parametrize("case", ["same-layer", "later-layer", "deep", "hardlink-through",
                                  "hardlink-beneath", "whiteout-through", "opaque-through",
                                  "dir-entry-beneath"])
def test_nothing_through_a_symlink(caller, case):
    """A symlink to the sentinel, then an entry, hard link or whiteout
    beneath it: refused (or a no-op for an opaque marker), the sentinel
    untouched."""
    c, o = caller, Outside(caller)
    s = o.dir
    layers = {
        "same-layer": [[("l", "l", s, 0o777), ("l/victim", "f", b"pwned", 0o644)]],
        "later-layer": [[("l", "l", s, 0o777)], [("l/sub/passwd", "f", b"pwned", 0o644)]],
        "deep": [[("a/b", "l", s + "/sub", 0o777)], [("a/b/passwd", "f", b"x", 0o644)]],
        "hardlink-through": [[("l", "l", s, 0o777), ("h", "h", "l/victim", 0o644)]],
        "hardlink-beneath": [[("f", "f", b"x", 0o644), ("l", "l", s, 0o777),
                              ("l/new", "h", "f", 0o644)]],
        "whiteout-through": [[("l", "l", s, 0o777)], [("l/.wh.victim", "f", b"", 0o644)]],
        "opaque-through": [[("l", "l", s, 0o777)], [("l/.wh..wh..opq", "f", b"", 0o644)]],
        "dir-entry-beneath": [[("l", "l", s, 0o777)], [("l/sub", "d", None, 0o700)]],
    }[case]
    p = oci_import(c, layers)
    if case == "opaque-through":
        # the marker empties a directory l is not: nothing to do, l stays a link
        h = hex_of(p)
        assert tree(rootfs(c, h)) == {"l": ("l", 0o777, s)}
        o.intact(stored_same=False)
        assert vigil(c, "image", "rm", "atk").returncode == 0
    else:
        refused(p, "symlink")
        no_name(c)
    o.intact()


def test_whiteout_of_a_symlink_removes_only_the_link(caller):
    c, o = caller, Outside(caller)
    h = hex_of(oci_import(c, [[("l", "l", o.dir, 0o777), ("m", "l", o.secret, 0o777)],
                              [(".wh.l", "f", b"", 0o644), ("m", "f", b"over", 0o644)]]))
    assert tree(rootfs(c, h)) == {"m": ("f", 0o644, b"over")}
    o.intact(stored_same=False)
    assert vigil(c, "image", "rm", "atk").returncode == 0
    o.intact()


def test_directory_file_directory_across_layers(caller):
    c, o = caller, Outside(caller)
    l1 = [("x", "d", None, 0o555), ("x/old", "f", b"o", 0o644), ("x/sub", "d", None, 0o700)]
    l2 = [("x", "f", b"now a file", 0o640)]
    l3 = [("x", "d", None, 0o750), ("x/new", "f", b"n", 0o644)]
    h = hex_of(oci_import(c, [l1, l2, l3]))
    assert tree(rootfs(c, h)) == {"x": ("d", 0o750, None), "x/new": ("f", 0o644, b"n")}
    h2 = hex_of(oci_import(c, [l1, l2]))
    assert tree(rootfs(c, h2)) == {"x": ("f", 0o640, b"now a file")}
    o.intact(stored_same=False)
    for ref in (h, h2):
        assert vigil(c, "image", "rm", ref).returncode == 0
    o.intact()


@pytest.mark.parametrize("name", [".wh...", "a/.wh...", ".wh..", "a/.wh..", "a/b/.wh..."])
def test_whiteout_naming_dot_or_dotdot_refused(caller, name):
    """`.wh...` whites out "..": the directory above the one it is in (at
    the root, the import's own directory in tmp/, tree and all); `.wh..`
    the directory itself.  Neither names an entry: refused."""
    c, o = caller, Outside(caller)
    lower = [("a", "d", None, 0o755), ("a/b", "d", None, 0o755), ("a/b/keep", "f", b"k", 0o644),
             ("top", "f", b"t", 0o644)]
    p = oci_import(c, [lower, [("a", "d", None, 0o755), ("a/b", "d", None, 0o755),
                               (name, "f", b"", 0o644)]])
    held(o, p, "whiteout", "names no entry")


def test_opaque_marker_at_the_root_empties_the_lower_layers(caller):
    c, o = caller, Outside(caller)
    h = hex_of(oci_import(c, [BASE, [(".wh..wh..opq", "f", b"", 0o644),
                                     ("only", "f", b"1", 0o644)]]))
    assert tree(rootfs(c, h)) == {"only": ("f", 0o644, b"1")}
    o.intact(stored_same=False)
    assert vigil(c, "image", "rm", "atk").returncode == 0
    o.intact()


def pax_layer(members):
    """A layer of (name, pax headers, type, linkname, data)."""
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, pax, typ, link, data in members:
            ti = tarfile.TarInfo(name)
            ti.type, ti.linkname, ti.pax_headers = typ, link, pax
            ti.size = len(data or b"")
            t.addfile(ti, io.BytesIO(data or b""))
    return b.getvalue()


def layout_raw(c, raws):
    """An OCI layout of these raw layer blobs."""
    d = c.dir("oci")
    os.makedirs(os.path.join(d, "blobs", "sha256"))
    descs = [dict(blob(d, r), mediaType="application/vnd.oci.image.layer.v1.tar") for r in raws]
    man = blob(d, json.dumps({"schemaVersion": 2, "config": blob(d, b"{}"),
                              "layers": descs}).encode())
    man["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    rewrite_index(d, {"schemaVersion": 2, "manifests": [man]})
    with open(os.path.join(d, "oci-layout"), "w") as f:
        f.write('{"imageLayoutVersion": "1.0.0"}')
    return readable(c, d)


@pytest.mark.parametrize("case", ["path", "path-abs", "linkpath", "gnu-longlink"])
def test_pax_and_gnu_overrides_with_dotdot_refused(caller, case):
    c, o = caller, Outside(caller)
    reg, lnk = tarfile.REGTYPE, tarfile.LNKTYPE
    if case == "path":
        raw = pax_layer([("innocent", {"path": "a/../../" + o.dir[1:] + "/victim"}, reg, "",
                          b"pwned")])
    elif case == "path-abs":
        raw = pax_layer([("innocent", {"path": o.dir + "/victim"}, reg, "", b"pwned")])
    elif case == "linkpath":
        raw = pax_layer([("h", {"linkpath": "../" * 20 + o.secret[1:]}, lnk, "x", None)])
    else:
        b = io.BytesIO()
        with tarfile.open(fileobj=b, mode="w", format=tarfile.GNU_FORMAT) as t:
            ti = tarfile.TarInfo("x/" * 60 + "../" * 80 + o.dir[1:] + "/victim")
            ti.size = 5
            t.addfile(ti, io.BytesIO(b"pwned"))
        raw = b.getvalue()
    held(o, imp(c, layout_raw(c, [raw])))


def test_gnu_long_names_are_stored(caller):
    c, o = caller, Outside(caller)
    long = "d" * 200 + "/" + "e" * 250
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.GNU_FORMAT) as t:
        ti = tarfile.TarInfo(long)
        ti.size = 1
        t.addfile(ti, io.BytesIO(b"1"))
        ti = tarfile.TarInfo("s")
        ti.type, ti.linkname = tarfile.SYMTYPE, "t" * 300
        t.addfile(ti)
    h = hex_of(imp(c, layout_raw(c, [b.getvalue()])))
    assert tree(rootfs(c, h)) == {"d" * 200: ("d", 0o755, None), long: ("f", 0o644, b"1"),
                                  "s": ("l", 0o777, "t" * 300)}
    o.intact(stored_same=False)
    assert vigil(c, "image", "rm", "atk").returncode == 0


def test_path_longer_than_path_max_refused(caller):
    c, o = caller, Outside(caller)
    name = "/".join(["n" * 200] * 25)  # 5024 bytes
    raw = pax_layer([(name, {}, tarfile.REGTYPE, "", b"x")])
    held(o, imp(c, layout_raw(c, [raw])), "longer than")


def deep(n):
    return "/".join(["a"] * n)


def test_deeper_than_the_cap_is_refused_and_leaves_nothing(caller):
    """An entry 300 directories deep (600 bytes: well within PATH_MAX): the
    depth cap must end the import, and the failed import must still be
    removable (it was not: the removal's own depth cap stopped it, and the
    tree stayed in tmp/ for good, the sweep failing on it every time)."""
    c, o = caller, Outside(caller)
    raw = pax_layer([(deep(300) + "/f", {}, tarfile.REGTYPE, "", b"x")])
    held(o, imp(c, layout_raw(c, [raw])), "deep")


def test_the_deepest_image_allowed_can_be_removed(caller):
    """An image as deep as the import allows is one `rm` can remove
    (`rm` moves it two levels further down, into tmp/rm-*/image)."""
    c, o = caller, Outside(caller)
    for n in range(250, 258):
        raw = pax_layer([(deep(n) + "/f", {}, tarfile.REGTYPE, "", b"x")])
        p = imp(c, layout_raw(c, [raw]), name="deep%d" % n)
        if p.returncode != 0:
            refused(p, "deep")
            continue
        h = hex_of(p)
        p = vigil(c, "image", "rm", h)
        assert p.returncode == 0, (n, p.stderr)
        assert not os.path.exists(os.path.join(store(c), "sha256", h))
    o.intact()


def gz_zeros(n, chunk=64 << 20):
    """gzip members whose concatenation inflates to n zero bytes, cheaply."""
    whole, rest = divmod(n, chunk)
    one = gzip.compress(b"\0" * chunk, compresslevel=9, mtime=0)
    return one * whole + (gzip.compress(b"\0" * rest, mtime=0) if rest else b"")


def file_header(name, size):
    ti = tarfile.TarInfo(name)
    ti.size = size
    return ti.tobuf(tarfile.USTAR_FORMAT)


# soak: reaching the header that crosses the cap means inflating 3 GiB of
# zeros, ~10 s here and past the 20 s timeout under ASan beside a busy loop
@pytest.mark.soak
def test_gzip_bomb_ends_promptly(caller):
    """A few MB of gzip claiming files of 1.5 GiB each: the total cap ends
    the import at the header that crosses it, before anything is written."""
    c, o = caller, Outside(caller)
    size = 3 * GIB // 2
    raw = b""
    for i in range(4):
        raw += gzip.compress(file_header("bomb%d" % i, size), mtime=0) + gz_zeros(size)
    d = layout_raw(c, [raw])
    held(o, imp(c, d), "cap")


def test_entry_count_cap(caller):
    """A million and one entries (one header repeated): the count cap."""
    c, o = caller, Outside(caller)
    ti = tarfile.TarInfo("d")
    ti.type = tarfile.DIRTYPE
    hdr = ti.tobuf(tarfile.USTAR_FORMAT)
    per = 2048
    member = gzip.compress(hdr * per, mtime=0)
    raw = member * (1000001 // per + 1)
    held(o, imp(c, layout_raw(c, [raw])), "entries")


@pytest.mark.parametrize("gz", [False, True])
def test_size_header_that_lies_refused(caller, gz):
    """A header claiming 1 MiB, then the layer ends: truncated."""
    c, o = caller, Outside(caller)
    raw = file_header("liar", 1 << 20) + b"only this"
    if gz:
        raw = gzip.compress(raw, mtime=0)
    held(o, imp(c, layout_raw(c, [raw])))


# ---- rm on a tampered store ----

def stored(c, o):
    h = hex_of(oci_import(c, [BASE]))
    return h


def test_rm_of_a_name_that_is_a_symlink(caller):
    """names/evil a symlink to another name's file and to a file outside:
    neither is followed, nothing outside or in the store goes."""
    c, o = caller, Outside(caller)
    h = stored(c, o)
    names = os.path.join(store(c), "names")
    with open(os.path.join(o.dir, "namefile"), "w") as f:
        f.write("sha256:%s\n" % h)
    o.before = snapshot(o.dir)
    os.symlink(os.path.join(o.dir, "namefile"), os.path.join(names, "evil"))
    os.symlink("atk", os.path.join(names, "evil2"))
    for ref in ("evil", "evil2"):
        refused(vigil(c, "image", "rm", ref), "no image")
    assert os.path.isdir(os.path.join(store(c), "sha256", h))
    o.intact(stored_same=False)
    os.unlink(os.path.join(names, "evil"))
    os.unlink(os.path.join(names, "evil2"))
    assert vigil(c, "image", "rm", "atk").returncode == 0


@pytest.mark.parametrize("what", ["rootfs", "rootfs/etc", "image", "manifest"])
def test_rm_never_follows_a_symlink_out(caller, what):
    """sha256/HEX/rootfs (or a directory in it, or sha256/HEX itself, or
    its manifest) replaced by a symlink to the sentinel: rm removes the
    link, never what it points at."""
    c, o = caller, Outside(caller)
    h = stored(c, o)
    img = os.path.join(store(c), "sha256", h)
    target = {"rootfs": os.path.join(img, "rootfs"),
              "rootfs/etc": os.path.join(img, "rootfs", "etc"),
              "image": img, "manifest": os.path.join(img, "manifest.json")}[what]
    aside = os.path.join(c.dir("aside"), "x")
    os.rename(target, aside)  # keep the real one out of the way
    os.symlink(o.dir, target)
    p = vigil(c, "image", "rm", "atk")
    assert p.returncode == 0, p.stderr
    assert not os.path.lexists(img)
    no_name(c)
    o.intact()


def test_verify_never_follows_a_symlinked_rootfs(caller):
    c, o = caller, Outside(caller)
    h = stored(c, o)
    root = rootfs(c, h)
    os.rename(root, os.path.join(c.dir("aside"), "x"))
    os.symlink(o.dir, root)
    p = vigil(c, "image", "verify", "atk")
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    o.intact(stored_same=False)
    assert vigil(c, "image", "rm", "atk").returncode == 0
    o.intact()


# ---- names ----

@pytest.mark.parametrize("name", ["..", ".", "../x", "a/b", "/etc/passwd", ".hidden",
                                  "-rf", "a" * 129, "tab\tname", "sp ace", "new\nline",
                                  "caf\u00e9", "\x7f", "a*", "$(id)", ""])
def test_odd_names_refused(caller, name):
    c, o = caller, Outside(caller)
    src = layout(c, [BASE])
    names = os.path.join(store(c), "names")
    before = sorted(os.listdir(names)) if os.path.isdir(names) else []
    p = subprocess.run(c.argv(["image", "import", src, "--name=" + name]), env=c.env(),
                       cwd=c.home, capture_output=True, text=True, timeout=TIMEOUT)
    refused(p)
    o.intact()
    assert (sorted(os.listdir(names)) if os.path.isdir(names) else []) == before


def test_longest_name_and_every_allowed_character(caller):
    c, o = caller, Outside(caller)
    src = layout(c, [BASE])
    for name in ("a" * 128, "Az09._:@+-"):
        hex_of(imp(c, src, name=name))
        assert os.path.isfile(os.path.join(store(c), "names", name))
        assert vigil(c, "image", "rm", name).returncode == 0
    o.intact()
