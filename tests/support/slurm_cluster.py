"""A real single-node Slurm cluster on loopback, for the Slurm tests and the scaling benchmark.

:func:`start` makes a private folder holding a munge key, a generated ``slurm.conf`` (its own ports, state,
spool and logs there), starts ``munged`` (its own socket), ``slurmctld`` and ``slurmd`` in the foreground as
children of this process, and waits until the node is idle; :meth:`Cluster.stop` stops exactly those three
processes (by their ids) and removes the folder.  ``env()`` is the environment that points ``sbatch`` and
``squeue`` at this cluster (``SLURM_CONF``).  Needs root (slurmd runs jobs as their user) and Debian's
``slurm-wlm`` and ``munge`` (course/setup/prereqs.py installs them for make test).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")


def missing() -> str:
    """Why a cluster cannot be started here ("" when it can)."""
    lacking = [name for name in (*DAEMONS, "sbatch", "squeue", "scontrol") if not shutil.which(name)
               and not os.path.exists(f"/usr/sbin/{name}")]
    if lacking:
        return f"{', '.join(lacking)} missing: install slurm-wlm and munge (make prereqs, as root)"
    if os.geteuid() != 0:
        return "slurmd must run as root to start jobs"
    return ""


def _binary(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _memory_mb() -> int:
    with open("/proc/meminfo") as info:
        for line in info:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024 - 1024
    return 4096


@dataclass
class Cluster:
    """A running single-node cluster (see the module docstring)."""

    folder: Path
    conf: Path
    slots: int
    processes: list[subprocess.Popen] = field(default_factory=list)

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: this process's environment) with ``SLURM_CONF`` naming this cluster."""
        return {**(os.environ if base is None else base), "SLURM_CONF": str(self.conf)}

    def run(self, *command: str, timeout: float = 60) -> str:
        """Run a Slurm client command against this cluster; its stdout (raises on failure)."""
        done = subprocess.run(list(command), env=self.env(), capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def wait(self, job: str, timeout: float = 600) -> str:
        """Wait until ``job`` has left the queue; its final state (from scontrol, kept for MinJobAge)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.run("squeue", "-h", "-j", job, "-o", "%i").strip():
                break
            time.sleep(0.5)
        else:
            raise TimeoutError(f"job {job} still queued after {timeout} s; logs in {self.folder}")
        shown = self.run("scontrol", "show", "job", job)
        return next((word.split("=", 1)[1] for word in shown.split() if word.startswith("JobState=")), "")

    def stop(self) -> None:
        """Stop the daemons this cluster started (slurmd first), wait for them, remove the folder."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.processes.clear()
        shutil.rmtree(self.folder, ignore_errors=True)


CONF = """\
ClusterName=coursetest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={folder}/munge/munge.socket
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
MinJobAge=600
KillWait=5
SlurmdTimeout=60
InactiveLimit=0
NodeName={host} NodeAddr=127.0.0.1 CPUs={slots} RealMemory={memory} State=UNKNOWN
PartitionName=course Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""


def start(slots: int | None = None, timeout: float = 60) -> Cluster:
    """Start munged, slurmctld and slurmd on loopback with ``slots`` cores (default: this machine's)."""
    why = missing()
    if why:
        raise RuntimeError(why)
    slots = slots or len(os.sched_getaffinity(0))
    folder = Path(tempfile.mkdtemp(prefix="course-slurm-"))
    os.chmod(folder, 0o700)
    for part in ("munge", "state", "spool"):
        (folder / part).mkdir(mode=0o700)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    conf = folder / "slurm.conf"
    conf.write_text(CONF.format(host=socket.gethostname().split(".")[0], folder=folder, slots=slots,
                                ctld_port=_free_port(), slurmd_port=_free_port(), memory=_memory_mb()))
    cluster = Cluster(folder, conf, slots)
    logs = open(folder / "daemons.log", "ab")
    try:
        munge = folder / "munge"
        cluster.processes.append(subprocess.Popen(
            [_binary("munged"), "-F", "--force", f"--socket={munge / 'munge.socket'}", f"--key-file={key}",
             f"--pid-file={munge / 'munged.pid'}", f"--log-file={munge / 'munged.log'}",
             f"--seed-file={munge / 'munged.seed'}"], stdout=logs, stderr=logs))
        _until(lambda: (munge / "munge.socket").exists(), timeout, "munged did not create its socket", cluster)
        for daemon in ("slurmctld", "slurmd"):
            cluster.processes.append(subprocess.Popen([_binary(daemon), "-D", "-f", str(conf)],
                                                      env=cluster.env(), stdout=logs, stderr=logs))
        _until(lambda: _node_idle(cluster), timeout, "the node did not become idle", cluster)
    except BaseException:
        cluster.stop()
        raise
    finally:
        logs.close()
    return cluster


def _node_idle(cluster: Cluster) -> bool:
    try:
        return cluster.run("sinfo", "-h", "-o", "%t", timeout=10).strip() == "idle"
    except (RuntimeError, subprocess.TimeoutExpired):
        return False


def _until(ready, timeout: float, what: str, cluster: Cluster) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        dead = [p.args[0] for p in cluster.processes if p.poll() is not None]
        if dead:
            break
        time.sleep(0.3)
    logs = "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-1500:]}"
                     for log in sorted(cluster.folder.rglob("*.log")))
    raise RuntimeError(f"{what} (exited: {', '.join(dead) or 'none'})\n{logs}")
