"""`vigil.Server`: a client of the `vigil serve` daemon (docs/SERVE.md).

The daemon decides, runs and stores; this module only speaks its HTTP/JSON
API, version 1, with the standard library: http.client over a unix socket
(the daemon knows the caller by its uid, SO_PEERCRED) or over TCP (a bearer
token).  A refusal is an exception: QuotaExceeded for a quota (HTTP 429),
ServerError for anything else the daemon refused or could not be asked.
"""
from __future__ import annotations

import base64
import http.client
import io
import json
import math
import os
import socket
import stat
import time
import urllib.parse
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._errors import QuotaExceeded, ServerError
from ._log import _msgpack, _records
from ._result import Limit, Result, Status

# Where the Debian package's socket unit listens (debian/vigil-serve.socket),
# and so where `vigil submit` looks too when VIGIL_SERVER is not set.
DEFAULT_ADDRESS = "unix:/run/vigil/serve.sock"
_API = "/v1"
# The daemon answers GET /v1/runs/ID?wait=S after at most this many seconds.
_WAIT_MAX_S = 600
# How much longer than the wait asked for a waiting request may take before
# the socket gives up: the daemon answers at the end of the wait, not at once.
_WAIT_SLACK_S = 30.0
_REQUEST_TIMEOUT_S = 60.0
_HTTP_ERROR = 400
_HTTP_QUOTA = 429
# A run in one of these states will not change again (docs/SERVE.md).
_ENDED = frozenset({"finished", "cancelled", "lost"})

# A file given to submit(): str is its text (UTF-8), bytes its content,
# a path (pathlib.Path) a host file whose content is sent.
FileArg = Union[str, bytes, "os.PathLike[str]"]
LimitArg = Union[str, int, float]


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a unix stream socket: the daemon's local listener."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def _parse_address(address: str) -> Tuple[str, str, int]:
    """(scheme, host or socket path, port) of "unix:/path",
    "http://host:port" or "https://host:port"."""
    if address.startswith("unix:"):
        path = address[len("unix:"):]
        if not path:
            raise ValueError("vigil.Server: %r names no socket (unix:/run/vigil/serve.sock)"
                             % address)
        return "unix", path, 0
    url = urllib.parse.urlsplit(address)
    if url.scheme not in ("http", "https") or not url.hostname or url.path not in ("", "/"):
        raise ValueError("vigil.Server: address %r is neither unix:PATH nor "
                         "http://HOST:PORT" % address)
    return url.scheme, url.hostname, url.port or (443 if url.scheme == "https" else 80)


def _error_of(address: str, status: int, headers: Mapping[str, str],
              body: bytes) -> ServerError:
    """The exception for an error answer: its one line, and for 429 the
    quota and when to retry (the Retry-After header, else the body's)."""
    try:
        doc = json.loads(body.decode("utf-8"))
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        doc = {}
    message = str(doc.get("error") or "HTTP %d %s" % (status, body[:200].decode("utf-8",
                                                                                  "replace")))
    if status == _HTTP_QUOTA:
        retry = headers.get("retry-after") or doc.get("retry_after")
        try:
            retry_after: Optional[int] = int(str(retry))
        except ValueError:
            retry_after = None
        return QuotaExceeded("%s: %s" % (address, message), status=status, body=doc,
                             quota=str(doc.get("quota") or ""), retry_after=retry_after)
    return ServerError("%s: %s" % (address, message), status=status, body=doc)


def _content(text_key: str, base64_key: str, value: Union[str, bytes]) -> Dict[str, str]:
    """{text_key: text} for a str, {base64_key: ...} for bytes: the API's
    two spellings of content ("text"/"base64", "stdin"/"stdin_base64")."""
    if isinstance(value, str):
        return {text_key: value}
    if isinstance(value, (bytes, bytearray)):
        return {base64_key: base64.b64encode(bytes(value)).decode("ascii")}
    raise TypeError("vigil.Server.submit: %s is a str or bytes, not %s"
                    % (text_key, type(value).__name__))


def _file_entry(path: str, content: FileArg) -> Dict[str, Union[str, bool]]:
    """One file of the request; a local file (a path) keeps its x bit, as
    `vigil submit --file` does ("executable")."""
    if not isinstance(path, str) or not path:
        raise ValueError("vigil.Server.submit: files= has a bad path %r" % (path,))
    executable = False
    if isinstance(content, os.PathLike):
        with open(os.fspath(content), "rb") as f:
            executable = bool(os.fstat(f.fileno()).st_mode & stat.S_IXUSR)
            content = f.read()
    entry: Dict[str, Union[str, bool]] = {"path": path, **_content("text", "base64", content)}
    if executable:
        entry["executable"] = True
    return entry


def _limit_text(name: Union[str, Limit], value: LimitArg) -> Tuple[str, str]:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TypeError("vigil.Server.submit: limits[%r] is a str or a number, not %s"
                        % (str(name), type(value).__name__))
    return str(name), str(value)


def _run_request(argv: Sequence[str], files: Optional[Mapping[str, FileArg]],
                 stdin: Union[str, bytes, None], policy: Optional[str],
                 policy_text: Optional[str], limits: Optional[Mapping[Union[str, Limit], LimitArg]],
                 image: Optional[str], dry_run: bool, env: Optional[Mapping[str, str]],
                 task_id: Optional[str]) -> Dict[str, Any]:
    """The body of POST /v1/runs; members left out are the daemon's
    defaults (a null would be an error: the API knows no null member)."""
    if isinstance(argv, (str, bytes)) or not argv or not all(isinstance(a, str) for a in argv):
        raise TypeError("vigil.Server.submit: argv is a non-empty list of strings")
    req: Dict[str, Any] = {"argv": list(argv)}
    if files:
        req["files"] = [_file_entry(p, c) for p, c in files.items()]
    if stdin is not None:
        req.update(_content("stdin", "stdin_base64", stdin))
    if policy is not None:
        req["policy"] = policy
    if policy_text is not None:
        req["policy_text"] = policy_text
    if limits:
        req["limits"] = dict(_limit_text(n, v) for n, v in limits.items())
    if env:
        req["env"] = {str(k): str(v) for k, v in env.items()}
    for key, value in (("image", image), ("task_id", task_id)):
        if value is not None:
            req[key] = value
    if dry_run:
        req["dry_run"] = True
    return req


class Server:
    """A `vigil serve` daemon, by its address: "unix:/run/vigil/serve.sock"
    (the default: $VIGIL_SERVER, else that) or "http://host:8080" with
    ``token=`` (sent as ``Authorization: Bearer``).  Each call is one
    request on a connection of its own; nothing is kept open."""

    def __init__(self, address: Optional[str] = None, *, token: Optional[str] = None,
                 timeout: float = _REQUEST_TIMEOUT_S) -> None:
        self.address = address or os.environ.get("VIGIL_SERVER") or DEFAULT_ADDRESS
        self._scheme, self._host, self._port = _parse_address(self.address)
        self._token = token
        self.timeout = timeout

    def __repr__(self) -> str:
        return "vigil.Server(%r)" % self.address

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._scheme == "unix":
            return _UnixHTTPConnection(self._host, timeout)
        if self._scheme == "https":
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def request(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None,
                timeout: Optional[float] = None) -> bytes:
        """One API request (path below /v1); the answer's body.  Raises
        QuotaExceeded (429), ServerError (any other 4xx/5xx, or no daemon
        to ask at the address)."""
        headers = {"Accept": "application/json, application/x-msgpack, "
                             "application/octet-stream"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self._token is not None:
            headers["Authorization"] = "Bearer " + self._token
        conn = self._connection(self.timeout if timeout is None else timeout)
        try:
            conn.request(method, _API + path, body=data, headers=headers)
            answer = conn.getresponse()
            got = answer.read()
            status, answer_headers = answer.status, {k.lower(): v for k, v in answer.getheaders()}
        except (OSError, http.client.HTTPException) as e:
            raise ServerError("%s: %s %s: %s" % (self.address, method, _API + path, e)) from None
        finally:
            conn.close()
        if status >= _HTTP_ERROR:
            raise _error_of(self.address, status, answer_headers, got)
        return got

    def request_json(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None,
                     timeout: Optional[float] = None) -> Dict[str, Any]:
        """request() of an answer that is a JSON object."""
        got = self.request(method, path, body, timeout)
        try:
            doc = json.loads(got.decode("utf-8"))
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            raise ServerError("%s: %s %s: the answer is not a JSON object: %.200r"
                              % (self.address, method, _API + path, got))
        return doc

    def version(self) -> Dict[str, Any]:
        """{"api": 1, "vigil": "0.1.0"}."""
        return self.request_json("GET", "/version")

    def quota(self) -> Dict[str, Any]:
        """The caller's quotas and what is used of them (GET /v1/quota)."""
        return self.request_json("GET", "/quota")

    def submit(self, argv: Sequence[str], *, files: Optional[Mapping[str, FileArg]] = None,
               stdin: Union[str, bytes, None] = None, policy: Optional[str] = None,
               policy_text: Optional[str] = None,
               limits: Optional[Mapping[Union[str, Limit], LimitArg]] = None,
               image: Optional[str] = None, dry_run: bool = False,
               env: Optional[Mapping[str, str]] = None, task_id: Optional[str] = None) -> "Run":
        """Submit a run (POST /v1/runs) and return it, queued or running.

        ``files`` {relative path: content} are put in its working directory
        (a str is text, bytes are sent as base64, a ``pathlib.Path`` is a
        host file whose content is sent); ``stdin`` a str or bytes;
        ``policy`` a shipped policy's name or ``policy_text`` a whole
        policy; ``limits`` {limit name: value} ("memory": "256M"; a number
        is sent as `vigil run` reads a bare one).  Raises QuotaExceeded when a
        quota refuses it, ServerError for any other refusal (400: the
        daemon's line names what is wrong; 413: too big)."""
        body = _run_request(argv, files, stdin, policy, policy_text, limits, image, dry_run,
                            env, task_id)
        return Run(self, self.request_json("POST", "/runs", body))

    def runs(self) -> List["Run"]:
        """The caller's runs, newest first."""
        got = self.request_json("GET", "/runs").get("runs")
        if not isinstance(got, list):
            raise ServerError("%s: GET /v1/runs: no list of runs in the answer" % self.address)
        return [Run(self, r) for r in got]

    def get(self, run_id: str) -> "Run":
        """The run of that id (ServerError 404: none of the caller's)."""
        return Run(self, self.request_json("GET", "/runs/" + _quote(run_id)))


def _quote(part: str) -> str:
    """A path component of the API, every byte that is not plainly safe
    percent-encoded ("/" in a file's path stays: it separates directories)."""
    return urllib.parse.quote(part, safe="/")


class Run:
    """One run of the daemon.  ``info`` is what the daemon last said of it
    (``state``, ``status``, ``exit_code``, times, ``pooled``): refresh()
    and wait() ask again.  Output, result and log are fetched when read."""

    def __init__(self, server: Server, info: Mapping[str, Any]) -> None:
        run_id = info.get("id")
        if not isinstance(run_id, str) or not run_id:
            raise ServerError("%s: a run without an id: %.200r" % (server.address, info))
        self.server = server
        self.id = run_id
        self.info: Dict[str, Any] = dict(info)

    def __repr__(self) -> str:
        return "vigil.Run(%r, state=%r)" % (self.id, self.state)

    @property
    def state(self) -> str:
        """"queued", "running", "finished", "cancelled" or "lost"."""
        return str(self.info.get("state", ""))

    @property
    def ended(self) -> bool:
        return self.state in _ENDED

    @property
    def status(self) -> Optional[Status]:
        """The result's status once finished (Status.OK, ...), else None."""
        return Status.of(self.info.get("status"))

    @property
    def exit_code(self) -> Optional[int]:
        code = self.info.get("exit_code")
        return None if code is None else int(code)

    def _path(self, tail: str = "") -> str:
        return "/runs/" + _quote(self.id) + tail

    def refresh(self) -> "Run":
        self.info = self.server.request_json("GET", self._path())
        return self

    def wait(self, timeout: Optional[float] = None) -> "Run":
        """Wait until the run has ended (at most ``timeout`` seconds; None:
        as long as it takes), then return it.  Raises TimeoutError when it
        is still queued or running after ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.ended:
            left = _WAIT_MAX_S if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("vigil run %s is still %s after %g s"
                                   % (self.id, self.state, timeout or 0))
            wait_s = min(_WAIT_MAX_S, max(1, math.ceil(left)))
            self.info = self.server.request_json("GET", self._path("?wait=%d" % wait_s),
                                                 timeout=wait_s + _WAIT_SLACK_S)
        return self

    def result(self) -> Result:
        """The run's result record (docs/RUN.md); ServerError 409 while it
        has not finished."""
        return Result.from_dict(self.server.request_json("GET", self._path("/result")))

    def log_bytes(self) -> bytes:
        """The run's msgpack log as stored (docs/FORMAT.md)."""
        return self.server.request("GET", self._path("/log"))

    def log(self) -> List[Dict[str, Any]]:
        """The log's records, decoded as vigil.read_log decodes a file's
        (needs msgpack: MissingDependencyError without it)."""
        msgpack = _msgpack()
        return list(_records(msgpack, io.BytesIO(self.log_bytes())))

    @property
    def stdout(self) -> bytes:
        """The candidate's stdout as the daemon captured it."""
        return self.server.request("GET", self._path("/stdout"))

    @property
    def stderr(self) -> bytes:
        return self.server.request("GET", self._path("/stderr"))

    def file(self, path: str) -> bytes:
        """A file the run left in its working directory, by relative path."""
        return self.server.request("GET", self._path("/files/" + _quote(path)))

    def cancel(self) -> "Run":
        """End the run if it is queued or running (state "cancelled")."""
        self.server.request("POST", self._path("/cancel"))
        return self.refresh()

    def delete(self) -> "Run":
        """Remove the ended run's stored data (gives back its `stored`):
        the run stays listed, ``info["deleted"]`` true, and its log,
        result, outputs and files are gone (ServerError 410)."""
        self.info = self.server.request_json("DELETE", self._path())
        return self
