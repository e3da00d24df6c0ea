"""``iosched simulate``: the batch scheduler with burst buffers (:mod:`iosched.batch`) on a trace, its
per-job records, summary and plots written into a results folder."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from iosched.commands.common import dump_json, parse_params, show_progress
from iosched.errors import OutputError, ParameterError
from iosched.files import make_writable_folder, write_text


def cmd_simulate(args) -> int:
    """Simulate a trace (extended SWF, or generate:SEED[:JOBS]); per-job records, summary and plots in --out."""
    from iosched.validate import integer

    if args.burst_buffer is not None:  # checked here too: a generated trace without --mix would not read it
        integer("--burst-buffer", args.burst_buffer, 0, error=ParameterError)
    out = Path(args.out)
    made = _results_folder(out)  # before the simulation: a folder that cannot be written fails now
    try:
        return _simulate_into(args, out)
    except BaseException:  # a failed run leaves no folder it made (nothing half-written)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise


def _results_folder(out: Path) -> Path | None:
    """Create ``out`` and its missing parents (as ``bench --out`` does) and check a file can be made in it
    (ParameterError or OutputError saying why not); returns the topmost folder it made (None: none)."""
    blocker = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise ParameterError(f"--out: cannot use {str(out)!r} as a results folder: {str(blocker)!r} is a file")
    made = next((p for p in reversed((out, *out.parents)) if not p.exists()), None)
    try:
        make_writable_folder(out)
    except OSError as e:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise OutputError(f"--out: cannot make or write in {str(out)!r}: {e.strerror or e}") from None
    return made


def _simulate_into(args, out: Path) -> int:
    from iosched.batch import apply_mix, generate, metrics, plots, read_swf, simulate
    from iosched.instances.window_presets import THETA_NODES

    if args.trace.startswith("generate:"):
        parts = args.trace.split(":")[1:]
        if not 1 <= len(parts) <= 2 or not all(p.isdigit() for p in parts):
            raise ParameterError(f"generated traces are generate:SEED[:JOBS], got {args.trace!r}")
        size = {"jobs": int(parts[1])} if len(parts) == 2 else {}
        trace = generate(int(parts[0]), **size, nodes=THETA_NODES if args.nodes is None else args.nodes)
    else:
        trace = read_swf(args.trace, nodes=args.nodes, burst_buffer=args.burst_buffer)
    if args.jobs is not None:
        trace = trace.head(args.jobs)
    if args.mix:
        trace = apply_mix(trace, args.mix, seed=args.mix_seed, bb_capacity=args.burst_buffer)
    params = parse_params(args.param)
    from tqdm import tqdm

    with tqdm(total=len(trace), unit="job", disable=not show_progress(args), file=sys.stderr) as bar:
        res = simulate(trace, policy=args.policy, backfill=args.backfill, window=args.window, params=params,
                       window_size=args.window_size, starvation=args.starvation, persistent_bb=args.persistent_bb,
                       backfill_depth=args.backfill_depth, ssd_classes=_ssd_classes(args.ssd_classes),
                       progress=bar.update)
    records = metrics.write_records(res, out / f"jobs.{args.format}")
    summary = metrics.summary(res, args.warmup, args.cooldown)
    summary.update(config=res.config, dropped=[list(d) for d in trace.dropped], left_out=list(res.left_out),
                   breakdowns={by: metrics.breakdown(res, by, args.warmup, args.cooldown)
                               for by in ("nodes", "burst_buffer", "run")})
    write_text(out / "summary.json", dump_json(summary) + "\n")
    for warning in summary["warnings"]:
        print(f"iosched: warning: {warning}", file=sys.stderr)
    if not args.no_plots:
        import matplotlib

        matplotlib.use("Agg")
        plots.utilisation(res, out / "utilisation.png")
        label = args.window or "base"
        plots.waits({label: res}, "nodes", out / "wait_by_size.png")
        plots.waits({label: res}, "burst_buffer", out / "wait_by_bb.png")
    print(f"{len(trace)} jobs ({len(trace.dropped)} dropped, {len(res.left_out)} left out), "
          f"{res.wall_time_s:.1f} s: node usage {summary['node_usage']:.1%}, BB usage {summary['bb_usage']:.1%}, "
          + (f"SSD usage {summary['ssd_usage']:.1%}, wasted SSD {summary['wasted_ssd']:.1%}, "
             if "ssd_usage" in summary else "")
          + f"average wait {summary['avg_wait_s']:.0f} s, average bounded slowdown "
          f"{summary['avg_bounded_slowdown']:.2f}" + (f"; {summary['plugin_calls']} window calls, "
                                                       f"{summary['plugin_generations'] / summary['plugin_calls']:.0f} "
                                                       f"generations per call" if summary["plugin_generations"]
                                                       else "") + f"; {records} and {out / 'summary.json'}")
    return 0


def _ssd_classes(text: str | None) -> tuple[tuple[int, int], ...] | None:
    """``--ssd-classes 128:2196,256:2196`` as (SSD GB per node, nodes) pairs."""
    if text is None:
        return None
    try:
        return tuple((int(a), int(b)) for a, b in (part.split(":") for part in text.split(",")))
    except ValueError:
        raise ParameterError(f"--ssd-classes: expected SSD_GB:NODES[,SSD_GB:NODES...], got {text!r}") from None
