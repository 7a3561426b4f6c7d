"""vigil from Python: run a candidate, run a batch, read a log.

    import vigil
    r = vigil.run(["python3", "cand.py"], policy="python", timeout="10s", stdin=b"3 4\\n")
    print(r.status, r.exit_code, r.stdout.tail)          # ok 0 7

    r = vigil.run(code="print(input())", language="python", stdin="hi\\n", cpus=0.5)

    for rec in vigil.batch([{"id": "t1", "code": "print(1)", "language": "python"}],
                           out="runs", jobs=4, progress=lambda r: print(r.task_id, r.status)):
        print(rec.task_id, rec.status, rec.key)

    for event in vigil.read_log(r.log):
        if event["type"] == "syscall" and event["decision"] != "allow":
            print(event["args"])

    srv = vigil.Server("unix:/run/vigil/serve.sock")     # a `vigil serve` daemon
    job = srv.submit(["python3", "cand.py"], files={"cand.py": "print(1)"}, policy="python")
    print(job.wait(timeout=60).result().status, job.stdout)

Each call runs the vigil binary (``vigil=``, else VIGIL in the environment,
else `vigil` on PATH); results are the JSON records `vigil run --result`
and `vigil batch` write (docs/RUN.md, "The result record"), as `Result`
(which still answers ``r["status"]`` as the dicts of earlier versions
did); the log reader needs msgpack (Debian's python3-msgpack).  Nothing
here decides anything: the binary (or the daemon) does.  The API: docs/PYTHON.md.
"""
from ._batch import Progress, Task, batch, shard_of
from ._errors import MissingDependencyError, QuotaExceeded, ServerError, VigilError
from ._log import read_log
from ._result import (Artifact, ImageRef, InputFile, Limit, LimitValue, Mode, PolicyRef, Result,
                      Status, Stream)
from ._run import LANGUAGES, binary, run
from ._serve import Run, Server

__version__ = "0.1.0"

__all__ = [
    "LANGUAGES", "Artifact", "ImageRef", "InputFile", "Limit", "LimitValue", "MissingDependencyError", "Mode",
    "PolicyRef", "Progress", "QuotaExceeded", "Result", "Run", "Server", "ServerError", "Status",
    "Stream", "Task", "VigilError", "batch",
    "binary", "read_log", "run", "shard_of",
]
