"""The exceptions of the vigil package."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

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


class ServerError(VigilError):
    """`vigil serve` refused a request, or could not be asked: the message
    is the daemon's one line (docs/SERVE.md: every error is
    ``{"error": "..."}``) after its address.  ``status`` is the HTTP
    status (400 a bad request, 401 no identity, 404 no such run of the
    caller's, 409 not yet finished, 413 too big; None when no answer came)
    and ``body`` the error object as answered."""

    def __init__(self, message: str, *, status: Optional[int] = None,
                 body: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.body: Dict[str, Any] = dict(body or {})


class QuotaExceeded(ServerError):
    """A quota of the caller's refused the request (HTTP 429): ``quota``
    names which ("runs", "concurrent", "cpu", "wall", "stored") and
    ``retry_after`` is when to try again, in seconds (None when the daemon
    did not say)."""

    def __init__(self, message: str, *, status: Optional[int] = None,
                 body: Optional[Dict[str, Any]] = None, quota: str = "",
                 retry_after: Optional[int] = None) -> None:
        super().__init__(message, status=status, body=body)
        self.quota = quota
        self.retry_after = retry_after
