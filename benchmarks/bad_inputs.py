"""A bad-input campaign: every field of every problem's built-in instances and every method parameter,
each set to troublesome values, run through the command line; each outcome classified.

    python benchmarks/bad_inputs.py [--problems periodic window] [--timeout 60] [--limit N]

Classes: ``clear`` (exit 2 with a message and no traceback), ``accepted`` (exit 0 or 1 without a
traceback: the value was taken, or the method reported a result), ``traceback`` (a Python
traceback reached the user), ``crash`` (killed by a signal), ``hang`` (still running after
``--timeout`` seconds). Each case runs in a process forked from this one (imports done once), so
a crash or a hang costs one case only. Prints the counts per problem and class, and the cases
that were not ``clear`` or ``accepted``.

    python benchmarks/bad_inputs.py --edges [--classes 1 2 ...] [--solvers FILE]

runs instead the edge cases of issue 21, by class (1 hangs and unbounded heuristics, 2 time
limits, 3 memory, 4 tracebacks, 5 a full disk, 6 accepted then ``error``, 7 ``simulate``'s
metrics over no jobs, 8 silently accepted): each case says what it expects (a clear exit 2, a
result within twice its time limit, a warning, no file left on a full disk) and gets ``ok`` or
what went wrong (``overrun``, ``hang``, ``traceback``, ``crash``, ``wrong``), with its wall and
CPU time and peak memory. The solver profiles are a file of their own (``default`` 10 s,
``five`` 5 s, ``quick`` 10 s) so every limit is known; a full disk is a 64 KiB tmpfs (root only;
otherwise class 5 is skipped and says so).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import io
import json
import math
import os
import signal
import sys
import tempfile
import time

import iosched
from iosched.cli import main as cli
from iosched.core import METHODS, get_problem, method_parameters

NASTY = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "neg": -1, "zero": 0, "huge": 10**400,
         "big": 1e300, "tiny": 1e-300, "str": "abc", "bool": True, "null": None, "list": [], "dict": {},
         "int63": 2**63}
PARAM_VALUES = ["abc", "-1", "0", "nan", "inf", "1e300", "[]", "{}", "true", "null", "1e-300", "[1,2]"]
# a fast method per problem, run on every mutated instance
FAST = {"periodic": "fairshare", "window": "naive", "forwarding": "fixed", "filedomain": "even",
        "malleable": "rigid-fcfs"}


def _leaves(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):  # the first entries of a list stand for the rest
            yield from _leaves(v, prefix + (i,))
    else:
        yield prefix


def _set(doc, path, value):
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def run_case(argv: list[str], timeout: float, usage: dict | None = None) -> tuple[str, str]:
    """Fork, run the CLI with ``argv``, classify the outcome; (class, last line of stderr). ``usage``
    receives the child's CPU seconds and peak RSS (GB)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report the exit code and stderr through the pipe
        os.close(read)
        err = io.StringIO()
        code = 0
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = cli(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 2
            except BaseException:
                import traceback

                traceback.print_exc(file=err)
                code = 99
        os.write(write, json.dumps([code, err.getvalue()[-2000:]]).encode())
        os._exit(0)
    os.close(write)
    start = time.monotonic()
    chunks = []
    while True:
        done, status, rusage = os.wait4(pid, os.WNOHANG)
        if not done and time.monotonic() - start > timeout:
            os.kill(pid, signal.SIGKILL)
            done, status, rusage = os.wait4(pid, 0)
            status = None
        if done:
            if usage is not None:
                usage.update(cpu=rusage.ru_utime + rusage.ru_stime, rss=rusage.ru_maxrss / 2**20)
            if status is None:
                os.close(read)
                return "hang", f"still running after {timeout:g} s"
            break
        time.sleep(0.01)
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    if os.WIFSIGNALED(status):
        return "crash", f"signal {os.WTERMSIG(status)}"
    try:
        code, err = json.loads(b"".join(chunks) or b"[99, \"no report\"]")
    except json.JSONDecodeError:
        return "crash", "no report from the child"
    last = err.strip().splitlines()[-1] if err.strip() else ""
    if usage is not None:
        usage["code"] = code
    if "Traceback" in err or code == 99:
        return "traceback", last
    if code == 2 and last.startswith("iosched: error:"):
        return "clear", last
    return "accepted", last


def cases(problem: str, folder: str):
    """(label, argv) pairs: every leaf of each built-in instance set to each nasty value, and every
    parameter of every method of ``problem`` set to each bad value."""
    prob = get_problem(problem)
    for spec in prob.builtins[:2] or []:
        doc = prob.read_instance(spec).to_dict()
        for path in _leaves(doc):
            for name, value in NASTY.items():
                target = os.path.join(folder, f"{problem}-{len(os.listdir(folder))}.json")
                with open(target, "w") as f:
                    f.write(json.dumps(_set(doc, path, value)))
                label = f"instance {spec} {'.'.join(map(str, path))}={name}"
                yield label, ["solve", problem, target, "--method", FAST.get(problem, "naive")]
    spec = prob.builtins[0]
    for m in sorted((m for m in METHODS.values() if m.problem == problem), key=lambda m: m.name):
        names = list(method_parameters(m.run))
        quick = ["--profile", "quick"] if "profile" in names else []
        for pname in names:
            if pname == "profile":
                continue
            for value in PARAM_VALUES:
                argv = ["solve", problem, spec, "--method", m.name, "--param", f"{pname}={value}", *quick]
                yield f"param {m.name} {pname}={value}", argv


EDGE_SOLVERS = """[default]\ntime_limit = 10\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n
[quick]\ntime_limit = 10\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n
[five]\ntime_limit = 5\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n"""
EDGE_LIMIT = 10.0  # s: the default profile's limit above, every heuristic's default budget
GB = 2**30


def _edit(problem: str, spec: str, edit) -> dict:
    doc = get_problem(problem).read_instance(spec).to_dict()
    edit(doc)
    return doc


def _swf(lines: list[str]) -> str:
    return "; MaxNodes: 4392\n" + "\n".join(lines) + "\n"


def _job(i: int, submit: int) -> str:
    return f"{i} {submit} 10 100 128 -1 -1 128 200 -1 1 -1 -1 -1 -1 -1 -1 0"


def edge_cases(folder: str, full_disk: str | None):
    """(class, label, argv, expectation, limit in s) for the edge cases of issue 21. Expectations:
    ``clear`` (exit 2 naming the problem), ``bounded`` (a result, or a clear exit, within twice
    ``limit``), ``handled`` (bounded, and never status ``error``: exit 1), ``warned`` (exit 0 with
    a warning on stderr, or a clear exit), ``no file`` (a clear exit, nothing left in the folder)."""

    def file(name: str, content) -> str:
        path = os.path.join(folder, name)
        with open(path, "wb" if isinstance(content, bytes) else "w") as f:
            f.write(content if isinstance(content, (str, bytes)) else json.dumps(content))
        return path

    def reconfig(doc):
        doc["jobs"][0]["reconfig_s"] = 1e9

    slow_resize = file("reconfig.json", _edit("malleable", "random:0:4", reconfig))
    for m in ("dmr", "cpsat", "milp", "rigid-optimal"):
        yield 1, f"malleable {m}, one job with reconfig_s = 1e9", ["solve", "malleable", slow_resize, "--method", m], \
            "bounded", EDGE_LIMIT
    yield 1, "filedomain even, 10^6 aggregators", ["solve", "filedomain", "sweep:4:1000000", "--method", "even"], \
        "bounded", EDGE_LIMIT
    yield 1, "malleable dmr, 200,000 jobs", ["solve", "malleable", "random:0:200000", "--method", "dmr"], \
        "bounded", EDGE_LIMIT
    yield 1, "forwarding dfra, 90,000 jobs", ["solve", "forwarding", "random:0:90000", "--method", "dfra"], \
        "bounded", EDGE_LIMIT
    yield 2, "malleable milp random:0:40:grid, 5 s", ["solve", "malleable", "random:0:40:grid", "--method", "milp",
                                                      "--profile", "five"], "bounded", 5.0
    yield 2, "filedomain cpsat sweep:16:128, 5 s", ["solve", "filedomain", "sweep:16:128", "--method", "exact",
                                                    "--param", "engine=cpsat", "--profile", "five"], "bounded", 5.0
    yield 2, "filedomain aggregated sweep:64:256:4, 5 s", ["solve", "filedomain", "sweep:64:256:4", "--method",
                                                           "exact", "--param", "engine=aggregated", "--profile",
                                                           "five"], "bounded", 5.0
    big = _edit("filedomain", "example:requests", lambda d: d.update(
        requests=[[[r * 4 + 36 * k, 2] for k in range(100_000)] for r in range(9)]))  # 900,000 pieces
    yield 2, "filedomain exact on 900,000 request pieces, quick", ["solve", "filedomain", file("pieces.json", big),
                                                                   "--method", "exact", "--profile", "quick"], \
        "bounded", 10.0
    yield 2, "forwarding generated random:0:20000 (dfra)", ["solve", "forwarding", "random:0:20000", "--method",
                                                            "dfra"], "bounded", EDGE_LIMIT
    yield 3, "generate malleable jobs=1,000,000", ["generate", "malleable", "--seed", "1", "--param", "jobs=1000000",
                                                   "-o", os.path.join(folder, "million.json")], "bounded", 60.0
    yield 3, "simulate generate:0:10000000", ["simulate", "generate:0:10000000", "--out",
                                              os.path.join(folder, "sim-huge"), "--quiet", "--no-plots"], \
        "bounded", 60.0
    yield 4, "SWF not UTF-8", ["simulate", file("latin.swf", b"; MaxNodes: 4392\n; \xe9t\xe9\n" +
                                                 _job(1, 0).encode() + b"\n"), "--out",
                               os.path.join(folder, "s1"), "--quiet", "--no-plots"], "handled", 10.0
    yield 4, "SWF submit time 2^63", ["simulate", file("big.swf", _swf([_job(1, 2**63)])), "--out",
                                      os.path.join(folder, "s2"), "--quiet", "--no-plots"], "clear", 0
    yield 4, "simulate --out under /proc", ["simulate", "generate:0:200", "--out", "/proc/iosched-out", "--quiet",
                                            "--no-plots"], "clear", 0
    yield 4, "a JSON number of 100,000 digits", ["show", "window", file("digits.json", '{"a": 1' + "0" * 100_000
                                                                         + "}")], "clear", 0
    if full_disk is not None:
        for label, argv in (
                ("solve -o", ["solve", "window", "paper:example", "--method", "naive", "-o", f"{full_disk}/o.json"]),
                ("generate -o", ["generate", "forwarding", "--seed", "1", "-o", f"{full_disk}/g.json"]),
                ("simulate", ["simulate", "generate:0:300", "--out", f"{full_disk}/sim", "--quiet"]),
                ("bench", ["bench", "window-random", "--out", f"{full_disk}/bench", "--workers", "1"])):
            yield 5, f"{label} on a full disk", argv, "no file", 0
    def bandwidth(doc):
        doc["jobs"][0]["node_bandwidth"] = 1e-300

    yield 6, "forwarding milp, node_bandwidth = 1e-300", ["solve", "forwarding", file(
        "bw.json", _edit("forwarding", "random:0:20", bandwidth)), "--method", "milp", "--profile", "quick"], \
        "handled", 10.0
    def half(doc):
        doc["jobs"][1]["arrival"] = 0.5

    yield 6, "malleable milp, arrival = 0.5", ["solve", "malleable", file("arrival.json", _edit(
        "malleable", "random:0:3:grid", half)), "--method", "milp", "--profile", "quick"], "handled", 10.0
    def tiny(doc):
        doc["jobs"][0]["runtime"] = {"model": "amdahl", "seconds_1": 1e-300, "serial": 0.5}

    tiny_file = file("tiny.json", _edit("malleable", "random:0:3", tiny))
    for m in ("dmr", "rigid-fcfs", "rigid-backfill", "rigid-optimal", "cpsat", "milp"):
        yield 6, f"malleable {m}, runtime 1e-300 s", ["solve", "malleable", tiny_file, "--method", m] + (
            ["--profile", "quick"] if m in ("rigid-optimal", "cpsat", "milp") else []), "handled", 10.0
    yield 6, "forwarding milp, max_configurations = 1", ["solve", "forwarding", "random:0:20", "--method", "milp",
                                                         "--param", "max_configurations=1", "--profile", "quick"], \
        "handled", 10.0
    late = file("late.swf", _swf([_job(i, 10 * i) for i in range(1, 200)] + [_job(200, 10**6)]))
    yield 7, "simulate, one job of 200 submitted at 10^6 s", ["simulate", late, "--out", os.path.join(folder, "s3"),
                                                              "--quiet", "--no-plots"], "warned", 0
    yield 7, "simulate, MaxNodes 2^63", ["simulate", file("maxnodes.swf", "; MaxNodes: 9223372036854775808\n" +
                                                          _job(1, 0) + "\n"), "--out", os.path.join(folder, "s4"),
                                         "--quiet", "--no-plots"], "clear", 0
    yield 7, "simulate --nodes 2^63", ["simulate", "generate:0:200", "--nodes", str(2**63), "--out",
                                       os.path.join(folder, "s5"), "--quiet", "--no-plots"], "clear", 0
    for label, argv in (("solve --seed -5", ["--seed", "-5"]), ("solve --seed 2^64", ["--seed", str(2**64)]),
                        ("--param given twice", ["--param", "time_limit=5", "--param", "time_limit=6"])):
        yield 8, label, ["solve", "window", "paper:example", "--method", "bbsched-ga", *argv], "clear", 0
    fifo = os.path.join(folder, "fifo")
    os.mkfifo(fifo)
    for label, spec in (("a directory", folder), ("/dev/zero", "/dev/zero"), ("a FIFO", fifo)):
        yield 8, f"{label} as an instance", ["solve", "window", spec, "--method", "naive"], "clear", 0


def _full_disk(folder: str) -> str | None:
    """A 64 KiB tmpfs under ``folder`` (root only), or None."""
    import subprocess

    path = os.path.join(folder, "full")
    os.makedirs(path)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", path], capture_output=True)
    if done.returncode != 0:
        return None
    with contextlib.suppress(OSError), open(os.path.join(path, "filler"), "wb") as f:
        f.write(b"\0" * (1 << 20))
    return path


def run_edges(classes: list[int], timeout_factor: float = 3.0) -> None:
    """Run the edge cases of ``classes`` and print a table per class and every case's outcome."""
    import subprocess

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        solvers = os.path.join(folder, "solvers.toml")
        with open(solvers, "w") as f:
            f.write(EDGE_SOLVERS)
        os.environ["IOSCHED_SOLVERS"] = solvers
        full = _full_disk(folder) if 5 in classes else None
        if 5 in classes and full is None:
            print("class 5 skipped: no tmpfs could be mounted (run as root)", file=sys.stderr)
        try:
            for cls, label, argv, expect, limit in edge_cases(folder, full):
                if cls not in classes:
                    continue
                allowed = 2 * limit + (1.0 if limit < 5 else 0.0) if limit else 30.0
                usage = {"cpu": math.nan, "rss": math.nan}
                start = time.monotonic()
                kind, last = run_case(argv, max(allowed * timeout_factor, 30.0), usage)
                wall = time.monotonic() - start
                cpu, rss = usage["cpu"], usage["rss"]
                if kind in ("clear", "accepted"):
                    if expect == "clear":
                        kind = "ok" if kind == "clear" else "wrong"
                    elif expect == "bounded":
                        kind = "ok" if wall <= allowed else "overrun"
                    elif expect == "handled":  # a result or a clear refusal, never status error (exit 1)
                        kind = "overrun" if wall > allowed else "wrong" if usage["code"] == 1 else "ok"
                    elif expect == "warned":
                        kind = "ok" if kind == "clear" or "warning" in last.lower() else "wrong"
                    elif expect == "no file":
                        left = [n for n in os.listdir(full) if n != "filler"]
                        kind = "ok" if kind == "clear" and not left else "wrong"
                        last += f" (left: {left})" if left else ""
                        for n in left:
                            subprocess.run(["rm", "-rf", os.path.join(full, n)])
                rows.append((cls, label, expect, kind, wall, cpu, rss, last))
                print(f"\r{len(rows)} edge cases", end="", file=sys.stderr, flush=True)
        finally:
            if full is not None:
                subprocess.run(["umount", full])
    print(file=sys.stderr)
    kinds = ["ok", "overrun", "hang", "traceback", "crash", "wrong"]
    print("| class | " + " | ".join(kinds) + " | cases |")
    print("|---|" + "---|" * (len(kinds) + 1))
    for cls in sorted({r[0] for r in rows}):
        got = collections.Counter(r[3] for r in rows if r[0] == cls)
        print(f"| {cls} | " + " | ".join(str(got[k]) for k in kinds) + f" | {sum(got.values())} |")
    print("\n| class | case | expected | outcome | wall s | CPU s | peak GB | last line |")
    print("|" + "---|" * 8)
    for cls, label, expect, kind, wall, cpu, rss, last in rows:
        print(f"| {cls} | {label} | {expect} | {kind} | {wall:.1f} | {cpu:.1f} | {rss:.2f} | {last[:140]} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="*", default=sorted(iosched.core.PROBLEMS))
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--limit", type=int, help="at most this many cases per problem")
    ap.add_argument("--show-accepted", action="store_true", help="list the accepted cases too")
    ap.add_argument("--edges", action="store_true", help="the edge cases of issue 21 instead, by class")
    ap.add_argument("--classes", type=int, nargs="*", default=list(range(1, 9)), help="with --edges: which classes")
    args = ap.parse_args()
    if args.edges:
        run_edges(args.classes)
        return
    counts = collections.defaultdict(collections.Counter)
    bad = []
    with tempfile.TemporaryDirectory() as folder:
        for problem in args.problems:
            for k, (label, argv) in enumerate(cases(problem, folder)):
                if args.limit and k >= args.limit:
                    break
                kind, last = run_case(argv, args.timeout)
                counts[problem][kind] += 1
                if kind != "clear" and (kind != "accepted" or args.show_accepted):
                    bad.append((problem, kind, label, last))
                print(f"\r{problem}: {k + 1} cases", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
    kinds = ["clear", "accepted", "traceback", "crash", "hang"]
    print("| problem | " + " | ".join(kinds) + " | cases |")
    print("|---|" + "---|" * (len(kinds) + 1))
    for problem, c in counts.items():
        print(f"| {problem} | " + " | ".join(str(c[k]) for k in kinds) + f" | {sum(c.values())} |")
    for problem, kind, label, last in bad:
        print(f"{problem} {kind}: {label}: {last[:160]}")


if __name__ == "__main__":
    main()
