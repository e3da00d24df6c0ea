"""``iosched library``: list, show, check and record the instance library's entries (:mod:`iosched.library`)."""

from __future__ import annotations

import json
import os
import stat

from iosched.commands.common import dump_json, fmt
from iosched.errors import InstanceError, ParameterError


def _library_name(name: str) -> str:
    return name[4:] if name.startswith("lib:") else name


MAX_FILE = 64 * 2**20  # bytes of a solution file: 58 times the largest stored (1.1 MB); parsing more costs seconds


def _solution_file(path: str):
    """The JSON of a solution file, read only from a regular file (a FIFO or a device would block or never
    end); ParameterError where it cannot be read, InstanceError naming the file where it is not JSON
    (including JSON nested too deep for the parser, or an integer of more digits than Python reads)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opening a FIFO for reading blocks without O_NONBLOCK
    except OSError as e:
        raise ParameterError(f"cannot read the solution file {path!r}: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ParameterError(f"the solution file {path!r} is not a regular file (a directory, FIFO, socket or "
                                 f"device): give a JSON file")
        if info.st_size > MAX_FILE:
            raise InstanceError(f"the solution file {path!r} holds {info.st_size:,} bytes, more than a solution of a "
                                f"library instance can ({MAX_FILE:,})")
        raw = f.read()
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InstanceError(f"the solution file {path!r} is not JSON: {e}") from None
    except RecursionError:
        raise InstanceError(f"the solution file {path!r}: JSON nested too deep to be a solution") from None
    except ValueError as e:  # an integer beyond Python's digit limit
        raise InstanceError(f"the solution file {path!r}: {e}") from None


def _verdict_text(a: dict) -> str:
    head = f"{a['name']}: {a['verdict']}"
    if a["verdict"] in ("improves", "worse") and "by" in a:
        head += f" by {a['by']:.6g} ({a['by_relative']:.4%})"
    if "value" in a:
        head += f"; {a['objective']} ({a['sense']}) {a['value']:.10g}, best known {fmt(a['best_known'], '.10g')}, " \
                f"bound {fmt(a['bound'], '.10g')}"
    if "margin" in a:
        head += f"; margin {a['margin']:.3g}" + ("" if a["strict"] else " (feasible only inside the evaluator's "
                                                                           "tolerances)")
    lines = [head] + [f"  {v}" for v in a.get("violations", [])[:20]]
    lines += [f"  {a[k]}" for k in ("error", "contradicts_bound", "within_tolerance") if k in a]
    if "not_recordable" in a:
        lines.append(f"  not recordable: {a['not_recordable']}")
    if "recorded" in a:
        lines.append("  recorded in the history" if a["recorded"] else
                     "  not recorded (only an improvement that can be recorded is)")
    return "\n".join(lines)


def cmd_library(args) -> int:
    """The instance library: list, show, check, record, summary (iosched.library)."""
    from iosched import library
    from iosched.library import verdicts

    if args.action == "list":
        rows = [r for r in library.summary(args.problem).values()
                if (args.tag is None or args.tag in r["tags"]) and (args.status is None or r["status"] == args.status)]
        if args.json:
            print(dump_json(rows))
            return 0
        print(f"{'name':28s} {'status':8s} {'class':24s} {'best known':>14s} {'bound':>14s} {'gap':>9s}  found by")
        for r in rows:
            gap = library.gap_text(r["gap"])
            print(f"{r['name']:28s} {r['status']:8s} {r['class'] or '-':24s} {fmt(r['best_known'], '.8g'):>14s} "
                  f"{fmt(r['bound'], '.8g'):>14s} {gap:>9s}  {(r['found_by'] or {}).get('method', '-')}")
        print(f"{len(rows)} instances")
        return 0
    if args.action == "summary":
        for problem in [args.problem] if args.problem else library.PROBLEMS:
            with library.locked(problem):
                print(f"written {library.write_summary(problem)}")
        return 0
    name = _library_name(args.name)
    e = library.entry(name)
    if args.action == "show":
        history = [r for r in library.read_history(e.problem) if r["instance"] == e.name]
        print(dump_json({"entry": e.to_dict(), "summary": library.summary(e.problem).get(e.name), "history": history,
                     "files": {"instance": str(e.instance_path), "solution": str(e.solution_path)}}))
        return 0
    data = _solution_file(args.solution)
    if args.action == "check":
        answer = verdicts.check(e.name, data)
    else:
        answer = verdicts.record(e.name, data, method=args.method)
    print(dump_json(answer) if args.json else _verdict_text(answer))
    if answer["verdict"] == "invalid":
        return 2
    if args.action == "record":
        return 0 if answer["recorded"] else 1
    return 1 if answer["verdict"] == "infeasible" else 0
