"""A client of vigil serve for tests/test_serve.py, run as another uid:
python3 serve_client.py SOCKET COMMAND ARGS... prints one JSON answer.
It speaks raw HTTP/1.1 over the unix socket (http.client), independently
of the Python package, so that what it sees is what any client sees."""
import http.client
import json
import socket
import sys
import time

WAIT_S = 5
SH = "/bin/sh"


class Conn(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=120)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(120)
        self.sock.connect(self.path)


def call(sock, method, path, body=None, raw=None):
    """(status, headers, body bytes) of one request."""
    c = Conn(sock)
    try:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        c.request(method, "/v1" + path, body=data,
                  headers={"Content-Type": "application/json"} if data is not None else {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def submit(sock, cmd, **more):
    status, headers, body = call(sock, "POST", "/runs", dict(argv=[SH, "-c", cmd], **more))
    return status, headers, json.loads(body)


def wait(sock, rid):
    while True:
        status, _, body = call(sock, "GET", "/runs/%s?wait=%d" % (rid, WAIT_S))
        run = json.loads(body)
        if status != 200 or run["state"] not in ("queued", "running"):
            return run


def tally(answers):
    out = {"accepted": 0, "refused": {}, "retry_after": [], "ids": []}
    for status, headers, body in answers:
        if status == 201:
            out["accepted"] += 1
            out["ids"].append(body["id"])
        else:
            assert status == 429, (status, body)
            q = body["quota"]
            out["refused"][q] = out["refused"].get(q, 0) + 1
            ra = headers.get("Retry-After")
            out["retry_after"].append(int(ra) if ra else None)
            assert body["retry_after"] == (int(ra) if ra else None), (body, headers)
            assert q in body["error"], body
    return out


def burst(sock, n, cmd):
    return tally([submit(sock, cmd) for _ in range(int(n))])


def serial(sock, n, cmd):
    answers, stdout = [], []
    for _ in range(int(n)):
        a = submit(sock, cmd)
        answers.append(a)
        if a[0] == 201:
            wait(sock, a[2]["id"])
            stdout.append(call(sock, "GET", "/runs/%s/stdout" % a[2]["id"])[2].decode())
    out = tally(answers)
    out["stdout"] = stdout
    return out


def busy(sock, n, cpu):
    answers = [submit(sock, "while :; do :; done", limits={"cputotal": cpu, "time": "30s"})
               for _ in range(int(n))]
    out = tally(answers)
    out["runs"] = [wait(sock, rid) for rid in out["ids"]]
    return out


def probe(sock, rid):
    paths = [("GET", "/runs/ID"), ("GET", "/runs/ID/result"), ("GET", "/runs/ID/log"),
             ("GET", "/runs/ID/stdout"), ("GET", "/runs/ID/stderr"),
             ("GET", "/runs/ID/files/x"), ("POST", "/runs/ID/cancel"), ("DELETE", "/runs/ID")]
    statuses = {}
    for method, p in paths:
        if method == "DELETE" and "/runs/ID/stdout" in statuses and statuses["GET /runs/ID/stdout"] == 200:
            continue   # the owner keeps the run
        status, _, body = call(sock, method, p.replace("ID", rid), body={} if method == "POST" else None)
        statuses["%s %s" % (method, p)] = status
        if status != 200 and status != 409:
            assert json.loads(body)["error"], body
    listed = [r["id"] for r in json.loads(call(sock, "GET", "/runs")[2])["runs"]]
    return {"statuses": statuses, "listed": listed}


def pair(sock):
    # the second with a way out (observe allows the network): its relay
    # enters a namespace the run's own uid owns
    ids = [submit(sock, "sleep 1; echo x > mark", **more)[2]["id"]
           for more in ({}, {"policy": "observe"})]
    runs = [wait(sock, rid) for rid in ids]
    assert all(r["state"] == "finished" and r["exit_code"] == 0 for r in runs), runs
    return {"ids": ids}


def err_of(answer):
    status, _, body = answer
    try:
        return [status, json.loads(body)["error"]]
    except (ValueError, KeyError):
        return [status, None]


def read_to_end(s):
    """Everything a connected socket gives until the peer closes it."""
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk


def too_big(sock):
    """A body over --max-body is refused on its Content-Length, before it
    is read: the answer comes while the client is still sending."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall(b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n{" % (2 << 20))
    data = read_to_end(s)
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), {}, body


def hostile(sock):
    cases = {
        "malformed": call(sock, "POST", "/runs", raw=b'{"argv": ["true"'),
        "not_object": call(sock, "POST", "/runs", raw=b'"x"'),
        "not_utf8": call(sock, "POST", "/runs", raw=b'{"argv": ["\xff"]}'),
        "deep": call(sock, "POST", "/runs", raw=b"[" * 10000),
        "unknown_member": call(sock, "POST", "/runs", body={"argv": ["true"], "x": 1}),
        "too_big": too_big(sock),
        "dotdot_file": call(sock, "POST", "/runs", body={
            "argv": ["true"], "files": [{"path": "../../etc/cron.d/x", "text": "boom"}]}),
        "abs_file": call(sock, "POST", "/runs", body={
            "argv": ["true"], "files": [{"path": "/etc/cron.d/x", "text": "boom"}]}),
        "bind_policy": call(sock, "POST", "/runs", body={
            "argv": ["true"], "policy_text": "version 1\nbind /root /r\n"}),
        "include_policy": call(sock, "POST", "/runs", body={
            "argv": ["true"], "policy_text": "version 1\ninclude /etc/shadow\n"}),
        "bare_env": call(sock, "POST", "/runs", body={"argv": ["true"], "env": {"A=B": "1"}}),
        "no_route": call(sock, "GET", "/nothing"),
        "bad_method": call(sock, "PUT", "/runs"),
        "bad_wait": call(sock, "GET", "/runs/r-0?wait=forever"),
        "no_run": call(sock, "GET", "/runs/r-00000000000000000000"),
    }
    return {k: err_of(v) for k, v in cases.items()}


def files(sock):
    cmd = ("echo 'made by the candidate' > mark; ln -s /etc/shadow link_to_shadow; "
           "mkfifo fifo; ln -s /etc dir_link")
    rid = submit(sock, cmd)[2]["id"]
    assert wait(sock, rid)["state"] == "finished"
    out = {}
    for name, p in [("plain", "mark"), ("link_to_shadow", "link_to_shadow"),
                    ("dotdot", "../../../../../../etc/shadow"), ("abs", "/etc/shadow"),
                    ("fifo", "fifo"), ("dir_link", "dir_link/shadow")]:
        status, _, body = call(sock, "GET", "/runs/%s/files/%s" % (rid, p))
        out[name] = [status, body.decode("utf-8", "replace")]
    return out


def detach(sock, n, cmd):
    return tally([submit(sock, cmd) for _ in range(int(n))])


def wait_all(sock, *ids):
    return {"runs": [wait(sock, rid) for rid in ids]}


def states(sock):
    return {r["id"]: r["state"] for r in json.loads(call(sock, "GET", "/runs")[2])["runs"]}


def cancel_all(sock):
    live = [rid for rid, s in states(sock).items() if s in ("queued", "running")]
    for rid in live:
        call(sock, "POST", "/runs/%s/cancel" % rid, body={})
    return {"runs": [wait(sock, rid) for rid in live]}


def views(sock, code):
    """The sandbox hold_view.py sees, pooled (no limits of its own) and
    cold (a limit of its own: no pooled sandbox has it)."""
    out = {}
    for how, limits in (("pooled", None), ("cold", {"memory": "1G"})):
        more = {"files": [{"path": "view.py", "text": code}]}
        if limits:
            more["limits"] = limits
        status, _, body = call(sock, "POST", "/runs", dict(argv=["python3", "view.py"], **more))
        assert status == 201, body
        run = wait(sock, json.loads(body)["id"])
        view = call(sock, "GET", "/runs/%s/stdout" % run["id"])[2]
        out[how] = {"run": run, "view": json.loads(view)}
    return out


COMMANDS = {"views": views, "burst": burst, "serial": serial, "busy": busy, "probe": probe, "pair": pair,
            "hostile": hostile, "files": files, "detach": detach, "wait": wait_all,
            "states": states, "cancel_all": cancel_all}

if __name__ == "__main__":
    print(json.dumps(COMMANDS[sys.argv[2]](sys.argv[1], *sys.argv[3:])))
