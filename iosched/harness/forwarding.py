"""The seed's experiments (DFRA, FAST'19) beside its figures.

* Section 6: DFRA's I/O speed-up over the fixed 512:1 mapping on its 11 applications (up to
  18.9x, 3.5x on average, 4.8x over the scaling group), each on its testbed preset, with the
  best allocation of DFRA's remapping space (the MILP) beside it;
* Table 3 (the fragment in the seed's text) and Figure 4: pairwise co-run slowdowns on one
  shared forwarding node;
* Section 5.3: an online day -- jobs arrive and leave, a method decides each job's mapping at
  its dispatch (running jobs keep theirs) -- with the forwarding nodes in use over the day
  (the seed's replay: 171.2 of 240 on average).
"""

from __future__ import annotations

import heapq
import statistics
import sys
import time
from dataclasses import replace

from iosched.core import solve
from iosched.errors import ParameterError
from iosched.evaluate.forwarding import dedicated_time, machine_times
from iosched.harness import Reproduction, comparison
from iosched.instances.forwarding import (
    APPS,
    SEED_MAX_SPEEDUP,
    SEED_MEAN_SPEEDUP,
    SEED_SCALING_MEAN_SPEEDUP,
    SEED_SPEEDUP,
    SEED_TABLE3,
    ForwardingInstance,
    Trace,
    app_preset,
    figure4,
    generate_trace,
    load,
    pair,
)
from iosched.validate import boolean, number

PAPER = "DFRA (Ji et al., FAST'19)"

SEED_FIGURE4 = {"shentu": 3.0, "awp": 1.04, "lammps": 1.23}  # I/O time shared / dedicated (Section 2.3)
SEED_NODES_USED, SEED_NODES = 171.2, 240  # average forwarding nodes in use over the seed's replay (Section 5.3)
SEED_GRANTED = 0.137  # share of jobs granted more forwarding nodes in the replay (Table 4)


# --- Section 6: the 11 applications -------------------------------------------------------------------------


def app_rows(milp: bool = True, progress: bool = False) -> list[dict]:
    """Per application: fixed and DFRA I/O times, the speed-up, the seed's, and (``milp``) the scope's best."""
    from tqdm import tqdm

    rows = []
    for app in tqdm(APPS, desc="applications", file=sys.stderr, disable=not progress):
        inst = app_preset(app)
        fixed, dfra = solve("forwarding", inst, "fixed"), solve("forwarding", inst, "dfra")
        row = {"app": app, "nodes": inst.jobs[0].nodes, "seed_group": APPS[app][8],
               "rule": dfra.info["rules"][app].split(":")[0], "fixed_s": fixed.evaluation.job_times[app],
               "dfra_s": dfra.evaluation.job_times[app], "seed_speedup": SEED_SPEEDUP.get(app),
               "feasible": fixed.evaluation.feasible and dfra.evaluation.feasible}
        row["speedup"] = row["fixed_s"] / row["dfra_s"]
        if milp:
            best = solve("forwarding", inst, "milp-dfra-space", profile="quick")
            row["milp_speedup"] = row["fixed_s"] / best.evaluation.job_times[app]
            row["feasible"] &= best.evaluation.feasible
        rows.append(row)
    return rows


def app_summary(rows: list[dict]) -> dict:
    scaling = [r["speedup"] for r in rows if r["rule"] == "scale"]
    return {"mean": statistics.mean(r["speedup"] for r in rows), "scaling_mean": statistics.mean(scaling),
            "max": max(r["speedup"] for r in rows), "max_app": max(rows, key=lambda r: r["speedup"])["app"],
            "scaling": len(scaling)}


# --- Table 3 and Figure 4 ---------------------------------------------------------------------------------------


def _alone_on_default(inst: ForwardingInstance, job) -> float:
    return machine_times(inst, {job.id: inst.default_groups(job)}, [job])[job.id]


def pair_rows() -> list[dict]:
    """Table 3's pairs: each one's I/O time co-running on one forwarding node over its time alone there."""
    rows = []
    for (a, b), seed in SEED_TABLE3.items():
        inst = pair(a, b)
        together = solve("forwarding", inst, "fixed").evaluation.job_times
        ja, jb = inst.jobs
        rows.append({"first": a, "second": b, "slowdown_first": together[ja.id] / _alone_on_default(inst, ja),
                     "slowdown_second": together[jb.id] / _alone_on_default(inst, jb),
                     "seed_first": seed[0], "seed_second": seed[1]})
    return rows


def figure4_rows() -> list[dict]:
    """Figure 4: each application's I/O time in the shared mode over its time on dedicated nodes (as many as
    its 512:1 share)."""
    inst = figure4()
    shared = solve("forwarding", inst, "fixed").evaluation.job_times
    return [{"app": j.id, "slowdown": shared[j.id] / dedicated_time(j, -(-j.nodes // 512), 2.5),
             "seed": SEED_FIGURE4[j.id]} for j in inst.jobs]


# --- Section 5.3: an online day ----------------------------------------------------------------------------------


def simulate(trace: Trace, method: str = "dfra", params: dict | None = None, progress: bool = False) -> dict:
    """Replay ``trace``: FIFO start on the first free contiguous compute nodes; at each start ``method``
    maps the new job (running jobs keep their mapping, as DFRA does); between events every job's I/O time
    is the evaluator's in the current state. Returns time averages over [0, hours): the summed I/O time
    per phase of the jobs running, the forwarding nodes serving a job, the pool nodes in use, and per job
    its mean I/O time per phase and what it got (more nodes than its default mapping, as many to itself,
    or its default mapping)."""
    from tqdm import tqdm

    params = dict(params or {})
    base = ForwardingInstance(trace.compute_nodes, trace.default_ratio, trace.forwarding_nodes,
                              (trace.jobs[0].job,), name="state")
    free = [(0, trace.compute_nodes)]  # free compute-node ranges (start, end), sorted
    events = [(tj.arrival, 1, k) for k, tj in enumerate(trace.jobs)]  # (hour, 0 finish / 1 arrival, index)
    heapq.heapify(events)
    queue: list[int] = []
    running: dict[str, tuple] = {}  # id -> (job placed, groups, dedicated)
    times: dict[str, float] = {}
    acc = {"io": 0.0, "nodes": 0.0, "pool": 0.0}
    per_job: dict[str, list[float]] = {}  # id -> [integral of its phase time, hours measured]
    decisions: dict[str, str] = {}
    used_nodes = used_pool = 0
    now = min(0.0, events[0][0]) if events else 0.0
    bar = tqdm(total=len(trace.jobs), desc=f"online {method}", file=sys.stderr, disable=not progress)

    def account(until: float) -> None:
        lo, hi = max(now, 0.0), min(until, trace.hours)
        if hi > lo:
            acc["io"] += (hi - lo) * sum(times.values())
            acc["nodes"] += (hi - lo) * used_nodes
            acc["pool"] += (hi - lo) * used_pool
            for jid, t in times.items():
                per_job.setdefault(jid, [0.0, 0.0])
                per_job[jid][0] += (hi - lo) * t
                per_job[jid][1] += hi - lo

    def state() -> None:
        nonlocal times, used_nodes, used_pool
        jobs = [v[0] for v in running.values()]
        times = machine_times(base, {jid: v[1] for jid, v in running.items()}, jobs) if jobs else {}
        used = {f for v in running.values() for f, _ in v[1]}
        used_nodes, used_pool = len(used), sum(base.node[f].service == "pool" for f in used)

    def start(k: int, at: float) -> bool:
        tj = trace.jobs[k]
        slot = next((i for i, (s, e) in enumerate(free) if e - s >= tj.job.nodes), None)
        if slot is None:
            return False
        s, e = free[slot]
        free[slot:slot + 1] = [(s + tj.job.nodes, e)] if e > s + tj.job.nodes else []
        job = replace(tj.job, start=s)
        others = tuple(replace(v[0], history=None, forwarding=v[1], dedicated=v[2]) for v in running.values())
        inst = ForwardingInstance(trace.compute_nodes, trace.default_ratio, trace.forwarding_nodes, (job,), others,
                                  name=f"dispatch {job.id}")
        res = solve("forwarding", inst, method, **params)
        if res.solution is None:
            raise RuntimeError(f"{method} gave no allocation at the dispatch of {job.id}: {res.info}")
        groups = res.solution.mapping[job.id]
        running[job.id] = (job, groups, job.id in res.solution.dedicated)
        if at >= 0:  # more nodes than its default mapping, the same number to itself, or its default mapping
            size, default = len({f for f, _ in groups}), len({f for f, _ in inst.default_groups(job)})
            decisions[job.id] = ("more" if size > default else "dedicated" if job.id in res.solution.dedicated
                                 else "default")
        heapq.heappush(events, (at + tj.runtime, 0, k))
        return True

    while events:
        at, kind, k = heapq.heappop(events)
        if at >= trace.hours:
            break
        account(at)
        now = at
        if kind == 0:
            job = running.pop(trace.jobs[k].job.id)[0]
            free.append((job.start, job.end))
            free.sort()
            merged = [free[0]]
            for s, e in free[1:]:
                if s == merged[-1][1]:
                    merged[-1] = (merged[-1][0], e)
                else:
                    merged.append((s, e))
            free[:] = merged
        else:
            queue.append(k)
            bar.update(1)
        while queue and start(queue[0], at):
            queue.pop(0)
        state()
    account(trace.hours)
    bar.close()
    means = {jid: v[0] / v[1] for jid, v in per_job.items() if v[1] > 0}
    return {"method": method, "io_time": acc["io"] / trace.hours, "nodes_used": acc["nodes"] / trace.hours,
            "pool_used": acc["pool"] / trace.hours, "job_means": means, "decisions": decisions,
            "dispatched": len(decisions)}


def online_rows(trace: Trace, methods: tuple[str, ...] = ("fixed", "dfra"), progress: bool = False) -> list[dict]:
    """One row per method over the trace; I/O time saved against the first method (fixed)."""
    out = [simulate(trace, m, {"profile": "quick"} if m.startswith("milp") else {}, progress) for m in methods]
    base = out[0]
    rows = []
    for r in out:
        common = [j for j in r["job_means"] if j in base["job_means"]]
        more = sum(d == "more" for d in r["decisions"].values())
        dedicated = sum(d != "default" for d in r["decisions"].values())
        rows.append({"method": r["method"], "io_time": r["io_time"],
                     "saved": 1 - r["io_time"] / base["io_time"] if base["io_time"] else 0.0,
                     "median_job_speedup": statistics.median(base["job_means"][j] / r["job_means"][j]
                                                            for j in common) if common else None,
                     "nodes_used": r["nodes_used"], "pool_used": r["pool_used"],
                     "in_service_plus_pool": 80 + r["pool_used"], "dispatched": r["dispatched"],
                     "granted": more / max(r["dispatched"], 1), "dedicated": dedicated / max(r["dispatched"], 1)})
    return rows


# --- the whole reproduction ------------------------------------------------------------------------------------


def _fmt(x, spec):
    return "-" if x is None else format(x, spec)


def format_tables(apps: list[dict], pairs: list[dict], fig4: list[dict], online: list[dict], hours: float) -> str:
    s = app_summary(apps)
    milp = "milp_speedup" in apps[0]
    lines = ["Section 6: I/O speed-up of DFRA over the fixed 512:1 mapping (testbed presets)", "",
             "| app | nodes | seed's group | DFRA rule | fixed s | DFRA s | speed-up | seed's | "
             + ("best in DFRA's space |" if milp else ""),
             "|---|---|---|---|---|---|---|---|" + ("---|" if milp else "")]
    for r in apps:
        lines.append(f"| {r['app']} | {r['nodes']} | {r['seed_group']} | {r['rule']} | {r['fixed_s']:.4g} | "
                     f"{r['dfra_s']:.4g} | {r['speedup']:.2f}x | {_fmt(r['seed_speedup'], '.2f')} | "
                     + (f"{r['milp_speedup']:.2f}x |" if milp else ""))
    lines += ["", f"mean speed-up {s['mean']:.2f}x (seed: {SEED_MEAN_SPEEDUP}x over its 11 applications); "
              f"over the {s['scaling']} jobs DFRA scaled {s['scaling_mean']:.2f}x "
              f"(seed: {SEED_SCALING_MEAN_SPEEDUP}x); "
              f"largest {s['max']:.2f}x ({s['max_app']}; seed: {SEED_MAX_SPEEDUP}x, Shentu)", "",
              "Table 3 (fragment): I/O slowdown of each co-runner on one shared forwarding node (256 nodes each)", "",
              "| first | second | ours (first, second) | seed's (first, second) |", "|---|---|---|---|"]
    lines += [f"| {r['first']} | {r['second']} | ({r['slowdown_first']:.2f}, {r['slowdown_second']:.2f}) | "
              f"({r['seed_first']:g}, {r['seed_second']:g}) |" for r in pairs]
    lines += ["", "Figure 4: I/O time in the shared mode over dedicated nodes", "", "| app | ours | seed's |",
              "|---|---|---|"]
    lines += [f"| {r['app']} | {r['slowdown']:.2f}x | {r['seed']:g}x |" for r in fig4]
    if online:
        lines += ["", f"Online: a generated {hours:g}-hour day on TaihuLight (mapping decided at each dispatch)", "",
                  "| method | I/O time per phase, summed over running jobs (s, time average) | saved vs fixed | "
                  "median job speed-up | forwarding nodes serving jobs | 80 + pool nodes in use | jobs given more "
                  "nodes | jobs on dedicated nodes |", "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r['method']} | {r['io_time']:.4g} | {r['saved']:.1%} | {_fmt(r['median_job_speedup'], '.2f')}"
                  f" | {r['nodes_used']:.1f} of 240 | {r['in_service_plus_pool']:.1f} | {r['granted']:.1%} | "
                  f"{r['dedicated']:.1%} |" for r in online]
        lines.append(f"\nThe seed's replay of 18 months: {SEED_NODES_USED} of {SEED_NODES} forwarding nodes in use on "
                     f"average; {SEED_GRANTED:.1%} of jobs granted upgrades.")
    return "\n".join(lines)


NOTES = ("Seed values: application sizes, the modes and classes the text states, the scaling / non-scaling "
         "groups, the speed-ups and Table 3 / Figure 4 figures. Assumptions: volumes, I/O nodes and per-node "
         "bandwidths of the applications, their unstated modes and classes, the typical low-I/O neighbours "
         "on the blocks an application shares, each starting half a block into its first block, and the "
         "interference defaults (iosched.evaluate.forwarding). The fluid model has no Lustre back end and no "
         "per-request costs: bandwidth scales with forwarding nodes until the jobs' own links, so scaled "
         "jobs gain more than on the real machine.")


RULE_INSTANCE = "random:0:200"  # a full idle pool: the MILP in DFRA's space is certified against every allocation


def rule_costs(spec: str = RULE_INSTANCE) -> tuple[list[dict], list[dict]]:
    """Where DFRA's total I/O time goes, rule by rule, beside the MILP's allocation (optimal in
    DFRA's space, within 0.002 % of the bound valid for every allocation here): per rule that
    fired, the jobs and their I/O time under each allocation; then the delay both inflict on the
    running jobs. Rows and comparisons (the seed gives no such figure: measured, not compared)."""
    inst = load(spec)
    dfra = solve("forwarding", inst, "dfra", attach_bound=False)
    best = solve("forwarding", inst, "milp-dfra-space", profile="quick")
    times = {name: r.evaluation.to_dict() for name, r in (("dfra", dfra), ("milp", best))}
    rows: dict[str, dict] = {}
    for jid, text in dfra.info["rules"].items():
        row = rows.setdefault(text.split(":")[0], {"rule": text.split(":")[0], "jobs": 0, "dfra_s": 0.0,
                                                   "milp_s": 0.0})
        row["jobs"] += 1
        row["dfra_s"] += times["dfra"]["job_times"][jid]
        row["milp_s"] += times["milp"]["job_times"][jid]
    out = sorted(rows.values(), key=lambda r: -(r["dfra_s"] - r["milp_s"]))
    out.append({"rule": "delay to the running jobs", "jobs": len(inst.running),
                "dfra_s": times["dfra"]["running_delay"], "milp_s": times["milp"]["running_delay"]})
    comps = [comparison(PAPER, f"DFRA rule by rule on {spec}", r["rule"], "I/O time s (DFRA / MILP in DFRA's space)",
                        None, round(r["dfra_s"], 1), "s",
                        f"{r['jobs']} jobs; the MILP's allocation of the same jobs: {r['milp_s']:.1f} s "
                        f"(status {best.status.value}, gap {best.gap:.2e} to the bound valid for every allocation)")
             for r in out]
    return out, comps


def format_rule_costs(rows: list[dict]) -> str:
    lines = [f"DFRA rule by rule on {RULE_INSTANCE} (total I/O time of the jobs each rule decided, s):", "",
             "| rule | jobs | DFRA | MILP (DFRA's space) |", "|---|---|---|---|"]
    lines += [f"| {r['rule']} | {r['jobs']} | {r['dfra_s']:,.0f} | {r['milp_s']:,.0f} |" for r in rows]
    return "\n".join(lines)


def reproduce(workers: int = 1, progress: bool = True, online_hours: float = 24.0, online_milp: bool = False,
              milp: bool = True) -> Reproduction:
    """The applications, Table 3 and Figure 4, and an online day (fixed and DFRA; ``online_milp`` adds the
    MILP at each dispatch, slower) beside the seed's figures. ``online_hours`` 0 skips the day."""
    number("online_hours", online_hours, 0, 24 * 30, error=ParameterError)
    boolean("online_milp", online_milp, error=ParameterError)
    boolean("milp", milp, error=ParameterError)
    start = time.perf_counter()
    apps = app_rows(milp, progress)
    pairs, fig4 = pair_rows(), figure4_rows()
    online = []
    if online_hours > 0:
        methods = ("fixed", "dfra", "milp-dfra-space") if online_milp else ("fixed", "dfra")
        online = online_rows(generate_trace(0, hours=online_hours), methods, progress)
    rules, comps = rule_costs() if milp else ([], [])
    ok = all(r["feasible"] for r in apps)
    notes = NOTES + f"\nWhole run {time.perf_counter() - start:.1f} s ({workers} worker(s) requested; it runs in one)."
    table = format_tables(apps, pairs, fig4, online, online_hours)
    if rules:
        table += "\n\n" + format_rule_costs(rules)
    return Reproduction("forwarding: DFRA beside the seed's Section 6, Table 3, Figure 4 and its replay",
                        [{"table": "apps", **r} for r in apps] + [{"table": "table3", **r} for r in pairs]
                        + [{"table": "figure4", **r} for r in fig4] + [{"table": "online", **r} for r in online]
                        + [{"table": "rules", **r} for r in rules], table, ok, notes, comparisons=comps)
