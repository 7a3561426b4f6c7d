"""Drive `vigil run --hold FD` as vigil serve's pool does (docs/RUN.md,
"Prepared runs: --hold"): a socketpair, vigil started with one end, its
"ready\\n" awaited, then one request (JSON, and the candidate's stdin,
stdout and stderr as SCM_RIGHTS).

As a script it stands in for `vigil run`: `hold_driver.py [PREFIX...]
VIGIL run OPTS -- CMD...` runs CMD through a held sandbox prepared with
OPTS, its own stdin/stdout/stderr the candidate's, and exits with vigil's
status (it becomes vigil: exec).  -o/--log, --result and --task-id go in the request; a file named
on the command line that a held sandbox would not show (not in the
system's trees) is named with --artifact when preparing, as a pool that
knows its inputs would.  VIGIL_TEST_HOLD=1 makes tests/helpers.py's
Caller run every `vigil run` so (`make test-hold`)."""
import json
import os
import socket
import subprocess
import sys
import time

READY = b"ready\n"
# what the request takes from the command line (vigil run's names)
MOVED = {"-o": "log", "--log": "log", "--result": "result", "--task-id": "task_id"}
# the host's system trees, shown in every sandbox (policy/ro_trees.c)
SYSTEM = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/etc/")


class Held:
    """One `vigil run --hold` started; ready() waits for its "ready"."""

    def __init__(self, argv, cwd=None, env=None, stdout=None, stderr=None, stdin=None):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        i = argv.index("run") + 1
        argv = [*argv[:i], "--hold", str(theirs.fileno()), *argv[i:]]
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, pass_fds=(theirs.fileno(),),
                                     stdout=stdout, stderr=stderr, stdin=stdin)
        theirs.close()

    def ready(self, timeout=60):
        self.sock.settimeout(timeout)
        try:
            got = self.sock.recv(64)
        except socket.timeout:
            got = b"(timeout)"
        self.sock.settimeout(None)
        return got == READY

    def send(self, request, fds):
        """The request (a dict as JSON, or bytes as they are) and fds."""
        data = request if isinstance(request, bytes) else json.dumps(request).encode()
        self.t_send = time.clock_gettime(time.CLOCK_BOOTTIME)
        socket.send_fds(self.sock, [data], list(fds))

    def close(self):
        self.sock.close()


def split(argv):
    """PREFIX + VIGIL run OPTS -- CMD into (vigil part, prep opts, request)."""
    i = argv.index("run")
    head, rest = argv[:i + 1], argv[i + 1:]
    sep = rest.index("--")
    opts, cmd = rest[:sep], rest[sep + 1:]
    prep, req, k = [], {"argv": cmd}, 0
    while k < len(opts):
        a = opts[k]
        name, eq, val = a.partition("=")
        if name in MOVED and (eq or k + 1 < len(opts)):
            if not eq:
                k += 1
                val = opts[k]
            key = MOVED[name]
            req[key] = os.path.abspath(val) if key != "task_id" else val
        else:
            prep.append(a)
        k += 1
    for a in cmd:
        path = os.path.abspath(a)
        if os.path.isfile(a) and not path.startswith(SYSTEM) and "/." not in path:
            prep += ["--artifact", a]
    return head, prep, req


def serve_one(sock, req):
    """What the pool does for one held sandbox: wait for ready, send."""
    sock.settimeout(None)
    if sock.recv(64) == READY:
        socket.send_fds(sock, [json.dumps(req).encode()], [0, 1, 2])


def main(argv):
    """vigil run --hold takes this process's place (its pid is vigil's, as
    a test that signals or kills it expects); a grandchild, which vigil
    never sees as its child, is the pool that sends the request."""
    head, prep, req = split(argv)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    child = os.fork()
    if child == 0:
        theirs.close()
        code = 0
        try:
            if os.fork() == 0:
                serve_one(ours, req)
        except OSError:
            code = 1
        os._exit(code)
    ours.close()
    os.waitpid(child, 0)
    os.set_inheritable(theirs.fileno(), True)
    args = [*head, "--hold", str(theirs.fileno()), *prep]
    os.execvp(args[0], args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
