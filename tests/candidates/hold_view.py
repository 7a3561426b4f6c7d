"""What a candidate can see of the sandbox it is in, as one JSON object on
stdout (tests/test_run_hold.py compares a held run's with a cold one's):
its ids, environment, mounts, limits, fds, cgroup, seccomp state, and, apart
under "times", its own and pid 1's start times.  "exitN" exits N."""
import json
import os
import resource
import sys


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return "error: %s" % e.strerror


def status_fields(names):
    out = {}
    for line in read("/proc/self/status").splitlines():
        k, _, v = line.partition(":")
        if k in names:
            out[k] = v.strip()
    return out


def mounts():
    """mountinfo without the mount ids (a counter of the whole host)."""
    out = []
    for line in read("/proc/self/mountinfo").splitlines():
        f = line.split()
        out.append(" ".join(f[3:]))
    return out


def start_ticks(pid):
    text = read("/proc/%s/stat" % pid)
    return int(text[text.rindex(")") + 2:].split()[19]) if ")" in text else -1


def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as e:
        return "error: %s" % e.strerror


view = {
    "pid": os.getpid(), "ppid": os.getppid(), "uid": os.getuid(), "gid": os.getgid(),
    "cwd": os.getcwd(), "env": dict(os.environ), "hostname": os.uname().nodename,
    "stdin": sys.stdin.read(),
    "status": status_fields({"Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd",
                             "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters"}),
    "limits": {n: resource.getrlimit(getattr(resource, n)) for n in
               ("RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_AS",
                "RLIMIT_CORE")},
    "mounts": mounts(), "cgroup": read("/proc/self/cgroup"),
    "init_cmdline": read("/proc/1/cmdline").rstrip("\0"),
    "fds": listing("/proc/self/fd"), "tmp": listing("/tmp"), "pids": listing("/proc"),
    "times": {"start": start_ticks("self"), "init_start": start_ticks(1)},
}
view["pids"] = [p for p in view["pids"] if isinstance(view["pids"], list) and p.isdigit()]
json.dump(view, sys.stdout, sort_keys=True)
sys.stdout.flush()
sys.stderr.write("to stderr\n")
code = [int(a[4:]) for a in sys.argv[1:] if a.startswith("exit")]
sys.exit(code[0] if code else 0)
