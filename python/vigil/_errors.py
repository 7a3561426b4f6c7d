"""The exceptions of the vigil package."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ._result import Result


class VigilError(RuntimeError):
    """vigil itself could not do what was asked: no binary, a bad flag
    value or policy, a setup failure (`vigil run` exit 125), a batch that
    is misconfigured (`vigil batch` exit 2).  The message is vigil's own
    line; ``exit_code`` is vigil's exit status (None when vigil did not
    run) and ``result`` the error record `vigil run` wrote, if any."""

    def __init__(self, message: str, *, exit_code: Optional[int] = None,
                 result: Optional["Result"] = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.result = result


class MissingDependencyError(ImportError):
    """A Python package a call needs is not importable here; the message
    names it and how to get it."""
