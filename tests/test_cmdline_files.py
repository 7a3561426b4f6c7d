"""Files named on the command line, one rule: a file named twice is shown
once; nothing is bound over the sandbox's own writable trees (/tmp,
/dev/shm, the default workdir): a host file there is copied in, and the
candidate may rewrite its copy while the host's never changes; every file
vigil will not show is named in a one-line warning (stderr, the result's
`warnings`, a note in the log).  Run as root and as nobody."""
import os
import shutil
import uuid

import pytest

from helpers import ROOT, caller, marker, nobody_caller, root_caller, sha256_file  # noqa: F401

OBSERVE = os.path.join(ROOT, "policies", "observe.policy")


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def warnings_in(stderr):
    return [line for line in stderr.splitlines() if line.startswith("vigil: warning:")]


@pytest.mark.parametrize("how", ["same-name", "two-spellings"])
def test_a_file_named_twice_is_harmless(caller, how):
    d = caller.dir("twice")
    token = marker()
    f = os.path.join(d, "F")
    write(f, token + "\n")
    second = "F" if how == "same-name" else "./F"
    r = caller.run("cat", "F", second, f, cwd=d)
    assert r.rc == 0, r
    assert r.stdout.split() == [token, token, token]
    # ./F and F are one file in the sandbox (its workdir); the absolute
    # name is another path, shown too
    assert [a["path"] for a in r.result["artifacts"]] == ["F", f]
    assert warnings_in(r.stderr) == []


def test_an_artifact_adds_to_the_arguments(caller):
    """`--artifact /abs/cand.py -- python3 cand.py`: the --artifact names a
    file besides the command line's, so the relative cand.py is still shown
    in the workdir (it once replaced them: every such run failed "can't open
    file")."""
    d = caller.dir("artifact_adds")
    token = marker()
    cand = os.path.join(d, "cand.py")
    write(cand, "print(%r)\n" % token)
    r = caller.run("python3", "cand.py", cwd=d, opts=["-p", "python", "--artifact", cand])
    assert r.rc == 0 and r.stdout.strip() == token, r
    assert [a["path"] for a in r.result["artifacts"]] == [cand, "cand.py"], r.result["artifacts"]
    assert warnings_in(r.stderr) == []


def test_host_file_in_tmp_named_as_output_is_copied_not_bound(caller):
    """`gcc -o /tmp/X.out hello.c` when an earlier bare run left /tmp/X.out
    on the host: the link works on the sandbox's copy, the host file keeps
    its bytes."""
    d = caller.dir("gcc")
    write(os.path.join(d, "hello.c"), "int main(void) { return 0; }\n")
    pol = os.path.join(d, "observe.policy")
    shutil.copy(OBSERVE, pol)
    os.chmod(pol, 0o644)
    out = f"/tmp/vigil-test-cmdline-{uuid.uuid4().hex[:12]}.out"
    write(out, "an earlier build\n", 0o755)
    try:
        before = sha256_file(out), os.stat(out).st_ino
        r = caller.run("gcc", "-O2", "-o", out, "hello.c", opts=["-p", pol], cwd=d)
        assert r.rc == 0, r
        assert (sha256_file(out), os.stat(out).st_ino) == before
    finally:
        os.unlink(out)


def test_candidate_rewrites_its_copy_never_the_host_file(caller):
    """A script under /tmp is copied in: the candidate may change its copy
    (it sees the change), the host's copy never changes."""
    d = caller.dir("self")
    token = marker()
    script = os.path.join(d, "self.sh")
    write(script, f'echo "{token}-rewritten" >> "$0"; cat "$0"; exit 0\n')
    before = sha256_file(script)
    r = caller.run("sh", script, cwd=d)
    assert r.rc == 0, r
    assert f"{token}-rewritten" in r.stdout.splitlines()
    assert sha256_file(script) == before


def test_file_in_a_hidden_directory_is_named_in_a_warning(caller):
    d = caller.dir("hidden")
    token = marker()
    os.mkdir(os.path.join(d, ".secrets"), 0o755)
    write(os.path.join(d, ".secrets", "key"), token + "\n")
    r = caller.run("cat", ".secrets/key", cwd=d)
    assert token not in r.stdout
    warned = warnings_in(r.stderr)
    assert len(warned) == 1 and ".secrets/key" in warned[0] and "hidden" in warned[0], r.stderr
    assert [w for w in r.result["warnings"] if ".secrets/key" in w], r.result["warnings"]
    notes = [x for x in r.recs if x["type"] == "note" and x["what"] == "warning"]
    assert [n for n in notes if ".secrets/key" in n["detail"]], notes
    assert r.result["artifacts"] == []


def test_file_too_large_for_the_sandbox_tmp_is_named_in_a_warning(caller):
    d = caller.dir("big")
    big = os.path.join(d, "big.bin")
    with open(big, "wb") as f:
        f.write(b"x" * (2 << 20))
    os.chmod(big, 0o644)
    r = caller.run("wc", "-c", big, opts=["--tmpfs", "1M"], cwd=d)
    warned = warnings_in(r.stderr)
    assert len(warned) == 1 and big in warned[0] and "--tmpfs" in warned[0], r.stderr
    assert "No such file" in r.stderr and str(2 << 20) not in r.stdout


def test_a_copy_never_replaces_a_file_in_a_host_workdir(caller):
    """`vigil run --workdir W -- cat tok.txt` run beside a tok.txt when W
    already holds one: the run fails in setup (exit 125) with a message
    naming the copy and why, and W's file keeps its bytes.  The message
    is the setup's own: it was once, 5 runs in 6, the resolver's "cannot
    bind 127.0.0.53:53 ... No such process" (it joins the namespace of a
    pid 1 that had just failed its setup), which said nothing of the
    cause."""
    d = caller.dir("beside")
    w = caller.dir("hostwork")
    write(os.path.join(d, "tok.txt"), "the caller's\n")
    write(os.path.join(w, "tok.txt"), "the workdir's own\n")
    for _ in range(4):  # the old message won a race: more than one try
        r = caller.run("cat", "tok.txt", cwd=d, opts=["--workdir", w])
        assert r.rc == 125, r
        errors = [line for line in r.stderr.splitlines() if not line.startswith("vigil: warning:")]
        assert errors == [f"vigil: sandbox setup: copy {d}/tok.txt -> {w}/tok.txt: "
                          "a file of that name is there, and is not replaced"], r.stderr
        with open(os.path.join(w, "tok.txt")) as f:
            assert f.read() == "the workdir's own\n"
