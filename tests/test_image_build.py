"""`vigil image build SPEC --name NAME` (docs/IMAGES.md, "Build").

make test (no network, ~6 s): the spec's and the command line's errors;
real mmdebstrap builds from a file:// mirror of one small .deb made here
with dpkg-deb (variant extract: ~2 s each), which give the same digest
twice, another when an added file changes, and a tree verify accepts until
a stored file is tampered with; the build's fixed files, the setuid bit
dropped, no device node; an unknown package's failure in one line; and,
with a stand-in mmdebstrap on PATH (a tar of a few entries), the package
manifest from dpkg-query, an add through a symlink refused, and a build
killed outright leaving nothing running, nothing mounted and only a tmp/
entry, which the next build sweeps.

make soak: the shipped specs built from Debian's mirror (a minute or two
each): python twice to the same digest, with the same package versions,
verified, then tampered with; c and node once."""
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tarfile
import time

import pytest

from helpers import NOBODY, caller, nobody_caller, root_caller, shipped_image  # noqa: F401
from image_digest import digest
from test_image import hex_of, rootfs, store

pytestmark = pytest.mark.skipif(not shutil.which("mmdebstrap"),
                                reason="mmdebstrap comes with scripts/install-deps.sh test")

SUITE = "bookworm"
TINY = "vigil-tiny"
BUILD_TIMEOUT = 60      # seconds: an offline build takes ~2
NETWORK_TIMEOUT = 900   # seconds: a shipped spec from Debian's mirror
GONE_WITHIN = 10        # seconds for a killed build's processes to be gone


def tmp_entries(c):
    d = os.path.join(store(c), "tmp")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def manifest(c, h):
    with open(os.path.join(store(c), "sha256", h, "manifest.json")) as f:
        return json.load(f)


def build(c, spec, name, timeout=BUILD_TIMEOUT, env=None):
    return c.vigil_raw("image", "build", spec, "--name", name, timeout=timeout, env=env)


def one_line(p):
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


def tiny_deb(d):
    """A package of a file, a setuid file and a symlinked directory."""
    pkg = os.path.join(d, "pkg")
    os.makedirs(os.path.join(pkg, "DEBIAN"))
    os.makedirs(os.path.join(pkg, "opt", "tiny"))
    with open(os.path.join(pkg, "DEBIAN", "control"), "w") as f:
        f.write(f"Package: {TINY}\nVersion: 1.0\nArchitecture: all\n"
                "Maintainer: vigil tests <tests@vigil.invalid>\nDescription: a test package\n")
    with open(os.path.join(pkg, "opt", "tiny", "hello"), "w") as f:
        f.write("hello\n")
    su = os.path.join(pkg, "opt", "tiny", "su")
    shutil.copy("/bin/true", su)
    os.chmod(su, 0o4755)
    os.symlink("tiny", os.path.join(pkg, "opt", "link"))
    deb = os.path.join(d, "pool", f"{TINY}_1.0_all.deb")
    os.makedirs(os.path.dirname(deb))
    subprocess.run(["dpkg-deb", "-Zgzip", "--root-owner-group", "-b", pkg, deb], check=True,
                   capture_output=True)
    shutil.rmtree(pkg)
    return deb


def mirror(d):
    """A file:// mirror of one suite holding the tiny package (unsigned)."""
    deb = tiny_deb(d)
    data = open(deb, "rb").read()
    rel = os.path.relpath(deb, d)
    packages = (f"Package: {TINY}\nVersion: 1.0\nArchitecture: all\n"
                f"Maintainer: vigil tests <tests@vigil.invalid>\nFilename: {rel}\n"
                f"Size: {len(data)}\nSHA256: {hashlib.sha256(data).hexdigest()}\n"
                "Description: a test package\n\n").encode()
    for arch in ("amd64", "all"):
        p = os.path.join(d, "dists", SUITE, "main", f"binary-{arch}")
        os.makedirs(p)
        with open(os.path.join(p, "Packages"), "wb") as f:
            f.write(packages)
    sums = "".join(f" {hashlib.sha256(packages).hexdigest()} {len(packages)} "
                   f"main/binary-{arch}/Packages\n" for arch in ("amd64", "all"))
    with open(os.path.join(d, "dists", SUITE, "Release"), "w") as f:
        f.write(f"Suite: {SUITE}\nCodename: {SUITE}\nArchitectures: amd64\n"
                f"Components: main\nSHA256:\n{sums}")
    return d


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    d = tmp_path_factory.mktemp("mirror")
    os.chmod(d, 0o755)
    return mirror(str(d))


def spec_dir(c, repo, packages=TINY, extra="", script=b"print('x')\n"):
    """A spec with the tiny mirror and an added file beside it."""
    d = c.dir("spec")
    os.makedirs(os.path.join(d, "files"))
    with open(os.path.join(d, "files", "x.py"), "wb") as f:
        f.write(script)
    with open(os.path.join(d, "tiny.spec"), "w") as f:
        f.write(f"# a test spec\nsuite {SUITE}\nmirror file://{repo} trusted\n"
                f"variant extract\npackages {packages}\nadd files/x.py /opt/x.py\n{extra}")
    return os.path.join(d, "tiny.spec")


# ---- errors: the spec, the command line, who builds ----

@pytest.mark.parametrize("text,want", [
    ("suite bookworm\nsuit x\n",
     "tiny.spec:2: unknown keyword 'suit' (suite, mirror, variant, packages, add)"),
    ("packages make\n", "tiny.spec:1: no 'suite' line (e.g. suite bookworm)"),
    ("suite bookworm\npackages --allow-unauthenticated\n",
     "tiny.spec:2: '--allow-unauthenticated': not a Debian package name"),
    ("suite bookworm\nadd ../../etc/shadow /x\n",
     "tiny.spec:2: add: source ../../etc/shadow must not hold"),
])
def test_spec_errors(root_caller, text, want):
    c = root_caller
    d = c.dir("bad")
    with open(os.path.join(d, "tiny.spec"), "w") as f:
        f.write(text)
    before = tmp_entries(c)
    p = c.vigil_raw("image", "build", "tiny.spec", "--name", "bad", cwd=d)
    assert p.returncode == 1 and one_line(p).startswith("vigil image build: " + want), p.stderr
    assert p.stdout == "" and tmp_entries(c) == before
    assert not os.path.exists(os.path.join(store(c), "names", "bad"))


def test_cli_errors(root_caller, repo):
    c = root_caller
    spec = spec_dir(c, repo)
    p = c.vigil_raw("image", "build", spec)
    assert p.returncode == 2 and "build takes SPEC and --name NAME" in p.stderr
    p = build(c, spec, "a/b")
    assert p.returncode == 1 and "image name 'a/b'" in one_line(p)
    p = build(c, "no-such-spec", "x")
    assert p.returncode == 1 and re.search(
        r"spec 'no-such-spec': no such file, and no shipped spec of that name \(.*python",
        one_line(p)), p.stderr
    empty = c.dir("nopath")
    p = build(c, spec, "x", env={"PATH": empty})
    assert p.returncode == 1 and one_line(p) == (
        "vigil image build: mmdebstrap not found on PATH: it builds the tree "
        "(apt-get install mmdebstrap, or sh scripts/install-deps.sh test)")
    assert tmp_entries(c) == []


def test_a_user_without_unshare_mode_is_told_it_needs_root(nobody_caller, repo):
    c = nobody_caller
    p = build(c, spec_dir(c, repo), "tiny")
    assert p.returncode == 1, p.stderr
    assert one_line(p).startswith(f"vigil image build: build needs root here: as uid {NOBODY} "
                                  "it needs mmdebstrap's unshare mode, and that needs "), p.stderr
    assert tmp_entries(c) == []


def test_an_unknown_package_is_mmdebstraps_one_line(root_caller, repo):
    c = root_caller
    p = build(c, spec_dir(c, repo, packages=f"{TINY} no-such-package"), "unknown")
    assert p.returncode == 1, p.stderr
    assert re.fullmatch(r"vigil image build: mmdebstrap failed \(exit \d+\): "
                        r"E: Unable to locate package no-such-package", one_line(p)), p.stderr
    assert tmp_entries(c) == [] and not os.path.exists(os.path.join(store(c), "names", "unknown"))


def test_an_add_through_a_symlink_is_refused(root_caller, repo):
    c = root_caller
    spec = spec_dir(c, repo, extra="add files/x.py /opt/link/x.py\n")
    p = build(c, spec, "link", env=fake_path(c, "tar"))
    assert p.returncode == 1, p.stderr
    assert one_line(p) == (f"vigil image build: {spec}:7: add files/x.py: "
                           "its parent opt/link is a symlink"), p.stderr
    assert tmp_entries(c) == []


# ---- offline builds ----

def test_offline_builds_same_digest_changed_file_verify(root_caller, repo):
    c = root_caller
    spec = spec_dir(c, repo)
    p = build(c, spec, "tiny")
    h = hex_of(p)
    assert "(mmdebstrap, root mode), 0 packages" in p.stderr, p.stderr
    root = rootfs(c, h)
    assert digest(root) == h
    # what every build puts in, the package's files as an import keeps them
    assert open(os.path.join(root, "etc/resolv.conf")).read() == ""
    assert open(os.path.join(root, "etc/hostname")).read() == "vigil\n"
    assert "127.0.0.1\tlocalhost\n" in open(os.path.join(root, "etc/hosts")).read()
    assert open(os.path.join(root, "opt/tiny/hello")).read() == "hello\n"
    assert stat.S_IMODE(os.lstat(os.path.join(root, "opt/tiny/su")).st_mode) == 0o755
    assert stat.S_IMODE(os.lstat(os.path.join(root, "opt/x.py")).st_mode) == 0o644
    assert os.listdir(os.path.join(root, "var/lib/apt/lists")) == []
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            m = os.lstat(os.path.join(dirpath, n)).st_mode
            assert stat.S_ISDIR(m) or stat.S_ISREG(m) or stat.S_ISLNK(m), (dirpath, n)
    man = manifest(c, h)
    text = open(spec, "rb").read()
    assert man["digest"] == "sha256:" + h and man["names"] == ["tiny"]
    assert man["source"] == "build:" + spec and man["setid_bits_stripped"] == 1
    assert man["skipped_special_files"] > 0  # mmdebstrap's /dev nodes
    b = man["build"]
    assert b["spec"]["sha256"] == "sha256:" + hashlib.sha256(text).hexdigest()
    assert b["spec"]["text"] == text.decode() and b["mode"] == "root"
    assert b["added"] == [{"path": "/opt/x.py", "source": "files/x.py", "sha256": "sha256:" +
                           hashlib.sha256(b"print('x')\n").hexdigest()}]
    assert b["packages"] == [] and b["tool"].startswith("mmdebstrap ")
    # the same spec again: the same digest, the stored copy kept
    p = build(c, spec, "tiny-again")
    assert hex_of(p) == h and "already stored" in p.stderr
    # a changed added file: another digest, and only the file differs
    with open(os.path.join(os.path.dirname(spec), "files", "x.py"), "w") as f:
        f.write("print('y')\n")
    os.chmod(os.path.join(os.path.dirname(spec), "files", "x.py"), 0o700)
    h2 = hex_of(build(c, spec, "tiny-changed"))
    assert h2 != h and digest(rootfs(c, h2)) == h2
    assert stat.S_IMODE(os.lstat(os.path.join(rootfs(c, h2), "opt/x.py")).st_mode) == 0o755
    # verify: ok, then not once a stored file is changed
    assert c.vigil_raw("image", "verify", "tiny").returncode == 0
    with open(os.path.join(root, "opt/tiny/hello"), "a") as f:
        f.write("!")
    p = c.vigil_raw("image", "verify", "tiny")
    assert p.returncode == 1 and "the store was changed since the import" in p.stderr
    for name in ("tiny", "tiny-changed"):
        assert c.vigil_raw("image", "rm", name).returncode == 0
    assert tmp_entries(c) == []


# ---- a stand-in mmdebstrap: the package manifest, a killed build ----

FAKE = """#!/usr/bin/python3
# a stand-in for mmdebstrap (tests/test_image_build.py): {mode}
import io, os, sys, tarfile, time
if sys.argv[1:] == ["--version"]:
    print("mmdebstrap 0.0-test")
    sys.exit(0)
if "{mode}" == "hang":
    open(os.path.join(os.environ["TMPDIR"], "started"), "w").close()
    os.spawnvp(os.P_NOWAIT, "sleep", ["sleep", "{token}"])
    time.sleep(3600)
status = b'''{status}'''
out = tarfile.open(fileobj=sys.stdout.buffer, mode="w|")
for name, data in (("etc/", None), ("var/lib/dpkg/status", status), ("opt/tiny/", None),
                   ("opt/link", "tiny")):
    ti = tarfile.TarInfo("./" + name.rstrip("/"))
    if data is None:
        ti.type = tarfile.DIRTYPE
        out.addfile(ti)
    elif isinstance(data, str):
        ti.type, ti.linkname = tarfile.SYMTYPE, data
        out.addfile(ti)
    else:
        ti.size = len(data)
        out.addfile(ti, io.BytesIO(data))
out.close()
"""
STATUS = ("Package: zed\nStatus: install ok installed\nArchitecture: all\nVersion: 2.0\n\n"
          "Package: alpha\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1:1.2-3\n\n"
          "Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 0.1\n\n")


def fake_path(c, mode, token=""):
    d = c.dir("fakebin")
    p = os.path.join(d, "mmdebstrap")
    with open(p, "w") as f:
        f.write(FAKE.format(mode=mode, token=token, status=STATUS))
    os.chmod(p, 0o755)
    return {"PATH": d + ":" + os.environ["PATH"]}


def test_the_package_manifest_is_dpkg_querys(root_caller, repo):
    c = root_caller
    h = hex_of(build(c, spec_dir(c, repo), "fake-pkgs", env=fake_path(c, "tar")))
    b = manifest(c, h)["build"]
    assert b["packages"] == [{"name": "alpha", "architecture": "amd64", "version": "1:1.2-3"},
                             {"name": "zed", "architecture": "all", "version": "2.0"}]
    assert b["tool"] == "mmdebstrap 0.0-test"
    assert c.vigil_raw("image", "rm", "fake-pkgs").returncode == 0


def running(token):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def test_a_killed_build_leaves_nothing_running_and_is_swept(root_caller, repo):
    c = root_caller
    token = "86399.%06d" % (os.getpid() % 1000000)
    spec = spec_dir(c, repo)
    p = c.popen(["image", "build", spec, "--name", "killed"], env=fake_path(c, "hang", token),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + BUILD_TIMEOUT
    started = []
    while not started and time.monotonic() < deadline and p.poll() is None:
        started = [e for e in tmp_entries(c) if os.path.exists(
            os.path.join(store(c), "tmp", e, "work", "started"))]
        time.sleep(0.05)
    assert started and running(token), "the stand-in never started"
    p.send_signal(signal.SIGKILL)
    p.wait()
    deadline = time.monotonic() + GONE_WITHIN
    while running(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(token)  # the tool's own child, too: it was contained
    with open("/proc/mounts") as f:
        assert store(c) not in f.read()
    assert tmp_entries(c) == started  # the one entry, left for the sweep
    h = hex_of(build(c, spec, "after-kill", env=fake_path(c, "tar")))
    assert tmp_entries(c) == []
    assert c.vigil_raw("image", "rm", "after-kill").returncode == 0 and h


# ---- the shipped specs, from Debian's mirror ----

def packages_of(c, h):
    return {(p["name"], p["architecture"]): p["version"]
            for p in manifest(c, h)["build"]["packages"]}


@pytest.mark.soak
def test_shipped_python_twice_the_same_digest(root_caller):
    """(The first build is the session's, which tests/test_image_langs.py
    grades candidates on too: the tree is left as built.)"""
    c = root_caller
    h = shipped_image(c, "python")[len("sha256:"):]
    pk = packages_of(c, h)
    assert ("python3", "amd64") in pk and ("python3-pytest", "all") in pk, pk
    assert digest(rootfs(c, h)) == h
    p2 = build(c, "python", "py-again", timeout=NETWORK_TIMEOUT)
    assert hex_of(p2) == h, p2.stderr
    assert "already stored" in p2.stderr and packages_of(c, h) == pk
    assert c.vigil_raw("image", "verify", "py-again").returncode == 0
    usr_bin = os.path.join(rootfs(c, h), "usr/bin")
    os.chmod(usr_bin, 0o700)
    try:
        v = c.vigil_raw("image", "verify", "python")
        assert v.returncode == 1 and "the store was changed" in v.stderr
    finally:
        os.chmod(usr_bin, 0o755)
    assert c.vigil_raw("image", "verify", "python").returncode == 0
    assert tmp_entries(c) == []


@pytest.mark.soak
@pytest.mark.parametrize("spec,package", [("c", "gcc"), ("node", "nodejs")])
def test_shipped_specs_build(root_caller, spec, package):
    c = root_caller
    h = shipped_image(c, spec)[len("sha256:"):]
    assert any(name == package for name, _ in packages_of(c, h))
    assert c.vigil_raw("image", "verify", spec).returncode == 0
    assert tmp_entries(c) == []
