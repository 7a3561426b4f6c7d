"""Candidates graded on the shipped images (issue 24, "Languages"): the
python, node and c specs built with `vigil image build` from Debian's
mirror, then a Node candidate graded end to end through `vigil batch` like
a Python one, a Python candidate that needs a package only the image has
(numpy: it passes there and fails on the host's trees), and a C candidate
compiled and run inside the c image.  Judged from the result records and
the logs.  make soak only: each build downloads and unpacks Debian
packages (a minute or two each)."""
import json
import os
import shutil
import subprocess

import pytest

from helpers import SHIPPED_BUILD_TIMEOUT, decode_log, root_caller, shipped_image  # noqa: F401

pytestmark = [pytest.mark.soak,
              pytest.mark.skipif(not shutil.which("mmdebstrap"),
                                 reason="needs mmdebstrap (sh scripts/install-deps.sh test)")]


def built(c, spec):
    """The session's build of the shipped spec (tests/helpers.py: the
    soak tests of tests/test_image_build.py share it)."""
    return shipped_image(c, spec)


def write(c, name, text):
    path = os.path.join(c.dir("cand"), name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return path


NODE = r"""
const fs = require('fs');
console.log('node ' + process.version);
console.log(fs.readFileSync('/etc/os-release', 'utf8').split('\n').find(l => l.startsWith('ID=')));
try { fs.readFileSync('/root/.ssh/id_rsa'); } catch (e) { console.log('key ' + e.code); }
"""


def test_node_candidate_graded_end_to_end(root_caller):
    digest = built(root_caller, "node")
    d = root_caller.dir("batch")
    tasks = os.path.join(d, "tasks.jsonl")
    with open(tasks, "w") as f:
        f.write(json.dumps({"id": "js", "code": NODE, "language": "node",
                            "policy": "image-node"}) + "\n")
    out = os.path.join(d, "out")
    p = root_caller.vigil_raw("batch", tasks, "--out", out, cwd=d, timeout=SHIPPED_BUILD_TIMEOUT)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(out, "results.jsonl")) as f:
        r = json.loads(f.readline())
    assert r["status"] == "ok", r
    assert r["image"] == {"name": digest, "digest": digest}, r["image"]
    tail = r["stdout"]["tail"]
    assert "ID=debian" in tail and "key ENOENT" in tail, tail
    # the image's node (its manifest's version), whatever the host has
    manifest = os.path.join(root_caller.home, ".local/state/vigil/images/sha256", digest[7:],
                            "manifest.json")
    with open(manifest) as f:
        packages = json.load(f)["build"]["packages"]
    ver = [x for x in packages if x["name"] == "nodejs"]
    assert ver, packages[:5]
    assert "node v" + ver[0]["version"].split("+")[0].split("~")[0] in tail, (tail, ver)
    # the intent summary saw the secret it tried, as for a Python candidate
    assert r["summary"]["secrets"]["count"] == 1, r["summary"]["secrets"]
    head = decode_log(os.path.join(out, "tasks", "js", "run.msgpack"))[0]
    assert head["image"]["digest"] == digest


def test_python_package_only_the_image_has(root_caller):
    digest = built(root_caller, "python")
    host = subprocess.run(["/usr/bin/python3", "-c", "import numpy"], capture_output=True)
    cand = write(root_caller, "np.py", "import numpy\nprint(int(numpy.arange(5).sum()))\n")
    r = root_caller.run("python3", cand, opts=["-p", "image-python"])
    assert r.rc == 0 and r.stdout == "10\n", r
    assert r.result["image"]["digest"] == digest
    r = root_caller.run("python3", cand, opts=["-p", "python"])
    if host.returncode == 0:
        pytest.skip("this host has numpy itself: the host half proves nothing")
    assert r.rc != 0 and "No module named 'numpy'" in r.stderr, r


def test_c_candidate_compiled_and_run_on_the_c_image(root_caller):
    built(root_caller, "c")
    src = write(root_caller, "hello.c", '#include <stdio.h>\n'
                'int main(void) { printf("%d\\n", __GNUC__); return 0; }\n')
    r = root_caller.run("sh", "-c", f"gcc -O2 -o hello {src} && ./hello && gcc -dumpversion",
                        opts=["-p", "image-c", "--artifact", src])
    assert r.rc == 0, r
    major = r.stdout.split()[0]
    assert r.stdout.split()[1].startswith(major), r  # the image's gcc compiled it
    assert r.result["image"]["name"] == "c"
