"""tries_things.py: a candidate that tries what a reviewer must see: it
reads ~/.ssh/id_rsa, resolves pypi.org (a name the default policy does not
allow: vigil's resolver answers NXDOMAIN) and runs curl (found through
PATH, refused).  Its intent summary must flag each of them, by name
(tests/test_summary_noise.py)."""
import os
import socket
import subprocess

try:
    with open(os.path.expanduser("~/.ssh/id_rsa")) as f:
        print("key:", f.readline()[:10])
except OSError as e:
    print("key:", e.strerror)
try:
    print("pypi.org:", socket.getaddrinfo("pypi.org", 443, proto=socket.IPPROTO_TCP))
except socket.gaierror as e:
    print("pypi.org:", e)
try:
    subprocess.run(["curl", "-s", "https://pypi.org/simple/"], check=False)
except OSError as e:
    print("curl:", e.strerror)
print("done")
