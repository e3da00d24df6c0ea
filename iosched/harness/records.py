"""Result files read back and checked before ``report`` or ``bench`` trusts them.

A results folder may be shared, copied or edited, so a result file is a claim to check, not a fact:
each is read as a regular file (a FIFO, a device or a symlink is refused, never opened for reading
in a way that blocks), parsed as JSON with every failure named (truncated, not UTF-8, nested too
deeply, a number of more than 4300 digits), and its record checked field by field (the task's
fields against its key, the status, the objective's sense against the problem's, numbers that are
numbers and not NaN). The solution the run stored is then scored again by the problem's evaluator,
and the record's feasibility and objective must be what it gives: an edited objective is found,
whatever the edit. Last, across the folder, a record's bound (valid for every solution, as
:func:`iosched.solve` reports it) must not be beaten by a re-scored feasible value on the same
instance and objective by more than ``BOUND_TOLERANCE`` (relative): a bound that is, is wrong.

What this cannot tell: which method found a solution (a real solution copied into another method's
record re-scores the same), nor a bound that is wrong but not beaten by any value in the folder.
A record that fails is left out of the report, named on stderr with the reason, and its task runs
again in the next ``bench``.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import zlib
from pathlib import Path

from iosched.core import BOUND_TOLERANCE, get_problem
from iosched.errors import ParameterError
from iosched.files import NotRegularFile, read_regular

MAX_BYTES = 256 * 2**20  # a result file (or its solution, decompressed) beyond this is refused
INLINE_BYTES = 2**20  # a solution up to this in compact JSON is stored as it is, a larger one compressed
STATUSES = ("OK", "TIME_LIMIT", "INFEASIBLE", "ERROR", "OOM")
RESCORE_TOLERANCE = 1e-9  # relative: the evaluator is deterministic, so a stored objective is re-scored exactly
_NUMBERS = ("objective", "bound", "gap", "solve_s", "load_s", "prepare_s", "bound_s", "solve_cpu_s")


def stored_solution(solution: dict | None) -> dict:
    """The record's fields for a solution's dict: ``{"solution": it}``, or past INLINE_BYTES of compact JSON
    ``{"solution_zlib": base64 of its zlib}`` (a periodic trace of fairshare on five applications is 12 MB of
    JSON, 2.5 MB compressed)."""
    text = json.dumps(solution, separators=(",", ":"))
    if len(text) <= INLINE_BYTES:
        return {"solution": solution}
    return {"solution_zlib": base64.b64encode(zlib.compress(text.encode(), 6)).decode("ascii")}


def _solution(record: dict):
    """The solution's dict a record stores, inline or compressed (BadRecord if that does not read back)."""
    if "solution_zlib" not in record:
        return record.get("solution")
    packed = record["solution_zlib"]
    if not isinstance(packed, str):
        raise BadRecord(f"solution_zlib must be a string, got {_short(packed)}")
    try:
        inflate = zlib.decompressobj()
        text = inflate.decompress(base64.b64decode(packed, validate=True), MAX_BYTES)
        if inflate.unconsumed_tail:
            raise BadRecord(f"solution_zlib holds more than {MAX_BYTES // 2**20} MiB")
        return json.loads(text.decode("utf-8"))
    except (binascii.Error, zlib.error, UnicodeDecodeError, RecursionError, ValueError) as e:
        raise BadRecord(f"solution_zlib does not read back as a solution: {type(e).__name__}: {e}") from None


class BadRecord(Exception):
    """Why a result file cannot be trusted (the message names the field)."""


def read_record(path: Path) -> dict:
    """The JSON object in the regular file ``path``; BadRecord naming what is wrong with the file."""
    try:
        data = read_regular(path, MAX_BYTES, follow_symlinks=False)
    except NotRegularFile:
        raise BadRecord("is a symbolic link, not a result file" if os.path.islink(path)
                        else "is not a regular file (a FIFO, a device or a socket)") from None
    except OverflowError:
        raise BadRecord(f"is more than the {MAX_BYTES // 2**20} MiB a result may be") from None
    except OSError as e:
        raise BadRecord(f"cannot be read: {e.strerror or e}") from None
    try:
        record = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadRecord("is not UTF-8 text (garbled)") from None
    except RecursionError:
        raise BadRecord("holds JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        raise BadRecord(f"is not valid JSON (truncated or garbled: {e.msg} at line {e.lineno} column {e.colno})") \
            from None
    except ValueError as e:  # an integer of more than 4300 digits
        raise BadRecord(f"holds a number Python will not read ({e})") from None
    if not isinstance(record, dict):
        raise BadRecord(f"holds a JSON {type(record).__name__}, not a result object")
    return record


def _number(record: dict, key: str, finite: bool = False) -> None:
    value = record.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRecord(f"{key} must be a number or null, got {_short(value)}")
    if math.isnan(value) or (finite and math.isinf(value)):
        raise BadRecord(f"{key} must be a {'finite ' if finite else ''}number, got {value!r}")


def _short(value, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def check_fields(record: dict, stem: str) -> None:
    """The record's fields have the types and values a run writes, and its task fields give its key; BadRecord
    naming the first field that does not."""
    from iosched.harness.suite import Task

    for key, kind in (("problem", str), ("instance", str), ("method", str), ("key", str), ("status", str)):
        if not isinstance(record.get(key), kind) or not record[key]:
            raise BadRecord(f"{key} must be a non-empty string, got {_short(record.get(key))}"
                            if key in record else f"has no {key!r}")
    if record["key"] != stem:
        raise BadRecord(f"its key {_short(record['key'])} is not its file's name")
    if record["status"] not in STATUSES:
        raise BadRecord(f"status must be one of {', '.join(STATUSES)}, got {_short(record['status'])}")
    try:
        get_problem(record["problem"])
    except ParameterError as e:
        raise BadRecord(f"problem: {e}") from None
    params, seed = record.get("params", {}), record.get("seed")
    if not isinstance(params, dict):
        raise BadRecord(f"params must be an object, got {_short(params)}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise BadRecord(f"seed must be an integer or null, got {_short(seed)}")
    if Task(record["problem"], record["instance"], record["method"], params, seed).key != stem:
        raise BadRecord("its problem, instance, method, params and seed are not the task its key names (edited)")
    for key in _NUMBERS:
        _number(record, key, finite=key not in ("objective", "gap"))
    for key in ("feasible", "starved"):
        if record.get(key) is not None and not isinstance(record[key], bool):
            raise BadRecord(f"{key} must be true, false or null, got {_short(record[key])}")
    name = record.get("objective_name")
    if name is not None or record.get("objective") is not None:
        if not isinstance(name, str) or not name:
            raise BadRecord(f"objective_name must be a non-empty string, got {_short(name)}")
        prob = get_problem(record["problem"])
        if name not in prob.objectives:  # (its sense would be a guess)
            raise BadRecord(f"objective_name {_short(name)} is not an objective of {record['problem']} (its "
                            f"objectives: {', '.join(prob.objectives)})")
        sense = prob.sense(name)
        if record.get("sense") != sense:
            raise BadRecord(f"sense must be {sense.value!r} for {record['problem']}'s {name}, got "
                            f"{_short(record.get('sense'))}")
    if record.get("feasible") and (record.get("objective") is None or math.isinf(record["objective"])):
        raise BadRecord(f"a feasible result needs a finite objective, got {record.get('objective')!r}")
    columns = record.get("columns")
    if columns is not None:
        if not isinstance(columns, dict):
            raise BadRecord(f"columns must be an object, got {_short(columns)}")
        for key, value in columns.items():
            if not isinstance(value, bool | int | float) or (isinstance(value, float) and math.isnan(value)):
                raise BadRecord(f"columns.{key} must be a number or true/false, got {_short(value)}")


class Rescorer:
    """Scores a record's stored solution with the problem's evaluator, each instance loaded once."""

    def __init__(self):
        self.instances: dict[tuple[str, str], object] = {}

    def instance(self, problem: str, spec: str):
        key = (problem, spec)
        if key not in self.instances:
            self.instances[key] = get_problem(problem).read_instance(spec)
        return self.instances[key]

    def check(self, record: dict) -> None:
        """BadRecord when the record claims a value its stored solution does not give."""
        solution = _solution(record)
        if solution is None:
            if record.get("feasible") or record.get("objective") is not None:
                raise BadRecord("claims an objective but stores no solution to score again (written before "
                                "results kept their solution, or edited)")
            return
        prob = get_problem(record["problem"])
        try:
            inst = self.instance(record["problem"], record["instance"])
        except Exception as e:  # a spec from the file: whatever its loader raises, the record is refused
            raise BadRecord(f"its instance {_short(record['instance'])} does not load to re-score it: {e}") from None
        try:
            evaluation = prob.evaluate(inst, prob.read_solution(solution))
        except Exception as e:  # a hostile solution may break the evaluator anywhere: the record is refused
            raise BadRecord(f"its solution is not a {record['problem']} solution of its instance: "
                            f"{type(e).__name__}: {e}") from None
        if bool(evaluation.feasible) != bool(record.get("feasible")):
            raise BadRecord(f"feasible is {record.get('feasible')!r}, but its solution re-scores "
                            f"{'feasible' if evaluation.feasible else 'infeasible'}")
        if not evaluation.feasible:
            return
        try:
            value = prob.objective(evaluation, record["objective_name"])
        except (AttributeError, KeyError, ValueError) as e:
            raise BadRecord(f"objective_name {_short(record['objective_name'])} is not an objective of "
                            f"{record['problem']}: {e}") from None
        if not _same(value, record["objective"]):
            raise BadRecord(f"its objective {record['objective']!r} is not what its solution re-scores to, "
                            f"{value!r} (edited)")


def _same(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= RESCORE_TOLERANCE * max(abs(a), abs(b))


def check_bounds(records: dict[Path, dict]) -> dict[Path, str]:
    """{path: why} for each record whose bound a re-scored feasible value of another (or the same) record beats
    by more than BOUND_TOLERANCE (relative): no bound valid for every solution can be beaten."""
    best: dict[tuple, tuple[float, Path]] = {}
    for path, r in records.items():
        if r.get("feasible") and r.get("objective") is not None:
            key = (r["problem"], r["instance"], r["objective_name"])
            better = key not in best or (r["objective"] > best[key][0] if r["sense"] == "max"
                                         else r["objective"] < best[key][0])
            if better:
                best[key] = (r["objective"], path)
    bad = {}
    for path, r in records.items():
        bound = r.get("bound")
        key = (r.get("problem"), r.get("instance"), r.get("objective_name"))
        if bound is None or key not in best:
            continue
        value, where = best[key]
        past = bound - value if r["sense"] == "min" else value - bound
        if past > BOUND_TOLERANCE * abs(value):
            bad[path] = (f"its bound {bound!r} is beaten by the value {value!r} that {where.name}'s solution "
                         "re-scores to: a bound valid for every solution cannot be (edited, or a faulty solver)")
    return bad


def load_checked(paths: list[Path], keys: set[str] | None = None) -> tuple[dict[Path, dict], dict[Path, str]]:
    """Each result file read and checked (this module's docstring): ({path: record} of those that hold,
    {path: why} of the others). With ``keys``, only the files of those task keys are read."""
    good, bad = {}, {}
    rescorer = Rescorer()
    for path in paths:
        if keys is not None and path.stem not in keys:
            continue
        try:
            record = read_record(path)
            check_fields(record, path.stem)
            rescorer.check(record)
        except BadRecord as e:
            bad[path] = str(e)
            continue
        good[path] = record
    for path, why in check_bounds(good).items():
        bad[path] = why
        del good[path]
    return good, bad
