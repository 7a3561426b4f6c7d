"""connect.py PORT: try a TCP connection to 127.0.0.1:PORT and send a line."""
import socket
import sys

port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(2)
try:
    s.connect(("127.0.0.1", port))
    s.sendall(b"hello from the sandbox\n")
    print("connected")
except OSError as e:
    print("connect failed", e.errno)
