"""tools.py: how each supervisor under comparison runs a command, and how
many calls each one stopped.

A tool is a function (argv, tag) -> argv that wraps a candidate command;
tag names the run so that a tool's log or output file does not collide
with another's.  The paths of the peers are fixed (/usr/bin/...): the
benchmark must not pick up a different binary from PATH.
"""
import json
import os
import re
import subprocess

# Inside vigil's sandbox the loop program is bound read-only here
# (bench.policy allows exec of it); other tools run it where it was built.
CALLS_IN_SANDBOX = "/opt/vigil-bench/calls"

STRACE = "/usr/bin/strace"
# The "fair peer": strace stopping only file, network and process
# calls, selected by a seccomp filter as vigil's are.
STRACE_CLASSES = "%file,%network,%process"


def vigil_stopped_set(root):
    """The calls vigil's seccomp filter stops when a policy audits every
    class: the table rows that take a path, a socket address or exec
    (core/syscalls_rows.h).  Baseline rows (mount, ptrace, ...) are
    refused outright and the workloads never make them."""
    names = []
    with open(os.path.join(root, "core/syscalls_rows.h")) as f:
        for line in f:
            # ROW(nr, name, class, flags, ...)
            m = re.match(r"ROW\(\d+,\s*(\w+),\s*\w+,\s*([A-Z |]+),", line)
            if m and set(re.split(r"\s*\|\s*", m.group(2).strip())) & {"FI", "NE", "PR"}:
                names.append(m.group(1))
    return names


class Env:
    """Paths of one benchmark run: the vigil binary, the policy, the work
    dir (the candidate's cwd, writable by the sandbox's unprivileged user),
    the directory for logs, and the loop program outside the sandbox."""

    def __init__(self, root, vigil, work, logs, calls, base=None):
        self.root = root
        self.vigil = vigil
        # VIGIL_BASE: an older vigil binary run beside this one, so that a
        # change's cost is a ratio measured in the same run ("before").
        self.base = base
        self.policy = os.path.join(root, "bench/bench.policy")
        self.work = work
        self.logs = logs
        self.calls = calls
        self.same_set = ",".join("?" + n for n in vigil_stopped_set(root))
        # Named by --artifact, it replaces vigil's default of hashing every
        # argument that is a file (the command's binary included).
        self.tiny = os.path.join(work, "tiny-artifact")
        with open(self.tiny, "w") as f:
            f.write("x\n")

    def log_path(self, tag):
        return os.path.join(self.logs, tag + ".msgpack")

    # ---- audit tools: candidate argv -> wrapped argv ----
    def bare(self, argv, tag):
        return list(argv)

    def vigil_run(self, argv, tag, extra=(), binary=None):
        argv = [CALLS_IN_SANDBOX if a == self.calls else a for a in argv]
        return [binary or self.vigil, "run", "-q", "-p", self.policy, "--workdir", self.work,
                "--bind", "%s:%s" % (self.calls, CALLS_IN_SANDBOX),
                "--env", "PYTHONDONTWRITEBYTECODE=1", "-o", self.log_path(tag),
                *extra, "--"] + argv

    def vigil_nohash(self, argv, tag):
        return self.vigil_run(argv, tag, ["--artifact", self.tiny])

    def vigil_before(self, argv, tag):
        return self.vigil_run(argv, tag, binary=self.base)

    def strace_all(self, argv, tag):
        return [STRACE, "-f", "-o", "/dev/null"] + list(argv)

    def strace_seccomp(self, argv, tag):
        return [STRACE, "-f", "--seccomp-bpf", "-e", "trace=" + STRACE_CLASSES,
                "-o", "/dev/null"] + list(argv)

    def strace_same(self, argv, tag):
        return [STRACE, "-f", "--seccomp-bpf", "-e", "trace=" + self.same_set,
                "-o", "/dev/null"] + list(argv)

    def bwrap_run(self, argv, tag):
        """vigil's isolation without its filter and tracer: the reference
        for what the namespaces and mounts alone cost per call."""
        return bwrap_argv(bind=self.calls) + ["--chdir", "/"] + list(argv)

    def audit_tools(self):
        """(key, label, wrapper) of the tools the workloads run under."""
        before = [("vigil-before", "vigil run, $VIGIL_BASE binary", self.vigil_before)]
        return [
            ("bare", "bare", self.bare),
            ("vigil", "vigil run", self.vigil_run),
            *(before if self.base else []),
            ("vigil-nh", "vigil run --artifact <tiny>", self.vigil_nohash),
            ("strace", "strace -f", self.strace_all),
            ("strace-sc", "strace -f --seccomp-bpf %file,%network,%process", self.strace_seccomp),
            ("strace-same", "strace -f --seccomp-bpf <vigil's set>", self.strace_same),
        ]

    # ---- counting what a tool stopped ----
    def vigil_counts(self, tag):
        """Audited calls recorded in the trailer of the tool's last log:
        (recorded calls, refused calls), or None."""
        out = subprocess.run([self.vigil, "log", "--json", "--class", "trailer",
                              self.log_path(tag)], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            rec = json.loads(line)
            if rec.get("type") == "trailer":
                n = sum(c["n"] for c in rec.get("counts", []))
                refused = sum(c["n"] for c in rec.get("counts", []) if c["decision"] != "allow")
                return n, refused
        return None

    def strace_count(self, wrapped, env, scratch):
        """Calls a strace variant stops: one extra run with -c (its summary
        counts exactly the calls it traces)."""
        out = os.path.join(scratch, "strace-count.txt")
        argv = list(wrapped)
        i = argv.index("-o")
        argv[i + 1] = out
        argv.insert(1, "-c")
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with open(out) as f:
                for line in f:
                    fields = line.split()
                    if fields and fields[-1] == "total":
                        return int(fields[3])
        except (OSError, ValueError, IndexError):
            pass
        return None


def bwrap_argv(bind=None):
    """bwrap with the isolation of vigil's sandbox, on a merged-/usr system:
    the top-level links are recreated as they are on this machine."""
    merged = [a for d in ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
              if os.path.islink("/" + d)
              for a in ("--symlink", os.readlink("/" + d), "/" + d)]
    # After --dev and --tmpfs: a bind under /dev or /tmp must not be hidden.
    extra = ["--ro-bind", bind, bind] if bind else []
    return ["/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
            *merged, "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev",
            "--tmpfs", "/tmp", *extra, "--new-session", "--cap-drop", "ALL"]


def startup_tools(env, cand=("/bin/true",), bind=None):
    """The issue's start-up comparison: (key, label, argv) running cand.
    bind: a host file the candidate needs, made visible at the same path
    (vigil itself runs it through vigil_run, which binds it)."""
    cand = list(cand)
    vigil = (env.vigil_run(cand, "startup") if bind else
             [env.vigil, "run", "-q", "-o", env.log_path("startup"), "--"] + cand)
    return [
        ("bare", "bare", cand),
        ("vigil", "vigil run -q", vigil),
        ("bwrap", "bwrap (same isolation)", bwrap_argv(bind) + cand),
        ("unshare", "unshare -Urnpf --mount-proc",
         ["/usr/bin/unshare", "-Urnpf", "--mount-proc"] + cand),
        ("firejail", "firejail --noprofile --net=none --private",
         ["/usr/bin/firejail", "--quiet", "--noprofile", "--net=none", "--private"] + cand),
        ("strace", "strace -f", [STRACE, "-f", "-o", "/dev/null"] + cand),
    ]
