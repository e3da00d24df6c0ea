"""A suite on Slurm: ``dask_jobqueue.SLURMCluster`` worker jobs, watched while the suite runs.

The bench process (on the login node) holds the Dask scheduler, on TLS with a temporary certificate
(:mod:`iosched.harness.tls`), on one address, and writes every result; each Slurm
job runs one ``dask worker`` (under its nanny) with ``cores // profile threads`` task slots, which
runs solver-free tasks itself and each solver task in a subprocess, as on any Dask cluster. Before
a job is submitted, ``sbatch --test-only`` checks the job script, so a partition or account that
Slurm refuses stops the bench with Slurm's message before any task runs. While the suite runs,
``squeue`` is asked every few seconds which worker jobs are left: a job that ended (cancelled, past
its walltime, node failure) is replaced, up to ``restarts`` times per bench, and the tasks it was
running go back to the queue; a task lost with its worker more than ``retries`` times is an ERROR
record naming the reason. With no job left and no restart left, or no worker connected for
``start_timeout`` seconds, the bench stops with a clear error, its jobs cancelled; the results
written so far stay, and the same command resumes.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import tomllib
import warnings
from pathlib import Path

from iosched.errors import ParameterError
from iosched.harness.tls import InsecureSchedulerWarning, remove_stale, temporary_security

# key: (type, default, what it is); the [slurm] table of a suite and --slurm-opt KEY=VALUE
KEYS = {
    "partition": (str, None, "Slurm partition of the worker jobs (sbatch -p; default: Slurm's default)"),
    "account": (str, None, "account charged (sbatch -A)"),
    "jobs": (int, 2, "worker jobs at once"),
    "cores": (int, 1, "CPUs per job (sbatch --cpus-per-task); task slots = cores // profile threads"),
    "memory": (str, "2GB", "memory per job (sbatch --mem), e.g. 4GB"),
    "walltime": (str, "01:00:00", "time limit per job (sbatch -t), e.g. 00:30:00 or 1-00:00:00"),
    "job_extra_directives": (list, [], "more #SBATCH lines, one --option[=value] each, e.g. [\"--qos=debug\"]"),
    "job_script_prologue": (list, [], "shell lines run before the worker, one line each, e.g. "
                                      "[\"module load python\"]"),
    "interface": (str, None, "network interface of the scheduler and workers, e.g. ib0 (lo on one node)"),
    "start_timeout": (float, 300.0, "s to wait for a worker, at the start and whenever none is left"),
    "retries": (int, 2, "times a task may be lost with its worker before it is an ERROR"),
    "restarts": (int, 10, "worker jobs submitted in place of ended ones, per bench"),
    "dashboard": (str, None, "HOST:PORT of the scheduler's dashboard, e.g. 127.0.0.1:8787 (default: none)"),
    "insecure": (bool, False, "plain TCP instead of TLS between the scheduler and the workers (a warning: "
                              "whoever reaches the scheduler runs code as you)"),
}
# What each value may be: it is written into the job script (#SBATCH lines and the worker's command line),
# so anything beyond what Slurm accepts there (a newline above all: it starts a shell command, and sbatch
# reads no #SBATCH line after the first command) is refused, naming the key.
_NAME = re.compile(r"[A-Za-z0-9_.,:-]+")  # partition and account names (a comma list of partitions too)
_WALLTIME = re.compile(r"\d+-\d+(:\d+(:\d+)?)?|\d+(:\d+(:\d+)?)?")  # Slurm's -t forms
_MEMORY = re.compile(r"\d+(\.\d+)? ?[KMGT]i?B?", re.IGNORECASE)
_DIRECTIVE = re.compile(r"--[A-Za-z][A-Za-z0-9-]*(=[!-~]+)?")  # one long option, its value printable, no space
_INTERFACE = re.compile(r"[A-Za-z0-9_.:@-]{1,15}")  # Linux's IFNAMSIZ - 1
_PATH = re.compile(r"[A-Za-z0-9_./,:+@=~-]+")  # a path written unquoted into #SBATCH -o and the worker's command
_ADDRESS = re.compile(r"[A-Za-z0-9_.:\[\]-]*:\d{1,5}")  # a dashboard's HOST:PORT (HOST may be empty: all)
_LINE = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029]*")  # one line: no newline, no control character, no
#                                                            line break of any kind (NEL, U+2028 ...)
POLL_S = 2.0  # s between two looks at squeue while the suite runs
GONE = {"COMPLETING", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
        "DEADLINE", "OUT_OF_MEMORY"}


class SlurmError(ParameterError):
    """Slurm refused the worker jobs, started none in time, or lost them all; the message says what
    Slurm said and what to do (the results written so far stay)."""


def options(table: dict, where: str = "[slurm]") -> dict:
    """The Slurm options with defaults filled in; a bad key or value names itself and ``where``."""
    if not isinstance(table, dict):
        raise ParameterError(f"{where}: must be a table of options, got {table!r}")
    out = {}
    for key, value in table.items():
        if key not in KEYS:
            raise ParameterError(f"{where}: unknown Slurm option {key!r}; known: {', '.join(KEYS)}")
        kind = KEYS[key][0]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise ParameterError(f"{where}: {key} must be a{'n' if kind is int else ''} {kind.__name__}, "
                                 f"got {value!r}")
        bad = {"jobs": lambda v: not 1 <= v <= 1024, "cores": lambda v: not 1 <= v <= 1024,
               "retries": lambda v: not 0 <= v <= 100, "restarts": lambda v: not 0 <= v <= 10_000,
               "start_timeout": lambda v: not 0 < v <= 7 * 86400,
               "memory": lambda v: not _MEMORY.fullmatch(v) or _bytes(v) < 2**20,
               "walltime": lambda v: not _WALLTIME.fullmatch(v),
               "job_extra_directives": lambda v: not all(isinstance(x, str) and _DIRECTIVE.fullmatch(x) for x in v),
               "job_script_prologue": lambda v: not all(isinstance(x, str) and _LINE.fullmatch(x)
                                                        and not x.lstrip().upper().startswith("#SBATCH") for x in v),
               "partition": lambda v: not _NAME.fullmatch(v), "account": lambda v: not _NAME.fullmatch(v),
               "interface": lambda v: not _INTERFACE.fullmatch(v), "dashboard": lambda v: not _ADDRESS.fullmatch(v),
               "insecure": lambda v: False}[key]
        if bad(value):
            raise ParameterError(f"{where}: bad {key} {value!r} ({KEYS[key][2]}{_ACCEPTS.get(key, '')})")
        out[key] = value
    return {**{k: v[1] for k, v in KEYS.items()}, **out}


_ACCEPTS = {"partition": "; letters, digits and _.,:- only", "account": "; letters, digits and _.,:- only",
            "memory": "; at least 1MB", "job_extra_directives": "; each one --option or --option=value, no space",
            "job_script_prologue": "; one line each, no control character; #SBATCH lines go in job_extra_directives",
            "interface": "; letters, digits and _.:@- only", "dashboard": "; HOST:PORT"}


def _bytes(memory: str) -> int:
    from dask.utils import parse_bytes

    return parse_bytes(memory)


def check_paths(*paths: Path) -> None:
    """Folders written unquoted into the job script (its ``#SBATCH -o`` lines, the worker's TLS files): a
    character beyond ``_PATH``'s (a space, a newline, a quote, ``%``) is refused, naming ``--out``."""
    for path in paths:
        if not _PATH.fullmatch(str(path)):
            raise ParameterError(f"--out {str(path)!r}: with --slurm its path goes into the Slurm job script, "
                                 "where only letters, digits and _./,:+@=~- are safe; choose another --out")


def check_interface(name: str | None) -> None:
    """``interface`` names a network interface of this host with an IPv4 address (the scheduler binds to
    it; Dask would raise a ValueError later)."""
    if name is None:
        return
    import psutil

    addresses = psutil.net_if_addrs()
    if name not in addresses:
        raise ParameterError(f"[slurm] interface {name!r} is not a network interface of this host; its "
                             f"interfaces: {', '.join(sorted(addresses))}")
    if not any(a.family == socket.AF_INET for a in addresses[name]):
        raise ParameterError(f"[slurm] interface {name!r} has no IPv4 address on this host")


def parse_opt(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` of ``--slurm-opt``: VALUE read as a TOML value (``4``, ``["--qos=debug"]``), else as
    a string (``debug``, ``00:10:00``)."""
    if not _LINE.fullmatch(text):
        raise ParameterError(f"--slurm-opt {text!r}: a newline or another control character; each value "
                             "goes into the Slurm job script, one line")
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ParameterError(f"--slurm-opt {text!r}: expected KEY=VALUE, KEY one of {', '.join(KEYS)}")
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value
    if KEYS.get(key, (None,))[0] is str:
        parsed = value
    return key, parsed


def _call(cmd: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise SlurmError(f"{cmd[0]} not found: --slurm needs Slurm's commands (sbatch, squeue, scancel) on the "
                         "PATH of the bench process") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{' '.join(cmd)} gave no answer in 60 s: is slurmctld up?") from None


def _job_states(ids: list[str]) -> dict[str, str] | None:
    """Slurm's state of each of the jobs it still lists ({id: state}); None when squeue fails."""
    proc = _call(["squeue", "-h", "-o", "%i %T %r", "--me"])
    if proc.returncode:
        return None
    states = {}
    for line in proc.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0] in ids:
            states[parts[0]] = " ".join(parts[1:])
    return states


def job_options(opts: dict, threads: int, log_dir: Path) -> dict:
    """The keywords of dask-jobqueue's ``SLURMJob`` (and ``SLURMCluster``) for checked :func:`options`:
    everything of the job script but the scheduler's address."""
    return {"queue": opts["partition"], "account": opts["account"], "walltime": opts["walltime"],
            "cores": max(1, opts["cores"] // threads), "job_cpu": opts["cores"], "memory": opts["memory"],
            "processes": 1, "job_name": "iosched-bench", "log_directory": str(log_dir),
            "job_extra_directives": opts["job_extra_directives"], "job_script_prologue": opts["job_script_prologue"],
            **({"interface": opts["interface"]} if opts["interface"] else {})}


class SlurmWorkers:
    """A started ``SLURMCluster``: :meth:`check` replaces jobs that ended; :meth:`close` cancels the rest."""

    def __init__(self, opts: dict, threads: int, log_dir: Path, note=print):
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError:
            raise ParameterError("--slurm needs dask-jobqueue: pip install 'iosched[dask]'") from None
        self.opts = opts
        self.log_dir = log_dir
        self.note = note  # says what happened to a job (one line)
        self.restarts_left = opts["restarts"]
        self.idle_since: float | None = None
        self.seen: dict[str, str] = {}  # worker name: job id, of every job submitted
        self.tls_folder: Path | None = None
        if opts["interface"]:  # SLURMCluster binds the scheduler to it too
            where = {}
        else:  # the login node's own address (the one its default route leaves by), not every interface
            from distributed.utils import get_ip

            where = {"host": get_ip()}
        dashboard = {"dashboard": True, "dashboard_address": opts["dashboard"]} if opts["dashboard"] else \
            {"dashboard": False, "dashboard_address": "127.0.0.1:0"}  # its other HTTP routes on localhost only
        kwargs = {**job_options(opts, threads, log_dir),
                  "scheduler_options": {"allowed_failures": opts["retries"], **where, **dashboard}}
        if opts["insecure"]:
            warnings.warn("[slurm] insecure = true: the scheduler and the workers talk plain TCP; whoever can reach "
                          "them runs code as you", InsecureSchedulerWarning, stacklevel=2)
        else:
            remove_stale(log_dir)
            security, self.tls_folder = temporary_security(log_dir)
            kwargs.update(security=security, protocol="tls://")
        try:
            self.cluster = SLURMCluster(**kwargs)
        except BaseException:
            self._remove_tls()
            raise

    @property
    def address(self) -> str:
        """The scheduler's address (``tls://HOST:PORT``, or ``tcp://`` with ``insecure``)."""
        return self.cluster.scheduler_address

    def _remove_tls(self) -> None:
        if self.tls_folder is not None:
            shutil.rmtree(self.tls_folder, ignore_errors=True)

    def submit(self) -> None:
        """Check the job script with ``sbatch --test-only``, then submit ``jobs`` of them."""
        with tempfile.NamedTemporaryFile("w", suffix=".sh", dir=self.log_dir, delete=False) as f:
            f.write(self.cluster.job_script())
        try:
            proc = _call(["sbatch", "--test-only", f.name])
        finally:
            os.unlink(f.name)
        if proc.returncode:
            said = " ".join(proc.stderr.split()) or f"exit code {proc.returncode}"
            raise SlurmError(f"Slurm refuses the worker job (partition {self.opts['partition']!r}, account "
                             f"{self.opts['account']!r}, {self.opts['cores']} cores, memory {self.opts['memory']}, "
                             f"walltime {self.opts['walltime']}): {said}")
        self.cluster.scale(jobs=self.opts["jobs"])

    def job_ids(self) -> dict[str, str | None]:
        """{worker name: Slurm job id} of the jobs the cluster means to run; None for a job Dask has
        dropped since (its worker left the scheduler) or that is still being submitted."""
        for name, job in list(self.cluster.workers.items()):
            if getattr(job, "job_id", None):
                self.seen[name] = job.job_id
        return {name: (self.seen.get(name) if name in self.cluster.workers else None)
                for name in list(self.cluster.worker_spec)}

    def _describe(self, states: dict[str, str] | None) -> str:
        if states is None:
            return "squeue failed"
        return ", ".join(f"job {i} {s}" for i, s in sorted(states.items())) or "no job in squeue"

    def wait_for_worker(self, client) -> None:
        """Return once a worker is connected; else cancel the jobs and raise after ``start_timeout``."""
        try:
            client.wait_for_workers(1, timeout=self.opts["start_timeout"])
        except TimeoutError:
            deadline = time.monotonic() + 10  # let the submissions under way end, to say how the jobs stand
            while None in self.job_ids().values() and time.monotonic() < deadline:
                time.sleep(0.2)
            states = _job_states(list(self.seen.values()))
            raise SlurmError(f"no Slurm worker started within start_timeout = {self.opts['start_timeout']:g} s "
                             f"({self._describe(states)}); the jobs are cancelled. Job output: "
                             f"{self.log_dir}") from None

    def check(self, client, done: int, total: int) -> None:
        """Replace the jobs Slurm no longer runs (within ``restarts``); raise when none is left to
        run the rest, or no worker has been connected for ``start_timeout`` seconds."""
        ids = self.job_ids()
        states = _job_states([i for i in ids.values() if i])
        if states is not None:
            gone = [name for name, jid in ids.items() if name in self.seen
                    and (jid not in states or states[jid].split()[0] in GONE)]
            for name in gone:
                replace = self.restarts_left > 0
                self.restarts_left -= replace
                used = self.opts["restarts"] - self.restarts_left
                self.note(f"iosched: Slurm job {self.seen[name]} ended "
                          f"({states.get(self.seen[name]) or 'no longer listed by squeue'}); "
                          + (f"a new job replaces it ({used} of {self.opts['restarts']} restarts), " if replace
                             else "no restart left, ") + "its tasks go back to the queue")
                del self.cluster.worker_spec[name], self.seen[name]
                if replace:  # a name of its own: SpecCluster would give it the ended job's, still in the cluster
                    self.cluster.worker_spec[f"iosched-restart-{used}"] = self.cluster.new_spec
            if gone:  # drops the ended jobs from the cluster and submits the new ones
                self.cluster.scale(jobs=len(self.cluster.worker_spec))
            if not self.cluster.worker_spec:
                raise SlurmError(f"every Slurm worker job ended and the {self.opts['restarts']} restarts are spent "
                                 f"({done} of {total} tasks written); run the same bench again to resume. "
                                 f"Job output: {self.log_dir}")
        if client.scheduler_info()["workers"]:
            self.idle_since = None
        elif self.idle_since is None:
            self.idle_since = time.monotonic()
        elif time.monotonic() - self.idle_since > self.opts["start_timeout"]:
            raise SlurmError(f"no Slurm worker for start_timeout = {self.opts['start_timeout']:g} s "
                             f"({self._describe(_job_states(list(self.seen.values())))}; {done} of {total} "
                             f"tasks written); the jobs are cancelled, run the same bench again to resume. "
                             f"Job output: {self.log_dir}")

    def close(self) -> None:
        """Cancel every job (``scancel``), stop the scheduler and remove the temporary certificate."""
        try:
            with contextlib.suppress(Exception):
                self.cluster.close(timeout=60)
        finally:
            self._remove_tls()
