"""The closing table of issue 38: every Darshan log (PyDarshan's wheel, and ../shared/data/darshan where
present) x problem -> imported (what) or refused (the importer's own message), measured by running the
importers, not typed.

    python benchmarks/darshan_table.py [--out FILE.md]

Each log is imported alone with what a log cannot hold given as the CLI would take it: periodic with
``bandwidth=3`` (GB/s); filedomain twice, with nothing given (striping from a LUSTRE record, else from the
mount table's file system with stated defaults; one aggregator per DXT host, else per process) and with a
platform given (``stripe_size=1048576 stripe_count=4 aggregators=4``: used where the log holds no striping,
refused as a ParameterError where the log's LUSTRE record or GPFS block size says otherwise); forwarding
with the defaults.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import darshan

from iosched.errors import InstanceError, ParameterError
from iosched.files import write_text
from iosched.importers import darshan as dx
from iosched.instances import filedomain_darshan, forwarding_darshan, periodic

WHEEL = Path(darshan.__file__).parent
SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "darshan"
PLATFORM = {"stripe_size": 2**20, "stripe_count": 4, "aggregators": 4}
COLUMNS = [("filedomain", filedomain_darshan.from_darshan, {}),
           ("filedomain + platform", filedomain_darshan.from_darshan, PLATFORM),
           ("forwarding", forwarding_darshan.from_darshan, {}),
           ("periodic (B = 3 GB/s)", periodic.from_darshan, {"bandwidth": 3.0})]


def _what(column: str, inst) -> str:
    if column.startswith("filedomain"):
        return (f"{inst.region_length} B region, {inst.data_bytes} written, {inst.stripes} stripes on "
                f"{inst.stripe_count}, P = {inst.aggregators}")
    if column == "forwarding":
        j, p = inst.jobs[0], inst.provenance["jobs"][0]
        return f"{j.nodes} nodes, {j.volume:.3g} GB, {p['files_per_process']}, iops {j.iops}"
    a, c = inst.applications[0], inst.provenance["applications"][0]
    return f"β {a.processors}, w {a.work:.3g} s, vol {a.io_volume:.3g} GB, {c['bursts']} bursts"


def _cell(text: str, log_name: str) -> str:
    return re.sub(r"\s+", " ", text.replace(f"{log_name}: ", "").replace("|", "/"))


def table() -> tuple[str, dict]:
    logs = sorted(WHEEL.rglob("*.darshan")) + (sorted(SHARED.resolve().rglob("*.darshan")) if SHARED.is_dir() else [])
    rows, counts = [], {c: [0, 0] for c, _, _ in COLUMNS}
    t0 = time.perf_counter()
    for path in logs:
        name = str(path.relative_to(WHEEL if path.is_relative_to(WHEEL) else SHARED.resolve()))
        try:
            log = dx.read(path)
        except InstanceError as e:
            rows.append([name] + [f"refused: {_cell(str(e), path.name)}"] * len(COLUMNS))
            continue
        cells = [name]
        for column, build, params in COLUMNS:
            try:
                cells.append("imported: " + _what(column, build(log, **params)))
                counts[column][0] += 1
            except (InstanceError, ParameterError) as e:
                cells.append(f"refused: {_cell(str(e), path.name)}")
                counts[column][1] += 1
        rows.append(cells)
    seconds = time.perf_counter() - t0
    head = ["log", *(c for c, _, _ in COLUMNS)]
    wheel = sum(1 for p in logs if p.is_relative_to(WHEEL))
    lines = [f"`python benchmarks/darshan_table.py --out benchmarks/darshan_table.md`, {time.strftime('%Y-%m-%d')}, "
             f"load {os.getloadavg()[0]:.1f}.", "", f"{len(logs)} logs ({wheel} in PyDarshan {darshan.__version__}'s "
             f"wheel), imported in {seconds:.1f} s:", "",
             " | ".join(f"{c}: {i} imported, {r} refused" for c, (i, r) in counts.items()), "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n", counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the table here (Markdown) as well as to stdout")
    args = ap.parse_args()
    text, _ = table()
    print(text)
    if args.out:
        write_text(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
