"""The periodic formats as field tables (:mod:`iosched.instances.fields`): the instance JSON that
:class:`~iosched.instances.periodic.PeriodicInstance` reads and writes, the pattern JSON that
:class:`~iosched.evaluate.periodic.Pattern` reads and writes, and a small instance to start from.

Units: any consistent ones work (the evaluator only divides volumes by rates); the paper's data, and
these tables, are in seconds, GB and GB/s.
"""

from __future__ import annotations

from iosched.instances.fields import Field, Fields
from iosched.instances.periodic import K_PRIME, Application, PeriodicInstance, Platform

FIELDS = Fields(
    "periodic instance",
    Field("name", "string", "", "the instance's name (default: the file's name without .json)", None),
    Field("platform", "object", "", "the platform the applications share"),
    Field("platform.processors", "integer", "processors", "N, the processors (at least the applications' sum)"),
    Field("platform.processor_bandwidth", "number", "GB/s", "b, each processor's I/O bandwidth"),
    Field("platform.bandwidth", "number", "GB/s", "B, the shared file system's bandwidth"),
    Field("applications", "list", "", "the applications, each repeating: compute, then I/O"),
    Field("applications[].name", "string", "", "its name (unique)"),
    Field("applications[].processors", "integer", "processors", "β, its dedicated processors; it moves data at "
          "most at min(β b, B)"),
    Field("applications[].work", "number", "s", "w, the compute time of one instance"),
    Field("applications[].io_volume", "number", "GB", "vol, the data one instance moves after computing"),
    Field("t_min", "number", "s", "fixes PerSched's first period and, with k_prime, the period cap (absent: max "
          "over the applications of w + vol / min(β b, B))", None),
    Field("k_prime", "number", "", "K', PerSched's period cap (at least 1): a pattern longer than K' t_min is "
          "rejected, so an optimum exists (written only where not the paper's 10)", K_PRIME),
    Field("provenance", "object", "", "where the instance came from (imported logs: names, SHA-256, what was "
          "assumed); methods ignore it", None),
)

SOLUTION_FIELDS = Fields(
    "periodic pattern",
    Field("period", "number", "s", "T, the pattern's period; the pattern repeats every T seconds; at most the "
          "instance's period cap K' t_min (a longer pattern is rejected)"),
    Field("applications", "list", "", "per application, in the instance's order, its instances in the pattern "
          "(at least one each)"),
    Field("applications[].name", "string", "", "the application's name (written for the reader; the order is "
          "what counts)", None),
    Field("applications[].instances", "list", "", "its instances: compute w seconds from compute_start, then "
          "move vol before the next instance's compute starts"),
    Field("applications[].instances[].compute_start", "number", "s", "when the instance starts computing, in "
          "[0, T)"),
    Field("applications[].instances[].io", "list", "", "its I/O as segments [start, end, rate] (s, s, GB/s), "
          "times modulo T: the rates never above min(β b, B), their sum over the applications never above B, "
          "the volume moved exactly vol"),
)


def template() -> PeriodicInstance:
    """A small instance to start from (``iosched show periodic --template``): two applications on 64
    processors."""
    return PeriodicInstance(Platform(64, 0.01, 0.2), (Application("simulation", 32, 60.0, 4.0),
                                                      Application("analysis", 16, 20.0, 1.0)), name="example")
