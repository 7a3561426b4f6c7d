"""The result record as Python values: `Result` and its parts.

vigil writes the record (run/result.c; docs/RUN.md, "The result record");
this module only reads it.  Every field the record has today is an
attribute; a field a later vigil adds is still in ``Result.raw``.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Type, TypeVar

_E = TypeVar("_E", bound="_OpenEnum")


class _OpenEnum(str, enum.Enum):
    """A str enum that also takes a value it does not list (one a later
    vigil writes), as a member made for it, so a record never fails to
    load over a new word.  A member is its value (``Status.OK == "ok"``)."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if not isinstance(value, str):
            return None
        member = str.__new__(cls, value)
        member._name_ = value.upper().replace("-", "_")
        member._value_ = value
        return member

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def of(cls: Type[_E], value: object) -> Optional[_E]:
        """The member for a value of the record (None for null)."""
        return None if value is None else cls(value)


class Status(_OpenEnum):
    """How a run ended: the record's ``status`` (docs/RUN.md, "Exit status
    and `status`")."""
    OK = "ok"
    NONZERO = "nonzero"
    SIGNAL = "signal"
    TIMEOUT = "timeout"
    LIMIT = "limit"
    KILLED = "killed"
    ERROR = "error"


class Limit(_OpenEnum):
    """A limit by its name in vigil's table of limits (policy/limit_table.c;
    docs/POLICY.md): the record's ``limit``, ``limits_hit`` and the keys of
    ``limits``.  The `vigil run` flag of TIME is ``--timeout``."""
    TIME = "time"
    CPU = "cpu"
    CPUTOTAL = "cputotal"
    MEMORY = "memory"
    PROCS = "procs"
    FILES = "files"
    FSIZE = "fsize"
    OUTPUT = "output"
    TMPFS = "tmpfs"
    DISK = "disk"
    CPUS = "cpus"
    REFUSALS = "refusals"
    LOG = "log"


class Mode(_OpenEnum):
    """The record's ``mode``: refusing, or recording only (--dry-run)."""
    ENFORCE = "enforce"
    DRY_RUN = "dry-run"


@dataclass(frozen=True)
class Stream:
    """The candidate's stdout or stderr: bytes written, whether past
    --output (``truncated``), how much vigil passed on (``forwarded``) and
    the last --tail bytes (``tail``)."""
    bytes: int = 0
    truncated: bool = False
    forwarded: int = 0
    tail: str = ""

    @classmethod
    def from_dict(cls, d: Optional[Mapping[str, Any]]) -> "Stream":
        if not d:
            return cls()
        return cls(int(d.get("bytes", 0)), bool(d.get("truncated", False)),
                   int(d.get("forwarded", 0)), str(d.get("tail", "")))


@dataclass(frozen=True)
class LimitValue:
    """One limit of the run: its value in ``unit`` (None: no limit), what
    held it (``enforced_by``: "cgroup v2", "rlimit", "supervisor", ...)
    and whether it was reached."""
    value: Optional[int]
    unit: str
    enforced_by: str
    hit: bool


@dataclass(frozen=True)
class Artifact:
    """A file vigil hashed as executed: its path and SHA-256."""
    path: str
    sha256: str


@dataclass(frozen=True)
class InputFile:
    """A file a batch task's run was given (an input, or its stdin): its
    path in the work dir (None for stdin), size and SHA-256."""
    path: Optional[str]
    size: int
    sha256: str


def _input(v: Any) -> InputFile:
    return InputFile(_opt_str(v.get("path")), int(v.get("size", 0)), str(v.get("sha256", "")))


@dataclass(frozen=True)
class PolicyRef:
    """The policy a run used: its path and SHA-256."""
    path: Optional[str]
    sha256: Optional[str]


@dataclass(frozen=True)
class ImageRef:
    """The image a run used (`vigil run --image`): the name or digest it
    was given and its content digest, "sha256:..." (docs/IMAGES.md)."""
    name: Optional[str]
    digest: str


def _image(v: Any) -> Optional[ImageRef]:
    return ImageRef(_opt_str(v.get("name")), str(v.get("digest"))) \
        if isinstance(v, Mapping) and v.get("digest") else None


def _opt_int(v: Any) -> Optional[int]:
    return None if v is None else int(v)


def _opt_float(v: Any) -> Optional[float]:
    return None if v is None else float(v)


def _opt_str(v: Any) -> Optional[str]:
    return None if v is None else str(v)


def _same(v: Any) -> Any:
    return v


def _strings(v: Any) -> List[str]:
    return [str(x) for x in v or []]


def _limits(v: Any) -> Dict[Limit, LimitValue]:
    return {Limit(name): LimitValue(_opt_int(x.get("value")), str(x.get("unit", "")),
                                    str(x.get("enforced_by", "")), bool(x.get("hit")))
            for name, x in (v or {}).items()}


def _policy(v: Any) -> Optional[PolicyRef]:
    return PolicyRef(_opt_str(v.get("path")), _opt_str(v.get("sha256"))) \
        if isinstance(v, Mapping) else None


def _counts(v: Any) -> Dict[str, Dict[str, int]]:
    return {str(c): {str(k): int(n) for k, n in per.items()} for c, per in (v or {}).items()}


# How a field of the record becomes the attribute's type; a field not
# named here is taken as JSON gives it (a str, int, bool or None).
_CONVERT: Dict[str, Callable[[Any], Any]] = {
    "status": Status, "exit_code": int, "limit": Limit.of, "mode": Mode.of,
    "argv": _strings, "warnings": _strings,
    "artifacts": lambda v: [Artifact(str(a["path"]), str(a["sha256"])) for a in v or []],
    "limits_hit": lambda v: [Limit(x) for x in v or []],
    "stdout": Stream.from_dict, "stderr": Stream.from_dict,
    "limits": _limits, "policy": _policy, "image": _image, "counts": _counts,
    "inputs": lambda v: [_input(x) for x in v or []],
    "labels": lambda v: dict(v or {}),
    "stdin": lambda v: _input(v) if isinstance(v, Mapping) else None,
    "wall_s": _opt_float, "cpu_s": _opt_float, "cpu_user_s": _opt_float,
    "cpu_sys_s": _opt_float,
}


@dataclass(frozen=True)
class Result:
    """One run's result record (`vigil run --result`, a line of a batch's
    results.jsonl), field by field (docs/RUN.md, "The result record").

    The record of a run that failed before it ran has only some fields:
    the others are None, empty, or an empty `Stream`.  ``key`` is the
    batch's hash of everything that decides the run, ``inputs`` and
    ``stdin`` the files it was given, ``labels`` the task's labels (None
    and empty outside a batch).  ``raw`` is the
    record as vigil wrote it, fields a later vigil adds included.

    Backward compatible with the dicts earlier versions returned:
    ``r["status"]``, ``r.get("error")``, ``"log" in r`` and ``r.keys()``
    read ``raw`` (so ``r["status"]`` is the plain string).
    """
    status: Status
    exit_code: int
    format: Optional[int] = None
    vigil_version: Optional[str] = None
    task_id: Optional[str] = None
    argv: List[str] = field(default_factory=list)
    artifacts: List[Artifact] = field(default_factory=list)
    limit: Optional[Limit] = None
    candidate_exit_code: Optional[int] = None
    signal: Optional[int] = None
    error: Optional[str] = None
    wall_s: Optional[float] = None
    cpu_s: Optional[float] = None
    cpu_user_s: Optional[float] = None
    cpu_sys_s: Optional[float] = None
    peak_memory_bytes: Optional[int] = None
    stdout: Stream = field(default_factory=Stream)
    stderr: Stream = field(default_factory=Stream)
    limits: Dict[Limit, LimitValue] = field(default_factory=dict)
    limits_hit: List[Limit] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    mode: Optional[Mode] = None
    engine: Optional[str] = None
    engine_note: Optional[str] = None
    cpuset: Optional[str] = None
    host_uid: Optional[int] = None
    landlock_abi: Optional[int] = None
    policy: Optional[PolicyRef] = None
    image: Optional[ImageRef] = None
    seal: Optional[Dict[str, Any]] = None
    counts: Dict[str, Dict[str, int]] = field(default_factory=dict)
    allowed: Optional[int] = None
    denied: Optional[int] = None
    processes: Optional[int] = None
    summary: Optional[Dict[str, Any]] = None
    log: Optional[str] = None
    workdir: Optional[str] = None
    workdir_kept: Optional[bool] = None
    start_time: Optional[str] = None
    start_unix_ns: Optional[int] = None
    key: Optional[str] = None
    inputs: List[InputFile] = field(default_factory=list)
    labels: Dict[str, str] = field(default_factory=dict)
    stdin: Optional[InputFile] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Result":
        """A Result of a record as JSON decoded it."""
        if not isinstance(d, Mapping) or "status" not in d or "exit_code" not in d:
            raise ValueError("not a vigil result record (it has no 'status' and 'exit_code'): "
                             "%.200r" % (d,))
        kw = {f.name: _CONVERT.get(f.name, _same)(d[f.name])
              for f in fields(cls) if f.name in d and f.name != "raw"}
        return cls(**kw, raw=dict(d))

    @property
    def ok(self) -> bool:
        """The candidate exited 0 and no limit stopped it."""
        return self.status is Status.OK

    # The dict interface of earlier versions, over the record as written.
    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __contains__(self, key: object) -> bool:
        return key in self.raw

    def get(self, key: str, default: Any = None) -> Any:
        """``raw.get(key, default)``, as a dict record's."""
        return self.raw.get(key, default)

    def keys(self) -> Iterator[str]:
        """The record's field names, as a dict record's."""
        return iter(self.raw.keys())
