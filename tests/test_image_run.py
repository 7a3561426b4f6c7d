"""`vigil run --image` (docs/IMAGES.md, "Runs"): a candidate graded on a
stored image's tree instead of the host's.  The image is made here from the
host's own dash, python3 and their libraries (tests/image_tree.py) plus
files only it has, imported with `vigil image import`, and judged from
outside: what the candidate prints, host files, the result record and the
log decoded by Python's msgpack.  As root and as nobody."""
import json
import os
import shutil
import subprocess
import uuid

import pytest

from helpers import NOBODY, caller, decode_log, nobody_caller, root_caller  # noqa: F401
from image_tree import runnable_layer
from oci_layout import oci_of_blobs

SECRET = b"image-secret-4f1c\n"
# Files only the image has: a module, a file a policy names through a
# link, a secret the sandbox must hide as it hides the host's.
EXTRA = {
    "usr/lib/python3/dist-packages/onlyhere.py": b"WHO = 'image'\n",
    "usr/lib/vtool/real": b"vtool-data\n",
    "etc/shadow": SECRET,
    "etc/ssl/private/key.pem": SECRET,
    "opt/imagefile": b"from the image\n",
}
# A link the host lacks: a policy's rule on it must resolve in the image.
EXTRA_LINKS = {"usr/bin/vtool": "../lib/vtool/real"}
_images = {}


def import_layers(c, name, layers):
    """An OCI layout of these layers' bytes, imported into c's store as
    name: the digest."""
    d = os.path.join(c.dir("layout"), "oci")
    oci_of_blobs(d, layers)
    subprocess.run(["chmod", "-R", "a+rX", d], check=True)
    p = c.vigil_raw("image", "import", d, "--name", name)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def image_of(c):
    """The test image in c's store (imported once per caller): its digest."""
    if c.who not in _images:
        _images[c.who] = import_layers(c, "testimg", [runnable_layer(EXTRA, EXTRA_LINKS)])
    return _images[c.who]


@pytest.fixture
def img(caller):
    return image_of(caller)


def write(c, name, text):
    d = c.dir("cand")
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return path


PROBE = """
import os
print(open('/etc/os-release').read().strip())
import onlyhere
print('module', onlyhere.WHO)
print('gcc', os.path.exists('/usr/bin/gcc'), 'vigil-tests', os.path.exists(%r))
print('shadow', repr(open('/etc/shadow', 'rb').read()))
"""


def test_candidate_runs_on_the_image(caller, img):
    cand = write(caller, "probe.py", PROBE % os.path.dirname(__file__))
    r = caller.run("python3", cand, opts=["--image", "testimg"])
    assert r.rc == 0, r
    assert "ID=vigil-test-image" in r.stdout, r
    assert "module image" in r.stdout, r
    # the host's trees are not there at all: its gcc, these tests
    assert "gcc False vigil-tests False" in r.stdout, r
    assert "shadow b''" in r.stdout, r  # the image's secret is masked as the host's would be
    res = r.result
    assert res["image"] == {"name": "testimg", "digest": img}, res["image"]
    head = r.recs[0]
    assert head["image"] == {"name": "testimg", "digest": img}, head.get("image")
    # vigil log and the result agree with the independent reader
    p = caller.vigil_raw("log", r.log_path)
    assert "image testimg (" + img[:19] + ")" in p.stdout.splitlines()[0], p.stdout[:400]


def test_the_same_candidate_fails_on_the_host_tree(caller, img):
    cand = write(caller, "needs.py", "import onlyhere\nprint(onlyhere.WHO)\n")
    r = caller.run("python3", cand)
    assert r.rc != 0 and "ModuleNotFoundError" in r.stderr, r
    assert r.result["image"] is None
    assert "image" not in r.recs[0]
    r = caller.run("python3", cand, opts=["--image", img])  # by digest too
    assert r.rc == 0 and r.stdout == "image\n", r
    assert r.result["image"] == {"name": img, "digest": img}


WRITER = """
import errno, os, sys
for p in sys.argv[1:]:
    try:
        with open(p, 'w') as f:
            f.write('x')
        print(p, 'written')
    except OSError as e:
        print(p, errno.errorcode[e.errno])
"""


def test_image_tree_is_read_only_in_the_kernel(caller, img):
    """A dry run refuses nothing at layer 2: what fails is the kernel's."""
    cand = write(caller, "w.py", WRITER)
    targets = ["/usr/lib/vtool/real", "/etc/passwd", "/opt/new", "/usr/new", "/tmp/ok"]
    r = caller.run("python3", cand, *targets, opts=["--image", "testimg", "--dry-run"])
    assert r.rc == 0, r
    for t in targets[:-1]:
        assert t + " EROFS" in r.stdout, r
    assert "/tmp/ok written" in r.stdout, r
    p = caller.vigil_raw("image", "verify", "testimg")
    assert p.returncode == 0, p.stderr  # the store's tree is as imported


@pytest.fixture
def host_dir_in_opt(caller):
    """A host directory under /opt, which the image has (with a file of
    its own) but without this path: the workdir needs room made."""
    base = "/opt/vigil-test-" + uuid.uuid4().hex[:8]
    os.makedirs(base + "/job")
    os.chown(base + "/job", NOBODY, NOBODY)
    yield base
    shutil.rmtree(base)


def test_workdir_where_the_image_has_no_such_path(caller, img, host_dir_in_opt):
    job = host_dir_in_opt + "/job"
    cand = write(caller, "w.py", WRITER + "print(sorted(os.listdir('/opt')))\n"
                 "print(open('/opt/imagefile').read().strip())\n")
    targets = [job + "/out.txt", host_dir_in_opt + "/beside", "/opt/other"]
    pol = write(caller, "p.policy", "version 1\nallow read /opt/**\ninclude <default>\n")
    r = caller.run("python3", cand, *targets,
                   opts=["-p", pol, "--image", "testimg", "--dry-run", "--workdir", job])
    assert r.rc == 0, r
    assert job + "/out.txt written" in r.stdout, r
    assert host_dir_in_opt + "/beside EROFS" in r.stdout, r
    assert "/opt/other EROFS" in r.stdout, r
    # the image's own /opt is all there, with the path to the workdir
    assert "['imagefile', '%s']" % os.path.basename(host_dir_in_opt) in r.stdout, r
    assert "from the image" in r.stdout, r
    with open(job + "/out.txt") as f:
        assert f.read() == "x"
    assert sorted(os.listdir(host_dir_in_opt)) == ["job"]
    assert r.recs[0]["cwd"] == job


def test_policy_paths_resolve_in_the_image(caller, img):
    """A rule on a link the image has (and the host lacks) also holds for
    what the link resolves to in the image."""
    pol = write(caller, "p.policy", "version 1\ndeny read /usr/bin/vtool\nimage testimg\n"
                "include <default>\n")
    cand = write(caller, "r.py", "import sys\ntry:\n    print(open(sys.argv[1]).read())\n"
                 "except OSError as e:\n    print('refused', e.errno)\n")
    r = caller.run("python3", cand, "/usr/lib/vtool/real", opts=["-p", pol])
    assert r.rc == 0, r
    assert "refused 13" in r.stdout, r
    assert r.result["image"]["digest"] == img  # the policy's image, without --image
    denied = [x for x in r.recs if x.get("decision") == "deny" and
              x.get("args", {}).get("resolved") == "/usr/lib/vtool/real"]
    assert denied and denied[0]["rule"]["text"] == "deny read /usr/bin/vtool", r.recs[-5:]
    p = caller.vigil_raw("check", pol)
    assert p.returncode == 0, p.stderr
    assert "deny read /usr/bin/vtool  (= /usr/lib/vtool/real)" in p.stdout, p.stdout



def test_unknown_image_is_one_line_and_leaves_nothing(caller, img):
    d = caller.dir("out")
    res, log = os.path.join(d, "r.json"), os.path.join(d, "l.msgpack")
    p = caller.vigil_raw("run", "--image", "nosuch", "-o", log, "--result", res, "--",
                         "true")
    assert p.returncode == 125, p
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "--image nosuch" in lines[0] and "no image" in lines[0], p.stderr
    assert os.listdir(d) == ["r.json"]
    with open(res) as f:
        assert json.load(f)["status"] == "error"
    p = caller.vigil_raw("run", "--image", "a/b", "--", "true")
    assert p.returncode == 125 and "only letters" in p.stderr, p.stderr
    pol = write(caller, "p.policy", "version 1\ninclude <default>\nimage missing-one\n")
    p = caller.vigil_raw("run", "-p", pol, "--", "true")
    assert p.returncode == 125 and pol + ":3: image missing-one" in p.stderr, p.stderr
    p = caller.vigil_raw("check", "--strict", pol)
    assert p.returncode == 1 and pol + ":3: warning:" in p.stderr, p.stderr
    bad = write(caller, "b.policy", "version 1\nimage ../x\n")
    p = caller.vigil_raw("check", bad)
    assert p.returncode == 1 and bad + ":2: image name" in p.stderr, p.stderr


def test_batch_key_holds_the_digest(caller, img):
    d = caller.dir("batch")
    tasks = os.path.join(d, "tasks.jsonl")
    with open(tasks, "w") as f:
        f.write(json.dumps({"id": "on-image", "code": "import onlyhere; print(onlyhere.WHO)",
                            "language": "python", "image": "testimg"}) + "\n")
        f.write(json.dumps({"id": "on-host", "code": "import onlyhere; print(onlyhere.WHO)",
                            "language": "python"}) + "\n")
    out = os.path.join(d, "out")
    p = caller.vigil_raw("batch", tasks, "--out", out, cwd=d)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(out, "results.jsonl")) as f:
        res = {r["task_id"]: r for r in map(json.loads, f)}
    assert res["on-image"]["status"] == "ok" and res["on-image"]["image"]["digest"] == img
    assert res["on-host"]["status"] == "nonzero" and res["on-host"]["image"] is None
    key = res["on-image"]["key"]
    # the same task with the image named by its digest: the same key, nothing runs
    with open(tasks, "w") as f:
        f.write(json.dumps({"id": "on-image", "code": "import onlyhere; print(onlyhere.WHO)",
                            "language": "python", "image": img}) + "\n")
    p = caller.vigil_raw("batch", tasks, "--out", out, cwd=d)
    assert p.returncode == 0 and "1 already done" in p.stderr, p.stderr
    # the name moved to another image: the task's key changes, it runs again
    moved = import_layers(caller, "moved", [runnable_layer(
        {**EXTRA, "usr/lib/python3/dist-packages/onlyhere.py": b"WHO = 'other'\n"}, EXTRA_LINKS)])
    with open(tasks, "w") as f:
        f.write(json.dumps({"id": "on-image", "code": "import onlyhere; print(onlyhere.WHO)",
                            "language": "python", "image": "moved"}) + "\n")
    p = caller.vigil_raw("batch", tasks, "--out", out, cwd=d)
    assert p.returncode == 0 and "1 run" in p.stderr, p.stderr
    with open(os.path.join(out, "results.jsonl")) as f:
        r = json.loads(f.readline())
    assert r["key"] != key and r["stdout"]["tail"] == "other\n", r
    assert r["image"]["digest"] == moved
    assert caller.vigil_raw("image", "rm", "moved").returncode == 0


def test_learned_policy_names_the_image(caller, img):
    """vigil learn on a run on an image: the rules are the image's paths,
    so the policy names the image by digest, and is checked in its trees
    (a read of the image's /usr/lib/vtool is no "rule names no object")."""
    cand = write(caller, "r.py", "print(open('/usr/lib/vtool/real').read())\n")
    r = caller.run("python3", cand, opts=["--image", "testimg", "--dry-run"])
    assert r.rc == 0, r
    out = os.path.join(caller.dir("learn"), "learned.policy")
    p = caller.vigil_raw("learn", r.log_path, "-o", out)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        text = f.read()
    assert "\nimage %s\n" % img in text, text
    assert not [x for x in text.splitlines() if "not learned" in x and "vtool" in x], text
    # (not --strict: the default policy it includes names files this
    # small image lacks, /usr/bin/grep, and says so)
    p = caller.vigil_raw("check", out)
    assert p.returncode == 0 and "vtool" not in p.stderr, p.stderr
    r = caller.run("python3", cand, opts=["-p", out])
    assert r.rc == 0 and r.stdout == "vtool-data\n\n", r
    assert r.result["image"]["digest"] == img


def test_an_image_in_use_is_not_removed(caller, img):
    """A run holds its image: `vigil image rm` refuses it until the run
    has ended (the tree would vanish under the candidate)."""
    import_layers(caller, "busy", [runnable_layer({"etc/busy": b"1\n"})])
    run = caller.popen(["run", "-q", "--image", "busy", "--", "python3", "-c",
                        "import sys; print(open('/etc/busy').read()); sys.stdout.flush(); "
                        "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    try:
        assert run.stdout.readline() == b"1\n"
        p = caller.vigil_raw("image", "rm", "busy")
        assert p.returncode == 1 and "in use by a run" in p.stderr, p.stderr
    finally:
        run.communicate(b"", timeout=30)
    assert run.returncode == 0
    p = caller.vigil_raw("image", "rm", "busy")
    assert p.returncode == 0, p.stderr
    assert caller.vigil_raw("image", "verify", "testimg").returncode == 0


def test_secrets_masked_where_a_linked_etc_really_is(caller, img):
    """An image whose /etc is an absolute link (etc -> /usr/etc): the
    masks are mounted where the files really are in the image, so its
    /etc/shadow is hidden as a plain /etc's is."""
    from test_image import tar
    upper = tar([(".wh.etc", "f", b"", 0o644), ("etc", "l", "/usr/etc", 0o777),
                 ("usr/etc", "d", None, 0o755), ("usr/etc/shadow", "f", SECRET, 0o644),
                 ("usr/etc/ssl", "d", None, 0o755), ("usr/etc/ssl/private", "d", None, 0o755),
                 ("usr/etc/ssl/private/k.pem", "f", SECRET, 0o644),
                 ("usr/etc/passwd", "f", b"root:x:0:0::/:/bin/sh\n", 0o644)])
    import_layers(caller, "linked-etc", [runnable_layer(), upper])
    try:
        cand = write(caller, "s.py", "import os\nfor p in ('/etc/shadow', '/usr/etc/shadow'):\n"
                     "    print(p, repr(open(p, 'rb').read()))\n"
                     "try:\n    print(os.listdir('/etc/ssl/private'))\n"
                     "except OSError as e:\n    print('private', e.strerror)\n")
        r = caller.run("python3", cand, opts=["--image", "linked-etc", "--dry-run"])
        assert r.rc == 0, r
        assert "/etc/shadow b''" in r.stdout and "/usr/etc/shadow b''" in r.stdout, r
        assert "private Permission denied" in r.stdout and "k.pem" not in r.stdout, r
    finally:
        assert caller.vigil_raw("image", "rm", "linked-etc").returncode == 0


def test_files_a_docker_image_lacks_are_made(caller, img):
    """A docker image has no /etc/resolv.conf nor /etc/hosts (the runtime
    makes them): the run makes vigil's own on a skeleton of the image's
    /etc, whose files are all still there and which stays read-only."""
    from test_image import tar
    upper = tar([("etc/.wh.resolv.conf", "f", b"", 0o644), ("etc/.wh.hosts", "f", b"", 0o644)])
    import_layers(caller, "no-resolv", [runnable_layer(), upper])
    try:
        cand = write(caller, "n.py", WRITER + "import socket\n"
                     "print(open('/etc/resolv.conf').read().split())\n"
                     "print('localhost', socket.getaddrinfo('localhost', 80)[0][4][0])\n"
                     "print(sorted(os.listdir('/etc')))\n")
        r = caller.run("python3", cand, "/etc/new", "/etc/hosts",
                       opts=["--image", "no-resolv", "--dry-run"])
        assert r.rc == 0, r
        assert "['nameserver', '127.0.0.53']" in r.stdout, r
        assert "localhost 127.0.0.1" in r.stdout, r
        assert "/etc/new EROFS" in r.stdout and "/etc/hosts EROFS" in r.stdout, r
        listed = eval(r.stdout.strip().splitlines()[-1])
        assert {"passwd", "os-release", "group", "hosts", "resolv.conf"} <= set(listed), r
    finally:
        assert caller.vigil_raw("image", "rm", "no-resolv").returncode == 0


def test_an_artifact_is_what_the_candidate_sees(caller, img):
    """--artifact of a host file under /usr or /etc on an image: the host's
    /usr is not shown, so the file is bound at its path, over the image's
    own (the result's hash is of what the candidate reads) or on room
    made where the image lacks it; never over a masked secret."""
    import hashlib
    with open("/etc/os-release", "rb") as f:
        host = f.read()
    with open("/usr/bin/tr", "rb") as f:
        tr = hashlib.sha256(f.read()).hexdigest()
    cand = write(caller, "a.py", "import hashlib, os\n"
                 "print(open('/etc/os-release', 'rb').read() == %r)\n"
                 "print(hashlib.sha256(open('/usr/bin/tr', 'rb').read()).hexdigest())\n"
                 "print(repr(open('/etc/shadow', 'rb').read()))\n" % host)
    secret = ["--artifact", "/etc/shadow"] if caller.root else []  # nobody cannot hash it
    r = caller.run("python3", cand, opts=["--image", "testimg", "--artifact", "/etc/os-release",
                                          "--artifact", "/usr/bin/tr", *secret, "--dry-run"])
    assert r.rc == 0, r
    out = r.stdout.splitlines()
    assert out[0] == "True" and out[1] == tr, r
    assert out[2] == "b''", r  # the image's secret stays masked
    arts = {a["path"]: a["sha256"] for a in r.result["artifacts"]}
    assert arts["/etc/os-release"] == hashlib.sha256(host).hexdigest()
    assert arts["/usr/bin/tr"] == tr
