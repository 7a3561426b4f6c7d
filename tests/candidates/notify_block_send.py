"""notify_block_send.py DIR N: a unix datagram sender that fills its
peer's queue, so that its sendto (carried out by vigil) blocks, and a
peer process that must open files (audited calls) before it reads
anything.  Prints "got N" when every datagram arrived."""
import os
import socket
import sys

d, n = sys.argv[1], int(sys.argv[2])
path = os.path.join(d, "r.sock")
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
rx.bind(path)
pid = os.fork()
if pid == 0:
    tx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    for i in range(n):
        tx.sendto(b"x" * 1024, path)
    os._exit(0)
# the peer: its opens must be served while the sender blocks
for i in range(50):
    with open("/etc/hostname") as f:
        f.read()
got = 0
while got < n:
    rx.recv(2048)
    got += 1
os.waitpid(pid, 0)
print(f"got {got}")
