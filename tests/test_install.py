"""Installed as a system tool: `make install` into a prefix and a staged
DESTDIR, the installed binary finding shipped policies by name, the man
pages rendering, `make uninstall` leaving nothing, and the Debian package
built from the tree (lintian clean), unpacked into a clean directory tree
and running the demo candidate."""
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT, decode_log

# builds vigil three times over (make install twice, the Debian package): a
# long whole-system run that tests no mechanism of its own (conftest.py)
pytestmark = pytest.mark.soak

MAN_PAGES = ["man1/vigil.1", "man1/vigil-run.1", "man1/vigil-check.1", "man1/vigil-log.1",
             "man1/vigil-view.1", "man1/vigil-batch.1", "man1/vigil-learn.1", "man1/vigil-image.1",
             "man1/vigil-recheck.1",
             "man1/vigil-report.1", "man1/vigil-verify.1", "man1/vigil-serve.1",
             "man1/vigil-submit.1",
             "man5/vigil-policy.5",
             "man5/vigil-log.5",
             "man7/vigil-security.7", "man7/vigil-running.7"]
DOCS = ["README.md"] + sorted("docs/" + os.path.basename(p)
                              for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
SHIPPED = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "policies", "*.policy")))
SPECS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "specs", "*.spec")))
# Top-level entries of the checkout that are build output, not source.
# the Python package as installed: its modules and the PEP 561 marker
PY_FILES = sorted(os.listdir(os.path.join(ROOT, "python", "vigil")))
PY_FILES = [f for f in PY_FILES if f.endswith(".py") or f == "py.typed"]
NOT_SOURCE = {".git", "build", "build-san", "build-fuzz", "vigil"}


def make(*args, cwd=ROOT):
    r = subprocess.run(["make", "-s", "-j2", *args], cwd=cwd, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def files_under(d):
    return sorted(os.path.relpath(os.path.join(p, f), d) for p, _, fs in os.walk(d) for f in fs)


def test_make_install_then_uninstall(tmp_path):
    prefix, build = str(tmp_path / "prefix"), str(tmp_path / "build")
    before = os.stat(os.path.join(ROOT, "vigil")).st_mtime_ns if os.path.exists(
        os.path.join(ROOT, "vigil")) else None
    make("install", "BUILD=" + build, "PREFIX=" + prefix)
    got = files_under(prefix)
    pyver = "%d.%d" % sys.version_info[:2]
    want = sorted(["bin/vigil"] + ["share/man/" + m for m in MAN_PAGES] +
                  ["share/vigil/policies/" + p for p in SHIPPED] +
                  ["share/vigil/specs/" + p for p in SPECS] +
                  ["lib/python%s/dist-packages/vigil/%s" % (pyver, f) for f in PY_FILES] +
                  ["share/doc/vigil/" + os.path.basename(d) for d in DOCS] +
                  ["share/vigil/installed-dirs", "share/bash-completion/completions/vigil"])
    assert got == want
    # the checkout's own ./vigil was not replaced by the prefix build
    after = os.stat(os.path.join(ROOT, "vigil")).st_mtime_ns if before is not None else None
    assert after == before

    vigil = os.path.join(prefix, "bin", "vigil")
    v = subprocess.run([vigil, "--version"], capture_output=True, text=True)
    assert v.returncode == 0 and v.stdout.startswith("vigil "), v
    lst = subprocess.run([vigil, "check", "--list"], capture_output=True, text=True)
    names = dict(line.split(None, 1) for line in lst.stdout.splitlines())
    assert names["python"].strip() == os.path.join(prefix, "share/vigil/policies/python.policy")
    # shipped image specs are found by name there too (a name that is none lists them)
    spec = subprocess.run([vigil, "image", "build", "no-such-spec", "--name", "x"],
                          capture_output=True, text=True)
    assert spec.returncode == 1 and "(%s)" % ", ".join(s[:-5] for s in SPECS) in spec.stderr, spec

    work = tmp_path / "run"
    work.mkdir()
    log = str(work / "run.msgpack")
    r = subprocess.run([vigil, "run", "-q", "-p", "python", "-o", log, "--",
                        "python3", "-c", "print('installed')"],
                       capture_output=True, text=True, cwd=str(work), timeout=60)
    assert r.returncode == 0 and r.stdout == "installed\n", r.stderr
    header = decode_log(log)[0]
    assert header["policy"]["path"].endswith("share/vigil/policies/python.policy"), header

    for page in MAN_PAGES:
        m = subprocess.run(["man", "-l", os.path.join(prefix, "share/man", page)],
                           capture_output=True, text=True, env={**os.environ, "MANWIDTH": "80"})
        assert m.returncode == 0 and "NAME" in m.stdout, (page, m.stderr)
        # tbl measures text blocks against a printed page; a terminal page
        # has no bottom, so that one warning says nothing about the page
        warnings = [w for w in m.stderr.splitlines()
                    if "warning" in w and "will not fit on one page" not in w]
        assert not warnings, (page, m.stderr)
        if page.startswith("man1/"):  # every command's page shows it in use
            assert "\nEXAMPLES\n" in m.stdout and "       vigil " in m.stdout.split(
                "\nEXAMPLES\n")[1], (page, m.stdout)
        # what a page points to is installed: a page, not a checkout's docs/
        assert "docs/" not in m.stdout, (page, m.stdout)

    # the installed Python package drives the installed binary
    py = subprocess.run(["/usr/bin/python3", "-c", "import vigil, sys; "
                         "r = vigil.run(['python3', '-c', 'print(6 * 7)'], policy='python'); "
                         "print(r.status, r.stdout.tail.strip()); print(vigil.__file__)"],
                        capture_output=True, text=True, cwd=str(work),
                        env={**os.environ, "VIGIL": vigil,
                             "PYTHONPATH": os.path.join(prefix, "lib/python%s/dist-packages"
                                                        % pyver)})
    assert py.returncode == 0 and py.stdout.startswith("ok 42\n" + prefix), py.stdout + py.stderr

    # a directory that was there before (a shared man section) stays
    make("uninstall", "BUILD=" + build, "PREFIX=" + prefix)
    assert not os.path.exists(prefix), files_under(prefix)  # every directory it made is gone
    shared = tmp_path / "shared"
    (shared / "share" / "man" / "man1").mkdir(parents=True)
    make("install", "BUILD=" + build, "PREFIX=" + str(shared))
    make("uninstall", "BUILD=" + build, "PREFIX=" + str(shared))
    left = sorted(os.path.relpath(os.path.join(p, d), shared) for p, ds, _ in os.walk(shared)
                  for d in ds)
    assert left == ["share", "share/man", "share/man/man1"], left


def test_make_install_destdir(tmp_path):
    stage, build = str(tmp_path / "stage"), str(tmp_path / "build")
    make("install", "BUILD=" + build, "PREFIX=/usr", "DESTDIR=" + stage)
    got = files_under(stage)
    assert "usr/bin/vigil" in got and "usr/share/man/man5/vigil-policy.5" in got
    assert "usr/share/vigil/policies/default.policy" in got
    assert "usr/share/vigil/specs/python.spec" in got
    for f in PY_FILES:
        assert "usr/lib/python3/dist-packages/vigil/" + f in got, f
    strings = subprocess.run(["strings", os.path.join(stage, "usr/bin/vigil")],
                             capture_output=True, text=True).stdout
    assert "/usr/share/vigil/policies" in strings.split("\n")   # where it will look, installed
    assert "/usr/share/vigil/specs" in strings.split("\n")


def copy_source(dst):
    def ignore(d, names):
        return [n for n in names if os.path.abspath(d) == ROOT and n in NOT_SOURCE]
    shutil.copytree(ROOT, dst, ignore=ignore, symlinks=True)


@pytest.mark.skipif(not shutil.which("dpkg-buildpackage") or not shutil.which("lintian"),
                    reason="dpkg-dev, debhelper and lintian come with scripts/install-deps.sh test")
def test_debian_package(tmp_path):
    src = tmp_path / "vigil-src"
    copy_source(str(src))
    b = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=str(src),
                       capture_output=True, text=True, timeout=900)
    assert b.returncode == 0, b.stdout[-3000:] + b.stderr[-3000:]
    debs = glob.glob(str(tmp_path / "vigil_*_amd64.deb"))
    assert len(debs) == 1, os.listdir(tmp_path)
    lint = subprocess.run(["lintian", "--fail-on", "error,warning", debs[0]],
                          capture_output=True, text=True, timeout=600)
    assert lint.returncode == 0, lint.stdout + lint.stderr

    # Installed into a clean directory tree, the packaged binary runs the
    # demo candidate with its packaged policies.
    tree = tmp_path / "tree"
    subprocess.run(["dpkg-deb", "-x", debs[0], str(tree)], check=True)
    vigil = str(tree / "usr/bin/vigil")
    listing = subprocess.run(["dpkg-deb", "-c", debs[0]], capture_output=True, text=True).stdout
    for page in MAN_PAGES:
        assert "./usr/share/man/%s.gz" % page in listing, page
    for f in PY_FILES:
        assert "./usr/lib/python3/dist-packages/vigil/" + f in listing, f
    work = tmp_path / "demo"
    work.mkdir()
    log, result = str(work / "run.msgpack"), str(work / "result.json")
    env = {**os.environ, "VIGIL_POLICY_DIR": str(tree / "usr/share/vigil/policies")}
    r = subprocess.run([vigil, "run", "-q", "-p", "python", "-o", log, "--result", result, "--",
                        "python3", os.path.join(ROOT, "examples", "sloppy_cleanup.py")],
                       capture_output=True, text=True, cwd=str(work), env=env, timeout=120)
    res = json.load(open(result))
    assert res["policy"]["path"] == str(tree / "usr/share/vigil/policies/python.policy"), res
    assert res["denied"] > 0, res      # the demo's bad attempts were refused
    refused = [x for x in decode_log(log) if x["type"] == "syscall" and x["decision"] == "deny"]
    assert any("id_rsa" in (x["args"].get("resolved") or "") for x in refused), refused
