"""Sealed logs and `vigil verify` (docs/FORMAT.md, "The chain and the
seal"; docs/SECURITY.md, "What the seal guarantees"): real runs under the
real supervisor, then their log files tampered with byte by byte, record
by record and whole, each judged by `vigil verify` and by the independent
checker printed in docs/FORMAT.md (Python's hashlib and msgpack, run
from the page itself, so the page cannot drift from what vigil writes)."""
import hashlib
import json
import os
import random
import re
import signal
import subprocess

import msgpack
import pytest
from cryptography.hazmat.primitives.serialization import (Encoding, PublicFormat,
                                                          load_pem_private_key, load_pem_public_key)

from helpers import ROOT, VIGIL, decode_log, root_caller  # noqa: F401

CHAIN_TAIL = 8 + 32           # "chain" key, bin header, the value
SIG_TAIL = 6 + 64             # "sig" key, bin header, the signature
FLIPS = 160                   # bytes flipped, spread over every record


def page_checker():
    """The checker of docs/FORMAT.md, executed from the page."""
    with open(os.path.join(ROOT, "docs", "FORMAT.md")) as f:
        page = f.read()
    code = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "def verify_log" in b]
    assert len(code) == 1, "docs/FORMAT.md has one checker"
    scope = {}
    exec(compile(code[0], "docs/FORMAT.md", "exec"), scope)
    return scope["verify_log"]


verify_log = page_checker()


def records(path):
    """The raw bytes of each complete record."""
    data = open(path, "rb").read()
    up = msgpack.Unpacker(raw=False)
    up.feed(data)
    out, start = [], 0
    for _ in up:
        out.append(data[start:up.tell()])
        start = up.tell()
    return out


def write(path, parts):
    with open(path, "wb") as f:
        f.write(b"".join(parts))
    return str(path)


def verify(*args):
    p = subprocess.run([VIGIL, "verify", *map(str, args)], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout + p.stderr


def judged(path, *args):
    """vigil verify's verdict as the checker puts it: ("intact", chain),
    ("altered", N), ("truncated", N) or ("unsealed", 0)."""
    rc, out = verify(path, *args)
    if rc == 0:
        return ("intact", re.search(r"chain ([0-9a-f]{64})", out).group(1)), out
    m = re.search(r"altered at record (\d+)", out)
    if m:
        assert rc == 1, out
        return ("altered", int(m.group(1))), out
    m = re.search(r"truncated after record (\d+)", out)
    if m:
        assert rc == 3, out
        return ("truncated", int(m.group(1))), out
    if "no complete record" in out:
        assert rc == 3, out
        return ("truncated", -1), out
    if "not sealed" in out:
        assert rc == 3, out
        return ("unsealed", 0), out
    return ("other", rc), out


def rechain(parts, key=None, edit=None):
    """What someone who rewrites a log does: each record packed again
    (edit(i, rec) may change it first), every chain value computed again
    and the seal's head with them; the signature and the key it names are
    dropped or, with the forger's private key, made again."""
    out, h = [], bytes(32)
    for i, raw in enumerate(parts):
        rec = msgpack.unpackb(raw, raw=False)
        rec.pop("chain")
        rec.pop("sig", None)
        if edit:
            edit(i, rec)
        sign = rec["type"] == "trailer" and key is not None
        if rec["type"] == "trailer":
            rec["seal"]["head"] = h.hex()
            rec["seal"].pop("key", None)
            if sign:
                rec["seal"]["key"] = key.public_key().public_bytes(
                    Encoding.Raw, PublicFormat.Raw).hex()
        rec["chain"] = bytes(32)
        if sign:
            rec["sig"] = bytes(64)
        packed = msgpack.packb(rec, use_bin_type=True)
        body = packed[:len(packed) - 32 - (SIG_TAIL if sign else 0)]
        h = hashlib.sha256(h + body).digest()
        raw = body + h
        if sign:
            raw += b"\xa3sig\xc4\x40" + key.sign(b"vigil log seal v1\n" + h)
        out.append(raw)
    return out


CAND = ("import os\n"
        "for p in ['/etc/hostname', '/etc/passwd', '/nonexistent', '/root/.ssh/id_rsa']:\n"
        "    try: open(p).close()\n"
        "    except OSError: pass\n"
        "print('done')\n")


@pytest.fixture(scope="module")
def cand(root_caller):
    d = root_caller.dir("cand")
    path = os.path.join(d, "cand.py")
    with open(path, "w") as f:
        f.write(CAND)
    return path


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    out = {}
    for name in ("mine", "other"):
        key, pub = d / f"{name}.key", d / f"{name}.pub"
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
        subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)], check=True)
        out[name] = (str(key), str(pub))
    return out


@pytest.fixture(scope="module")
def sealed(root_caller, cand):
    r = root_caller.run("python3", cand, opts=["-p", "python"])
    assert r.rc == 0 and r.stdout == "done\n", r
    return r


@pytest.fixture(scope="module")
def signed(root_caller, cand, keys):
    r = root_caller.run("python3", cand, opts=["-p", "python", "--sign-key", keys["mine"][0]])
    assert r.rc == 0, r
    return r


def test_a_run_is_sealed_and_verifies(sealed):
    rc, out = verify(sealed.log_path)
    assert rc == 0 and "intact and sealed" in out and "not signed" in out, out
    chain = sealed.result["seal"]["chain"]
    assert verify_log(sealed.log_path) == ("intact", chain)
    assert judged(sealed.log_path)[0] == ("intact", chain)
    recs = sealed.recs
    assert all(isinstance(r["chain"], bytes) and len(r["chain"]) == 32 for r in recs)
    assert list(recs[-1])[-1] == "chain" and recs[-1]["chain"].hex() == chain


def test_the_seal_binds_what_the_issue_names(sealed):
    h, t = sealed.recs[0], sealed.recs[-1]
    seal = t["seal"]
    assert seal["head"] == sealed.recs[-2]["chain"].hex()
    elf = subprocess.run(["readelf", "-n", VIGIL], capture_output=True, text=True).stdout
    assert seal["vigil_build_id"] == re.search(r"Build ID: ([0-9a-f]+)", elf).group(1)
    assert "vigil_sha256" not in seal  # hashed for signed logs only
    assert seal["policy_sha256"] == h["policy"]["sha256"]
    assert seal["artifacts"] == h["artifacts"] and seal["artifacts"]
    assert seal["engine"] == h["engine"] and seal["kernel"] == h["kernel"]
    assert seal["start_wall"] == h["start_wall"] < seal["end_wall"]
    assert "image_digest" not in seal and "key" not in seal  # host trees, unsigned
    assert t["events"] == len(sealed.recs) - 1 and t["counts"]
    res = sealed.result["seal"]
    assert res["records"] == len(sealed.recs) and res["head"] == seal["head"]
    assert res["vigil_build_id"] == seal["vigil_build_id"] and res["vigil_sha256"] is None
    assert res["signed"] is False and res["key"] is None and res["sig"] is None


def test_log_and_json_show_the_seal(sealed):
    p = subprocess.run([VIGIL, "log", sealed.log_path], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.splitlines()[-1].endswith(" sealed"), p
    p = subprocess.run([VIGIL, "log", "--json", sealed.log_path], capture_output=True, text=True)
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    assert [x["chain"] for x in lines] == [r["chain"].hex() for r in sealed.recs]


def test_every_flipped_byte_is_caught(sealed, tmp_path):
    data = open(sealed.log_path, "rb").read()
    parts = records(sealed.log_path)
    starts = [sum(map(len, parts[:i])) for i in range(len(parts))]
    rng = random.Random(25)
    # the first and last byte of every record (its map header, its chain
    # value), and a spread of the rest
    where = sorted({s for s in starts} | {s + len(p) - 1 for s, p in zip(starts, parts)} |
                   set(rng.sample(range(len(data)), FLIPS)))
    same = 0
    for pos in where:
        bad = bytearray(data)
        bad[pos] ^= 1 << rng.randrange(8)
        path = write(tmp_path / "flip.msgpack", [bytes(bad)])
        rec = max(i for i, s in enumerate(starts) if s <= pos)
        got, out = judged(path)
        assert got[0] in ("altered", "truncated"), (pos, out)
        # where the record the byte is in cannot be read as it was, the
        # log reads as cut off before it
        assert got in (("altered", rec), ("truncated", rec - 1)), (pos, rec, out)
        # the checker too; the two may differ on what the file's last bytes
        # are (a record cut off, or not one: Python's msgpack gives up on a
        # map with a map for a key before it runs out of bytes)
        theirs = verify_log(path)
        assert theirs in (("altered", rec), ("truncated", rec - 1)), (pos, rec, theirs)
        same += theirs == got
    assert same >= 0.95 * len(where), (same, len(where))


def test_dropped_records_are_caught(sealed, tmp_path):
    parts = records(sealed.log_path)
    last = len(parts) - 1
    for i in (0, 1, last // 2, last - 1):
        path = write(tmp_path / "drop.msgpack", parts[:i] + parts[i + 1:])
        got, out = judged(path)
        assert got == ("altered", i), (i, out)
        assert verify_log(path) == got
    # the trailer dropped: what is left is a log cut off
    path = write(tmp_path / "drop.msgpack", parts[:-1])
    assert judged(path)[0] == ("truncated", last - 1) == verify_log(path)


def test_reordered_records_are_caught(sealed, tmp_path):
    parts = records(sealed.log_path)
    for i in (1, len(parts) // 2, len(parts) - 2):
        swapped = parts[:i] + [parts[i + 1], parts[i]] + parts[i + 2:]
        path = write(tmp_path / "swap.msgpack", swapped)
        got, out = judged(path)
        assert got == ("altered", i), (i, out)
        assert verify_log(path) == got


def test_spliced_logs_are_caught(sealed, signed, tmp_path):
    a, b = records(sealed.log_path), records(signed.log_path)
    for k in (1, 3, min(len(a), len(b)) - 1):
        path = write(tmp_path / "splice.msgpack", a[:k] + b[k:])
        got, out = judged(path)
        assert got == ("altered", k), (k, out)
        assert verify_log(path) == got
    path = write(tmp_path / "splice.msgpack", a + b)
    got, out = judged(path)
    assert got == ("altered", len(a)) == verify_log(path) and "after the trailer" in out, out


def test_a_changed_seal_is_caught(sealed, tmp_path):
    parts = records(sealed.log_path)
    t = parts[-1]
    old = msgpack.unpackb(t, raw=False)["seal"]["policy_sha256"].encode()
    forged = t.replace(old, b"0" * len(old))
    path = write(tmp_path / "seal.msgpack", parts[:-1] + [forged])
    got, out = judged(path)
    assert got == ("altered", len(parts) - 1) == verify_log(path), out
    # a head that names another chain, chained again as a forger would:
    # the trailer's own chain holds, its seal does not
    t2 = t.replace(msgpack.unpackb(t, raw=False)["seal"]["head"].encode(), b"f" * 64)
    body = t2[:-32]
    h = hashlib.sha256(msgpack.unpackb(parts[-2], raw=False)["chain"] + body).digest()
    path = write(tmp_path / "seal.msgpack", parts[:-1] + [body + h])
    got, out = judged(path)
    assert got == ("altered", len(parts) - 1) == verify_log(path) and "head" in out, out


def test_truncated_logs_verify_up_to_their_last_record(sealed, tmp_path):
    parts = records(sealed.log_path)
    for k in (1, 2, len(parts) // 2, len(parts) - 1):
        path = write(tmp_path / "cut.msgpack", parts[:k])
        got, out = judged(path)
        assert got == ("truncated", k - 1) == verify_log(path), (k, out)
        assert "part of a record" not in out
        # and in the middle of the next record
        path = write(tmp_path / "cut.msgpack", parts[:k] + [parts[k][:len(parts[k]) // 2]])
        got, out = judged(path)
        assert got == ("truncated", k - 1) == verify_log(path), (k, out)
        assert "then part of a record" in out, out
    path = write(tmp_path / "cut.msgpack", [])
    rc, out = verify(path)
    assert rc == 3 and "no complete record" in out, out


def test_a_rewritten_log_needs_the_key(sealed, signed, keys, tmp_path):
    """docs/SECURITY.md: whoever rewrites a whole log can chain it again;
    only a signature checked against the user's own key shows it."""
    parts = records(sealed.log_path)
    i = next(i for i, p in enumerate(parts) if b"/root/.ssh/id_rsa" in p)

    def hide(k, rec):  # the secret read becomes a harmless one
        if k == i:
            rec["args"]["path"] = rec["args"]["resolved"] = "/etc/hostname"
    path = write(tmp_path / "rewrite.msgpack", rechain(parts, edit=hide))
    assert judged(path)[0][0] == "intact"        # unsigned: nothing to check it against
    rc, out = verify(path, "--key", keys["mine"][1])
    assert rc == 1 and "not signed" in out, out
    # a signed log rewritten: the signature cannot be made again without
    # the key, and dropping it is seen with --key
    sparts = records(signed.log_path)
    path = write(tmp_path / "rewrite.msgpack", rechain(sparts, edit=hide))
    assert judged(path)[0][0] == "intact"
    rc, out = verify(path, "--key", keys["mine"][1])
    assert rc == 1 and "not signed" in out, out
    assert verify_log(path, pub=pub_bytes(keys["mine"][1]))[0] == "altered"
    # signed again with a key the forger holds: a good signature, of
    # another key, which --key refuses
    other = load_pem_private_key(open(keys["other"][0], "rb").read(), None)
    path = write(tmp_path / "rewrite.msgpack", rechain(sparts, key=other, edit=hide))
    rc, out = verify(path)
    assert rc == 0 and "signed by key" in out, out
    rc, out = verify(path, "--key", keys["mine"][1])
    assert rc == 1 and "signed by another key" in out, out
    assert verify_log(path, pub=pub_bytes(keys["mine"][1]))[0] == "altered"
    assert verify_log(path, pub=pub_bytes(keys["other"][1]))[0] == "intact"
    # the signed trailer moved onto another log: its chain is not that log's
    path = write(tmp_path / "moved.msgpack", parts[:-1] + [sparts[-1]])
    got, out = judged(path, "--key", keys["mine"][1])
    assert got == ("altered", len(parts) - 1) == verify_log(path), out


def pub_bytes(pub_pem):
    key = load_pem_public_key(open(pub_pem, "rb").read())
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def test_signing_round_trip(signed, keys, tmp_path):
    key, pub = keys["mine"]
    rc, out = verify(signed.log_path, "--key", pub)
    assert rc == 0 and "signed by key" in out and "(the key given)" in out, out
    rc, out = verify(signed.log_path, "--key", key)  # the private key file does too
    assert rc == 0, out
    rc, out = verify(signed.log_path)
    assert rc == 0 and "not checked" in out, out
    rc, out = verify(signed.log_path, "--key", keys["other"][1])
    assert rc == 1 and "signed by another key" in out, out
    t = signed.recs[-1]
    assert list(t)[-2:] == ["chain", "sig"] and t["seal"]["key"] == pub_bytes(pub).hex()
    with open(VIGIL, "rb") as f:
        assert t["seal"]["vigil_sha256"] == hashlib.sha256(f.read()).hexdigest()
    res = signed.result["seal"]
    assert res["signed"] is True and res["key"] == t["seal"]["key"] and res["sig"] == t["sig"].hex()
    assert res["vigil_sha256"] == t["seal"]["vigil_sha256"]
    assert verify_log(signed.log_path, pub=pub_bytes(pub)) == ("intact", res["chain"])
    assert verify_log(signed.log_path, pub=pub_bytes(keys["other"][1]))[0] == "altered"
    # and with OpenSSL alone, as docs/FORMAT.md says: the signed message
    # is the context and the trailer's chain value
    msg, sig = tmp_path / "msg", tmp_path / "sig"
    msg.write_bytes(b"vigil log seal v1\n" + t["chain"])
    sig.write_bytes(t["sig"])
    p = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin",
                        "-in", str(msg), "-sigfile", str(sig)], capture_output=True)
    assert p.returncode == 0 and b"Signature Verified Successfully" in p.stdout, p


def test_a_bad_sign_key_stops_the_run_before_it_starts(root_caller, keys, tmp_path):
    junk = tmp_path / "junk.key"
    junk.write_text("not a key\n")
    for bad, why in ((keys["mine"][1], "PRIVATE KEY"), (str(junk), "PRIVATE KEY"),
                     (str(tmp_path / "missing.key"), "No such file")):
        r = root_caller.run("true", opts=["--sign-key", bad])
        assert r.rc == 125 and not os.path.exists(r.log_path), r
        line = [x for x in r.stderr.splitlines() if x.startswith("vigil:")]
        assert len(line) == 1 and "--sign-key" in line[0] and bad in line[0] and why in line[0], r
        assert r.result["status"] == "error"


def test_a_run_killed_mid_way_verifies_to_its_last_record(root_caller, tmp_path):
    d = root_caller.dir("kill")
    script = os.path.join(d, "loop.py")
    with open(script, "w") as f:
        f.write("import sys, time\n"
                "for i in range(10**9):\n"
                "    open('/etc/hostname').close()\n"
                "    if i == 200: print('ready', flush=True)\n")
    log = os.path.join(d, "run.msgpack")
    p = root_caller.popen(["run", "-q", "-o", log, "--", "python3", script],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"ready\n"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()
    recs = decode_log(log)
    assert len(recs) > 200 and recs[-1]["type"] != "trailer"
    got, out = judged(log)
    assert got == ("truncated", len(recs) - 1) == verify_log(log), out
    assert "supervisor was killed" in out and f"records 0-{len(recs) - 1} are intact" in out


def test_logs_of_earlier_versions_are_read_and_reported_not_sealed(sealed, tmp_path):
    """An earlier version wrote no chain: vigil log and view read such a
    log as before; vigil verify says it is not sealed."""
    old = []
    for r in sealed.recs:
        r = {k: v for k, v in r.items() if k != "chain"}
        if r["type"] == "trailer":
            del r["seal"]
        old.append(msgpack.packb(r, use_bin_type=True))
    path = write(tmp_path / "old.msgpack", old)
    rc, out = verify(path)
    assert rc == 3 and "not sealed" in out and "earlier version" in out, out
    assert verify_log(path) == ("unsealed", 0)
    p = subprocess.run([VIGIL, "log", "--all", path], capture_output=True, text=True)
    assert p.returncode == 0 and len(p.stdout.splitlines()) == len(old), p
    assert not p.stdout.splitlines()[-1].endswith("sealed")


def test_usage(tmp_path, keys, sealed):
    assert verify()[0] == 2
    assert verify(tmp_path / "missing.msgpack")[0] == 2
    junk = tmp_path / "junk.pub"
    junk.write_text("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
    rc, out = verify(sealed.log_path, "--key", junk)
    assert rc == 2 and str(junk) in out and len(out.splitlines()) == 1, out
