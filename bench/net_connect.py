"""net_connect.py ADDR PORT N: N TCP connections to ADDR:PORT, one byte
read from each (bench/net.py).  ADDR "local": a server of its own on
127.0.0.1 first, in a thread, so the loop stays in the caller's netns.
bench/net.py serves the outside end with the same serve(); this file
stays one file, the only one the sandboxed runs are given."""
import socket
import sys
import threading

BYTE = b"x"


def serve(srv):
    """Answer every connection to the listening srv with BYTE, in a
    daemon thread."""
    def loop():
        while True:
            c, _ = srv.accept()
            c.sendall(BYTE)
            c.close()
    threading.Thread(target=loop, daemon=True).start()


def main():
    addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if addr == "local":
        addr, srv = "127.0.0.1", socket.socket()
        srv.bind((addr, 0))
        srv.listen(128)
        port = srv.getsockname()[1]
        serve(srv)
    for _ in range(n):
        with socket.create_connection((addr, port), timeout=5) as s:
            if s.recv(1) != BYTE:
                sys.exit(1)


if __name__ == "__main__":
    main()
