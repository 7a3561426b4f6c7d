"""`vigil check`: broken policies are refused with the exact FILE:LINE:COL:
message, the shipped policies pass without warnings, and warnings are given
for shadowed rules and grants that defeat the sandbox."""
import glob
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "policy")
SHIPPED = sorted(glob.glob(os.path.join(HERE, "..", "policies", "*.policy")))
BROKEN = sorted(os.path.basename(p) for p in glob.glob(os.path.join(CORPUS, "*.policy")))


def expectation(name):
    """The '# expect: [FILE:]LINE:COL: message' line of a corpus file."""
    with open(os.path.join(CORPUS, name)) as f:
        first = f.readline().rstrip("\n")
    m = re.match(r"# expect: (?:(\S+\.\w+):)?(\d+):(\d+): (.*)$", first)
    assert m, f"{name}: first line must be '# expect: LINE:COL: message'"
    return (m.group(1) or name), m.group(2), m.group(3), m.group(4)


@pytest.mark.parametrize("name", BROKEN)
def test_broken_policy_is_refused_with_location(vigil, name):
    file, line, col, msg = expectation(name)
    r = vigil("check", name, cwd=CORPUS)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr == f"{file}:{line}:{col}: {msg}\n"
    assert r.stdout == ""


# Warnings a shipped policy gives on purpose (each says why in its text).
INTENDED = {"c.policy": ["'allow exec $TMP/**' defeats the sandbox",
                         "'allow exec $WORK/**' defeats the sandbox"],
            "observe.policy": ["'default allow' allows every read, write, exec, connect, bind "
                               "and send call"]}


INTENDED["image-c.policy"] = INTENDED["c.policy"]
# image-NAME.policy names the image NAME, which `vigil image build NAME`
# makes: where this store lacks it, check says so (and its paths are
# checked on the host's trees).  On a machine that has never imported an
# image there is no store at all, and check says that instead.
NO_IMAGE = ("warning: no image named ", "warning: no image store ")


def says_no_image(line):
    return any(x in line for x in NO_IMAGE)


def test_an_image_policy_on_a_machine_that_never_ran_vigil(vigil, tmp_path):
    """No state directory at all (a fresh machine, before any run): check
    says there is no image store, not that there is no run log."""
    r = vigil("check", os.path.join(HERE, "..", "policies", "image-c.policy"),
              env={**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": ""})
    first = r.stderr.splitlines()[0]
    assert says_no_image(first) and "yet (vigil image import)" in first, r.stderr
    assert os.listdir(tmp_path) == [], "check made no state directory"


@pytest.mark.parametrize("path", SHIPPED, ids=[os.path.basename(p) for p in SHIPPED])
def test_shipped_policy_is_clean(vigil, path):
    r = vigil("check", "--strict", path)
    name = os.path.basename(path)
    intended = INTENDED.get(name, [])
    lines = r.stderr.splitlines()
    no_image = name.startswith("image-") and any(says_no_image(x) for x in lines)
    lines = [x for x in lines if not (name.startswith("image-") and says_no_image(x))]
    assert len(lines) == len(intended), r.stderr
    assert all(any(want in line for line in lines) for want in intended), r.stderr
    assert r.returncode == (1 if intended or no_image else 0), r.stderr
    assert "# policy " in r.stdout


def test_shipped_policies_by_name(vigil):
    r = vigil("check", "--list")
    assert r.returncode == 0, r.stderr
    listed = dict(line.split(None, 1) for line in r.stdout.splitlines())
    assert set(listed) == {os.path.basename(p)[:-len(".policy")] for p in SHIPPED}
    assert all(os.path.isfile(p.strip()) for p in listed.values())
    r = vigil("check", "-q", "python")
    assert r.returncode == 0, r.stderr
    r = vigil("check", "no-such-policy")
    assert r.returncode == 1
    assert r.stderr.strip() == ("policy 'no-such-policy': no such file, and no shipped policy "
                                "of that name ('vigil check --list' shows them)")


def test_corpus_and_shipped_exist():
    assert len(BROKEN) >= 30
    names = {os.path.basename(p) for p in SHIPPED}
    assert {"default.policy", "python.policy", "node.policy", "shell.policy",
            "localhost.policy", "observe.policy"} <= names


def test_print_is_normalized(vigil, tmp_path):
    p = tmp_path / "p.policy"
    p.write_text("version 1   # comment\n"
                 "allow   read  /usr/**   /etc/**  # two rules, one line\n"
                 "allow net tcp 127.0.0.1:8000 udp *:53\n"
                 "default kill exec\n"
                 "limit memory 524288k\n"
                 "env pass TERM\n")
    r = vigil("check", str(p))
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert f"{p}:2: allow read /usr/**" in out
    assert f"{p}:2: allow read /etc/**" in out
    assert f"{p}:3: allow net tcp 127.0.0.1:8000" in out
    assert f"{p}:3: allow net udp *:53" in out
    assert f"{p}:4: default kill exec" in out
    assert "(built-in): default deny read" in out
    assert f"{p}:5: limit memory 512M" in out
    assert "env pass TERM" in out


def test_warnings_shadowed_and_dangerous(vigil, tmp_path):
    p = tmp_path / "w.policy"
    p.write_text("version 1\n"
                 "allow read /usr/**\n"
                 "deny read /usr/lib/secret\n"
                 "allow write /**\n"
                 "allow read ~/**\n"
                 "allow net tcp *:*\n"
                 "allow exec /usr/bin/python3 /usr/bin/python3\n")
    r = vigil("check", str(p))
    assert r.returncode == 0            # warnings do not fail...
    err = r.stderr.splitlines()
    assert f"{p}:3:11: warning: rule can never match: line 2 ('allow read /usr/**') matches first" in err
    assert any(l.startswith(f"{p}:4:13: warning: 'allow write /**' defeats the sandbox") for l in err)
    assert any(l.startswith(f"{p}:5:12: warning: 'allow read ~/**' defeats the sandbox") and "SSH" in l
               for l in err)
    assert any(l.startswith(f"{p}:6:15: warning: 'allow net tcp *:*' defeats the sandbox") for l in err)
    assert f"{p}:7:29: warning: rule can never match: line 7 ('allow exec /usr/bin/python3') matches first" in err
    r = vigil("check", "--strict", str(p))
    assert r.returncode == 1            # ...unless --strict


def test_denied_home_is_not_dangerous(vigil, tmp_path):
    """An earlier deny keeps a broad allow from granting the secrets."""
    p = tmp_path / "ok.policy"
    p.write_text("version 1\ndeny read ~/** /root/**\nallow read /**\n")
    r = vigil("check", "--strict", str(p))
    assert r.returncode == 0, r.stderr


def test_several_files_and_status(vigil, tmp_path):
    good = tmp_path / "good.policy"
    good.write_text("version 1\n")
    bad = tmp_path / "bad.policy"
    bad.write_text("version 1\nallow reed /x\n")
    r = vigil("check", "-q", str(good), str(bad))
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith(f"{bad}:2:7: unknown class 'reed'")


def test_usage(vigil):
    assert vigil("check").returncode == 2
    r = vigil("check", "--bogus", "x.policy")
    assert r.returncode == 2 and "unknown option" in r.stderr
    r = vigil("check", "--help")
    assert r.returncode == 0 and "usage: vigil check" in r.stdout


def test_unreadable_file(vigil, tmp_path):
    r = vigil("check", str(tmp_path / "missing.policy"))
    assert r.returncode == 1
    assert "missing.policy" in r.stderr and "No such file" in r.stderr


def policy_file(tmp_path, *lines):
    """A policy of these lines after `version 1` (line 1)."""
    p = tmp_path / "t.policy"
    p.write_text("version 1\n" + "".join(line + "\n" for line in lines))
    return p

def test_rule_shows_what_it_resolves_to(vigil, tmp_path):
    """A literal path in a read-only tree is also matched as what it
    resolves to; check says so, and warns of one that does not exist (but
    not of a glob, nor of places that appear during the run)."""
    real = os.path.realpath("/usr/bin/python3")
    if real == "/usr/bin/python3":
        pytest.skip("/usr/bin/python3 is not a symlink here")
    p = policy_file(tmp_path, "allow exec /usr/bin/python3",
                    "allow exec /usr/bin/vigil-no-such-program",
                    "allow exec /usr/bin/vigil-no-such-* /usr/bin/{vigil-no-such,python3}",
                    "allow write $WORK/later $TMP/later /tmp/later", "default deny")
    r = vigil("check", str(p))
    assert r.returncode == 0, r.stderr
    assert f"{p}:2: allow exec /usr/bin/python3  (= {real})" in r.stdout.splitlines()
    assert r.stderr.splitlines() == [
        f"{p}:3:12: warning: rule names no object: /usr/bin/vigil-no-such-program does not "
        "exist, and nothing can create it (the sandbox shows /usr read-only)"]
    assert vigil("check", "--strict", str(p)).returncode == 1


def test_include_shipped_by_name(vigil, tmp_path):
    """include <NAME> takes any shipped policy (and what it includes)."""
    p = policy_file(tmp_path, "include <python>")
    r = vigil("check", "--strict", str(p))
    assert r.returncode == 0, r.stderr
    files = {line.split(":", 1)[0] for line in r.stdout.splitlines() if not line.startswith("#")}
    assert any(f.endswith("/policies/python.policy") for f in files), r.stdout
    assert any(f.endswith("/policies/default.policy") for f in files), r.stdout


def test_include_unknown_and_cycle_by_name(vigil, tmp_path):
    own = tmp_path / "own"
    own.mkdir()
    (own / "ping.policy").write_text("version 1\ninclude <pong>\n")
    (own / "pong.policy").write_text("version 1\nallow read /x\ninclude <ping>\n")
    env = {**os.environ, "VIGIL_POLICY_DIR": str(own)}
    r = vigil("check", "ping", env=env)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (f"{own}/pong.policy:3:9: include cycle: {own}/ping.policy -> "
                        f"{own}/pong.policy -> {own}/ping.policy\n")
    p = policy_file(tmp_path, "include <no-such-policy>")
    r = vigil("check", str(p))
    assert r.returncode == 1
    assert r.stderr == (f"{p}:2:9: no shipped policy 'no-such-policy' "
                        "('vigil check --list' names them)\n")


def test_default_allow_warns(vigil, tmp_path):
    p = policy_file(tmp_path, "allow read /usr/**", "default allow read write", "default deny")
    r = vigil("check", str(p))
    assert r.returncode == 0
    assert r.stderr == (f"{p}:3:1: warning: 'default allow' allows every read and write call no "
                        "rule matches (say what the candidate needs and let the rest be refused: "
                        "'default deny')\n")
    assert vigil("check", "--strict", str(p)).returncode == 1
