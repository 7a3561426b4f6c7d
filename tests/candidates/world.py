"""world.py [ABSTRACT_NAME]: print, as JSON, what the candidate can see of
the machine: processes, hostname, network interfaces, ids, capabilities,
/tmp, and whether a unix socket in the abstract namespace answers."""
import json
import os
import socket

procs = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                procs[d] = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            pass
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
abstract = None
if len(os.sys.argv) > 1:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0" + os.sys.argv[1])
        abstract = "connected"
    except OSError as e:
        abstract = e.errno
with open("/tmp/vigil-world-probe", "w") as f:
    f.write("x")
print(json.dumps({
    "procs": procs,
    "hostname": socket.gethostname(),
    "ifaces": [line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]],
    "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
    "cap_eff": status["CapEff"].strip(), "cap_bnd": status["CapBnd"].strip(),
    "no_new_privs": status["NoNewPrivs"].strip(), "seccomp": status["Seccomp"].strip(),
    "tmp": sorted(os.listdir("/tmp")),
    "abstract": abstract,
}))
