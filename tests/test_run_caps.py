"""The caps that end storms: a candidate refused in a loop (`rm -rf
"$X"/*` with X unset made 180,112 refusals and a 132 MB log in 116 s)
ends at the refusals cap, a candidate whose allowed calls fill the log
ends at the log cap, each as a limit hit naming the cap, with a log that
is whole (every record, then the trailer).  Judged from the result
record and from the log as Python's msgpack reads it."""
import os

import msgpack
import pytest

from helpers import caller, nobody_caller, root_caller  # noqa: F401

REFUSALS_DEFAULT = 1000        # default.policy's `limit refusals`
MiB = 1 << 20
LOG_DEFAULT = 64 * MiB         # default.policy's `limit log`
KILLED = 128 + 9               # the sandbox's SIGKILL, as for every limit vigil kills at
REFUSED = ("deny", "would-deny", "would-kill")


def whole_log(path):
    """Every record of the log, read strictly: the file is records and
    nothing else, and the last one is the trailer."""
    with open(path, "rb") as f:
        data = f.read()
    up = msgpack.Unpacker(raw=False)
    up.feed(data)
    recs = list(up)
    assert up.tell() == len(data), (up.tell(), len(data))
    assert recs and recs[-1]["type"] == "trailer", recs[-3:]
    # no record was dropped: the sequence numbers have no gap
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    return recs


def refusals(recs):
    return sum(1 for r in recs if r["type"] == "syscall" and r["decision"] in REFUSED)


def assert_ended_at(r, cap):
    res = r.result
    assert res["status"] == "limit" and res["limit"] == cap, (res["status"], res["limit"],
                                                               res["error"], r)
    assert cap in res["limits_hit"] and res["limits"][cap]["hit"] is True, res["limits"]
    assert r.rc == KILLED and res["exit_code"] == KILLED, r
    recs = whole_log(r.log_path)
    trailer = recs[-1]
    assert trailer["status"] == "limit" and trailer["limit"] == cap, trailer
    notes = [n["detail"] for n in recs if n["type"] == "note" and n["what"] == "limit"]
    assert any(d.startswith(cap + ":") for d in notes), notes
    return res, recs


def test_a_refusal_storm_ends_at_the_default_cap(caller):
    r = caller.run("python3", caller.cand("storm_denied.py"), timeout=120)
    res, recs = assert_ended_at(r, "refusals")
    assert res["limits"]["refusals"]["value"] == REFUSALS_DEFAULT
    assert "rounds" not in r.stdout, r  # it was stopped, it did not finish
    # the refusal that reached the cap is the last one: none decided after
    assert refusals(recs) == REFUSALS_DEFAULT
    counted = sum(c["n"] for c in recs[-1]["counts"] if c["decision"] in REFUSED)
    assert counted == REFUSALS_DEFAULT and res["denied"] == REFUSALS_DEFAULT, recs[-1]
    assert os.path.getsize(r.log_path) < LOG_DEFAULT


def test_the_rm_storm_ends_at_the_default_refusals_cap(caller):
    """The storm of the nightly evaluations, `rm -rf "$X"/*`, under the
    default policy: how soon it ends is measured in bench/storm.py."""
    r = caller.run("sh", caller.cand("storm_rm.sh"))
    res, recs = assert_ended_at(r, "refusals")
    assert refusals(recs) == REFUSALS_DEFAULT
    assert os.path.getsize(r.log_path) < LOG_DEFAULT


def test_a_lower_cap_on_the_command_line_wins(root_caller, tmp_path):
    pol = tmp_path / "cap.policy"
    pol.write_text("version 1\nlimit refusals 300\ninclude <default>\n")
    storm = ("python3", root_caller.cand("storm_denied.py"))
    r = root_caller.run(*storm, opts=["-p", str(pol)])
    res, recs = assert_ended_at(r, "refusals")
    assert res["limits"]["refusals"]["value"] == 300 and refusals(recs) == 300
    r = root_caller.run(*storm, opts=["-p", str(pol), "--refusals", "40"])
    res, recs = assert_ended_at(r, "refusals")
    assert res["limits"]["refusals"]["value"] == 40 and refusals(recs) == 40


def test_a_run_under_the_refusals_cap_is_unaffected(root_caller):
    # 2 x 20 refusals (and the interpreter's own few at its start, as it
    # looks at the script's directories) under a cap of 100: the candidate
    # ends by itself
    r = root_caller.run("python3", root_caller.cand("storm_denied.py"), "20",
                        opts=["--refusals", "100"])
    res = r.result
    assert r.rc == 0 and res["status"] == "ok" and r.stdout == "rounds 20\n", r
    assert res["limits_hit"] == [] and res["limits"]["refusals"]["hit"] is False, res
    recs = whole_log(r.log_path)
    assert 40 <= refusals(recs) < 100 and recs[-1]["status"] == "ok"


def test_a_dry_run_counts_what_it_would_refuse(root_caller):
    r = root_caller.run("python3", root_caller.cand("storm_denied.py"),
                        opts=["--dry-run", "--refusals", "25"])
    res, recs = assert_ended_at(r, "refusals")
    assert refusals(recs) == 25
    assert {x["decision"] for x in recs if x["type"] == "syscall"} <= {"allow", "would-deny"}


def test_allowed_calls_that_fill_the_log_end_at_the_log_cap(caller):
    r = caller.run("python3", caller.cand("log_flood.py"), "1000000",
                   opts=["--log-size", "1M"])
    res, recs = assert_ended_at(r, "log")
    assert res["limits"]["log"]["value"] == MiB and "opened" not in r.stdout, r
    assert refusals(recs) < 10  # the interpreter's own at its start: the log cap ended it
    # the records stop before the cap, leaving room for the run's end,
    # which fits in it: the whole log is within the cap
    assert os.path.getsize(r.log_path) <= MiB, os.path.getsize(r.log_path)
    assert len(recs) > 1000, len(recs)


def test_a_log_under_its_cap_is_unaffected(root_caller):
    r = root_caller.run("python3", root_caller.cand("log_flood.py"), "200",
                        opts=["--log-size", "1M"])
    res = r.result
    assert r.rc == 0 and res["status"] == "ok" and r.stdout == "opened 200\n", r
    assert res["limits"]["log"] == {"value": MiB, "unit": "bytes", "enforced_by": "supervisor",
                                    "hit": False}
    assert whole_log(r.log_path)[-1]["status"] == "ok"


def test_the_caps_are_policy_settings_and_flags(root_caller, tmp_path):
    pol = tmp_path / "caps.policy"
    pol.write_text("version 1\nlimit refusals 1000\nlimit log 2M\n")
    p = root_caller.vigil_raw("check", str(pol))
    assert p.returncode == 0 and "limit refusals 1000" in p.stdout and "limit log 2M" in p.stdout, p
    for bad, word in (("limit refusals 0\n", "refusals"), ("limit log 512k\n", "at least 1M")):
        pol.write_text("version 1\n" + bad)
        p = root_caller.vigil_raw("check", str(pol))
        assert p.returncode == 1 and word in p.stderr, p
    p = root_caller.vigil_raw("run", "-q", "--log-size", "100k", "--", "true")
    assert p.returncode == 125 and "--log-size" in p.stderr, p
