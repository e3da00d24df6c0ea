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
  ``class`` (the difficulty from our runs of the exact method);
- ``summary.json``: generated from the catalogue and the history by :func:`write_summary`
  (``iosched library summary``); a test checks that the two agree.

A listed name loads wherever an instance spec does as ``lib:NAME`` (``lib:periodic/paper-set1``, or
``lib:paper-set1`` for the problem at hand).
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import json
import platform
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from iosched.core import get_problem, register_source
from iosched.errors import InstanceError, ParameterError
from iosched.files import atomic_path, write_text
from iosched.version import __version__

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
    return DATA / problem / "catalog.json"


def history_path(problem: str) -> Path:
    return DATA / problem / "history.jsonl"


def summary_path(problem: str) -> Path:
    return DATA / problem / "summary.json"


@cache
def _catalog(problem: str) -> dict[str, Entry]:
    path = catalog_path(problem)
    if not path.exists():
        return {}
    return {d["name"]: Entry.from_dict(d) for d in json.loads(path.read_text())["instances"]}


def catalog(problem: str | None = None) -> dict[str, Entry]:
    """Every entry (of ``problem``, or of all five), by name."""
    out: dict[str, Entry] = {}
    for p in PROBLEMS if problem is None else (_problem_name(problem),):
        out.update(_catalog(p))
    return out


def _problem_name(problem: str) -> str:
    if problem not in PROBLEMS:
        raise ParameterError(f"unknown problem {problem!r}; known: {', '.join(PROBLEMS)}")
    return problem


def entry(name: str, problem: str | None = None) -> Entry:
    """The entry named ``name`` (``periodic/paper-set1``; the short name ``paper-set1`` with ``problem``)."""
    full = name if "/" in name or problem is None else f"{problem}/{name}"
    named = full.split("/", 1)[0] if full.split("/", 1)[0] in PROBLEMS else None  # the problem the name gives
    found = catalog(named).get(full)
    if found is None or (problem is not None and found.problem != problem):
        known = ", ".join(sorted(catalog(problem or named))[:8])
        raise InstanceError(f"no library instance {name!r}" + (f" for {problem}" if problem else "")
                            + f"; 'iosched library list' names them (e.g. {known} ...)")
    return found


def load(name: str, problem: str | None = None):
    """The instance object of a library entry, named ``lib:NAME``; its hash checked against the catalogue."""
    e = entry(name, problem)
    data = read_json_gz(e.instance_path)
    if instance_hash(data) != e.hash:
        raise InstanceError(f"library instance {e.name}: {e.instance_path.name} does not match its catalogue hash")
    return get_problem(e.problem).instance_type.from_dict({**data, "name": f"lib:{e.name}"})


def read_history(problem: str) -> list[dict]:
    path = history_path(problem)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append_history(problem: str, records: list[dict]) -> None:
    """Add ``records`` at the end of the problem's history (the old lines kept byte for byte), atomically."""
    path = history_path(_problem_name(problem))
    old = path.read_text() if path.exists() else ""
    write_text(path, old + "".join(json.dumps(r, sort_keys=True) + "\n" for r in records))


def machine() -> str:
    return f"{platform.node()} ({platform.machine()}, {platform.system()})"


def now() -> str:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()


def summarize(problem: str) -> dict:
    """The summary of ``problem``'s instances from its catalogue and history: per instance the best
    known value (the first record of the best value) with its solution hash and who found it, the
    tightest bound with what backs it, the status and gap, and the latest difficulty class."""
    entries = _catalog(_problem_name(problem))
    by_name: dict[str, list[dict]] = {name: [] for name in entries}
    for r in read_history(problem):
        if r["instance"] not in by_name:
            raise InstanceError(f"{history_path(problem)}: a record of {r['instance']!r}, not in the catalogue")
        by_name[r["instance"]].append(r)
    out = {}
    for name, records in by_name.items():
        e = entries[name]
        best = None
        for r in records:
            if r["kind"] == "solution" and (best is None or better(e.sense, r["value"], best["value"])):
                best = r
        bound = None
        for r in records:
            if r["kind"] == "bound" and (bound is None or better(e.sense, bound["value"], r["value"])):
                bound = r
        classes = [r for r in records if r["kind"] == "class"]
        gap = relative_gap(best["value"], bound["value"]) if best and bound else None
        status = "optimal" if gap is not None and gap <= e.tolerance else "open"
        out[name] = {
            "name": name, "problem": e.problem, "objective": e.objective, "sense": e.sense, "units": e.units,
            "size": e.size, "tags": list(e.tags),
            "best_known": best["value"] if best else None,
            "solution_hash": best["solution_hash"] if best else None,
            "found_by": {k: best[k] for k in ("method", "params", "solver", "version", "date", "machine", "time_s")}
            if best else None,
            "bound": bound["value"] if bound else None,
            "bound_backed_by": {k: bound[k] for k in ("backed_by", "scope", "method", "version", "date")}
            if bound else None,
            "gap": gap, "status": status,
            "class": classes[-1]["value"] if classes else None,
            "class_tried": classes[-1]["tried"] if classes else [],
        }
    return {"problem": problem, "instances": out}


def write_summary(problem: str) -> Path:
    """Regenerate ``summary.json`` of ``problem`` from its catalogue and history."""
    path = summary_path(_problem_name(problem))
    write_text(path, json.dumps(summarize(problem), indent=1, sort_keys=True) + "\n")
    return path


def summary(problem: str | None = None) -> dict[str, dict]:
    """The stored summaries (of ``problem``, or of all five), one dict per instance, by name."""
    out = {}
    for p in PROBLEMS if problem is None else (_problem_name(problem),):
        path = summary_path(p)
        if path.exists():
            out.update(json.loads(path.read_text())["instances"])
    return out


def solution_of(result_or_solution: dict, e: Entry) -> dict:
    """The ``solution`` of a result dict (as ``iosched solve --json`` writes it), or the dict itself
    when it is a solution; InstanceError naming the field where the result is of another problem."""
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


def check(name: str, data: dict, problem: str | None = None) -> dict:
    """The verdict on a solution of library instance ``name`` (a result dict or its solution):
    ``improves`` / ``matches`` / ``worse`` (with ``by``, absolute, and ``by_relative``) against the best
    known, ``infeasible`` (with the evaluator's violations) or ``invalid`` (with the error, naming
    the field). An improvement past the recorded bound says so in ``contradicts_bound``."""
    e = entry(name, problem)
    prob = get_problem(e.problem)
    rec = summary(e.problem).get(e.name, {})
    answer = {"name": e.name, "objective": e.objective, "sense": e.sense, "best_known": rec.get("best_known"),
              "bound": rec.get("bound")}
    try:
        sol_dict = solution_of(data, e)
        sol = prob.read_solution(sol_dict)
        ev = prob.evaluate(load(e.name), sol)
    except (InstanceError, ParameterError, KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
        what = f"missing field {err}" if isinstance(err, KeyError) else f"{type(err).__name__}: {err}" \
            if not isinstance(err, (InstanceError, ParameterError)) else str(err)
        return {**answer, "verdict": "invalid", "error": f"not a solution of {e.name}: {what}"}
    if not ev.feasible:
        return {**answer, "verdict": "infeasible", "violations": [str(v) for v in ev.violations]}
    value = prob.objective(ev, e.objective)
    best = rec.get("best_known")
    answer.update(value=value, solution_hash=content_hash(prob.solution_to_dict(sol, load(e.name))))
    if best is None or (better(e.sense, value, best) and relative_gap(best, value) > e.tolerance):
        answer["verdict"] = "improves"
    elif relative_gap(best, value) <= e.tolerance:
        answer["verdict"] = "matches"
    else:
        answer["verdict"] = "worse"
    if best is not None:
        answer.update(by=abs(value - best), by_relative=relative_gap(best, value))
    bound = rec.get("bound")
    if answer["verdict"] == "improves" and bound is not None and better(e.sense, value, bound) \
            and relative_gap(bound, value) > e.tolerance:
        answer["contradicts_bound"] = (f"{value!r} is past the recorded bound {bound!r} "
                                       f"({rec['bound_backed_by']['backed_by']}): the bound is wrong")
    return answer


def record(name: str, data: dict, *, method: str | None = None, problem: str | None = None) -> dict:
    """Check ``data`` (see :func:`check`); where it improves, store its solution, append it to the
    history and regenerate the summary. The check's answer, with ``recorded`` True or False."""
    answer = check(name, data, problem)
    if answer["verdict"] != "improves" or "contradicts_bound" in answer:
        return {**answer, "recorded": False}
    e = entry(name, problem)
    prob = get_problem(e.problem)
    inst = load(e.name)
    sol_dict = prob.solution_to_dict(prob.read_solution(solution_of(data, e)), inst)
    is_result = "solution" in data and "problem" in data
    write_json_gz(e.solution_path, sol_dict)
    append_history(e.problem, [{
        "instance": e.name, "kind": "solution", "value": answer["value"], "date": now(),
        "method": method or (data.get("method") if is_result else None) or "submitted",
        "params": data.get("params", {}) if is_result else {}, "solver": "submitted with library record",
        "version": __version__, "machine": machine(),
        "time_s": data.get("wall_time_s") if is_result else None, "solution_hash": answer["solution_hash"]}])
    write_summary(e.problem)
    return {**answer, "recorded": True}


register_source("lib:", lambda name, problem: load(name, problem.name))
