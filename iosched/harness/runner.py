"""Run a suite: tasks in worker processes, each result written the moment it exists.

A task whose method runs a solver (its function takes a ``profile``: HiGHS fixes its thread pool
per process, CP-SAT its workers) runs in a fresh process of its own; every other task runs in one
of ``workers`` warm worker processes, each of which imports iosched once and then runs task after
task (a task that times out, dies or runs out of memory takes its worker down, and the next task
starts a new one; the caches a task fills are emptied before the next). In a warm worker the
recorded ``peak_rss_mb`` is the worker's peak so far, not the task's alone.

Results go to ``OUT/results/<task key>.json`` by an atomic rename, so a run killed at any
moment (even SIGKILL) leaves only whole files, and a rerun skips what is done; a result file
that does not read back (truncated or edited by hand) counts as missing and its task runs
again. ``retry_failed`` reruns the tasks whose result is ERROR or OOM (crashed, killed by
the task timeout or the memory limit). Each result records the load average when its task
started, and the CPU seconds its method got (``solve_cpu_s``, all threads, from
``Result.method_cpu_s``) beside the wall seconds; a TIME_LIMIT run that got less than a
quarter of its budget in CPU, after at least half of it on the clock, is ``starved`` (a busy
machine, not the method, ended it), and
``retry_starved`` reruns those. One run at a time per directory (a lock file,
``OUT/.lock``). Tasks run on a local pool of ``workers`` (every child process exits when the
bench process dies), or on an existing Dask cluster given its scheduler address (``pip install
iosched[dask]``): default ``dask worker`` processes (under their nanny) run solver-free tasks
themselves, importing iosched once, and start each solver task with ``subprocess``; or on Slurm
worker jobs started for the run (``slurm``: :mod:`iosched.harness.slurm`). A record from a Dask
worker says where it ran: ``worker_host`` and ``slurm_job_id``; every record names the run's Dask
``scheduler`` address (``tls://...`` on Slurm; null for a local pool). Each record stores its solution,
so that a resumed run and the report score it again (:mod:`iosched.harness.records`): a result file that
does not hold (edited, truncated, a FIFO) is named on stderr and its task runs again.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import platform
import queue
import resource
import shutil
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from importlib import metadata
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from iosched import validate
from iosched.errors import OutputError, ParameterError
from iosched.files import make_writable_folder, write_text
from iosched.harness.suite import Suite, Task

# status of a record: the method ran (OK), or why it did not give a usable answer
OK, TIME_LIMIT, INFEASIBLE, ERROR, OOM = "OK", "TIME_LIMIT", "INFEASIBLE", "ERROR", "OOM"
MIN_MEMORY_MB = 512  # below this a worker cannot even import numpy and the solvers
STARVED = 0.25  # a TIME_LIMIT run with less than this share of its budget in CPU seconds was starved


def _starved(status: str, method_s: float | None, cpu_s: float | None, limit: float) -> bool:
    """Stopped by its budget (TIME_LIMIT after at least half of it on the clock) with under a quarter
    of it in CPU: a method that gives up early on its own estimate is not starved (persched-mindil-
    compact refuses its compaction LP after a fraction of its budget: benchmarks/speed.md, constants)."""
    return (status == TIME_LIMIT and method_s is not None and cpu_s is not None
            and method_s >= 0.5 * limit and cpu_s < STARVED * limit)


def budget(params: dict) -> float:
    """A task's time budget (s): its ``time_limit``, else its profile's (the default profile's)."""
    from iosched.solvers import load_profile

    if params.get("time_limit") is not None:
        return float(params["time_limit"])
    return load_profile(params.get("profile", "default")).time_limit


def environment() -> dict:
    """Versions, host and git revision, recorded with every result."""
    versions: dict[str, str | None] = {}
    for pkg in ("iosched", "pyomo", "highspy", "scipy", "gurobipy", "pyscipopt", "cplex", "xpress", "ortools", "pymoo",
                "numpy", "numba"):  # every solver backend (None where not installed) and what else solves
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    try:
        git = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        git = None
    return {"versions": versions, "python": platform.python_version(), "host": socket.gethostname(), "git": git}


def _orphan_watch(parent: int) -> None:
    """Exit as soon as the process that started us is gone (a killed bench leaves no workers behind)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _limit_memory(memory_mb: int | None) -> None:
    if memory_mb:
        limit = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _run_task(task: dict, memory_mb: int | None) -> dict:
    """Load, solve, evaluate one task in this process; its record."""
    start, cpu, load = time.perf_counter(), time.process_time(), os.getloadavg()[0]
    try:
        import iosched
        from iosched.core import get_problem
        from iosched.harness.records import stored_solution
        from iosched.harness.suite import load_instance

        inst = load_instance(task["problem"], task["instance"])
        loaded = time.perf_counter()
        res = iosched.solve(task["problem"], inst, task["method"], seed=task["seed"], **task["params"])
        solve_cpu = res.method_cpu_s
        status = {"optimal": OK, "feasible": OK, "time_limit": TIME_LIMIT, "infeasible": INFEASIBLE,
                  "error": ERROR}[res.status.value]
        record = {"status": status, "solver_status": res.status.value, "objective_name": res.objective_name,
                  "sense": res.sense, "objective": res.objective, "bound": res.bound, "gap": res.gap,
                  "feasible": res.evaluation.feasible if res.evaluation is not None else None,
                  "load_s": loaded - start, "prepare_s": res.prepare_time_s, "solve_s": res.method_time_s,
                  "bound_s": res.bound_time_s, "solve_cpu_s": solve_cpu,
                  "starved": _starved(status, res.method_time_s, solve_cpu, budget(task["params"])),
                  "message": res.info.get("error", "")}
        prob = get_problem(task["problem"])
        if prob.report_columns is not None:
            record["columns"] = prob.report_columns(inst, res)
        # the solution itself, so that report and a resumed bench can score it again (iosched.harness.records)
        record.update(stored_solution(prob.solution_to_dict(res.solution, inst) if res.solution is not None
                                      else None))
    except MemoryError:
        record = {"status": OOM, "message": f"over the memory limit of {memory_mb} MB"}
    except Exception as e:  # a crash is a result too
        record = {"status": ERROR, "message": f"{type(e).__name__}: {e}"}
    record["load_1min"] = load
    record["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    record["process_s"] = time.perf_counter() - start
    record["process_cpu_s"] = time.process_time() - cpu
    record["pid"] = os.getpid()
    return record


def _child(task: dict, memory_mb: int | None, conn, parent: int) -> None:
    """In a fresh process: one task, one record sent back."""
    import threading

    threading.Thread(target=_orphan_watch, args=(parent,), daemon=True).start()
    _limit_memory(memory_mb)
    conn.send({**_run_task(task, memory_mb), "worker": "fresh"})
    conn.close()


def _serve(conn, memory_mb: int | None, parent: int) -> None:
    """A warm worker: import iosched once, say so, then run each task received until told to stop."""
    import threading

    threading.Thread(target=_orphan_watch, args=(parent,), daemon=True).start()
    _limit_memory(memory_mb)
    import iosched  # noqa: F401  (once, before the first task)

    conn.send("ready")
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        _forget_earlier_tasks()
        conn.send({**_run_task(task, memory_mb), "worker": "warm"})


def _forget_earlier_tasks() -> None:
    """Empty the caches an earlier task may have filled, so that each task's times are its own (a window
    method computes the exact front that the next task on the same instance would find cached)."""
    from iosched.evaluate.forwarding import running_alone
    from iosched.models.window import clear_front_cache

    clear_front_cache()
    running_alone.cache_clear()


def _lost(elapsed: float, timeout: float, exitcode: int | None, memory_mb: int | None) -> dict:
    """The record of a task whose process gave no answer."""
    if elapsed >= timeout:
        return {"status": ERROR, "message": f"killed after the task timeout of {timeout:g} s"}
    if exitcode == -9:
        return {"status": OOM, "message": "killed by signal 9 (out of memory?)"}
    if memory_mb and exitcode in (-6, 1, 120):
        return {"status": OOM, "message": f"the worker could not start or allocate within --memory-mb "
                                          f"{memory_mb} (exit code {exitcode}): give it more memory"}
    return {"status": ERROR, "message": f"the worker process died (exit code {exitcode})"}


def _stop(proc) -> None:
    proc.join(5)
    if proc.is_alive():
        proc.kill()
        proc.join()


def run_isolated(task: Task, timeout: float, memory_mb: int | None = None) -> dict:
    """Run one task in a fresh (spawned) process; kill it after ``timeout`` seconds. In a
    daemonic process (a Dask worker under its nanny), which multiprocessing forbids to have
    children, the fresh process is started with ``subprocess`` instead."""
    if mp.current_process().daemon:
        return _run_subprocess(task, timeout, memory_mb)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(task.to_dict(), memory_mb, child, os.getpid()), daemon=True)
    start = time.perf_counter()
    proc.start()
    child.close()
    record = None
    if parent.poll(timeout):
        try:
            record = parent.recv()
        except EOFError:
            record = None
    _stop(proc)
    if record is None:
        record = _lost(time.perf_counter() - start, timeout, proc.exitcode, memory_mb)
    return {**task.to_dict(), "key": task.key, **record}


def _run_subprocess(task: Task, timeout: float, memory_mb: int | None) -> dict:
    """One task in ``python -m iosched.harness.runner`` (the task as JSON on stdin, the record as
    the last line of stdout), killed after ``timeout`` seconds."""
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "iosched.harness.runner"], capture_output=True, text=True,
                              input=json.dumps({"task": task.to_dict(), "memory_mb": memory_mb}), timeout=timeout)
    except subprocess.TimeoutExpired:
        record = _lost(timeout, timeout, None, memory_mb)
    else:
        lines = proc.stdout.strip().splitlines()
        try:
            record = json.loads(lines[-1])
        except (IndexError, json.JSONDecodeError):
            record = _lost(time.perf_counter() - start, timeout, proc.returncode, memory_mb)
    return {**task.to_dict(), "key": task.key, **record, "worker": "subprocess"}


def run_on_worker(task: Task, timeout: float, memory_mb: int | None = None) -> dict:
    """A task on a Dask worker: a method that runs a solver in a fresh process (:func:`run_isolated`),
    any other in the worker itself, which imports iosched once as a warm worker does (its caches
    emptied first). Such a task is bounded by its method's own time limit; the task timeout is
    enforced on fresh processes only."""
    where = {"worker_host": socket.gethostname(), "slurm_job_id": os.environ.get("SLURM_JOB_ID")}
    if needs_fresh_process(task):
        return {**run_isolated(task, timeout, memory_mb), **where}
    _forget_earlier_tasks()
    return {**task.to_dict(), "key": task.key, **_run_task(task.to_dict(), memory_mb), "worker": "dask", **where}


START_TIMEOUT = 300.0  # s for a warm worker to import iosched (a few seconds on an idle machine)


class WarmWorker:
    """One worker process that runs solver-free tasks one after another (see the module docstring)."""

    def __init__(self, memory_mb: int | None = None):
        self.memory_mb = memory_mb
        self.proc: BaseProcess | None = None
        self.conn: Connection | None = None  # to the process, set with it

    def _start(self) -> Connection | None:
        """Start the process: the connection to it once it says it is ready, else None."""
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, self.memory_mb, os.getpid()), daemon=True)
        self.proc.start()
        child.close()
        try:
            return self.conn if self.conn.poll(START_TIMEOUT) and self.conn.recv() == "ready" else None
        except EOFError:
            return None

    def run(self, task: Task, timeout: float) -> dict:
        """The task's record; a worker that gave no answer (or ran out of memory) is replaced next time."""
        conn = self.conn if self.proc is not None else self._start()
        if conn is None:
            exitcode = self.close(kill=True)
            return {**task.to_dict(), "key": task.key, **_lost(0.0, timeout, exitcode, self.memory_mb)}
        start = time.perf_counter()
        record = None
        try:
            conn.send(task.to_dict())
            if conn.poll(timeout):
                record = conn.recv()
        except (EOFError, OSError):
            record = None
        if record is None or record["status"] == OOM:
            exitcode = self.close(kill=True)
            if record is None:
                record = _lost(time.perf_counter() - start, timeout, exitcode, self.memory_mb)
        return {**task.to_dict(), "key": task.key, **record}

    def close(self, kill: bool = False) -> int | None:
        """Stop the process (at once with ``kill``); its exit code."""
        proc, conn, self.proc, self.conn = self.proc, self.conn, None, None
        if proc is None or conn is None:
            return None
        if kill:
            proc.kill()
        else:
            with contextlib.suppress(OSError):
                conn.send(None)
        _stop(proc)
        conn.close()
        return proc.exitcode


def needs_fresh_process(task: Task) -> bool:
    """A method that runs a solver (it takes a ``profile``) gets a process of its own."""
    import inspect

    from iosched.core import get_method

    return "profile" in inspect.signature(get_method(task.problem, task.method).run).parameters


def _write(out: Path, record: dict, env: dict) -> None:
    """The record, whole or not at all (a full disk: OutputError, no partial file left)."""
    write_text(out / "results" / f"{record['key']}.json", json.dumps({**record, **env}, indent=1))


def read_result(path: Path) -> dict | None:
    """A result file's record when it reads back as one (a regular file of JSON whose fields are those a run
    writes, :mod:`iosched.harness.records`), else None. Its solution is not scored again here: see
    :func:`pending` and :func:`iosched.harness.report.load_results`."""
    from iosched.harness.records import BadRecord, check_fields, read_record

    try:
        record = read_record(path)
        check_fields(record, path.stem)
    except BadRecord:
        return None
    return record


def pending(suite: Suite, out: Path, retry_failed: bool = False, retry_starved: bool = False,
            rejected: dict[Path, str] | None = None) -> list[Task]:
    """The tasks without a result that holds yet (read, checked and its solution re-scored:
    :mod:`iosched.harness.records`; those that do not go to ``rejected`` with the reason), and, with
    ``retry_failed``, those that failed; with ``retry_starved``, those starved of CPU."""
    from iosched.harness.records import load_checked

    keys = {t.key for t in suite.tasks}
    good, bad = load_checked(sorted((out / "results").glob("[!.]*.json")), keys)
    if rejected is not None:
        rejected.update(bad)
    done = {path.stem for path, record in good.items() if not (retry_failed and record["status"] in (ERROR, OOM))
            and not (retry_starved and record.get("starved"))}
    return [t for t in suite.tasks if t.key not in done]


@contextlib.contextmanager
def _lock(out: Path):
    """One bench at a time on a results directory: a second one stops with a clear error."""
    import fcntl
    import stat

    try:  # never through a symlink or into a FIFO someone left there (the lock file is truncated below)
        fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o666)
    except OSError as e:
        raise ParameterError(f"cannot use {str(out / '.lock')!r} as the bench's lock file: {e.strerror or e} (a "
                             "symbolic link? remove it)") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ParameterError(f"{str(out / '.lock')!r} is not a regular file: remove it")
    handle = os.fdopen(fd, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise ParameterError(f"{out} is in use by another 'iosched bench' ({holder}); wait for it or use "
                             "another --out") from None
    try:
        handle.truncate(0)
        handle.write(f"pid {os.getpid()}")
        handle.flush()
    except OSError as e:
        with contextlib.suppress(OSError):
            handle.close()
        raise OutputError(f"cannot write {str(out / '.lock')!r}: {e.strerror or e}") from None
    try:
        yield
    finally:
        handle.close()


def check_out(out: str | Path) -> None:
    """``--out`` can be a results folder, found without making anything (so before a suite's instances are
    generated: a bad --out was said only after a 100,000-instance suite was generated, 101.6 s): each part
    of ``OUT/results`` that exists is a folder, and the deepest that exists is one this process may write
    in. :func:`run_suite` still proves it by making a file there."""
    out = Path(out)
    for part in (out / "results", out):
        if part.exists() and not part.is_dir():
            raise ParameterError(f"--out {str(out)!r} is not a writable directory: {str(part)!r} is not a folder")
    probe = out
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise ParameterError(f"--out {str(out)!r} is not a writable directory: {str(probe)!r} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ParameterError(f"--out {str(out)!r} is not a writable directory: {str(probe)!r} may not be written")


def _prepare(out: Path) -> None:
    """Create OUT/results and prove it writable before any task runs."""
    try:
        make_writable_folder(out / "results")
    except OSError as e:
        raise ParameterError(f"--out {str(out)!r} is not a writable directory: {e.strerror or e}") from None


def run_suite(suite: Suite, out: str | Path, workers: int | None = None, scheduler: str | None = None,
              memory_mb: int | None = None, progress: bool = True, retry_failed: bool = False,
              retry_starved: bool = False, slurm: dict | None = None) -> dict:
    """Run what is not done yet; returns counts {done, failed, skipped}. ``slurm``: run on Slurm worker
    jobs started for this run (:mod:`iosched.harness.slurm`), these options over the suite's ``[slurm]``."""
    out = Path(out)
    if slurm is not None:
        from iosched.harness.slurm import check_interface, check_paths, options

        if scheduler or workers is not None:
            raise ParameterError("--slurm starts its own Dask cluster: give it neither --scheduler nor --workers")
        slurm = options({**suite.slurm, **slurm}, "--slurm-opt / the suite's [slurm]")
        check_interface(slurm["interface"])
        check_paths(out)
    if scheduler is not None:
        from iosched.harness.tls import checked_address

        checked_address(scheduler)
    if workers is not None:
        validate.integer("--workers", workers, 1, 1024, error=ParameterError)
    if memory_mb is not None:
        validate.integer("--memory-mb", memory_mb, MIN_MEMORY_MB, error=ParameterError)
    created = not out.exists()
    try:
        _prepare(out)
        with _lock(out):
            return _run(suite, out, workers, scheduler, memory_mb, progress, retry_failed, retry_starved, slurm)
    except OutputError:  # a full disk: a folder this run made and that holds no result goes again
        if created and not any((out / "results").glob("[!.]*.json")):
            shutil.rmtree(out, ignore_errors=True)
        raise


def _run(suite, out, workers, scheduler, memory_mb, progress, retry_failed, retry_starved, slurm) -> dict:
    write_text(out / "suite.json", json.dumps({"name": suite.name, "problem": suite.problem,
                                              "profile": suite.profile, "tasks": len(suite.tasks)}, indent=1))
    rejected: dict[Path, str] = {}
    todo = pending(suite, out, retry_failed, retry_starved, rejected)
    for path, why in sorted(rejected.items()):
        print(f"iosched: skipped {path}: it {why}; its task runs again", file=sys.stderr)
    env = {**environment(), "threads": _threads(suite.profile), "suite": suite.name, "scheduler": None}
    counts = {"done": 0, "failed": 0, "skipped": len(suite.tasks) - len(todo)}
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc=suite.name, unit="task", disable=not progress, file=sys.stderr)

    def finish(record):
        _write(out, record, env)
        counts["done"] += 1
        counts["failed"] += record["status"] in (ERROR, OOM)
        bar.update()
        bar.set_postfix(failed=counts["failed"], remaining=len(todo) - counts["done"])

    if slurm and todo:
        from dask.distributed import Client

        from iosched.harness.slurm import SlurmWorkers

        make_writable_folder(out / "slurm-logs")
        workers_ = SlurmWorkers(slurm, _threads(suite.profile), out / "slurm-logs",
                                note=lambda line: bar.write(line, file=sys.stderr))
        try:
            env["scheduler"] = workers_.address
            bar.write(f"iosched: Dask scheduler at {workers_.address}", file=sys.stderr)
            workers_.submit()
            with Client(workers_.cluster) as client:
                workers_.wait_for_worker(client)
                _run_dask(client, todo, suite.timeout, memory_mb, finish, workers_)
        finally:
            workers_.close()
    elif scheduler:
        from iosched.harness.tls import connect

        env["scheduler"] = scheduler
        with connect(scheduler) as client:
            _run_dask(client, todo, suite.timeout, memory_mb, finish)
    elif not slurm:
        workers = workers or max(1, (os.cpu_count() or 1) // _threads(suite.profile))
        idle: queue.SimpleQueue[WarmWorker] = queue.SimpleQueue()
        warm = [WarmWorker(memory_mb) for _ in range(workers)]
        for w in warm:
            idle.put(w)

        def run(task):
            if needs_fresh_process(task):
                return run_isolated(task, suite.timeout, memory_mb)
            worker = idle.get()
            try:
                return worker.run(task, suite.timeout)
            finally:
                idle.put(worker)

        try:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(run, t) for t in todo]
                try:
                    for fut in as_completed(futures):
                        finish(fut.result())
                except BaseException:  # a result that cannot be written (a full disk): stop, run nothing more
                    for fut in futures:
                        fut.cancel()
                    raise
        finally:
            for w in warm:
                w.close()
    bar.close()
    return counts


def _run_dask(client, todo: list[Task], timeout: float, memory_mb: int | None, finish, watch=None) -> None:
    """Every task on the cluster, each record to ``finish`` as it comes; a task whose worker died under it
    more often than the scheduler allows (``KilledWorker``) is an ERROR record. ``watch`` (Slurm) is
    checked every few seconds, and raises when the cluster can no longer run the rest."""
    from dask.distributed import wait
    from distributed.scheduler import KilledWorker

    from iosched.harness.slurm import POLL_S

    futures = {client.submit(run_on_worker, t, timeout, memory_mb, pure=False): t for t in todo}
    remaining, written = set(futures), 0
    try:
        while remaining:
            try:
                done, remaining = wait(remaining, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            for fut in done:
                task = futures.pop(fut)  # its result released once read: a worker lost later would recompute it
                try:
                    record = fut.result()
                except KilledWorker as e:
                    record = {**task.to_dict(), "key": task.key, "status": ERROR,
                              "message": f"lost with its worker more than the allowed times (a Slurm job "
                                         f"cancelled, past its walltime or out of memory?): {type(e).__name__}: {e}"}
                fut.release()
                finish(record)
                written += 1
            if watch is not None and remaining:
                watch.check(client, written, len(todo))
    finally:
        client.cancel(list(remaining))


def _threads(profile: str) -> int:
    from iosched.solvers import load_profile

    return load_profile(profile).threads


if __name__ == "__main__":  # a task from stdin, its record on stdout (see _run_subprocess)
    message = json.loads(sys.stdin.read())
    _limit_memory(message["memory_mb"])
    with contextlib.redirect_stdout(sys.stderr):  # whatever a solver prints stays off the record's line
        record = _run_task(message["task"], message["memory_mb"])
    print(json.dumps(record))
