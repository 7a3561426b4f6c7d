"""Reading a vigil event log (docs/FORMAT.md): msgpack records, in order."""
from __future__ import annotations

import os
import sys
from typing import IO, Any, Dict, Iterator, Union

from ._errors import MissingDependencyError

_MSGPACK_HOW = ("vigil.read_log needs the Python package 'msgpack', which %s cannot import: "
                "on Debian `apt-get install python3-msgpack` (a venv sees it when made with "
                "`python3 -m venv --system-site-packages`), elsewhere `pip install msgpack`")


def _msgpack() -> Any:
    """The msgpack module, or an error naming it and how to get it (only
    the log reader needs it, so the rest of the package works without)."""
    try:
        import msgpack  # type: ignore[import]  # (Debian's has no type information)
    except ImportError:
        raise MissingDependencyError(_MSGPACK_HOW % sys.executable, name="msgpack") from None
    return msgpack


def read_log(path: Union[str, "os.PathLike[str]"]) -> Iterator[Dict[str, Any]]:
    """The records of a vigil log, in order, as dicts: the header first,
    then the events (``type``: "syscall", "process", "note", ...), and
    a trailer last when the run ended cleanly.  A record cut off at the
    end (a supervisor that was killed) is left out.

    The file is opened, and msgpack imported, when this is called (so a
    missing file or a missing msgpack raises here, not at the first
    record); the records are read as they are iterated.  Raises
    MissingDependencyError (an ImportError) without msgpack, OSError
    when the file cannot be opened."""
    msgpack = _msgpack()
    f = open(os.fspath(path), "rb")
    return _records(msgpack, f)


def _records(msgpack: Any, f: IO[bytes]) -> Iterator[Dict[str, Any]]:
    with f:
        unpacker = msgpack.Unpacker(f, raw=False)
        try:
            for rec in unpacker:
                yield rec
        except msgpack.exceptions.OutOfData:
            return
