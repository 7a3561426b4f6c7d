"""`vigil.run`: one candidate under `vigil run`, its result as a `Result`."""
from __future__ import annotations

import enum
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import IO, Any, List, Mapping, Optional, Sequence, Tuple, Union

from ._errors import VigilError
from ._result import Mode, Result

PathArg = Union[str, "os.PathLike[str]"]
# A limit's value: "10s", "512M", 1.5 (a number is seconds for a
# duration, bytes for a size, as `vigil run` reads a bare number).
LimitArg = Union[str, int, float]
StdinArg = Union[bytes, bytearray, str, "os.PathLike[str]", IO[bytes], None]

# vigil's exit status when vigil itself failed (docs/RUN.md, "Exit status").
_EXIT_VIGIL_FAILED = 125
# The sandbox's host uid when vigil runs as root (launcher/run_opts.h,
# VG_HOST_NOBODY) and host_uid= gives none: a work dir run() makes must be
# the candidate's own.
_SANDBOX_UID_UNDER_ROOT = 65534
# The code and inputs run() puts in a work dir (batch/runner.c's mode).
_WORK_FILE_MODE = 0o644


class _Kind(enum.Enum):
    VALUE = "value"      # --flag VALUE
    SWITCH = "switch"    # --flag, when True
    MANY = "many"        # --flag VALUE, once per item
    ENV = "env"          # --env NAME=VALUE (NAME alone when the value is None)


@dataclass(frozen=True)
class _Opt:
    keyword: str
    flag: str
    kind: _Kind = _Kind.VALUE


# run()'s keywords, one row per `vigil run` option (cli/cmd_run.c's rows;
# the limits are policy/limit_table.c's flags).  tests/test_python_pkg.py
# checks that every option of `vigil run --help` is here or in _SET_BY_RUN.
_OPTIONS: Tuple[_Opt, ...] = (
    _Opt("policy", "--policy"),
    _Opt("image", "--image"),
    _Opt("log", "--log"),
    _Opt("task_id", "--task-id"),
    _Opt("mode", "--mode"),
    _Opt("dry_run", "--dry-run", _Kind.SWITCH),
    _Opt("stacks", "--stacks", _Kind.SWITCH),
    _Opt("py_frames", "--py-frames"),
    _Opt("workdir", "--workdir"),
    _Opt("keep", "--keep", _Kind.SWITCH),
    _Opt("bind", "--bind", _Kind.MANY),
    _Opt("bind_rw", "--bind-rw", _Kind.MANY),
    _Opt("env", "--env", _Kind.ENV),
    _Opt("artifacts", "--artifact", _Kind.MANY),
    _Opt("tail", "--tail"),
    _Opt("no_forward", "--no-forward", _Kind.SWITCH),
    _Opt("dns_upstream", "--dns-upstream"),
    _Opt("allow_degraded", "--allow-degraded", _Kind.SWITCH),
    _Opt("engine", "--engine"),
    _Opt("sign_key", "--sign-key"),
    _Opt("timeout", "--timeout"),
    _Opt("cpu", "--cpu"),
    _Opt("cpu_total", "--cpu-total"),
    _Opt("memory", "--memory"),
    _Opt("procs", "--procs"),
    _Opt("files", "--files"),
    _Opt("fsize", "--fsize"),
    _Opt("output", "--output"),
    _Opt("tmpfs", "--tmpfs"),
    _Opt("disk", "--disk"),
    _Opt("cpus", "--cpus"),
    _Opt("refusals", "--refusals"),
    _Opt("log_size", "--log-size"),
    _Opt("cpuset", "--cpuset"),
    _Opt("no_cgroups", "--no-cgroups", _Kind.SWITCH),
    _Opt("host_uid", "--host-uid"),
)
# Options run() gives itself: the result file it reads, no summary line;
# and --hold, a daemon's way in (vigil serve's pool, docs/RUN.md "Prepared
# runs"), which one run() with its command in hand has no use for.
_SET_BY_RUN = ("--result", "--quiet", "--help", "--hold")


@dataclass(frozen=True)
class _Language:
    file: str
    argv: Tuple[str, ...]
    policy: str


# code= languages, as a batch task's (batch/taskfile.c's table): the file
# the code is written to in the work dir, the command, the shipped policy.
# tests/test_python_pkg.py checks they run as `vigil batch` runs them.
LANGUAGES: Mapping[str, _Language] = {
    "python": _Language("cand.py", ("python3", "cand.py"), "python"),
    "shell": _Language("cand.sh", ("sh", "cand.sh"), "shell"),
    "node": _Language("cand.js", ("node", "cand.js"), "node"),
}


def binary(vigil: Optional[PathArg] = None) -> str:
    """The vigil binary a call uses: ``vigil`` if given, else $VIGIL,
    else `vigil` on PATH.  Raises VigilError when there is none."""
    path = os.fspath(vigil) if vigil else os.environ.get("VIGIL") or shutil.which("vigil")
    if not path:
        raise VigilError("no vigil binary: set VIGIL or put vigil on PATH")
    return path


def _value_text(keyword: str, value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool) or not isinstance(value, (str, int, float, os.PathLike)):
        raise TypeError("vigil.run: %s= must be a str or a number, not %s"
                        % (keyword, type(value).__name__))
    return str(os.fspath(value)) if isinstance(value, os.PathLike) else str(value)


def _env_args(value: Any) -> List[str]:
    if not isinstance(value, Mapping):
        raise TypeError("vigil.run: env= must be a mapping {NAME: VALUE or None}, not %s"
                        % type(value).__name__)
    out: List[str] = []
    for name, v in value.items():
        if not isinstance(name, str) or not name or "=" in name:
            raise ValueError("vigil.run: env= has a bad variable name %r" % (name,))
        if v is not None and not isinstance(v, str):
            raise TypeError("vigil.run: env[%r] must be a str (or None to pass it through), "
                            "not %s" % (name, type(v).__name__))
        out += ["--env", name if v is None else "%s=%s" % (name, v)]
    return out


def _option_args(opt: _Opt, value: Any) -> List[str]:
    """The `vigil run` arguments of one keyword's value."""
    if opt.kind is _Kind.SWITCH:
        if not isinstance(value, bool):
            raise TypeError("vigil.run: %s= is True or False, not %r" % (opt.keyword, value))
        return [opt.flag] if value else []
    if opt.kind is _Kind.ENV:
        return _env_args(value)
    if opt.kind is _Kind.MANY:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise TypeError("vigil.run: %s= is a list, not %s"
                            % (opt.keyword, type(value).__name__))
        return [a for v in value for a in (opt.flag, _value_text(opt.keyword, v))]
    return [opt.flag, _value_text(opt.keyword, value)]


def _flags(given: Mapping[str, Any]) -> List[str]:
    args: List[str] = []
    for opt in _OPTIONS:
        value = given.get(opt.keyword)
        if value is not None:
            args += _option_args(opt, value)
    return args


def _command(argv: Optional[Sequence[PathArg]], code: Optional[str],
             language: Optional[str]) -> Tuple[List[str], Optional[_Language]]:
    """The command to run and, for code=, its language."""
    if (argv is None) == (code is None):
        raise TypeError("vigil.run: give argv or code=, not %s" % ("both" if code else "neither"))
    if code is not None:
        if not isinstance(code, str):
            raise TypeError("vigil.run: code= is a str, not %s" % type(code).__name__)
        lang = LANGUAGES.get(language or "")
        if lang is None:
            raise ValueError("vigil.run: code= needs language= one of %s, not %r"
                             % (", ".join(LANGUAGES), language))
        return list(lang.argv), lang
    if language is not None:
        raise ValueError("vigil.run: language= goes with code=, not with argv")
    if isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence):
        raise TypeError("vigil.run: argv is a list of strings (['sh', '-c', 'echo hi'] for a "
                        "shell line), not %s" % type(argv).__name__)
    if not argv or not all(isinstance(a, (str, os.PathLike)) for a in argv):
        raise ValueError("vigil.run: argv must be a non-empty list of strings")
    return [os.fspath(a) for a in argv], None


def _new_file(work: str, name: str) -> IO[bytes]:
    """A file made in the work dir, as `vigil batch` makes them: 0644 (the
    sandbox's user reads it whoever wrote it), never over one there."""
    path = os.path.join(work, name)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     _WORK_FILE_MODE)
    except FileExistsError:
        raise FileExistsError("vigil.run: %s is already in the work dir %s" % (name, work)) \
            from None
    os.fchmod(fd, _WORK_FILE_MODE)   # whatever the umask
    return os.fdopen(fd, "wb")


def _fill_workdir(work: str, code: Optional[str], lang: Optional[_Language],
                  inputs: Sequence[PathArg]) -> None:
    """The code and the inputs in the work dir, as `vigil batch` puts a
    task's (inputs by their base name)."""
    names = [os.path.basename(os.fspath(p)) for p in inputs]
    if lang is not None:
        names.append(lang.file)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError("vigil.run: two files named %s in the work dir" % ", ".join(dup))
    for p in inputs:
        if not os.path.isfile(p):
            raise FileNotFoundError("vigil.run: input %r: no such file" % os.fspath(p))
    for p in inputs:
        with open(p, "rb") as src, _new_file(work, os.path.basename(os.fspath(p))) as dst:
            shutil.copyfileobj(src, dst)
    if code is not None and lang is not None:
        with _new_file(work, lang.file) as dst:
            dst.write(code.encode("utf-8"))


def _stdin_of(stdin: StdinArg) -> Tuple[Any, Optional[bytes], Optional[IO[bytes]]]:
    """(stdin for Popen, bytes to send, a file run() opened and closes)."""
    if stdin is None:
        return subprocess.DEVNULL, None, None
    if isinstance(stdin, (bytes, bytearray)):
        return subprocess.PIPE, bytes(stdin), None
    if isinstance(stdin, str):
        return subprocess.PIPE, stdin.encode("utf-8"), None
    if isinstance(stdin, os.PathLike):
        f = open(os.fspath(stdin), "rb")
        return f, None, f
    if hasattr(stdin, "fileno"):
        return stdin, None, None
    raise TypeError("vigil.run: stdin= is bytes, a str, a path (pathlib.Path) or a binary "
                    "file, not %s" % type(stdin).__name__)


def _remove_tree(path: str) -> None:
    """Remove a work dir run() made, whatever modes the candidate left on
    what it made there."""
    def writable_again(func: Any, p: str, _exc: Any) -> None:
        os.chmod(os.path.dirname(p), 0o700)
        func(p)
    shutil.rmtree(path, onerror=writable_again)


def _invoke(args: List[str], stdin: StdinArg, cwd: Optional[PathArg],
            result_path: str) -> Result:
    """Run `vigil run` and read its result record."""
    popen_stdin, data, opened = _stdin_of(stdin)
    try:
        proc = subprocess.run(args, input=data, stdin=popen_stdin if data is None else None,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    finally:
        if opened is not None:
            opened.close()
    err = proc.stderr.decode("utf-8", "replace").strip()
    try:
        with open(result_path, encoding="utf-8") as f:
            result = Result.from_dict(json.load(f))
    except (OSError, ValueError):
        raise VigilError(err.splitlines()[-1] if err else
                         "vigil run wrote no result (exit %d)" % proc.returncode,
                         exit_code=proc.returncode) from None
    if result.exit_code == _EXIT_VIGIL_FAILED and result.status == "error":
        raise VigilError(result.error or err or "vigil run failed", exit_code=result.exit_code,
                         result=result)
    return result


def run(argv: Optional[Sequence[PathArg]] = None, *,
        code: Optional[str] = None, language: Optional[str] = None,
        inputs: Sequence[PathArg] = (), stdin: StdinArg = None,
        cwd: Optional[PathArg] = None, vigil: Optional[PathArg] = None, extra: Sequence[str] = (),
        policy: Optional[PathArg] = None, image: Optional[str] = None,
        log: Optional[PathArg] = None, task_id: Optional[str] = None, mode: Union[Mode, str, None] = None,
        dry_run: bool = False, stacks: bool = False, py_frames: Optional[str] = None,
        workdir: Optional[PathArg] = None, keep: bool = False,
        bind: Sequence[str] = (), bind_rw: Sequence[str] = (),
        env: Optional[Mapping[str, Optional[str]]] = None, artifacts: Sequence[PathArg] = (),
        tail: Optional[LimitArg] = None, no_forward: bool = False,
        dns_upstream: Optional[str] = None, allow_degraded: bool = False,
        engine: Optional[str] = None, sign_key: Optional[PathArg] = None,
        timeout: Optional[LimitArg] = None, cpu: Optional[LimitArg] = None,
        cpu_total: Optional[LimitArg] = None,
        memory: Optional[LimitArg] = None, procs: Optional[int] = None,
        files: Optional[int] = None, fsize: Optional[LimitArg] = None,
        output: Optional[LimitArg] = None, tmpfs: Optional[LimitArg] = None,
        disk: Optional[LimitArg] = None, cpus: Optional[LimitArg] = None,
        refusals: Optional[int] = None, log_size: Optional[LimitArg] = None,
        cpuset: Optional[str] = None, no_cgroups: bool = False,
        host_uid: Optional[int] = None) -> Result:
    """Run one candidate under `vigil run`; return its result record.

    The candidate is ``argv`` (a list: ``["python3", "cand.py"]``), or
    ``code`` with ``language`` ("python", "shell", "node"), written into
    the work dir and run with that language's interpreter and shipped
    policy, as a `vigil batch` task's.  ``inputs`` are host files copied
    into the work dir by their base name (``files`` is the limit on open
    files, --files).  With code or inputs and no
    ``workdir``, run() makes a work dir and removes it afterwards
    (``keep=True`` keeps it: ``result.workdir``).

    ``stdin`` is what the candidate reads: bytes, a str (sent as UTF-8),
    a path (``pathlib.Path``; a str is text, never a file name) or a
    binary file; by default /dev/null.  ``cwd`` is vigil's own working
    directory (relative paths in argv are taken from there).

    Every other keyword is the `vigil run` option of that name
    (``image`` is --image: a stored image's name or digest, whose digest
    the result's ``image`` then holds; ``sign_key`` is --sign-key, an
    ed25519 key that signs the log's seal, the result's ``seal``;
    ``task_id`` is --task-id; ``artifacts`` --artifact, once each;
    ``host_uid`` is --host-uid, root only: the candidate's host uid, which
    owns the work dir run() makes;
    ``env`` {NAME: VALUE, or None to pass NAME through}); None or False
    leaves vigil's default.  Limits: ``timeout="10s"``, ``memory="512M"``,
    ``cpus=1.5``, ``cpu_total="2s"``, ``refusals=1000``, ``log_size="16M"``,
    ...; a bare number is seconds or bytes, as for vigil.
    ``extra`` are further `vigil run` flags, as they are given on the
    command line.  ``vigil`` is the binary (default $VIGIL, then PATH).

    A run that ended in any way, ``status`` "error" for a command that
    cannot be executed included, is returned: it is a fact about the
    candidate.  Raises TypeError or ValueError for a call that is wrong
    before anything runs, VigilError when vigil itself failed (a bad
    value, policy or flag: vigil's own message; exit 125).
    """
    given = {name: value for name, value in locals().items()}
    command, lang = _command(argv, code, language)
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
        raise TypeError("vigil.run: inputs= is a list of paths, not %s" % type(inputs).__name__)
    if lang is not None and policy is None:
        given["policy"] = lang.policy
    made_work = None
    if (code is not None or inputs) and workdir is None:
        made_work = tempfile.mkdtemp(prefix="vigil-py-work-")
        if os.geteuid() == 0:
            owner = int(given.get("host_uid") or _SANDBOX_UID_UNDER_ROOT)
            os.chown(made_work, owner, owner)
        given["workdir"] = made_work
    tmp = tempfile.mkdtemp(prefix="vigil-py-")   # for the result only: removed below
    try:
        flags = _flags(given)
        if code is not None or inputs:
            _fill_workdir(os.fspath(given["workdir"]), code, lang, inputs)
        result_path = os.path.join(tmp, "result.json")
        args = ([binary(vigil), "run", "-q", "--result", result_path] + flags + list(extra) +
                ["--"] + command)
        return _invoke(args, stdin, cwd, result_path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if made_work is not None and not keep:
            _remove_tree(made_work)
