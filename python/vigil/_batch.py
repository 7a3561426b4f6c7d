"""`vigil.batch`: many candidates under `vigil batch`, with a callback per
finished task."""
from __future__ import annotations

import collections
import hashlib
import json
import os
import subprocess
import tempfile
import threading
from typing import (IO, Any, Callable, Deque, Iterable, List, Mapping, Optional, Set, Tuple,
                    Union)

from ._errors import VigilError
from ._result import Result
from ._run import PathArg, binary

Task = Mapping[str, Any]
Progress = Callable[[Result], object]

# vigil batch's exit statuses (docs/RUN.md, "Many candidates").
_EXIT_CONFIG = 2
_EXIT_INCOMPLETE = 3
# How often, at most, the results are looked at while nothing is said on
# vigil batch's stderr (it says a line per finished task).
_POLL_S = 0.5
# vigil's last lines on stderr, kept for the error message.
_STDERR_KEPT = 20


def _write_tasks(tasks: Iterable[Task]) -> Tuple[str, List[str]]:
    """A JSON Lines task file of tasks (removed by the caller) and the ids."""
    fd, path = tempfile.mkstemp(prefix="vigil-tasks-", suffix=".jsonl")
    ids: List[str] = []
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for i, t in enumerate(tasks):
                if not isinstance(t, Mapping):
                    raise TypeError("vigil.batch: task %d is a mapping (a task dict), not %s"
                                    % (i, type(t).__name__))
                f.write(json.dumps(dict(t)) + "\n")
                ids.append(str(t.get("id")))
    except BaseException:
        os.unlink(path)
        raise
    return path, ids


def _task_ids(path: str) -> List[str]:
    """The ids of a task file (vigil batch checks the file itself)."""
    ids: List[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                t = json.loads(line) if line.strip() else None
            except ValueError:
                continue
            if isinstance(t, dict):
                ids.append(str(t.get("id")))
    return ids


def shard_of(task_id: str, nshards: int) -> int:
    """The shard of a task, as vigil batch picks it (batch/taskfile.c,
    vg_batch_shard: the first 64 bits of the id's SHA-256, mod N)."""
    return int(hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:16], 16) % nshards


def _load(path: str) -> Optional[Result]:
    """A complete record at path, or None (not there, or not yet whole)."""
    try:
        with open(path, encoding="utf-8") as f:
            return Result.from_dict(json.load(f))
    except (OSError, ValueError):
        return None


class _Follower:
    """Which tasks have a result, as vigil batch makes them: each task's
    OUT/tasks/ID/result.json appears (renamed into place) when its run
    ends, and results.jsonl gets a line per task, as vigil writes it (at
    the end, or as it goes)."""

    def __init__(self, out: str, results: str, ids: List[str], jobs: int,
                 progress: Optional[Progress]) -> None:
        self.out, self.results, self.progress = out, results, progress
        self.pending: List[str] = list(dict.fromkeys(ids))
        self.reported: Set[str] = set()
        # Tasks start in file order, at most jobs at once: past the jobs-th
        # one without a result, none has started, and none is looked at.
        self.window = jobs
        self.offset = 0
        self.inode: Optional[int] = None

    def _report(self, task_id: str, rec: Result) -> None:
        if task_id not in self.reported:
            self.reported.add(task_id)
            if self.progress is not None:
                self.progress(rec)

    def _follow_results(self) -> None:
        try:
            f = open(self.results, "rb")
        except FileNotFoundError:
            return
        with f:
            st = os.fstat(f.fileno())
            if st.st_ino != self.inode or st.st_size < self.offset:
                self.inode, self.offset = st.st_ino, 0   # a new file: from its start
            f.seek(self.offset)
            for line in f:
                if not line.endswith(b"\n"):
                    break                                  # not yet whole
                self.offset += len(line)
                rec = Result.from_dict(json.loads(line))
                self._report(str(rec.task_id), rec)

    def _scan_tasks(self, window: Optional[int]) -> None:
        still: List[str] = []
        unfinished = 0
        for task_id in self.pending:
            if task_id in self.reported:
                continue
            rec = None
            if window is None or unfinished < window:
                rec = _load(os.path.join(self.out, "tasks", task_id, "result.json"))
                if rec is None:
                    unfinished += 1
            if rec is None:
                still.append(task_id)
            else:
                self._report(task_id, rec)
        self.pending = still

    def look(self, final: bool = False) -> None:
        """Report what has a result since the last look (final: look at
        every task, the run being over)."""
        self._follow_results()
        self._scan_tasks(None if final else self.window)


def _drain(stream: IO[bytes], kept: Deque[str], wake: threading.Event) -> None:
    for line in stream:
        kept.append(line.decode("utf-8", "replace").rstrip("\n"))
        wake.set()
    wake.set()


def _wait(proc: "subprocess.Popen[bytes]", follower: _Follower, wake: threading.Event) -> None:
    """Report tasks as they finish until vigil batch exits; a callback
    that raises stops the batch (resumable) and the error goes on."""
    try:
        while proc.poll() is None:
            wake.wait(_POLL_S)
            wake.clear()
            follower.look()
        follower.look(final=True)
    except BaseException:
        proc.terminate()
        proc.wait()
        raise


def _check_exit(code: int, kept: Deque[str]) -> None:
    said = next((line for line in reversed(kept) if line.strip()), "")
    if code == _EXIT_CONFIG:
        raise VigilError(said or "vigil batch: misconfigured", exit_code=code)
    if code == _EXIT_INCOMPLETE:
        raise VigilError(said or "vigil batch: interrupted, results missing (run it again to "
                         "resume)", exit_code=code)
    if code not in (0, 1):
        raise VigilError(said or "vigil batch failed (exit %d)" % code, exit_code=code)


# vigil batch --rerun's values (None: vigil's default, "changed")
_RERUN = (None, "changed", "failed", "all")


def batch(tasks: Union[Iterable[Task], PathArg], out: PathArg, *, jobs: int = 1,
          shard: Optional[Tuple[int, int]] = None, policy: Optional[PathArg] = None,
          image: Optional[str] = None, progress: Optional[Progress] = None, rerun: Optional[str] = None,
          prepare: Optional[int] = None, uid_range: Optional[Tuple[int, int]] = None,
          vigil: Optional[PathArg] = None) -> List[Result]:
    """Run tasks with `vigil batch` into the directory ``out``; return the
    records of out/results.jsonl (or of the shard's file), in task order.

    ``tasks`` is an iterable of task dicts ({"id", "argv" | "code" +
    "language", "inputs", "stdin", "policy", "image", "limits", "env", "dry_run"}:
    docs/RUN.md, "Many candidates") or the path of a JSON Lines task file;
    relative paths in them are the current directory's.  Tasks done in
    ``out`` with their current key are not run again, unless ``rerun``
    ("failed": also those whose status was not ok; "all") says so.  ``jobs`` runs at once; ``shard``
    (I, N) runs shard I of N (`shard_of` says which tasks), None every
    task, whatever SLURM_ARRAY_* or JOB_COMPLETION_INDEX in the
    environment say; ``policy`` is the policy of tasks that name none,
    ``image`` their image (else their policy's).  ``prepare`` is how many
    sandboxes are prepared ahead for the tasks that run next (--prepare:
    None, vigil's default, as many as ``jobs``; 0 none, every run cold).
    ``uid_range`` (FIRST, LAST), as root, gives each live run a host uid of
    its own from that range (--uid-range).

    ``progress(result)`` is called once per task as its result appears
    (tasks done by an earlier batch included), in this thread, while the
    batch goes on; the record's ``key`` is None when vigil batch has not
    yet written the task's line in results.jsonl (the returned records
    have it).  If it raises, the batch is stopped (a later call resumes)
    and the exception goes on.

    Raises VigilError when vigil batch is misconfigured (exit 2: vigil's
    message) or ends with results missing (exit 3); a task whose run could
    not be carried out (exit 1) is a record with status "error".
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError("vigil.batch: jobs= is a number of runs at once (1 or more), not %r"
                         % (jobs,))
    if shard is not None and (len(shard) != 2 or not 0 <= shard[0] < shard[1]):
        raise ValueError("vigil.batch: shard= is (I, N) with 0 <= I < N, not %r" % (shard,))
    if rerun not in _RERUN:
        raise ValueError("vigil.batch: rerun= is one of %s, not %r"
                         % (", ".join(repr(x) for x in _RERUN), rerun))
    if prepare is not None and (isinstance(prepare, bool) or not isinstance(prepare, int)
                                or prepare < 0):
        raise ValueError("vigil.batch: prepare= is a number of sandboxes prepared ahead "
                         "(0 or more), not %r" % (prepare,))
    if uid_range is not None and (len(uid_range) != 2 or not all(
            isinstance(u, int) and not isinstance(u, bool) for u in uid_range)):
        raise ValueError("vigil.batch: uid_range= is (FIRST, LAST), two uids, not %r"
                         % (uid_range,))
    if progress is not None and not callable(progress):
        raise TypeError("vigil.batch: progress= is a callable taking a Result")
    given_file = isinstance(tasks, (str, os.PathLike))
    if isinstance(tasks, (str, os.PathLike)):
        task_file, ids = os.fspath(tasks), _task_ids(os.fspath(tasks))
    else:
        task_file, ids = _write_tasks(tasks)
    outdir = os.fspath(out)
    # --shard 0/1 for the whole file: not a shard SLURM_ARRAY_* or
    # JOB_COMPLETION_INDEX in the environment would pick behind the caller
    index, count = shard if shard is not None else (0, 1)
    args = [binary(vigil), "batch", task_file, "--out", outdir, "-j", str(jobs),
            "--progress", "never", "--shard", "%d/%d" % (index, count)]
    if policy is not None:
        args += ["-p", os.fspath(policy)]
    if image is not None:
        args += ["--image", image]
    if rerun is not None:
        args += ["--rerun", rerun]
    if prepare is not None:
        args += ["--prepare", str(prepare)]
    if uid_range is not None:
        args += ["--uid-range", "%d-%d" % tuple(uid_range)]
    name = "results-%d-of-%d.jsonl" % (index, count) if count > 1 else "results.jsonl"
    results = os.path.join(outdir, name)
    ids = [t for t in ids if count == 1 or shard_of(t, count) == index]
    follower = _Follower(outdir, results, ids, jobs, progress)
    try:
        _run_batch(args, follower)
    finally:
        if not given_file:
            os.unlink(task_file)
    with open(results, encoding="utf-8") as f:
        return [Result.from_dict(json.loads(line)) for line in f if line.strip()]


def _run_batch(args: List[str], follower: _Follower) -> None:
    kept: Deque[str] = collections.deque(maxlen=_STDERR_KEPT)
    wake = threading.Event()
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    reader = threading.Thread(target=_drain, args=(proc.stderr, kept, wake), daemon=True)
    reader.start()
    try:
        _wait(proc, follower, wake)
    finally:
        reader.join()
        proc.stderr.close()
    _check_exit(proc.returncode, kept)
