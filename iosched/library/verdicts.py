"""The library's verdicts on a solution, and the one checked path into its history (issues 47 and 49).

**Tolerance.** An evaluator accepts a solution within its stated tolerances (periodic: volumes,
rates and times within 1e-5; malleable: times within 1e-6 s + 1e-9 of the largest, work within
1e-6). A schedule shaved inside them scores better than any schedule that meets the constraints
exactly: malleable/grid3-1 (optimal, a closed-form bound) with every interval moved 0.9 µs earlier
scores 20.33333243 against its optimum 20.33333333, and periodic/paper-set9 with its times scaled by
(1 - 9e-6) and its rates by 1 / (1 - 9e-6) scores 0.9789275624 against its LP bound 0.9789187521.
Comparing values at 1e-9, the library called both an improvement and its bound wrong.

So a verdict rests on two things, per problem in :data:`TOLERANCES`:

- a **strict re-score**: the evaluator again with its tolerances at floating-point noise (periodic
  ``rel_tol`` 1e-9; malleable ``time_tol`` 0 s and ``work_tol`` 0, leaving 1e-9 of the largest time
  and the rounding of the runs' times). Every stored periodic and malleable solution passes it
  (measured: every periodic pattern at 1e-10). Only a strictly feasible solution can be recorded;
- a **margin**: what the tolerances in force (the strict ones for a strictly feasible solution, the
  evaluator's own otherwise) can be worth in the objective, counted per solution (each segment,
  instance or interval may use each tolerance once), plus the catalogue's numeric tolerance (1e-9
  relative, the rounding of the objective). A value counts as better than another, or past a bound,
  only by more than the margin.

Verdicts: ``improves`` (better than the best known by more than the margin), ``matches`` (not worse
by more than the numeric tolerance, nor better by more than the margin: a shaved solution of an
optimal instance matches), ``worse``, ``infeasible`` (with the evaluator's violations) and
``invalid`` (not a solution of the instance, naming the field; also a solution whose shape cannot
be right, refused before any evaluation). A value past the recorded bound by more than the margin
says the bound is wrong; inside the margin it is the bound reached within the tolerances.

**Recording** (:func:`record`) takes an ``improves`` that is strictly feasible and not past the
bound; it checks the provenance it stores (``method``, ``params``, ``profile``, ``solver``,
``time_s``: types, lengths, finite numbers) and, under the lock of the problem's library folder,
decides again against the history as it is then (another process may have recorded meanwhile)
before it writes the solution, the history line and the summary.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from iosched import library as lib
from iosched.core import get_problem
from iosched.errors import InstanceError, ParameterError
from iosched.version import __version__

STRICT_REL_TOL = 1e-9  # periodic's strict rel_tol: float noise (every stored pattern passes at 1e-10)
MAX_VALUES = 5_000_000  # JSON values in a solution: far above any library solution, far below a hang
MAX_DEPTH = 64  # nesting of a solution's JSON (the deepest format, periodic, is 6 deep)


# --- per-problem tolerances ---------------------------------------------------------------------------

def _periodic_strict(inst, sol):
    from iosched.evaluate import periodic as pe

    check = pe.evaluate_trace if isinstance(sol, pe.Trace) else pe.evaluate
    return check(inst, sol, rel_tol=STRICT_REL_TOL)


def _periodic_allowance(inst, sol_dict: dict, ev, value: float, strict: bool) -> float:
    """τ (the relative tolerance in force) x the tolerance uses x max(1, Σ caps / B), of the value.

    A use of the time tolerance (a segment's end outside its window, two computes overlapping, a
    short overload between two segment boundaries) is worth at most τT of period; a use of the
    rate or volume tolerance at most τT x Σ_k β_k b / B of I/O time; there are at most 3 per
    segment, 2 per instance and 2 more; SysEfficiency is proportional to 1/T. An argued allowance
    (the strict re-score, not this, is what recording relies on)."""
    from iosched.evaluate import periodic as pe

    tau = STRICT_REL_TOL if strict else pe.REL_TOL
    apps = sol_dict.get("applications") or []
    n_inst = sum(len(a.get("instances") or []) for a in apps if isinstance(a, dict))
    n_seg = sum(len(i.get("io") or []) for a in apps if isinstance(a, dict)
                for i in a.get("instances") or [] if isinstance(i, dict))
    p = inst.platform
    ratio = sum(a.processors * p.processor_bandwidth for a in inst.applications) / p.bandwidth
    return abs(value) * tau * (3 * n_seg + 2 * n_inst + 2) * max(1.0, ratio)


def _malleable_strict(inst, sol):
    from iosched.evaluate import malleable as me

    return me.evaluate(inst, sol, time_tol=0.0, work_tol=0.0)


def _malleable_allowance(inst, sol_dict: dict, ev, value: float, strict: bool) -> float:
    """(2 n + 1) t + w x makespan + 4 n ulp(largest time), in seconds, for n intervals.

    Each interval's two ends may each use the time tolerance t (1e-6 s + 1e-9 of the largest
    time; strict: the 1e-9 alone) once (contiguity, reconfiguration cost, stall timeout, check
    point, the capacity sweep's grouping), the first start once more (arrival); the work
    tolerance w (1e-6; strict: 0) shortens each job's runs by at most w of their length, at most w
    of the makespan along any chain of jobs; the rounding of the runs' times adds two ulps per run
    end. Outside strict mode this does not cover a resize made at a check that the capacity sweep
    groups with a release up to t later (worth up to a period): the strict re-score does."""
    from iosched.evaluate import malleable as me

    jobs = sol_dict.get("jobs") or {}
    ivs = [iv for v in jobs.values() if isinstance(v, list) for iv in v if isinstance(iv, list) and len(iv) >= 2]
    times = [abs(x) for iv in ivs for x in iv[:2] if isinstance(x, (int, float)) and math.isfinite(x)]
    largest = max([1.0, *times])
    t = (0.0 if strict else 1e-6) + 1e-9 * largest
    w = 0.0 if strict else me.WORK_TOL
    makespan = ev.makespan if math.isfinite(ev.makespan) else abs(value)
    n = len(ivs)
    return (2 * n + 1) * t + w * makespan + 4 * n * math.ulp(largest)


def _exact(inst, sol_dict, ev, value, strict) -> float:
    return 0.0


@dataclass(frozen=True)
class Tolerance:
    """How one problem's evaluator tolerates, and what the library makes of it."""

    evaluator: str  # the evaluator's own tolerances, in words
    strict: Callable | None  # (instance, solution) -> Evaluation at float noise; None where there is no tolerance
    allowance: Callable  # (instance, solution dict, evaluation, value, strict) -> what the tolerances can be worth
    reason: str


TOLERANCES = {
    "periodic": Tolerance(
        "volumes, rates and times within 1e-5 (relative to vol_k, β_k b, B and T); an overload shorter "
        "than 1e-5 T is not seen", _periodic_strict, _periodic_allowance,
        "a pattern scaled inside the tolerance shortens its period by about 1e-5 and so raises SysEfficiency: "
        "re-scored at rel_tol 1e-9, with a margin counted per segment and instance"),
    "malleable": Tolerance(
        "times within 1e-6 s + 1e-9 of the largest time; work within 1e-6 (plus the rounding of the runs' "
        "times)", _malleable_strict, _malleable_allowance,
        "intervals moved inside the time tolerance end earlier: re-scored with time_tol 0 and work_tol 0, with "
        "a margin counted per interval"),
    "window": Tolerance(
        "none: job ids and integer sizes, sums checked exactly", None, _exact,
        "nothing to shave: the objective is computed from integers"),
    "forwarding": Tolerance(
        "none: integer group sizes, capacities hold by construction of the shares", None, _exact,
        "nothing to shave: the I/O times follow from the integer allocation"),
    "filedomain": Tolerance(
        "none: integer byte offsets, the region covered exactly once", None, _exact,
        "nothing to shave: the modelled time follows from the integer extents"),
}


# --- reading a solution ----------------------------------------------------------------------------------

def _walk(data) -> str | None:
    """Why ``data`` is too big or too deep to be a solution (without recursion), or None."""
    stack, count = [(data, 1)], 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            return f"more than {MAX_VALUES:,} JSON values"
        if depth > MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} deep"
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return None


def _counts(problem: str, inst) -> dict[str, int]:
    """The most entries each top-level field of a solution of ``inst`` can hold."""
    if problem == "periodic":
        return {"applications": len(inst.applications)}
    if problem == "window":
        return {"selected": len(inst.jobs), "front": inst.capacity.nodes + 1}
    if problem == "forwarding":
        return {"jobs": len(inst.jobs) + len(inst.running)}
    if problem == "filedomain":
        return {"domains": inst.aggregators}
    return {"jobs": len(inst.jobs)}


def shape_error(problem: str, inst, sol_dict) -> str | None:
    """Why ``sol_dict`` cannot be a solution of ``inst`` by its size alone (a field with more entries than
    the instance allows, too many values, too deep), found before any evaluation; or None."""
    if isinstance(sol_dict, dict):
        for key, most in _counts(problem, inst).items():
            value = sol_dict.get(key)
            if isinstance(value, (list, dict)) and len(value) > most:
                return f"field {key!r}: {len(value):,} entries given, at most {most:,} for this instance"
    why = _walk(sol_dict)
    return f"the solution holds {why}" if why else None


# --- the verdict -------------------------------------------------------------------------------------------

def score(e: lib.Entry, data) -> dict:
    """Evaluate ``data`` (a result dict or a solution) on library entry ``e``: ``verdict`` ``invalid`` or
    ``infeasible`` with why, or the ``value``, its ``solution_hash``, ``strict`` (whether the strict
    re-score passes, with ``strict_violations`` where not) and the ``margin``; ``solution`` is the
    solution's canonical dict (what :func:`record` stores)."""
    prob = get_problem(e.problem)
    tol = TOLERANCES[e.problem]
    try:
        inst = lib.load(e.name)
        sol_dict = lib.solution_of(data, e)
        why = shape_error(e.problem, inst, sol_dict)
        if why:
            raise InstanceError(why)
        sol = prob.read_solution(sol_dict)
        ev = prob.evaluate(inst, sol)
    except (InstanceError, ParameterError, KeyError, IndexError, TypeError, ValueError, AttributeError,
            RecursionError, OverflowError) as err:
        what = f"missing field {err}" if isinstance(err, KeyError) else str(err) \
            if isinstance(err, (InstanceError, ParameterError)) else f"{type(err).__name__}: {err}"
        return {"verdict": "invalid", "error": f"not a solution of {e.name}: {what}"}
    if not ev.feasible:
        return {"verdict": "infeasible", "violations": [str(v) for v in ev.violations]}
    value = prob.objective(ev, e.objective)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return {"verdict": "invalid", "error": f"not a solution of {e.name}: its {e.objective} is {value!r}"}
    canonical = prob.solution_to_dict(sol, inst)
    strict_ev = tol.strict(inst, sol) if tol.strict is not None else ev
    out = {"value": value, "solution_hash": lib.content_hash(canonical), "strict": strict_ev.feasible,
           "margin": e.tolerance * abs(value) + tol.allowance(inst, sol_dict, ev, value, strict_ev.feasible),
           "solution": canonical}
    if not strict_ev.feasible:
        out["strict_violations"] = [str(v) for v in strict_ev.violations[:5]]
    return out


def decide(e: lib.Entry, scored: dict, best: float | None, bound: float | None, backed_by: str | None = None) -> dict:
    """The verdict of a scored feasible solution against ``best`` (the best known) and ``bound``; with
    ``by`` and ``by_relative`` against the best known, ``contradicts_bound`` where it passes the bound by
    more than the margin, ``within_tolerance`` where it passes the best known or the bound only inside
    it, and ``not_recordable`` (why) where ``record`` would refuse an improvement."""
    value, margin = scored["value"], scored["margin"]
    numeric = e.tolerance * max(abs(value), 1e-12)
    sign = 1.0 if e.sense == "max" else -1.0
    out: dict = {}
    if best is None:
        verdict = "improves"
    else:
        gain = sign * (value - best)
        verdict = "improves" if gain > margin else "matches" if gain >= -numeric else "worse"
        out.update(by=abs(value - best), by_relative=lib.relative_gap(best, value))
        if verdict == "matches" and gain > numeric:
            out["within_tolerance"] = (f"{value!r} is better than the best known {best!r} by {gain:.3g}, inside the "
                                       f"margin {margin:.3g} that the evaluator's tolerances allow: it matches")
    past = sign * (value - bound) if bound is not None else -math.inf
    if past > margin:
        out["contradicts_bound"] = (f"{value!r} is past the recorded bound {bound!r} ({backed_by or 'no backing'}) by "
                                    f"{past:.3g}, more than the margin {margin:.3g} of the evaluator's tolerances: "
                                    f"the bound is wrong")
    elif past > numeric:
        out["within_tolerance"] = (f"{value!r} is past the recorded bound {bound!r} by {past:.3g}, inside the "
                                   f"margin {margin:.3g} that the evaluator's tolerances allow: it reaches the bound "
                                   f"only within them")
    if verdict == "improves":
        if "contradicts_bound" in out:
            out["not_recordable"] = "it contradicts the recorded bound"
        elif past > numeric:
            out["not_recordable"] = "it passes the recorded bound (inside the tolerances): a bound holds for every " \
                                    "solution, so record one that does not pass it"
        elif not scored["strict"]:
            out["not_recordable"] = ("it is feasible only inside the evaluator's tolerances (strict re-score: "
                                     + "; ".join(scored.get("strict_violations", [])[:3]) + ")")
    return {"verdict": verdict, **out}


def _head(e: lib.Entry, rec: dict) -> dict:
    return {"name": e.name, "objective": e.objective, "sense": e.sense, "best_known": rec.get("best_known"),
            "bound": rec.get("bound")}


def _answer(e: lib.Entry, scored: dict, rec: dict) -> dict:
    answer = _head(e, rec)
    if "value" not in scored:
        return {**answer, **scored}
    answer.update({k: v for k, v in scored.items() if k != "solution"})
    backed = (rec.get("bound_backed_by") or {}).get("backed_by")
    return {**answer, **decide(e, scored, rec.get("best_known"), rec.get("bound"), backed)}


def check(name: str, data, problem: str | None = None) -> dict:
    """The verdict on a solution of a library instance against the history as it is (module docstring).

    Parameters
    ----------
    name : str
        The entry (``periodic/paper-set4``, or the short name with ``problem``).
    data : dict
        A result dict (as ``iosched solve --json`` writes it) or the solution's JSON dict.
    problem : str, optional
        The problem the entry must be of.

    Returns
    -------
    dict
        ``verdict``: ``improves``, ``matches``, ``worse``, ``infeasible`` or ``invalid``; with the value, the
        margin, whether the strict re-score passes, and (``not_recordable``) why an improvement would not be
        recorded. Nothing is written.

    Raises
    ------
    InstanceError
        No such entry.
    """
    e = lib.entry(name, problem)
    return _answer(e, score(e, data), lib.summarize(e.problem)["instances"][e.name])


# --- what record stores ------------------------------------------------------------------------------------

NAME_CHARS = re.compile(r"[A-Za-z0-9_.:/+=@-]+( [A-Za-z0-9_.:/+=@()-]+)*")
MAX_NAME = 100
MAX_TEXT = 500
MAX_PARAMS = 4000  # characters of the params' canonical JSON


def _name_field(field: str, value, allow_none: bool = False) -> str | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME or not NAME_CHARS.fullmatch(value):
        if not isinstance(value, str):
            shown = type(value).__name__
        else:
            shown = repr(value) if len(value) <= 60 else f"{value[:60]!r}... ({len(value):,} characters)"
        raise ParameterError(f"field {field!r}: a name of 1-{MAX_NAME} letters, digits and _.:/+=@- is needed, "
                             f"got {shown}")
    return value


def provenance(data, *, method=None, params=None, profile=None, solver=None, time_s=None) -> dict:
    """The provenance fields a record stores, each checked (ParameterError naming the field): what is
    given, else what the result dict ``data`` holds (``method``, ``params``, ``wall_time_s``)."""
    is_result = isinstance(data, dict) and "solution" in data and "problem" in data
    if method is None:
        method = data.get("method") if is_result else "submitted"
    _name_field("method", method)
    if params is None:
        params = data.get("params", {}) if is_result else {}
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise ParameterError(f"field 'params': a JSON object with string keys is needed, got {type(params).__name__}")
    try:
        text = lib.canonical(params).decode()
    except (ValueError, TypeError, RecursionError) as err:
        raise ParameterError(f"field 'params': not plain finite JSON ({type(err).__name__}: {err})") from None
    if len(text) > MAX_PARAMS:
        raise ParameterError(f"field 'params': {len(text):,} characters of JSON, at most {MAX_PARAMS:,}")
    if profile is None and isinstance(params.get("profile"), str):
        profile = params["profile"]
    _name_field("profile", profile, allow_none=True)
    if time_s is None and is_result:
        time_s = data.get("wall_time_s")
    if time_s is not None and (isinstance(time_s, bool) or not isinstance(time_s, (int, float))
                               or not math.isfinite(time_s) or time_s < 0):
        raise ParameterError(f"field 'time_s' (wall_time_s): a finite number of seconds >= 0 is needed, "
                             f"got {time_s!r}"[:200])
    solver = "submitted with library record" if solver is None else solver
    if not isinstance(solver, str) or len(solver) > MAX_TEXT or not solver.isprintable():
        raise ParameterError(f"field 'solver': printable text of at most {MAX_TEXT} characters is needed")
    return {"method": method, "params": json.loads(text), "profile": profile or "none", "solver": solver,
            "time_s": None if time_s is None else round(float(time_s), 3)}


def record(name: str, data, *, method: str | None = None, params: dict | None = None, profile: str | None = None,
           solver: str | None = None, time_s: float | None = None, problem: str | None = None) -> dict:
    """Check ``data`` (see :func:`check`); where it improves and can be recorded, store its solution, append
    it to the history with its provenance and regenerate the summary, all under the folder's lock and
    decided again against the history as it is under the lock.

    Parameters
    ----------
    name, data, problem
        As :func:`check` takes them.
    method, params, profile, solver, time_s : optional
        The provenance stored with the record (:func:`provenance`); by default what the result dict holds.

    Returns
    -------
    dict
        :func:`check`'s answer, with ``recorded`` (bool).

    Raises
    ------
    InstanceError
        No such entry.
    ParameterError
        A provenance field that is not a short printable name, plain JSON or a finite time (named).
    """
    e = lib.entry(name, problem)
    prov = provenance(data, method=method, params=params, profile=profile, solver=solver, time_s=time_s)
    scored = score(e, data)
    answer = _answer(e, scored, lib.summarize(e.problem)["instances"][e.name])
    if answer["verdict"] != "improves" or "not_recordable" in answer:
        return {**answer, "recorded": False}
    with lib.locked(e.problem):
        answer = _answer(e, scored, lib.summarize(e.problem)["instances"][e.name])  # what is there now
        if answer["verdict"] != "improves" or "not_recordable" in answer:
            return {**answer, "recorded": False}
        lib.write_json_gz(e.solution_path, scored["solution"])
        lib.append_history(e.problem, [{
            "instance": e.name, "kind": "solution", "value": scored["value"], **prov, "version": __version__,
            "date": lib.now(), "machine": lib.machine(), "solution_hash": scored["solution_hash"]}])
        lib.write_summary(e.problem)
    return {**answer, "recorded": True}


def record_bound(name: str, value: float, *, method: str, backed_by: str, profile: str | None = None,
                 time_s: float | None = None, problem: str | None = None) -> dict:
    """Append a bound valid for every solution where it tightens the recorded one, under the folder's lock.
    A bound past the best known by more than the numeric tolerance is refused (a valid bound cannot be:
    the bound or the best known is wrong).

    Parameters
    ----------
    name : str
        The entry.
    value : float
        The bound, in the objective's units.
    method, backed_by : str
        What proved it, and the proof's claim in words (the bound's scope must be every solution).
    profile : str, optional
        The solver profile it ran under.
    time_s : float, optional
        How long the proof took.
    problem : str, optional
        The problem the entry must be of.

    Returns
    -------
    dict
        ``{"recorded": bool, "why": ...}``.

    Raises
    ------
    InstanceError
        No such entry.
    ParameterError
        A non-finite value, or a name or text field that is not short printable text (named).
    """
    e = lib.entry(name, problem)
    _name_field("method", method)
    _name_field("profile", profile, allow_none=True)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"field 'value': a finite bound is needed, got {value!r}")
    if not isinstance(backed_by, str) or not 0 < len(backed_by) <= MAX_TEXT or not backed_by.isprintable():
        raise ParameterError(f"field 'backed_by': printable text of 1-{MAX_TEXT} characters is needed")
    sign = 1.0 if e.sense == "max" else -1.0
    with lib.locked(e.problem):
        rec = lib.summarize(e.problem)["instances"][e.name]
        best, old = rec["best_known"], rec["bound"]
        if best is not None and sign * (best - value) > e.tolerance * max(abs(best), 1e-12):
            return {"recorded": False, "why": f"the bound {value!r} is past the best known {best!r}: one is wrong"}
        if old is not None and sign * (old - value) <= 0:
            return {"recorded": False, "why": f"the recorded bound {old!r} is at least as tight"}
        lib.append_history(e.problem, [{
            "instance": e.name, "kind": "bound", "value": float(value), "backed_by": backed_by,
            "scope": "every solution", "method": method, "profile": profile or "none",
            "time_s": None if time_s is None else round(float(time_s), 3), "version": __version__, "date": lib.now(),
            "machine": lib.machine()}])
        lib.write_summary(e.problem)
    return {"recorded": True, "why": f"tightens {old!r}"}


def restate(name: str, why: str, problem: str | None = None) -> dict:
    """Void the solutions recorded so far for ``name``, where the stored best known no longer passes today's
    evaluator (the problem's definition changed: periodic's period cap K', issue 47): a ``restate`` record
    is appended and the stale solution file removed, under the folder's lock. The history stays append-only;
    its bounds stay, valid because a definition that rejects a solution it used to accept only narrows the
    set the bounds were proved over (each restatement must say so in ``why``). A stored solution that
    still passes is refused: a restatement cannot hide a valid best known.

    Parameters
    ----------
    name : str
        The entry.
    why : str
        Why the definition changed, and why the recorded bounds stay valid.
    problem : str, optional
        The problem the entry must be of.

    Returns
    -------
    dict
        ``{"restated": bool, "why": ...}`` (the evaluator's first violations where it restated).

    Raises
    ------
    InstanceError
        No such entry.
    ParameterError
        ``why`` is not printable text of 1-MAX_TEXT characters.
    """
    e = lib.entry(name, problem)
    if not isinstance(why, str) or not 0 < len(why) <= MAX_TEXT or not why.isprintable():
        raise ParameterError(f"field 'why': printable text of 1-{MAX_TEXT} characters is needed")
    prob = get_problem(e.problem)
    with lib.locked(e.problem):
        if not e.solution_path.exists():
            return {"restated": False, "why": "no stored solution"}
        ev = prob.evaluate(lib.load(e.name), prob.read_solution(lib.read_json_gz(e.solution_path)))
        if ev.feasible:
            return {"restated": False, "why": "the stored solution still passes the evaluator"}
        rejected = "; ".join(str(v) for v in ev.violations[:3])[:MAX_TEXT]
        lib.append_history(e.problem, [{
            "instance": e.name, "kind": "restate", "why": why, "rejected": rejected, "version": __version__,
            "date": lib.now(), "machine": lib.machine()}])
        e.solution_path.unlink()
        lib.write_summary(e.problem)
    return {"restated": True, "why": rejected}


def record_run(name: str, *, method: str, profile: str, met: bool, note: str, problem: str | None = None) -> None:
    """Append a ``class`` record: ``method`` ran under ``profile`` and its value met the bound (``met``) or not;
    the summary derives the instance's class from these and from its best known and bound.

    Parameters
    ----------
    name : str
        The entry.
    method, profile : str
        The exact method and the solver profile it ran under.
    met : bool
        Whether its value met the recorded bound.
    note : str
        What the run found, in words.
    problem : str, optional
        The problem the entry must be of.

    Raises
    ------
    InstanceError
        No such entry.
    ParameterError
        ``method`` or ``profile`` is not a short printable name.
    """
    e = lib.entry(name, problem)
    _name_field("method", method)
    _name_field("profile", profile)
    with lib.locked(e.problem):
        lib.append_history(e.problem, [{
            "instance": e.name, "kind": "class", "value": profile if met else "open", "method": method,
            "profile": profile, "tried": [profile], "note": note, "version": __version__, "date": lib.now(),
            "machine": lib.machine()}])
        lib.write_summary(e.problem)
