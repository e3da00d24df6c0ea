"""Run a suite: every task in a fresh process, each result written the moment it exists.

Results go to ``OUT/results/<task key>.json`` by an atomic rename, so a run killed at any
moment (even SIGKILL) leaves only whole files, and a rerun skips what is done. Tasks run
on a local pool of ``workers`` (each waits on its own child process), or on an existing
Dask cluster given its scheduler address (``pip install iosched[dask]``).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import platform
import resource
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from importlib import metadata
from pathlib import Path

from iosched.harness.suite import Suite, Task

# status of a record: the method ran (OK), or why it did not give a usable answer
OK, TIME_LIMIT, INFEASIBLE, ERROR, OOM = "OK", "TIME_LIMIT", "INFEASIBLE", "ERROR", "OOM"


def environment() -> dict:
    """Versions, host and git revision, recorded with every result."""
    versions = {}
    for pkg in ("iosched", "pyomo", "highspy", "ortools", "pymoo", "numpy", "numba"):
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


def _child(task: dict, memory_mb: int | None, conn) -> None:
    """In a fresh process: load, solve, evaluate; send back one record."""
    start = time.perf_counter()
    if memory_mb:
        limit = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        import iosched
        from iosched.harness.suite import load_instance

        inst = load_instance(task["problem"], task["instance"])
        loaded = time.perf_counter()
        res = iosched.solve(task["problem"], inst, task["method"], seed=task["seed"], **task["params"])
        status = {"optimal": OK, "feasible": OK, "time_limit": TIME_LIMIT, "infeasible": INFEASIBLE,
                  "error": ERROR}[res.status.value]
        record = {"status": status, "solver_status": res.status.value, "objective_name": res.objective_name,
                  "sense": res.sense, "objective": res.objective, "bound": res.bound, "gap": res.gap,
                  "feasible": res.evaluation.feasible if res.evaluation is not None else None,
                  "load_s": loaded - start, "solve_s": res.wall_time_s,
                  "message": res.info.get("error", "")}
    except MemoryError:
        record = {"status": OOM, "message": f"over the memory limit of {memory_mb} MB"}
    except Exception as e:  # a crash is a result too
        record = {"status": ERROR, "message": f"{type(e).__name__}: {e}"}
    record["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    record["process_s"] = time.perf_counter() - start
    conn.send(record)
    conn.close()


def run_isolated(task: Task, timeout: float, memory_mb: int | None = None) -> dict:
    """Run one task in a fresh (spawned) process; kill it after ``timeout`` seconds."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(task.to_dict(), memory_mb, child), daemon=True)
    start = time.perf_counter()
    proc.start()
    child.close()
    record = None
    if parent.poll(timeout):
        try:
            record = parent.recv()
        except EOFError:
            record = None
    proc.join(5)
    if proc.is_alive():
        proc.kill()
        proc.join()
    if record is None:
        if time.perf_counter() - start >= timeout:
            record = {"status": ERROR, "message": f"killed after the task timeout of {timeout:g} s"}
        elif proc.exitcode == -9:
            record = {"status": OOM, "message": "killed by signal 9 (out of memory?)"}
        else:
            record = {"status": ERROR, "message": f"the worker process died (exit code {proc.exitcode})"}
    return {**task.to_dict(), "key": task.key, **record}


def _write(out: Path, record: dict, env: dict) -> None:
    path = out / "results" / f"{record['key']}.json"
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({**record, **env}, indent=1))
    os.replace(tmp, path)


def pending(suite: Suite, out: Path) -> list[Task]:
    """The tasks without a result file yet (half-written files never count: they are renamed whole)."""
    done = {p.stem for p in (out / "results").glob("*.json")}
    return [t for t in suite.tasks if t.key not in done]


def run_suite(suite: Suite, out: str | Path, workers: int | None = None, scheduler: str | None = None,
              memory_mb: int | None = None, progress: bool = True) -> dict:
    """Run what is not done yet; returns counts {done, failed, skipped}."""
    out = Path(out)
    (out / "results").mkdir(parents=True, exist_ok=True)
    (out / "suite.json").write_text(json.dumps({"name": suite.name, "problem": suite.problem,
                                                "profile": suite.profile, "tasks": len(suite.tasks)}, indent=1))
    todo = pending(suite, out)
    env = {**environment(), "threads": _threads(suite.profile), "suite": suite.name}
    counts = {"done": 0, "failed": 0, "skipped": len(suite.tasks) - len(todo)}
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc=suite.name, unit="task", disable=not progress, file=sys.stderr)

    def finish(record):
        _write(out, record, env)
        counts["done"] += 1
        counts["failed"] += record["status"] in (ERROR, OOM)
        bar.update()
        bar.set_postfix(failed=counts["failed"], remaining=len(todo) - counts["done"])

    if scheduler:
        from dask.distributed import Client
        from dask.distributed import as_completed as dask_completed

        with Client(scheduler) as client:
            futures = [client.submit(run_isolated, t, suite.timeout, memory_mb, pure=False) for t in todo]
            for fut in dask_completed(futures):
                finish(fut.result())
    else:
        workers = workers or max(1, (os.cpu_count() or 1) // _threads(suite.profile))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(run_isolated, t, suite.timeout, memory_mb) for t in todo]
            for fut in as_completed(futures):
                finish(fut.result())
    bar.close()
    return counts


def _threads(profile: str) -> int:
    from iosched.solvers import load_profile

    return load_profile(profile).threads
