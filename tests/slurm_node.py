"""A throw-away single-node Slurm (munged, slurmctld, slurmd) in a temporary folder, for the tests.

Needs root (``SlurmUser=root``) and Debian's ``slurm-wlm`` and ``munge``; starts in about a second
and stops in a few. Every process that calls ``sbatch``/``squeue``/``scancel`` needs ``SLURM_CONF``
(:attr:`SingleNodeSlurm.env`). Run as a script it starts one and waits (for measuring by hand).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
PARTITION = "debug"
START_S = 30.0  # s for the node to show idle (0.1-1.1 s measured)


def missing() -> str | None:
    """Why a single-node Slurm cannot start here, or None."""
    paths = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    absent = [d for d in (*DAEMONS, "mungekey", "sbatch", "squeue", "scancel", "sinfo")
              if shutil.which(d, path=paths) is None]
    if absent:
        return f"{', '.join(absent)} not found (apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "a single-node Slurm for the tests runs its daemons as root"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _which(name: str) -> str:
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


class SingleNodeSlurm:
    """One node (this host, ``cpus`` CPUs) in one partition, ``debug``; daemons' files under ``root``."""

    def __init__(self, root: Path, cpus: int = 2, memory_mb: int = 8000):
        self.root = Path(root)
        self.cpus, self.memory_mb = cpus, memory_mb
        self.node = socket.gethostname().split(".")[0]
        self.conf = self.root / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self.pids: dict[str, int] = {}

    def _pid_file(self, daemon: str) -> Path:
        return self.root / f"{daemon}.pid"

    def start(self) -> None:
        r = self.root
        for sub in ("munge", "state", "spool", "log"):
            (r / sub).mkdir(parents=True, exist_ok=True)
        for folder in (r, r / "munge"):  # munged needs every folder of its socket's path open to all
            folder.chmod(0o755)
        key = r / "munge" / "munge.key"
        subprocess.run([_which("mungekey"), "-c", "-k", str(key)], check=True, capture_output=True)
        self.socket = r / "munge" / "munge.socket"
        subprocess.run([_which("munged"), f"--key-file={key}", f"--socket={self.socket}",
                        f"--pid-file={self._pid_file('munged')}", f"--log-file={r / 'log' / 'munged.log'}",
                        f"--seed-file={r / 'munge' / 'munged.seed'}"], check=True, capture_output=True)
        self.pids["munged"] = None
        self.pids["munged"] = self._read_pid("munged")
        self.conf.write_text("\n".join([
            "ClusterName=iosched-test",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={r / 'state'}", f"SlurmdSpoolDir={r / 'spool'}",
            f"SlurmctldPidFile={self._pid_file('slurmctld')}", f"SlurmdPidFile={self._pid_file('slurmd')}",
            f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}", f"SlurmdLogFile={r / 'log' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory",
            "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
            "JobAcctGatherType=jobacct_gather/none",
            "ReturnToService=2", "KillWait=5", "MinJobAge=30", "SchedulerType=sched/backfill",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.memory_mb} State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
            ""]))
        for daemon in ("slurmctld", "slurmd"):
            self.pids[daemon] = None  # stop() looks for it, should its pid file not come
            subprocess.run([_which(daemon), "-f", str(self.conf)], check=True, capture_output=True, env=self.env)
            self.pids[daemon] = self._read_pid(daemon)
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True,
                                   env=self.env).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.1)
        raise RuntimeError(f"the Slurm node is not idle after {START_S:g} s (sinfo: {state!r}); "
                           f"see {r / 'log'}")

    def _read_pid(self, daemon: str) -> int:
        path = self._pid_file(daemon)
        for _ in range(100):
            with contextlib.suppress(OSError, ValueError, IndexError):
                return int(path.read_text().split()[0])
            time.sleep(0.05)
        raise RuntimeError(f"{daemon} wrote no pid file {path}; see {self.root / 'log'}")

    def jobs(self) -> list[str]:
        """The ids of the jobs Slurm still lists (pending, running or ending)."""
        out = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, env=self.env).stdout
        return out.split()

    def leftovers(self) -> list[str]:
        """Processes of this Slurm still alive: its daemons, job steps, and whatever its jobs started (their
        environment has a SLURM_JOB_ID and names this slurm.conf: dask workers and their task processes)."""
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == os.getpid() or not alive(int(proc.name)):
                continue
            with contextlib.suppress(OSError):
                cmd = proc.joinpath("cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                env = proc.joinpath("environ").read_bytes().split(b"\0")
                in_job = f"SLURM_CONF={self.conf}".encode() in env and any(v.startswith(b"SLURM_JOB_ID=") for v in env)
                if str(self.root) in cmd or in_job or proc.joinpath("comm").read_text().strip() == "slurmstepd":
                    found.append(f"{proc.name} {cmd.strip()}")
        return found

    def stop(self) -> list[str]:
        """Cancel every job, wait for their steps to end, stop the daemons (each in turn); the processes
        that were still left then (see :meth:`leftovers`), which are killed."""
        if "slurmctld" in self.pids:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                ids = self.jobs()
                if ids:
                    subprocess.run(["scancel", *ids], capture_output=True, env=self.env, timeout=30)
                deadline = time.monotonic() + 30
                while (self.jobs() or stepds()) and time.monotonic() < deadline:
                    time.sleep(0.2)
        for daemon in ("slurmd", "slurmctld", "munged"):
            if daemon not in self.pids:
                continue
            pid = self.pids.pop(daemon)
            with contextlib.suppress(RuntimeError):
                pid = pid or self._read_pid(daemon)
            if pid is None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 15
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
        left = self.leftovers()
        for line in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(line.split()[0]), signal.SIGKILL)
        return left


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def stepds() -> list[int]:
    """The pids of the slurmstepd processes on this machine."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if proc.joinpath("comm").read_text().strip() == "slurmstepd":
                    found.append(int(proc.name))
    return found


if __name__ == "__main__":
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        node = SingleNodeSlurm(Path(tmp))
        try:
            node.start()
            print(f"export SLURM_CONF={node.conf}", flush=True)
            if len(sys.argv) > 1:
                subprocess.run(sys.argv[1:], env=node.env)
            else:
                signal.sigwait({signal.SIGINT, signal.SIGTERM})
        finally:
            left = node.stop()
            if left:
                print("killed, left after the stop:", *left, sep="\n  ")
