"""harness.py: run commands many times, interleaved, and summarise.

These VMs are slow and noisy, and their speed drifts over minutes.  So a
comparison is never made between numbers from different moments: every
command of one comparison runs once per round, in a fresh random order, and
the rounds repeat until the comparison's time budget is spent.  Medians of
those runs are compared with each other, never with another run's.
"""
import os
import random
import statistics
import threading
import time

DEVNULL = "/dev/null"


class Cmd:
    """One command of a comparison: a label, an argv and, after the runs,
    the wall times (s) and peak RSS values (KiB) of every run."""

    def __init__(self, key, label, argv, env=None, hwm=False):
        self.key = key
        self.label = label
        self.argv = argv
        self.env = env
        self.hwm = hwm          # sample the process's own VmHWM in the warm-up
        self.hwm_kib = None
        self.times = []
        self.maxrss = []
        self.error = None

    def median(self):
        return statistics.median(self.times) if self.times else None

    def iqr(self):
        """Interquartile range (s): how much the middle half of runs spread."""
        if len(self.times) < 4:
            return None
        q = statistics.quantiles(self.times, n=4)
        return q[2] - q[0]

    def rss_median(self):
        return statistics.median(self.maxrss) if self.maxrss else None


def run_once(argv, env, stdout=DEVNULL, stderr=DEVNULL, on_spawn=None):
    """Run argv to completion; return (status, seconds, rusage).  posix_spawn
    keeps the harness's own cost small and the same for every command."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, DEVNULL, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    if on_spawn:
        on_spawn(pid)
    _, status, ru = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), time.perf_counter() - t0, ru


class HwmSampler:
    """Polls /proc/PID/status for VmHWM (peak RSS of that process alone, its
    children not included) until the process is gone.  The last value read
    is a lower bound of the true peak: growth in the last poll interval is
    missed."""

    def __init__(self, interval=0.001):
        self.interval = interval
        self.kib = 0
        self._thread = None

    def start(self, pid):
        self._thread = threading.Thread(target=self._poll, args=(pid,), daemon=True)
        self._thread.start()

    def _poll(self, pid):
        path = "/proc/%d/status" % pid
        while True:
            try:
                with open(path) as f:
                    text = f.read()
            except OSError:
                return
            line = [l for l in text.splitlines() if l.startswith("VmHWM:")]
            if not line:  # a zombie has no memory left to report
                return
            self.kib = max(self.kib, int(line[0].split()[1]))
            time.sleep(self.interval)

    def join(self):
        if self._thread:
            self._thread.join()


def warm_up(cmd, errlog):
    """The untimed first run of cmd: it must exit 0, or cmd is kept out of
    the comparison with its error instead of producing a meaningless time.
    Commands with hwm set have their VmHWM sampled here: the poller costs
    CPU, so it never runs during a timed run."""
    sampler = HwmSampler() if cmd.hwm else None
    try:
        code, _, _ = run_once(cmd.argv, cmd.env, stderr=errlog,
                              on_spawn=sampler.start if sampler else None)
    except OSError as e:
        cmd.error = "%s: %s" % (cmd.argv[0], e.strerror)
        return False
    if sampler:
        sampler.join()
        cmd.hwm_kib = sampler.kib
    if code != 0:
        tail = []
        try:
            with open(errlog, errors="replace") as f:
                tail = f.read().strip().splitlines()[-1:]
        except OSError:
            pass
        cmd.error = "exit %d%s" % (code, (": " + tail[0][:120]) if tail else "")
        return False
    return True


def compare(cmds, budget_s, min_rounds, max_rounds, errlog, log=None):
    """Time cmds in interleaved rounds.  A warm-up round (not kept) checks
    each command and measures a round; then as many rounds as fit in
    budget_s, within [min_rounds, max_rounds]."""
    t0 = time.perf_counter()
    live = [c for c in cmds if warm_up(c, errlog)]
    if not live:
        return cmds
    per_round = max(time.perf_counter() - t0, 1e-3)
    rounds = int(max(min_rounds, min(max_rounds, budget_s / per_round)))
    if log:
        log("  %d rounds of %d commands (%.2f s a round)" % (rounds, len(live), per_round))
    order = list(live)
    for _ in range(rounds):
        random.shuffle(order)
        for c in order:
            code, secs, ru = run_once(c.argv, c.env)
            if code != 0:
                c.error = c.error or "exit %d during timing" % code
                continue
            c.times.append(secs)
            c.maxrss.append(ru.ru_maxrss)
    return cmds
