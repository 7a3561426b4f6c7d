"""netns_probe.py STEP...: network probes for tests/test_net_ns.py, one
line of output per step.
  connect:ADDR:PORT:TOKEN      TCP connect, send TOKEN       -> "connect ADDR PORT ok|errno N"
  devconnect:ADDR:PORT:TOKEN   the same, bound to every non-loopback
                               device (SO_BINDTODEVICE) in turn, routes aside
  udp:ADDR:PORT:TOKEN          one datagram                   -> "udp ADDR PORT ok|errno N"
  serve:PORT:TOKEN             serve TOKEN on 127.0.0.1:PORT, fetch it back
                               -> "serve PORT got TOKEN" or "serve PORT errno N"
  autolisten:SECONDS           listen() on an unbound socket, print its port,
                               serve "served" for SECONDS
  sleep:SECONDS
"""
import errno
import socket
import sys
import threading
import time


def report(what, fn):
    try:
        r = fn()
        print(what, r if r else "ok", flush=True)
    except OSError as e:
        print(what, "errno", e.errno or errno.EIO, flush=True)


def tcp(addr, port, token, dev=None):
    with socket.socket() as s:
        s.settimeout(3)
        if dev:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
        s.connect((addr, int(port)))
        s.sendall(token.encode())
        # the data may still be in pasta when this process exits, and pasta
        # ends with the sandbox (docs/RUN.md): wait for the listener's close
        s.shutdown(socket.SHUT_WR)
        try:
            s.recv(1)
        except OSError:
            pass


def devices():
    # /proc/net/dev, not if_nameindex(): netlink sockets are not the
    # candidate's, and the sandbox has no /sys
    with open("/proc/net/dev") as f:
        names = [ln.split(":")[0].strip() for ln in f.readlines()[2:]]
    return [n for n in names if n != "lo"]


def udp(addr, port, token):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(token.encode(), (addr, int(port)))


def serve(port, token):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", int(port)))
    srv.listen(4)

    def one():
        c, _ = srv.accept()
        c.sendall(token.encode())
        c.close()
    threading.Thread(target=one, daemon=True).start()
    time.sleep(0.5)  # both runs are serving by now
    with socket.create_connection(("127.0.0.1", int(port)), timeout=3) as c:
        got = c.recv(100).decode()
    srv.close()
    return "got " + got


def autolisten(seconds):
    s = socket.socket()
    s.listen(4)
    print("autolisten port", s.getsockname()[1], flush=True)
    s.settimeout(0.2)
    until = time.monotonic() + float(seconds)
    while time.monotonic() < until:
        try:
            c, _ = s.accept()
            c.sendall(b"served\n")
            c.close()
        except socket.timeout:
            pass


for step in sys.argv[1:]:
    verb, *a = step.split(":")
    if verb == "connect":
        report(f"connect {a[0]} {a[1]}", lambda: tcp(*a))
    elif verb == "devconnect":
        for d in devices():
            report(f"devconnect {d} {a[0]} {a[1]}", lambda: tcp(*a, dev=d))
    elif verb == "udp":
        report(f"udp {a[0]} {a[1]}", lambda: udp(*a))
    elif verb == "serve":
        report(f"serve {a[0]}", lambda: serve(*a))
    elif verb == "autolisten":
        autolisten(a[0])
    elif verb == "sleep":
        time.sleep(float(a[0]))
