"""Darshan logs as plain data: job information, per-file counters, DXT segments, Lustre striping.

Reads a log through PyDarshan (``pip install 'iosched[darshan]'``): only the modules asked for,
and an :class:`InstanceError` naming the log and what is wrong where a log cannot be read (not a
Darshan log, truncated, a module cut off). What a problem makes of the data is in
``iosched.instances.<problem>.from_darshan``; this module decides nothing about any problem.

Units: bytes, seconds (DXT times from the job's start), Unix seconds for the job's start and end.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import resource
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from iosched.errors import InstanceError

COUNTER_MODULES = ("POSIX", "MPI-IO", "STDIO")
DXT_MODULES = ("DXT_MPIIO", "DXT_POSIX")
STREAMS = ("<STDIN>", "<STDOUT>", "<STDERR>")  # terminal streams Darshan records under STDIO: not file system I/O


@dataclass(frozen=True)
class DxtRecord:
    """One rank's DXT trace of one file: ``writes`` and ``reads`` as (n, 4) float arrays of
    offset (bytes), length (bytes), start and end (s from the job's start)."""

    file: str
    rank: int
    hostname: str
    writes: np.ndarray
    reads: np.ndarray


@dataclass(frozen=True)
class LustreComponent:
    """One layout component of a Lustre file: stripe size (bytes) and count, the extent it covers
    (bytes; end -1: to the end of the file) and its OSTs in stripe order."""

    stripe_size: int
    stripe_count: int
    extent_start: int
    extent_end: int
    osts: tuple[int, ...]


@dataclass
class DarshanLog:
    """What a Darshan log holds that the importers use.

    ``modules``: every module the log holds -> {"bytes": compressed size, "partial": True where
    Darshan ran out of memory for it and its records are incomplete}. ``counters[module]``: one row
    per record with ``rank`` (-1: a file shared by every rank, reduced by Darshan), ``file`` (its
    name) and the module's counters. ``dxt[module]``: the DXT records. ``lustre[file]``: its layout.
    Only the modules passed to :func:`read` are filled in. ``mounts``: the job's mount table, (mount
    point, file system type) pairs as the log's header holds them, whatever the modules read.
    """

    path: Path
    sha256: str
    job_id: int
    nprocs: int
    start_s: float
    end_s: float
    run_time_s: float
    exe: str
    modules: dict[str, dict]
    counters: dict = field(default_factory=dict)
    dxt: dict[str, list[DxtRecord]] = field(default_factory=dict)
    lustre: dict[str, list[LustreComponent]] = field(default_factory=dict)
    mounts: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return self.path.name

    def mount(self, file: str) -> tuple[str, str] | None:
        """The (mount point, file system type) holding ``file``: the longest mount point that is a
        path prefix of its name, as darshan-parser matches them; None where no mount point is."""
        best = None
        for point, kind in self.mounts:
            stem = point.rstrip("/")
            if (file == point or file.startswith(stem + "/")) and (best is None or len(point) > len(best[0])):
                best = (point, kind)
        return best

    def provenance(self, modules, counters, **more) -> dict:
        """The instance's record of where it came from: log name, SHA-256, job id, modules and counters used."""
        return {"source": "darshan", "log": self.name, "sha256": self.sha256, "job_id": self.job_id,
                "nprocs": self.nprocs, "modules": sorted(modules), "counters": sorted(counters), **more}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextlib.contextmanager
def _c_stderr(messages: list[str]):
    """Collect what libdarshan-util's C code prints on stderr (its only report of a truncated or
    corrupt module) into ``messages`` instead of the terminal."""
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            messages += [line for line in sink.read().decode(errors="replace").splitlines() if line.strip()]


def _pydarshan():
    try:
        import darshan
    except ImportError:
        raise InstanceError("reading Darshan logs needs PyDarshan: pip install 'iosched[darshan]' "
                            "(or pip install darshan)") from None
    return darshan


def read(path: str | Path, modules: tuple[str, ...] | None = None) -> DarshanLog:
    """The log at ``path`` with the records of ``modules`` (default: the counter, DXT and LUSTRE
    modules it holds); a module asked for that the log does not hold is left out (see ``modules``).

    libdarshan-util aborts or crashes on some corrupt files (an assertion in darshan_log_close, a
    segmentation fault on a bad compression type), so the log is read in a forked process and only
    its data comes back.

    Parameters
    ----------
    path : str or Path
        The ``.darshan`` file.
    modules : tuple of str, optional
        Darshan module names (``POSIX``, ``MPI-IO``, ``STDIO``, ``DXT_MPIIO``, ``DXT_POSIX``, ``LUSTRE``).

    Returns
    -------
    DarshanLog
        The job's information, mount table, and the records of the modules read.

    Raises
    ------
    InstanceError
        Naming the log: it is missing, is not a Darshan log, has a module whose data cannot be read (a
        truncated or corrupt file), or crashes the reader; or PyDarshan is not installed.
    """
    path = Path(path)
    if not path.is_file():
        raise InstanceError(f"no such Darshan log: {str(path)!r}")
    _pydarshan()  # a missing PyDarshan is said here, not in the child
    receive, send = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_child, args=(send, path, modules), daemon=True)
    child.start()
    send.close()
    try:
        kind, value = receive.recv()
    except EOFError:  # the child died before sending: the C library crashed on the file
        child.join()
        raise InstanceError(f"{path.name}: libdarshan-util crashed reading it (exit {child.exitcode}): a corrupt "
                            f"Darshan log") from None
    finally:
        receive.close()
    child.join()
    if kind == "error":
        raise InstanceError(value)
    return value


def _child(send, path: Path, modules) -> None:
    """Read the log and send ("log", DarshanLog) or ("error", message); leave without running the
    report's destructor (which asserts on a handle that failed to open). The C library's messages
    outside a read (an abort's) go to /dev/null: the parent reports the crash. No core file either (a
    crash left a 76 MB ``core`` in the working folder where core dumps are on)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    try:
        send.send(("log", _read(path, modules)))
    except InstanceError as e:
        send.send(("error", str(e)))
    except Exception as e:  # noqa: BLE001  (PyDarshan's own errors on a file it half-reads)
        send.send(("error", f"{path.name}: PyDarshan cannot read it ({type(e).__name__}: {e})"))
    finally:
        send.close()
        os._exit(0)


def _read(path: Path, modules) -> DarshanLog:
    darshan = _pydarshan()
    messages: list[str] = []
    report = None
    with _c_stderr(messages):  # the failed report's destructor also prints: inside, so it is collected too
        try:
            report = darshan.DarshanReport(str(path), read_all=False)
        except RuntimeError:
            pass
    if report is None:
        detail = next((m for m in messages if "Error" in m), "")
        raise InstanceError(f"{path.name} is not a readable Darshan log ({detail.strip() or 'no header'})")
    job = report.metadata["job"]
    held = {m: {"bytes": int(v["len"]), "partial": bool(v["partial_flag"])} for m, v in report.modules.items()}
    log = DarshanLog(path, _sha256(path), int(job["jobid"]), int(job["nprocs"]),
                     job["start_time_sec"] + job.get("start_time_nsec", 0) * 1e-9,
                     job["end_time_sec"] + job.get("end_time_nsec", 0) * 1e-9, float(job.get("run_time", 0.0)),
                     str(report.metadata.get("exe", "")), held,
                     mounts=tuple((str(m), str(t)) for m, t in report.data.get("mounts", ())))
    wanted = modules if modules is not None else (*COUNTER_MODULES, *DXT_MODULES, "LUSTRE")
    for mod in wanted:
        if mod not in held:
            continue
        before = len(messages)
        with _c_stderr(messages):
            if mod in DXT_MODULES:
                report.mod_read_all_dxt_records(mod, warnings=False)
            elif mod == "LUSTRE":
                report.mod_read_all_lustre_records(warnings=False)
            else:
                report.mod_read_all_records(mod, warnings=False)
        errors = [m for m in messages[before:] if "error" in m.lower()]
        if errors:
            raise InstanceError(f"{path.name}: module {mod} cannot be read (the file is truncated or corrupt: "
                                f"{errors[-1].strip()})")
        records = report.records.get(mod)
        count = 0 if records is None else len(records)
        if count == 0 and held[mod]["bytes"] > 0 and not held[mod]["partial"]:
            raise InstanceError(f"{path.name}: module {mod} holds {held[mod]['bytes']} bytes but no record could "
                                f"be read (a truncated or corrupt file)")
        if not count:
            continue
        names = report.name_records
        if mod in DXT_MODULES:
            log.dxt[mod] = [_dxt(rec, names) for rec in records.to_df()]
        elif mod == "LUSTRE":
            log.lustre = _lustre(records.to_df()["components"], names)
        else:
            frames = records.to_df()
            df = frames["counters"].join(frames["fcounters"].drop(columns=["rank", "id"]))
            df.insert(1, "file", [names.get(i, str(i)) for i in df["id"]])
            log.counters[mod] = df
    return log


def _segments(df) -> np.ndarray:
    if df is None or len(df) == 0:
        return np.zeros((0, 4))
    return df[["offset", "length", "start_time", "end_time"]].to_numpy(dtype=np.float64)


def _dxt(rec: dict, names: dict) -> DxtRecord:
    return DxtRecord(names.get(rec["id"], str(rec["id"])), int(rec["rank"]), str(rec.get("hostname", "")),
                     _segments(rec["write_segments"]), _segments(rec["read_segments"]))


def _lustre(df, names: dict) -> dict[str, list[LustreComponent]]:
    out: dict[str, list[LustreComponent]] = {}
    for row in df.itertuples(index=False):
        d = row._asdict()
        comp = LustreComponent(int(d["LUSTRE_COMP_STRIPE_SIZE"]), int(d["LUSTRE_COMP_STRIPE_COUNT"]),
                               int(d["LUSTRE_COMP_EXT_START"]), int(d["LUSTRE_COMP_EXT_END"]),
                               tuple(int(o) for o in d["LUSTRE_OST_IDS"]))
        out.setdefault(names.get(d["id"], str(d["id"])), []).append(comp)
    return out


def logs_in(path: str | Path) -> list[Path]:
    """The Darshan logs at ``path``.

    Parameters
    ----------
    path : str or Path
        A log file, or a folder searched recursively.

    Returns
    -------
    list of Path
        The file as a one-item list, or the ``*.darshan`` files under the folder, sorted.

    Raises
    ------
    InstanceError
        No such file or folder, or a folder without a ``*.darshan`` file.
    """
    path = Path(path)
    if path.is_dir():
        found = sorted(path.rglob("*.darshan"))
        if not found:
            raise InstanceError(f"no *.darshan file under {str(path)!r}")
        return found
    if not path.is_file():
        raise InstanceError(f"no such Darshan log or folder: {str(path)!r}")
    return [path]


def module_list(log: DarshanLog) -> str:
    """The modules a log holds, for error messages ("none" for an empty log)."""
    return ", ".join(log.modules) or "none"


def each(source, modules: tuple[str, ...], fn) -> tuple[list, list[tuple[str, str]]]:
    """``fn(log)`` for each log of ``source`` (a log or folder path, a :class:`DarshanLog`, or a list
    of them), with (log name, reason) of each log refused (an InstanceError from reading it or from
    ``fn``). A single log's refusal is raised; so is a batch where every log is refused."""
    items = list(source) if isinstance(source, (list, tuple)) else [source]
    paths: list = []
    for item in items:
        paths += [item] if isinstance(item, DarshanLog) else logs_in(item)
    if not paths:
        raise InstanceError("no Darshan log given")
    done, refused = [], []
    for item in paths:
        try:
            log = item if isinstance(item, DarshanLog) else read(item, modules)
            done.append(fn(log))
        except InstanceError as e:
            if len(paths) == 1:
                raise
            refused.append((Path(getattr(item, "path", item)).name, str(e)))
    if not done:
        raise InstanceError(f"every one of the {len(paths)} logs is refused; the first: {refused[0][1]}")
    return done, refused


JITTER_S = 1e-3  # s: negative Darshan times above -JITTER_S are timer noise, read as 0
JOB_IO_COUNTERS = ("BYTES_READ", "BYTES_WRITTEN", "F_READ_TIME", "F_WRITE_TIME", "F_META_TIME", "READS", "WRITES",
                   "SIZE_*_0_100", "SIZE_*_100_1K")  # what :func:`job_io` reads, by counter name after the module's


@dataclass(frozen=True)
class JobIO:
    """A job's file-system I/O as its POSIX and STDIO counters record it (terminal streams left out).

    ``nprocs``: the job's processes; ``io_procs``: ranks that moved bytes (every rank where a file was reduced
    to rank -1); ``shared_files``: files with bytes moved by several ranks or by rank -1, which carry
    ``shared_bytes``; ``bytes``: read + written; ``io_time_s`` and ``meta_time_s``: F_READ_TIME + F_WRITE_TIME
    and F_META_TIME summed over the records (s); ``run_time_s``: the job's (the longest of end - start,
    Darshan's run time and the last counter end time); ``ops`` and ``small_ops``: POSIX reads + writes, and
    those under 1 KiB; ``modules``: of POSIX and STDIO, those the log holds.
    """

    nprocs: int
    io_procs: int
    bytes: int
    shared_files: int
    shared_bytes: int
    io_time_s: float
    meta_time_s: float
    run_time_s: float
    ops: int
    small_ops: int
    modules: tuple[str, ...]


def job_io(log: DarshanLog) -> JobIO:
    """What ``log``'s POSIX and STDIO counters say of the job's I/O (MPI-IO sits above POSIX and would count
    the bytes twice).

    Parameters
    ----------
    log : DarshanLog
        Read with the POSIX (and STDIO) modules (:func:`read`).

    Returns
    -------
    JobIO
        Processes, I/O ranks, bytes, shared files, I/O and metadata times, run time and operation counts.

    Raises
    ------
    InstanceError
        Naming the log: no POSIX records, a negative byte count or time (below -JITTER_S s), no bytes read or
        written to files, or a run time of 0 s.
    """
    import pandas as pd

    where = log.name
    if not len(log.counters.get("POSIX", ())):
        raise InstanceError(f"{where}: no POSIX records: the request sizes that set a job's IOPS class are POSIX "
                            f"counters only (modules: {module_list(log)})")
    frames = []
    for mod in ("POSIX", "STDIO"):
        df = log.counters.get(mod)
        if df is None or not len(df):
            continue
        df = df[~df["file"].isin(STREAMS)]
        for c in ("BYTES_READ", "BYTES_WRITTEN", "F_READ_TIME", "F_WRITE_TIME", "F_META_TIME"):
            col = f"{mod}_{c}"
            # a timer's jitter leaves times a few microseconds below 0 (dxt.darshan: -2.9e-6 s): read as 0
            bad = df[col] < (-JITTER_S if "TIME" in c else 0)
            if bad.any():
                raise InstanceError(f"{where}: {col} is negative ({float(df.loc[bad, col].iloc[0])!r} for "
                                    f"{df.loc[bad, 'file'].iloc[0]!r}): inconsistent counters")
            df = df.assign(**{col: df[col].clip(lower=0)})
        frames.append(pd.DataFrame({
            "rank": df["rank"], "file": df["file"],
            "bytes": df[f"{mod}_BYTES_READ"] + df[f"{mod}_BYTES_WRITTEN"],
            "io_time": df[f"{mod}_F_READ_TIME"] + df[f"{mod}_F_WRITE_TIME"], "meta_time": df[f"{mod}_F_META_TIME"]}))
    rows = pd.concat(frames)
    if rows["bytes"].sum() <= 0:
        raise InstanceError(f"{where}: no bytes read or written to files through POSIX or STDIO, so no I/O "
                            f"volume for a job (modules: {module_list(log)})")
    meta_time = float(rows["meta_time"].sum())
    rows = rows[rows["bytes"] > 0]
    total = int(rows["bytes"].sum())
    shared_rows = rows["rank"] == -1
    io_procs = log.nprocs if shared_rows.any() else int(rows["rank"].nunique())
    by_file = rows.groupby("file")["rank"]
    shared_files = by_file.nunique()[(by_file.nunique() > 1) | (by_file.min() == -1)].index
    shared_bytes = int(rows.loc[rows["file"].isin(shared_files), "bytes"].sum())
    stamps = [c for df in log.counters.values() for c in df.columns if c.endswith("_END_TIMESTAMP")]
    last = max((float(log.counters[m][c].max()) for m in log.counters for c in stamps if c in log.counters[m]),
               default=0.0)
    duration = max(log.end_s - log.start_s, log.run_time_s, last)
    if duration <= 0:
        raise InstanceError(f"{where}: the job's run time is 0 s, so no I/O share or metadata rate")
    ops = small = 0
    posix = log.counters.get("POSIX")
    if posix is not None and len(posix):
        posix = posix[~posix["file"].isin(STREAMS)]
        ops = int((posix["POSIX_READS"] + posix["POSIX_WRITES"]).sum())
        small = int(sum(posix[f"POSIX_SIZE_{k}_{b}"].sum() for k in ("READ", "WRITE") for b in ("0_100", "100_1K")))
    return JobIO(log.nprocs, io_procs, total, len(shared_files), shared_bytes, float(rows["io_time"].sum()),
                 meta_time, duration, ops, small, tuple(m for m in ("POSIX", "STDIO") if m in log.counters))
