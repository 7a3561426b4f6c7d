"""A real single-node Slurm cluster (Debian's slurm-wlm and munge), started
here as root in a directory of its own on free loopback ports, runs the
shipped sbatch example as a 4-task array of batch shards; the merged
results are complete.  Everything the cluster started is stopped by pid."""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from helpers import ROOT, free_port

# a whole Slurm cluster started for one run: a long whole-system run that
# tests no mechanism of its own (conftest.py)
pytestmark = pytest.mark.soak

VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
SBATCH = os.path.join(ROOT, "examples", "slurm", "vigil-batch.sbatch")
DAEMONS = ("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd")

CONF = """\
ClusterName=vigiltest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={d}/munge.sock
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


def stop(pidfile, sig=signal.SIGTERM):
    try:
        pid = int(open(pidfile).read().strip())
        os.kill(pid, sig)
    except (OSError, ValueError):
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def cluster(tmp_path):
    if os.geteuid() != 0 or not all(os.path.exists(p) for p in DAEMONS):
        pytest.skip("needs root and slurm-wlm + munge (scripts/install-deps.sh test)")
    d = str(tmp_path)
    os.makedirs(os.path.join(d, "state"))
    os.makedirs(os.path.join(d, "spool"))
    conf = os.path.join(d, "slurm.conf")
    with open(conf, "w") as f:
        f.write(CONF.format(d=d, ctld_port=free_port(), d_port=free_port(),
                            cpus=os.cpu_count()))
    env = {**os.environ, "SLURM_CONF": conf}
    subprocess.run(["/usr/sbin/munged", "--force", "--socket=%s/munge.sock" % d,
                    "--pid-file=%s/munged.pid" % d, "--log-file=%s/munged.log" % d,
                    "--seed-file=%s/munge.seed" % d, "--key-file=/etc/munge/munge.key"],
                   check=True, env=env)
    try:
        subprocess.run(["/usr/sbin/slurmctld"], check=True, env=env)
        subprocess.run(["/usr/sbin/slurmd", "-N", "localhost"], check=True, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            s = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True,
                               text=True)
            if s.stdout.strip() == "idle":
                break
            time.sleep(0.2)
        else:
            pytest.fail("the test cluster did not come up: " +
                        open(os.path.join(d, "slurmctld.log")).read()[-2000:])
        yield d, env
    finally:
        stop(os.path.join(d, "slurmd.pid"))
        stop(os.path.join(d, "slurmctld.pid"))
        stop(os.path.join(d, "munged.pid"))


def test_slurm_array_of_batch_shards(cluster, tmp_path):
    d, env = cluster
    work = tmp_path / "job"
    work.mkdir()
    tasks = [{"id": "job-%02d" % i, "code": "print(%d)" % i, "language": "python"}
             for i in range(16)]
    with open(str(work / "tasks.jsonl"), "w") as f:
        for t in tasks:
            f.write(json.dumps(t) + "\n")
    out = str(work / "runs")
    env = {**env, "TASKS": str(work / "tasks.jsonl"), "OUT": out, "VIGIL": VIGIL}
    r = subprocess.run(["sbatch", "--array=0-3", "--wait", "-o", str(work / "slurm-%a.out"),
                        "-D", str(work), SBATCH], env=env, capture_output=True, text=True,
                       timeout=300)
    logs = "".join(open(str(p)).read() for p in work.glob("slurm-*.out"))
    assert r.returncode == 0, r.stdout + r.stderr + logs
    parts = sorted(p.name for p in (work / "runs").glob("results-*-of-4.jsonl"))
    assert parts == ["results-%d-of-4.jsonl" % i for i in range(4)], logs
    m = subprocess.run([VIGIL, "batch", str(work / "tasks.jsonl"), "--out", out, "--merge"],
                       capture_output=True, text=True)
    assert m.returncode == 0, m.stderr
    with open(os.path.join(out, "results.jsonl")) as f:
        merged = [json.loads(line) for line in f]
    assert [x["task_id"] for x in merged] == [t["id"] for t in tasks]
    assert [x["stdout"]["tail"] for x in merged] == ["%d\n" % i for i in range(16)]
    assert all(x["status"] == "ok" for x in merged)
    shutil.rmtree(out)
