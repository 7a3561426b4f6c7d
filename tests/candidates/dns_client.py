"""dns_client.py: a candidate that resolves and connects, one step per
argument pair, and says what happened on stdout (one line per step):
  resolve NAME   -> "resolve NAME ok ADDR,ADDR" or "resolve NAME fail ERRNO-TEXT"
  connect ADDR:PORT -> "connect ADDR:PORT errno=N" (0: connected)
  flood N        -> N malformed queries straight at the resolver, then "flood N done"
  raw NAME       -> one A query of its own: "raw NAME rcode=N answers=K" (or "timeout")
  send NAME      -> the same query, not waiting for the answer: "send NAME"
It uses the system's resolver (glibc getaddrinfo, /etc/resolv.conf), as
any program would."""
import errno
import os
import socket
import struct
import sys


def resolve(name):
    try:
        infos = socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)
        addrs = sorted({i[4][0] for i in infos})
        print(f"resolve {name} ok {','.join(addrs)}", flush=True)
    except socket.gaierror as e:
        print(f"resolve {name} fail {e.args[1].replace(' ', '_')}", flush=True)


def connect(target):
    addr, port = target.rsplit(":", 1)
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    print(f"connect {target} errno={s.connect_ex((addr, int(port)))}", flush=True)
    s.close()


def garbage(i):
    """Queries a resolver must survive: short, huge counts, pointer loops,
    labels running past the end, bad characters, responses."""
    hdr = struct.pack(">HHHHHH", i & 0xffff, 0x0100, 1, 0, 0, 0)
    shapes = [
        b"\x00" * (i % 12),                                   # shorter than a header
        hdr + b"\xc0\x0c\x00\x01\x00\x01",                    # pointer to itself
        hdr + b"\x3f" + b"a" * 10,                            # label past the end
        hdr[:4] + b"\xff\xff" + hdr[6:] + b"\x01a\x00\x00\x01\x00\x01",  # 65535 questions
        hdr + b"\x04a b.\x00\x00\x01\x00\x01",                # bad characters
        hdr + (b"\x3f" + b"x" * 63) * 5 + b"\x00\x00\x01\x00\x01",  # name too long
        struct.pack(">HHHHHH", i, 0x8180, 1, 1, 0, 0) + b"\x01a\x00\x00\x01\x00\x01",  # a response
        os.urandom(1 + i % 600),
    ]
    return shapes[i % len(shapes)]


def flood(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("127.0.0.53", 53))
    s.setblocking(False)
    for i in range(n):
        try:
            s.send(garbage(i))
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNREFUSED, errno.ENOBUFS):
                raise
        try:
            while True:
                s.recv(4096)
        except OSError:
            pass
    print(f"flood {n} done", flush=True)


def query(name):
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0\0\1\0\1"
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendto(q, ("127.0.0.53", 53))
    return s


def send(name):
    query(name)
    print(f"send {name}", flush=True)


def raw(name):
    s = query(name)
    try:
        r = s.recv(512)
        print(f"raw {name} rcode={r[3] & 15} answers={struct.unpack('>H', r[6:8])[0]}", flush=True)
    except socket.timeout:
        print(f"raw {name} timeout", flush=True)


STEPS = {"raw": raw, "send": send, "resolve": resolve, "connect": connect, "flood": lambda n: flood(int(n))}
args = sys.argv[1:]
for verb, arg in zip(args[::2], args[1::2]):
    STEPS[verb](arg)
