"""A trace-driven batch-scheduler simulator with a shared burst buffer (BBSched, HPDC 2019, Section 4).

``workload``: the Standard Workload Format with one extra column per extra resource, the
generator, and the paper's burst-buffer mixes S1-S4 (and SSD mixes S5-S7) on any trace.
``simulator``: event-driven FCFS or WFP, EASY backfilling with a reservation checking
nodes and burst buffer, and the window plug-in calling any ``window`` method.
``metrics``: usage, wait and bounded slowdown with warm-up and cool-down excluded.
``plots``: utilisation over time, waits by job size and by request, the Kiviat chart.

Not imported by ``import iosched``: ``from iosched import batch`` loads it.
"""

from iosched.batch.metrics import job_records, summary
from iosched.batch.simulator import SimResult, simulate
from iosched.batch.workload import Trace, apply_mix, generate, make_trace, read_swf, write_swf

__all__ = ["SimResult", "Trace", "apply_mix", "generate", "job_records", "make_trace", "read_swf", "simulate",
           "summary", "write_swf"]
