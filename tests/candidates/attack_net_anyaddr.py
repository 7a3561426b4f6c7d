"""attack_net_anyaddr.py TCPPORT UDPPORT TOKEN: reach a service on the
host's 127.0.0.1 by naming the unspecified address instead (the kernel
routes 0.0.0.0 and :: to loopback), by TCP connect and by UDP sendto, in
two threads.  Prints one line per attempt: "tcp connected" or
"tcp refused ERRNO", "udp sent" or "udp refused ERRNO"."""
import socket
import sys
import threading

tcp_port, udp_port, token = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
lines = {}


def tcp():
    s = socket.socket()
    try:
        s.connect(("0.0.0.0", tcp_port))
        s.sendall(token)
        lines["tcp"] = "tcp connected"
    except OSError as e:
        lines["tcp"] = f"tcp refused {e.errno}"


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(token, ("0.0.0.0", udp_port))
        lines["udp"] = "udp sent"
    except OSError as e:
        lines["udp"] = f"udp refused {e.errno}"


threads = [threading.Thread(target=f) for f in (tcp, udp)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(lines["tcp"])
print(lines["udp"])
