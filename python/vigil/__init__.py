"""vigil from Python: run a candidate, run a batch, read a log.

    import vigil
    r = vigil.run(["python3", "cand.py"], policy="python", timeout="10s")
    print(r["status"], r["exit_code"], r["stdout"]["tail"])

    for rec in vigil.batch([{"id": "t1", "code": "print(1)", "language": "python"}],
                           out="runs", jobs=4):
        print(rec["task_id"], rec["status"], rec["sha256"])

    for event in vigil.read_log(r["log"]):
        if event["type"] == "syscall" and event["decision"] != "allow":
            print(event["args"])

Each call runs the vigil binary (VIGIL in the environment, else `vigil` on
PATH); results are the JSON records `vigil run --result` and `vigil batch`
write (docs/RUN.md, "The result record"); the log reader uses Debian's
python3-msgpack.  Nothing here decides anything: the binary does.
"""
import json
import os
import shutil
import subprocess
import tempfile

__all__ = ["VigilError", "batch", "binary", "read_log", "run"]

# `vigil run` flags that take a value, by keyword.
_RUN_FLAGS = ("timeout", "cpu", "memory", "procs", "files", "fsize", "output", "tmpfs",
              "refusals", "log_size", "workdir", "task_id")


class VigilError(RuntimeError):
    """vigil itself could not do what was asked (exit 125, or a batch that
    is misconfigured); the message is vigil's own."""


def binary(vigil=None):
    """The vigil binary a call uses."""
    path = vigil or os.environ.get("VIGIL") or shutil.which("vigil")
    if not path:
        raise VigilError("no vigil binary: set VIGIL or put vigil on PATH")
    return path


def run(argv, *, policy=None, log=None, env=None, dry_run=False, vigil=None, extra=(),
        cwd=None, **limits):
    """Run argv under vigil; return the result record (a dict).

    policy: a file or a shipped policy's name; log: where the event log goes
    (default: vigil's state directory, as for `vigil run`; result["log"]
    names it);
    env: {NAME: VALUE} passed with --env; limits and the other keywords
    (timeout="10s", memory="512M", procs=64, refusals=1000, log_size="16M",
    workdir=..., task_id=...) are
    `vigil run` flags.  A result with status "error" is returned, not
    raised: it is a fact about the run."""
    unknown = set(limits) - set(_RUN_FLAGS)
    if unknown:
        raise TypeError("unknown vigil.run keyword(s): " + ", ".join(sorted(unknown)))
    tmp = tempfile.mkdtemp(prefix="vigil-py-")   # for the result only: removed below
    result_path = os.path.join(tmp, "result.json")
    args = [binary(vigil), "run", "-q", "--result", result_path]
    if log:
        args += ["-o", os.fspath(log)]   # else vigil's own state directory
    if policy:
        args += ["-p", policy]
    if dry_run:
        args.append("--dry-run")
    for name, value in (env or {}).items():
        args += ["--env", "%s=%s" % (name, value)]
    for name, value in limits.items():
        args += ["--" + name.replace("_", "-"), str(value)]
    args += list(extra) + ["--"] + list(argv)
    proc = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, cwd=cwd)
    try:
        with open(result_path) as f:
            result = json.load(f)
    except (OSError, ValueError):
        raise VigilError(proc.stderr.strip() or "vigil run wrote no result (exit %d)"
                         % proc.returncode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result


def batch(tasks, out, *, jobs=1, shard=None, policy=None, vigil=None):
    """Run tasks (a list of task dicts, or the path of a JSON Lines task
    file) with `vigil batch` into the directory out; return the records of
    out/results.jsonl (or of the shard's file) as a list of dicts.  Tasks
    already done in out are not run again."""
    if isinstance(tasks, (str, os.PathLike)):
        task_file = os.fspath(tasks)
    else:
        fd, task_file = tempfile.mkstemp(prefix="vigil-tasks-", suffix=".jsonl")
        with os.fdopen(fd, "w") as f:
            for t in tasks:
                f.write(json.dumps(t) + "\n")
    args = [binary(vigil), "batch", task_file, "--out", os.fspath(out), "-j", str(jobs),
            "--progress", "never"]
    if shard:
        args += ["--shard", "%d/%d" % shard]
    if policy:
        args += ["-p", policy]
    try:
        proc = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    finally:
        if task_file != tasks:
            os.unlink(task_file)
    if proc.returncode == 2:
        raise VigilError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                         "vigil batch: misconfigured")
    name = "results-%d-of-%d.jsonl" % shard if shard and shard[1] > 1 else "results.jsonl"
    with open(os.path.join(os.fspath(out), name)) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_log(path):
    """The records of a vigil log, in order, as dicts (header first; a
    trailer last when the run ended cleanly).  A record cut off at the end
    (a supervisor that was killed) is left out."""
    import msgpack  # Debian's python3-msgpack; only the log reader needs it
    with open(path, "rb") as f:
        unpacker = msgpack.Unpacker(f, raw=False)
        try:
            for rec in unpacker:
                yield rec
        except msgpack.exceptions.OutOfData:
            return
