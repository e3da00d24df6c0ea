"""The instance library: named instances with verified best-knowns (issue 39).

Per problem, in ``iosched/library/data/<problem>/``:

- ``catalog.json``: one entry per instance: its name (``<problem>/<family>-<n>``), the spec it was made
  from (a built-in name or ``generate:SEED:{size JSON}``), generator, parameters and seed, package
  version, the SHA-256 of its canonical JSON form (without its name), size figures, tags, objective, sense, units and
  the relative tolerance within which a stored value must be reproduced;
- ``<family>-<n>.instance.json.gz``: the instance; ``<family>-<n>.solution.json.gz``: the solution of
  the best known value (the evaluator re-scores it in CI);
- ``history.jsonl``: append-only records, one JSON object a line, ``kind`` ``solution`` (a value with
  the hash of its solution), ``bound`` (a bound valid for every solution, with what backs it) or
  ``class`` (a run of an exact method under a profile, and whether its value met the bound);
- ``summary.json``: generated from the catalogue and the history by :func:`write_summary`
  (``iosched library summary``); a test checks that the two agree.

Every change goes through :mod:`iosched.library.verdicts` (``check``, ``record``, ``record_bound``,
``record_run``), which judges values within the evaluators' tolerances and writes under the lock of
the problem's folder (:func:`locked`); this module holds the storage it reads and writes.

A listed name loads wherever an instance spec does as ``lib:NAME`` (``lib:periodic/paper-set1``, or
``lib:paper-set1`` for the problem at hand).
"""

from __future__ import annotations

import contextlib
import datetime
import gzip
import hashlib
import inspect
import json
import platform
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from iosched.core import METHODS, get_problem, register_source
from iosched.errors import InstanceError, ParameterError
from iosched.files import atomic_path, write_text
from iosched.locks import folder_lock

DATA = Path(__file__).parent / "data"
PROBLEMS = ("periodic", "window", "forwarding", "filedomain", "malleable")
UNITS = {"sys_efficiency": "share of the platform's processors (0-1)", "hypervolume": "share of the unit box (0-1)",
         "total_io_time": "s (sum over the jobs)", "time": "s", "mean_completion": "s (mean over the jobs)"}


def canonical(data) -> bytes:
    """The canonical JSON form hashed: keys sorted, no spaces, UTF-8, no NaN."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def content_hash(data) -> str:
    """``sha256:`` and the hex SHA-256 of :func:`canonical` (an instance's or a solution's JSON dict)."""
    return "sha256:" + hashlib.sha256(canonical(data)).hexdigest()


def instance_hash(data: dict) -> str:
    """The content hash of an instance's JSON dict without its ``name`` (a label, not content)."""
    return content_hash({k: v for k, v in data.items() if k != "name"})


def read_json_gz(path: Path):
    """The JSON value of a gzip-compressed file (as :func:`write_json_gz` writes it)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def write_json_gz(path: Path, data) -> None:
    """``data`` as gzip-compressed canonical JSON (mtime 0: the same data, the same bytes), atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(canonical(data))


def relative_gap(value: float, bound: float) -> float:
    """|bound - value| / max(|value|, 1e-12): the gap the library states."""
    return abs(bound - value) / max(abs(value), 1e-12)


def gap_text(gap: float | None) -> str:
    """A gap for a table: a percentage, or in scientific notation under 0.001 % (a 1e-6 gap is not 0.000 %)."""
    if gap is None:
        return "-"
    return "0" if gap == 0 else f"{gap:.3%}" if gap >= 1e-5 else f"{gap:.1e}"


def better(sense: str, a: float, b: float) -> bool:
    """Whether ``a`` is strictly better than ``b`` for an objective of ``sense``."""
    return a > b if sense == "max" else a < b


@dataclass(frozen=True)
class Entry:
    """One catalogue entry (``catalog.json``): what the instance is and how it was made."""

    name: str  # <problem>/<family>-<n>
    problem: str
    spec: str  # what read_instance makes it from: a built-in name or generate:SEED:{size JSON}
    generator: str  # the function that made it
    params: dict  # the generator's size parameters (empty for a built-in)
    seed: int | None
    version: str  # iosched's version that made it
    hash: str  # instance_hash of the instance's JSON dict
    size: dict
    tags: tuple[str, ...]
    objective: str
    sense: str
    units: str
    tolerance: float  # relative: a re-scored value within it of the recorded one reproduces it

    @property
    def short(self) -> str:
        return self.name.split("/", 1)[1]

    @property
    def instance_path(self) -> Path:
        return DATA / self.problem / f"{self.short}.instance.json.gz"

    @property
    def solution_path(self) -> Path:
        return DATA / self.problem / f"{self.short}.solution.json.gz"

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["tags"] = list(self.tags)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Entry:
        return cls(**{**d, "tags": tuple(d["tags"])})


def catalog_path(problem: str) -> Path:
    """``problem``'s ``catalog.json`` in :data:`DATA`."""
    return DATA / problem / "catalog.json"


def history_path(problem: str) -> Path:
    """``problem``'s ``history.jsonl`` in :data:`DATA`."""
    return DATA / problem / "history.jsonl"


def summary_path(problem: str) -> Path:
    """``problem``'s ``summary.json`` in :data:`DATA`."""
    return DATA / problem / "summary.json"


@cache
def _catalog(problem: str) -> dict[str, Entry]:
    path = catalog_path(problem)
    if not path.exists():
        return {}
    return {d["name"]: Entry.from_dict(d) for d in json.loads(path.read_text())["instances"]}


def refresh() -> None:
    """Forget the catalogues read so far (after a catalogue file changed, or :data:`DATA` was pointed at
    another folder, as the tests do)."""
    _catalog.cache_clear()


def catalog(problem: str | None = None) -> dict[str, Entry]:
    """Every library entry, by name.

    Parameters
    ----------
    problem : str, optional
        One problem's entries only; else all five problems'.

    Returns
    -------
    dict of str to Entry
        Full name (``periodic/paper-set1``) to its catalogue entry: spec, generator, seed, hash, size, tags,
        objective, sense, units and tolerance.

    Raises
    ------
    ParameterError
        An unknown problem.

    Examples
    --------
    >>> from iosched import library
    >>> "periodic/paper-set1" in library.catalog("periodic")
    True
    """
    out: dict[str, Entry] = {}
    for p in PROBLEMS if problem is None else (_problem_name(problem),):
        out.update(_catalog(p))
    return out


def _problem_name(problem: str) -> str:
    if problem not in PROBLEMS:
        raise ParameterError(f"unknown problem {problem!r}; known: {', '.join(PROBLEMS)}")
    return problem


def entry(name: str, problem: str | None = None) -> Entry:
    """One library entry by name.

    Parameters
    ----------
    name : str
        The full name (``periodic/paper-set1``), or the short one (``paper-set1``) with ``problem``.
    problem : str, optional
        The problem the entry must be of.

    Returns
    -------
    Entry
        Its catalogue entry (:func:`catalog`).

    Raises
    ------
    InstanceError
        No such entry (of that problem): the message names a few that exist.
    """
    full = name if "/" in name or problem is None else f"{problem}/{name}"
    named = full.split("/", 1)[0] if full.split("/", 1)[0] in PROBLEMS else None  # the problem the name gives
    found = catalog(named).get(full)
    if found is None or (problem is not None and found.problem != problem):
        known = ", ".join(sorted(catalog(problem or named))[:8])
        raise InstanceError(f"no library instance {name!r}" + (f" for {problem}" if problem else "")
                            + f"; 'iosched library list' names them (e.g. {known} ...)")
    return found


def load(name: str, problem: str | None = None):
    """The instance of a library entry, as ``iosched.load_instance(problem, "lib:NAME")`` reads it.

    Parameters
    ----------
    name, problem
        As :func:`entry` takes them.

    Returns
    -------
    instance
        The problem's instance dataclass, named ``lib:NAME``.

    Raises
    ------
    InstanceError
        No such entry, or its instance file does not match the catalogue's hash (a changed or corrupt file).
    """
    e = entry(name, problem)
    data = read_json_gz(e.instance_path)
    if instance_hash(data) != e.hash:
        raise InstanceError(f"library instance {e.name}: {e.instance_path.name} does not match its catalogue hash")
    return get_problem(e.problem).read_instance({**data, "name": f"lib:{e.name}"})


def read_history(problem: str) -> list[dict]:
    """``problem``'s history records in order, each a dict (module docstring); [] before the first."""
    path = history_path(problem)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append_history(problem: str, records: list[dict]) -> None:
    """Add ``records`` at the end of the problem's history (the old lines kept byte for byte), atomically;
    strict JSON (no NaN or infinity: ValueError). Callers hold :func:`locked` over their read and write."""
    path = history_path(_problem_name(problem))
    old = path.read_text() if path.exists() else ""
    write_text(path, old + "".join(json.dumps(r, sort_keys=True, allow_nan=False) + "\n" for r in records))


@contextlib.contextmanager
def locked(problem: str, wait_s: float = 300.0):
    """Hold the lock of ``problem``'s library folder (:func:`iosched.locks.folder_lock`): one writer at a time,
    from reading the history to writing the summary."""
    with folder_lock(DATA / _problem_name(problem), wait_s=wait_s, what="an 'iosched library' writer"):
        yield


def machine() -> str:
    """This machine, as a record names it: host (architecture, system)."""
    return f"{platform.node()} ({platform.machine()}, {platform.system()})"


def now() -> str:
    """The time of a record: UTC, ISO 8601, to the second."""
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()


PROFILES = ("none", "quick", "default", "thorough")  # by cost; ``none``: the method's own code, no solver profile


def profile_cost(profile: str) -> int:
    """The rank of ``profile`` in :data:`PROFILES` (a profile of another name ranks after them)."""
    return PROFILES.index(profile) if profile in PROFILES else len(PROFILES)


def record_profile(r: dict, records: list[dict]) -> str:
    """The solver profile a history record's method ran under: its ``profile`` field (records since issue
    47), else its params' ``profile``, else the default profile of a method that takes one; for an older
    bound a method proved, the profile of the class record written with it (same date and method);
    ``none`` for a method's own code and the problem's bounds."""
    if isinstance(r.get("profile"), str):
        return r["profile"]
    params = r.get("params")
    if isinstance(params, dict) and isinstance(params.get("profile"), str):
        return params["profile"]
    method = METHODS.get(f"{r['instance'].split('/', 1)[0]}/{r.get('method')}")
    if r["kind"] == "solution" and method is not None:
        default = inspect.signature(method.run).parameters.get("profile")
        if default is not None and isinstance(default.default, str):
            return default.default
    if r["kind"] == "bound" and not str(r.get("method", "")).startswith("iosched bound"):
        for c in records:
            if c["kind"] == "class" and c.get("date") == r.get("date") and c.get("method") == r.get("method") \
                    and c.get("tried"):
                return c["tried"][-1]
    return "none"


def _closed_by(best: dict, bound: dict, records: list[dict]) -> dict:
    """The cheapest (profile, method) known to close an optimal instance: the best known's and the bound's
    records (the costlier profile of the two names it; at the same profile, the method that proved the bound),
    or an exact method's run that met the bound."""
    ps, pb = record_profile(best, records), record_profile(bound, records)
    proved_by_a_method = f"{bound['instance'].split('/')[0]}/{bound['method']}" in METHODS  # not Problem.bound
    if profile_cost(pb) > profile_cost(ps) or (profile_cost(pb) == profile_cost(ps) and proved_by_a_method):
        found = {"profile": pb, "method": bound["method"], "by": "the bound"}  # (a tie: the proof names it)
    else:
        found = {"profile": ps, "method": best["method"], "by": "the best known"}
    for c in records:
        if c["kind"] == "class" and c["value"] != "open" and profile_cost(c["value"]) < profile_cost(found["profile"]):
            found = {"profile": c["value"], "method": c["method"], "by": "the exact method's run, which met the bound"}
    return found


def summarize(problem: str) -> dict:
    """The summary of ``problem``'s instances from its catalogue and history: per instance the best
    known value (the first record of the best value) with its solution hash and who found it, the
    tightest bound with what backs it, the status (``optimal`` where the best known meets the bound
    within the catalogue's tolerance) and gap, and the class: ``PROFILE/METHOD``, the cheapest profile
    and method known to close the instance, or ``open`` exactly when the status is. Solutions and runs
    recorded before the instance's last ``restate`` record do not count (see :func:`verdicts.restate`)."""
    entries = _catalog(_problem_name(problem))
    by_name: dict[str, list[dict]] = {name: [] for name in entries}
    for r in read_history(problem):
        if r["instance"] not in by_name:
            raise InstanceError(f"{history_path(problem)}: a record of {r['instance']!r}, not in the catalogue")
        by_name[r["instance"]].append(r)
    out = {}
    for name, all_records in by_name.items():
        e = entries[name]
        restated = [i for i, r in enumerate(all_records) if r["kind"] == "restate"]
        # a restatement voids the solutions and runs before it (the problem's definition changed under them);
        # bounds stay: each was proved for a problem whose solutions include every solution of today's
        records = [r for i, r in enumerate(all_records)
                   if not restated or i > restated[-1] or r["kind"] == "bound"]
        best = None
        for r in records:
            if r["kind"] == "solution" and (best is None or better(e.sense, r["value"], best["value"])):
                best = r
        bound = None
        for r in records:
            if r["kind"] == "bound" and (bound is None or better(e.sense, bound["value"], r["value"])):
                bound = r
        gap = relative_gap(best["value"], bound["value"]) if best and bound else None
        status = "optimal" if gap is not None and gap <= e.tolerance else "open"
        closed = _closed_by(best, bound, records) if status == "optimal" and best and bound else None
        out[name] = {
            "name": name, "problem": e.problem, "objective": e.objective, "sense": e.sense, "units": e.units,
            "size": e.size, "tags": list(e.tags),
            "best_known": best["value"] if best else None,
            "solution_hash": best["solution_hash"] if best else None,
            "found_by": {**{k: best.get(k) for k in ("method", "params", "solver", "version", "date", "machine",
                                                     "time_s")}, "profile": record_profile(best, records)}
            if best else None,
            "bound": bound["value"] if bound else None,
            "bound_backed_by": {**{k: bound.get(k) for k in ("backed_by", "scope", "method", "version", "date")},
                                "profile": record_profile(bound, records)} if bound else None,
            "gap": gap, "status": status,
            "class": f"{closed['profile']}/{closed['method']}" if closed else "open",
            "closed_by": closed,
            "class_tried": sorted({f"{p}/{c['method']}" for c in records if c["kind"] == "class"
                                   for p in c.get("tried", [])}),
            "restated": {k: all_records[restated[-1]].get(k) for k in ("date", "why", "version")}
            if restated else None,
        }
    return {"problem": problem, "instances": out}


def write_summary(problem: str) -> Path:
    """Regenerate ``summary.json`` of ``problem`` from its catalogue and history (:func:`summarize`).

    Parameters
    ----------
    problem : str
        One of the five problems.

    Returns
    -------
    Path
        The file written (atomically).

    Raises
    ------
    ParameterError
        An unknown problem.
    """
    path = summary_path(_problem_name(problem))
    write_text(path, json.dumps(summarize(problem), indent=1, sort_keys=True, allow_nan=False) + "\n")
    return path


def summary(problem: str | None = None) -> dict[str, dict]:
    """The stored summaries, one dict per instance, by name (what ``iosched library list`` shows).

    Parameters
    ----------
    problem : str, optional
        One problem's; else all five problems'.

    Returns
    -------
    dict of str to dict
        Full name to its summary: best known value and who found it, bound, gap, class (``optimal``
        under some profile, or ``open``).

    Raises
    ------
    ParameterError
        An unknown problem.
    """
    out = {}
    for p in PROBLEMS if problem is None else (_problem_name(problem),):
        path = summary_path(p)
        if path.exists():
            out.update(json.loads(path.read_text())["instances"])
    return out


def solution_of(result_or_solution: dict, e: Entry) -> dict:
    """The solution a submitted file holds for entry ``e``.

    Parameters
    ----------
    result_or_solution : dict
        A result dict (as ``iosched solve --json`` writes it) or a solution's JSON dict.
    e : Entry
        The library entry it is for.

    Returns
    -------
    dict
        The result's ``solution``, or the dict itself when it is a solution.

    Raises
    ------
    InstanceError
        Not a JSON object, a result of another problem, or a result without a solution (the field named).
    """
    d = result_or_solution
    if not isinstance(d, dict):
        raise InstanceError(f"a solution file holds a JSON object, got {type(d).__name__}")
    if "solution" in d and "problem" in d:
        if d["problem"] != e.problem:
            raise InstanceError(f"field 'problem': the result is of {d['problem']!r}, {e.name} is a {e.problem} "
                                f"instance")
        if not isinstance(d["solution"], dict):
            raise InstanceError(f"field 'solution': the result holds no solution ({d.get('status')!r})")
        return d["solution"]
    return d


register_source("lib:", lambda name, problem: load(name, problem.name))
