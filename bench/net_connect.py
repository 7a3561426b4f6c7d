"""net_connect.py ADDR PORT N: N TCP connections to ADDR:PORT, one byte
read from each (bench/net.py).  ADDR "local": a server of its own on
127.0.0.1 first, in a thread, so the loop stays in the caller's netns."""
import socket
import sys
import threading

addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if addr == "local":
    addr, srv = "127.0.0.1", socket.socket()
    srv.bind((addr, 0))
    srv.listen(128)
    port = srv.getsockname()[1]

    def serve():
        while True:
            c, _ = srv.accept()
            c.sendall(b"x")
            c.close()
    threading.Thread(target=serve, daemon=True).start()
for _ in range(n):
    with socket.create_connection((addr, port), timeout=5) as s:
        if s.recv(1) != b"x":
            sys.exit(1)
