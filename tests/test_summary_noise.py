"""The intent summary tells the truth (a batch of model-written candidates
graded by their summaries): what the sandbox and the C library do on their
own is never an attempt.  A clean Python program, a gcc compile-and-run of
hello world (its PATH search for `as`, its temporaries in /tmp) and a shell
script have an empty summary, in the result record and in `vigil log
--summary`; so have the shipped demo's noise (examples/demo.sh).  A
candidate that does try things (reads ~/.ssh, resolves a name the policy
refuses, runs curl) still has each of them flagged, the refused name
shown by name, and `vigil log --deny` lists that name.  `vigil learn`
writes no rule for any of the noise.  Real candidates under the real
vigil; the log read with Python's msgpack."""
import json
import os
import subprocess

import pytest

from helpers import NOBODY, ROOT, decode_log, root_caller, syscalls  # noqa: F401

CATEGORIES = ("secrets", "network", "exec", "writes", "deletions")
TITLES = ("secrets and home paths touched", "network attempts",
          "programs the policy does not allow", "writes outside the workdir",
          "deletions outside the workdir")
RESOLVER = ("127.0.0.53", 53)   # net/dns.h: the resolver the sandbox is given
NSCD = "/var/run/nscd/socket"


def summary_json(caller, log):
    p = caller.vigil_raw("log", "--summary", "--json", log)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def summary_text(caller, log):
    p = caller.vigil_raw("log", "--summary", log)
    assert p.returncode == 0, p.stderr
    return p.stdout


def host_workdir(caller):
    """A host directory the sandbox's user can write (the candidate's cwd)."""
    d = caller.dir("work")
    os.chown(d, NOBODY, NOBODY)
    return d


def run_clean(caller, name):
    """clean_NAME under the policy such a candidate is given, in the
    sandbox's own /tmp/work or (gcc-host) a host workdir, where gcc's
    /tmp is outside the workdir."""
    cands = {
        "python": (["python3", caller.cand("clean_hello.py")], ()),
        "gcc": (["sh", caller.cand("clean_gcc.sh")], ("-p", "c")),
        "gcc-host": (["sh", caller.cand("clean_gcc.sh")], ("-p", "c")),
        "shell": (["sh", caller.cand("clean_script.sh")], ()),
    }
    cmd, opts = cands[name]
    if name.endswith("-host"):
        opts = (*opts, "--workdir", host_workdir(caller))
    r = caller.run(*cmd, opts=opts)
    assert r.rc == 0 and r.recs[-1]["type"] == "trailer", r
    return r


def assert_empty(caller, r):
    s = summary_json(caller, r.log_path)
    assert r.result["summary"] == s   # one classifier: the record says what the log says
    for cat in CATEGORIES:
        assert s[cat]["count"] == 0 and s[cat]["items"] == [], (cat, s[cat])
    text = summary_text(caller, r.log_path)
    for title in TITLES:
        assert f"{title}: none\n" in text, text
    return s


@pytest.mark.parametrize("name", ["python", "gcc", "gcc-host", "shell"])
def test_clean_candidate_has_an_empty_summary(root_caller, name):
    r = run_clean(root_caller, name)
    s = assert_empty(root_caller, r)
    recs = r.recs
    scratch = recs[0]["scratch"]
    assert "/tmp" in scratch, recs[0]           # the header names the sandbox's own trees
    if name.startswith("gcc"):
        assert "hello, world" in r.stdout, r
        # the noise was there, and is counted apart: gcc's search for `as`
        # refused in the directories where it does not exist ...
        as_probes = [e for e in syscalls(recs, **{"class": "exec"})
                     if os.path.basename(e["args"].get("path", "")) == "as"
                     and e.get("probe") and e["decision"] != "allow"]
        assert as_probes, "gcc looks for as in PATH"
        assert s["noise"]["probes"] >= 1, s["noise"]
        # ... and its temporaries in the sandbox's /tmp
        tmp_writes = [e for e in syscalls(recs, **{"class": "write"})
                      if e["args"].get("resolved", "").startswith("/tmp/cc")]
        assert tmp_writes and s["noise"]["scratch"] >= len(tmp_writes), s["noise"]


def test_the_shipped_demo_shows_no_noise(root_caller, tmp_path):
    """examples/demo.sh (make demo) as shipped: its sloppy candidate's
    attempts are there, and nothing of the sandbox's own."""
    out = tmp_path / "demo"
    p = subprocess.run([os.path.join(ROOT, "examples", "demo.sh")], cwd=ROOT,
                       env=dict(os.environ, DEMO_DIR=str(out)),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    summary = p.stdout.split("(vigil log --summary)\n", 1)[1].split("\n== ", 1)[0]
    assert "/root/.ssh/id_rsa" in summary and "tcp 93.184.216.34:80" in summary, summary
    for noise in ("127.0.0.53", "nscd", "probed", "/dev/shm"):
        assert noise not in summary, summary
    with open(out / "result.json") as f:
        s = json.load(f)["summary"]
    assert s["exec"]["count"] == 0, s["exec"]    # shutil.which("magick") only looks
    # its dry run (refusing nothing) goes on to rm -rf the sandbox's own
    # /dev/shm: the scratch, not the host's; /etc and /usr stay flagged
    dry = summary_json(root_caller, str(out / "dry.msgpack"))
    for sm in (s, dry):
        for cat in ("writes", "deletions"):
            assert not [i for i in sm[cat]["items"]
                        if i["what"].startswith(("/tmp", "/dev/shm"))], sm[cat]
    assert [i for i in dry["deletions"]["items"] if i["what"].startswith("/etc/")], dry


def test_a_host_tree_bound_into_tmp_is_not_scratch(root_caller):
    """--bind-rw of a host directory into /tmp: a write there reaches the
    host, so /tmp is no longer the sandbox's own (the header says so) and
    the write is flagged; a write in the workdir is still not."""
    host = host_workdir(root_caller)
    r = root_caller.run("sh", "-c", "echo x > /tmp/shared/f; echo y > mine.txt",
                        opts=("--bind-rw", f"{host}:/tmp/shared"))
    assert r.rc == 0, r
    with open(os.path.join(host, "f")) as f:
        assert f.read() == "x\n"                      # it did reach the host
    assert "/tmp" not in r.recs[0].get("scratch", []), r.recs[0]
    s = summary_json(root_caller, r.log_path)
    assert [i["what"] for i in s["writes"]["items"]] == ["/tmp/shared/f"], s["writes"]


def tries_run(caller):
    r = caller.run("python3", caller.cand("tries_things.py"))
    assert r.rc == 0 and "done" in r.stdout, r
    return r


def test_a_candidate_that_tries_things_is_flagged_by_name(root_caller):
    r = tries_run(root_caller)
    s = summary_json(root_caller, r.log_path)
    assert r.result["summary"] == s
    assert [i for i in s["secrets"]["items"] if i["what"].endswith("/.ssh/id_rsa")], s["secrets"]
    curl = [i for i in s["exec"]["items"] if i["what"] == "curl"]
    assert curl and curl[0]["found"] and "deny" in curl[0]["decisions"], s["exec"]

    # the refused name, by name: every query for it, as the log has them
    refused = [d for d in r.recs if d["type"] == "dns" and d["name"] == "pypi.org"]
    assert refused and all(d["decision"] == "deny" and d["rcode"] == "NXDOMAIN"
                           for d in refused), refused
    names = [i for i in s["network"]["items"] if i.get("host") == "pypi.org"]
    assert len(names) == 1 and names[0]["what"] == "dns pypi.org", s["network"]
    assert names[0]["count"] == len(refused) and names[0]["rcode"] == "NXDOMAIN", names
    text = summary_text(root_caller, r.log_path)
    assert f"names refused: pypi.org (NXDOMAIN x{len(refused)})" in text, text

    # the lookup's own traffic is noise, not a network attempt
    whats = [i["what"] for i in s["network"]["items"]]
    assert not [w for w in whats if RESOLVER[0] in w or "nscd" in w], whats
    to_resolver = [e for e in syscalls(r.recs) if (e["args"].get("addr"), e["args"].get("port"))
                   == RESOLVER]
    to_nscd = syscalls(r.recs, addr=NSCD)
    assert to_resolver, "glibc sends its query to the resolver resolv.conf names"
    assert s["noise"]["resolver"] == len(to_resolver), s["noise"]
    assert s["noise"]["nscd"] == len(to_nscd), s["noise"]
    assert s["network"]["count"] == len(refused), s["network"]


def test_log_deny_lists_the_refused_name(root_caller):
    r = tries_run(root_caller)
    p = root_caller.vigil_raw("log", "--deny", "--color", "never", r.log_path)
    assert p.returncode == 0, p.stderr
    dns = [ln for ln in p.stdout.splitlines() if " dns " in ln]
    assert dns and all("pypi.org -> deny" in ln and "NXDOMAIN" in ln for ln in dns), p.stdout
    p = root_caller.vigil_raw("log", "--deny", "--json", r.log_path)
    recs = [json.loads(ln) for ln in p.stdout.splitlines()]
    assert {x["name"] for x in recs if x["type"] == "dns"} == {"pypi.org"}, recs
    assert all(x["decision"] != "allow" for x in recs), recs


class Learned(list):
    """The allow rules vigil learn wrote; .text is its whole output (which
    base it included, the comments), for the message when a test fails."""
    text = ""


def learned_rules(caller, log, *opts):
    p = caller.vigil_raw("learn", log, *opts, env={"HOME": "/nonexistent"})
    assert p.returncode == 0, p.stderr
    rules = Learned(ln for ln in p.stdout.splitlines() if ln.startswith("allow "))
    rules.text = p.stdout
    return rules


def test_learn_writes_no_rule_for_noise(root_caller, tmp_path):
    """From the clean gcc run (host workdir: /tmp is not $WORK) and the
    candidate that resolves a name: no rule for gcc's probes of `as`, for
    the sandbox's /tmp, for vigil's resolver or for nscd.  With --diff of
    a policy that lacks /tmp too: the base policy decides the sandbox's
    own scratch, a learned policy does not."""
    gcc = run_clean(root_caller, "gcc-host")
    # looked for and never found (ld looks for hello before it writes it)
    probes = ({e["args"].get("resolved") for e in syscalls(gcc.recs) if e.get("probe")}
              - {e["args"].get("resolved") for e in syscalls(gcc.recs) if not e.get("probe")})
    tiny = tmp_path / "tiny.policy"
    tiny.write_text("version 1\ndefault deny\nallow read /usr/** /etc/**\n")
    tiny.chmod(0o644)
    for opts in ((), ("--diff", str(tiny))):
        rules = learned_rules(root_caller, gcc.log_path, *opts)
        assert rules or opts == (), rules
        for rule in rules:
            pattern = rule.split(None, 2)[2]
            # (once, under load, a $TMP/** rule came with no --diff: its
            # text says which base learn found; decode_log(gcc.log_path)[0]
            # the header it read)
            why = (rule, opts, rules.text, decode_log(gcc.log_path)[0].get("policy"))
            assert pattern not in probes, why
            if pattern.endswith("/clean_gcc.sh"):
                # the script named on the command line: its own exact rule,
                # wherever the checkout is (under /tmp it once came out as
                # $TMP/**, the whole tree)
                assert "*" not in pattern, why
                continue
            assert not pattern.startswith(("$TMP", "/tmp/cc", "/tmp/**")), why
            assert not os.path.basename(pattern) == "as", why
    tries = tries_run(root_caller)
    for opts in ((), ("--diff", str(tiny))):
        rules = learned_rules(root_caller, tries.log_path, *opts)
        assert "allow exec /usr/bin/curl" in rules, rules   # what it did try is learned
        assert not [x for x in rules if RESOLVER[0] in x or "nscd" in x], rules
