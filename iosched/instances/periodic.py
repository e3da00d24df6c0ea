"""Instances of the periodic I/O problem (Aupy, Gainaru, Le Fèvre: PerSched).

A platform of ``processors`` processors, each with an I/O card of
``processor_bandwidth`` (data/s), sharing a file system of ``bandwidth``
(data/s). Each application uses ``processors`` dedicated processors and
repeats: compute ``work`` seconds, then move ``io_volume`` data.
Any consistent units work; the paper's data are in seconds, GB and GB/s.

The period cap is part of the problem: a pattern's period T is at most K' t_min (JSON
``k_prime``, K' >= 1, default 10 as in the paper's experiments, Section 4.4), where t_min is
the instance's ``t_min`` where given and otherwise max_k (w_k + time_io_k), the shortest
period that holds one instance of every application (Algorithm 2, lines 3-4): the range
PerSched searches, [t_min, K' t_min]. Without a cap the supremum over periodic patterns is
reached only at common multiples of the applications' cycles (astronomically long periods)
or not at all, and no optimum could be proved.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from iosched.errors import InstanceError
from iosched.instances import JsonInstance, build, check_top

MAX_COUNT = 2**53  # processor counts: integers that floats still hold exactly
K_PRIME = 10  # the paper's period cap K' = T_max / t_min (Section 4.4: "tested with K' = 10")


def _positive(where: str, value, *, integer: bool = False) -> None:
    ok_type = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, ok_type):
        kind = "an integer" if integer else "a number"
        raise InstanceError(f"{where} must be {kind}, got {value!r}")
    if integer and value > MAX_COUNT:
        raise InstanceError(f"{where} must be at most 2^53, got {_short(value)}")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer beyond floats
        finite = False
    if not finite or value <= 0:
        raise InstanceError(f"{where} must be positive and finite, got {_short(value)}")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} digits)"


@dataclass(frozen=True)
class Platform:
    """N processors, b data/s per processor, B data/s for the shared file system."""

    processors: int
    processor_bandwidth: float
    bandwidth: float

    def __post_init__(self):
        _positive("platform.processors", self.processors, integer=True)
        _positive("platform.processor_bandwidth", self.processor_bandwidth)
        _positive("platform.bandwidth", self.bandwidth)


@dataclass(frozen=True)
class Application:
    """β processors; each instance computes ``work`` s then moves ``io_volume`` data."""

    name: str
    processors: int
    work: float
    io_volume: float

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise InstanceError(f"application name must be a non-empty string, got {self.name!r}")
        where = f"applications[{self.name}]"
        _positive(f"{where}.processors", self.processors, integer=True)
        _positive(f"{where}.work", self.work)
        _positive(f"{where}.io_volume", self.io_volume)


@dataclass(frozen=True)
class PeriodicInstance(JsonInstance):
    """Applications sharing a platform, and the period cap: every pattern's period is at most
    ``k_prime`` x t_min (:meth:`period_cap`), t_min being ``t_min`` (s) where given (the paper's
    sets carry the authors' values), else max_k (w_k + time_io_k) (:meth:`search_t_min`). PerSched
    searches [t_min, K' t_min].

    ``provenance``: where the instance came from (imported logs: names, SHA-256, what was
    assumed); methods ignore it."""

    platform: Platform
    applications: tuple[Application, ...]
    name: str = "instance"
    t_min: float | None = None
    provenance: dict | None = field(default=None, compare=False)
    k_prime: float = K_PRIME

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise InstanceError(f"name must be a non-empty string, got {self.name!r}")
        if self.provenance is not None and not isinstance(self.provenance, dict):
            raise InstanceError(f"provenance must be an object, got {self.provenance!r:.80}")
        apps: object = self.applications  # (as given: anything until checked)
        if isinstance(apps, list):
            object.__setattr__(self, "applications", tuple(apps))
        if not isinstance(self.applications, tuple) or not all(isinstance(a, Application) for a in self.applications):
            raise InstanceError(f"applications must be a list of Application, got {self.applications!r:.80}")
        if not self.applications:
            raise InstanceError("applications must be a non-empty list, got []")
        names = [a.name for a in self.applications]
        if len(set(names)) != len(names):
            raise InstanceError(f"application names must be unique, got {names}")
        used = sum(a.processors for a in self.applications)
        if used > self.platform.processors:
            raise InstanceError(
                f"applications use {used} processors in all, above platform.processors"
                f" = {self.platform.processors}"
            )
        if self.t_min is not None:
            _positive("t_min", self.t_min)
        _positive("k_prime", self.k_prime)
        if self.k_prime < 1:
            raise InstanceError(f"k_prime must be at least 1 (the period cap is K' t_min), got {self.k_prime!r}")
        for k, a in enumerate(self.applications):
            # derived quantities every method uses: finite and positive, or the scales are unusable
            rate, io = self.max_rate(k), self.time_io(k)
            if not (math.isfinite(rate) and rate > 0 and math.isfinite(io) and io > 0
                    and math.isfinite(a.work + io)):
                raise InstanceError(
                    f"applications[{a.name}]: io_volume {a.io_volume!r} at min(processors x processor_bandwidth, "
                    f"bandwidth) = {rate!r} data/s takes {io!r} s: not a finite positive time (the platform's and "
                    f"the application's scales are too far apart)")
        cap, longest = self.period_cap(), self.default_t_min()
        where = f"k_prime = {self.k_prime!r}: the period cap K' t_min = {self.k_prime!r} x {self.search_t_min()!r} s"
        if not math.isfinite(cap):
            raise InstanceError(f"{where} is not a finite number")
        if cap < longest:
            raise InstanceError(
                f"{where} = {cap!r} s is shorter than the longest application cycle max_k (w_k + time_io_k) = "
                f"{longest!r} s, so no pattern within it holds every application (a larger k_prime or t_min)")

    # --- derived quantities (same units as the data) -------------------------
    def max_rate(self, k: int) -> float:
        """min(β_k b, B): the fastest application k can move data (data/s)."""
        a = self.applications[k]
        return min(a.processors * self.platform.processor_bandwidth, self.platform.bandwidth)

    def time_io(self, k: int) -> float:
        """vol_k / min(β_k b, B): I/O time of one instance alone on the platform (s)."""
        return self.applications[k].io_volume / self.max_rate(k)

    def rho(self, k: int) -> float:
        """ρ_k = w_k / (w_k + time_io_k): efficiency of k alone on the platform."""
        w = self.applications[k].work
        return w / (w + self.time_io(k))

    def default_t_min(self) -> float:
        """max_k (w_k + time_io_k): the shortest period holding one instance of each app."""
        return max(a.work + self.time_io(k) for k, a in enumerate(self.applications))

    def search_t_min(self) -> float:
        """t_min (s) of the period cap and of PerSched's search: the instance's ``t_min`` where given,
        else :meth:`default_t_min` (the paper's T_min = max_k (w_k + time_io_k), Algorithm 2 line 3)."""
        return self.default_t_min() if self.t_min is None else self.t_min

    def period_cap(self) -> float:
        """K' t_min (s): the longest period a pattern of this instance may have (Algorithm 2 line 4's
        T_max); a longer pattern is infeasible (the evaluator's ``period_cap`` violation)."""
        return self.k_prime * self.search_t_min()

    # --- JSON ------------------------------------------------------------------
    def to_dict(self) -> dict:
        d: dict[str, object] = {
            "name": self.name,
            "platform": asdict(self.platform),
            "applications": [asdict(a) for a in self.applications],
        }
        if self.t_min is not None:
            d["t_min"] = self.t_min
        if self.k_prime != K_PRIME:  # written only when not the paper's 10, so that older files hash the same
            d["k_prime"] = self.k_prime
        if self.provenance is not None:
            d["provenance"] = self.provenance
        return d

    @classmethod
    def from_dict(cls, d: dict, name: str = "instance") -> PeriodicInstance:
        check_top(d, "periodic instance", ("platform", "applications"), ("name", "t_min", "k_prime", "provenance"))
        platform = build(Platform, d["platform"], "platform")
        apps = d["applications"]
        if not isinstance(apps, list):
            raise InstanceError(f"applications must be a list, got {apps!r}")
        applications = tuple(
            build(Application, a, f"applications[{i}]") for i, a in enumerate(apps)
        )
        return cls(platform, applications, name=d.get("name", name), t_min=d.get("t_min"),
                   provenance=d.get("provenance"), k_prime=d.get("k_prime", K_PRIME))


def checked_instance(instance: object) -> PeriodicInstance:
    """``instance`` itself where it is a :class:`PeriodicInstance`, else an InstanceError naming its type: the
    evaluator and the heuristics are public functions that may be handed any problem's instance."""
    if not isinstance(instance, PeriodicInstance):
        raise InstanceError(f"a periodic instance is needed, got {type(instance).__name__}")
    return instance


# --- the paper's instances ---------------------------------------------------------
JUPITER = Platform(processors=640, processor_bandwidth=0.01, bandwidth=3.0)

# Table 1 of the paper, scaled to Jupiter (processors / 64, work x 64): (w s, vol GB, β).
PAPER_APPS = {
    "T1": (4480.0, 128.2, 512),
    "T2": (76.8, 235.8, 64),
    "AP": (15360.0, 423.4, 128),
    "PP": (483456.0, 34304.0, 512),
}
# Table 2: how many of each application (T1, T2, AP, PP), and the t_min the authors used.
PAPER_SETS = {
    1: ((0, 10, 0, 0), 900.0),
    2: ((0, 8, 1, 0), 16000.0),
    3: ((0, 6, 2, 0), 16000.0),
    4: ((0, 4, 3, 0), 16000.0),
    5: ((0, 2, 0, 1), 495000.0),
    6: ((0, 2, 4, 0), 16000.0),
    7: ((1, 2, 0, 0), 4544.0),
    8: ((0, 0, 1, 1), 495000.0),
    9: ((0, 0, 5, 0), 16000.0),
    10: ((1, 0, 1, 0), 16000.0),
}
# Table 4 (K' = 10, eps = 0.01): min Dilation, paper's SysEff upper bound,
# PerSched Dilation, PerSched SysEff, Online Dilation, Online SysEff.
PAPER_TABLE4 = {
    1: (1.777, 0.172, 1.896, 0.0973, 2.091, 0.0825),
    2: (1.422, 0.334, 1.429, 0.290, 1.658, 0.271),
    3: (1.079, 0.495, 1.087, 0.480, 1.291, 0.442),
    4: (1.014, 0.656, 1.014, 0.647, 1.029, 0.640),
    5: (1.010, 0.816, 1.024, 0.815, 1.039, 0.810),
    6: (1.005, 0.818, 1.005, 0.814, 1.035, 0.761),
    7: (1.007, 0.827, 1.007, 0.824, 1.012, 0.818),
    8: (1.005, 0.977, 1.005, 0.976, 1.005, 0.976),
    9: (1.000, 0.979, 1.000, 0.979, 1.004, 0.978),
    10: (1.009, 0.988, 1.009, 0.986, 1.015, 0.985),
}
# Table 3 (measured on Jupiter without any I/O scheduler): per set, the average bandwidth
# slowdown of each application kind (fraction of its bandwidth alone lost to congestion) and
# the SysEfficiency.
PAPER_TABLE3 = {
    1: ({"T2": 0.6572}, 0.064561),
    2: ({"T2": 0.6393, "AP": 0.3812}, 0.250105),
    3: ({"T2": 0.5692, "AP": 0.3021}, 0.439038),
    4: ({"T2": 0.349, "AP": 0.2492}, 0.610826),
    6: ({"T2": 0.3467, "AP": 0.5206}, 0.621977),
    10: ({"T1": 0.1179, "AP": 0.2108}, 0.98547),
}
# Table 5: the most instances of one application in PerSched's pattern (n_inst), and
# n_max = max_k (w_k + time_io_k) / min_k (w_k + time_io_k).
PAPER_TABLE5 = {
    1: (11, 1.00), 2: (25, 35.2), 3: (33, 35.2), 4: (247, 35.2), 5: (1086, 1110),
    6: (353, 35.2), 7: (81, 10.2), 8: (251, 31.5), 9: (9, 1.00), 10: (28, 3.47),
}
# Figure 7, as the text states it (averages over the ten sets, eps = 0.01): K' -> (SysEfficiency(K')
# / SysEfficiency(100), Dilation(K') / Dilation(100)); "within 0.3 %" is read as 0.997, "5 %
# higher" as 1.05, "within 1 %" as 1.01. The figure's other points are not in the text.
PAPER_FIGURE7 = {3: (0.997, 1.05), 10: (0.999, 1.01)}


def paper_set(k: int) -> PeriodicInstance:
    """Scenario set k (1..10) of the paper, on Jupiter, with the authors' t_min and the paper's K' = 10:
    periods up to 10 t_min, the range the authors' PerSched searched for Table 4."""
    if k not in PAPER_SETS:
        raise InstanceError(f"paper set must be 1..10, got {k!r}")
    counts, t_min = PAPER_SETS[k]
    apps = []
    for kind, count in zip(PAPER_APPS, counts):
        w, vol, beta = PAPER_APPS[kind]
        apps += [Application(f"{kind}-{i + 1}", beta, w, vol) for i in range(count)]
    return PeriodicInstance(JUPITER, tuple(apps), name=f"paper:set{k}", t_min=t_min, k_prime=K_PRIME)


def generate(
    seed: int,
    n_apps: int = 4,
    platform: Platform = JUPITER,
    io_share: tuple[float, float] = (0.02, 0.5),
    k_prime: float = K_PRIME,
) -> PeriodicInstance:
    """A random instance: ``n_apps`` applications splitting the platform's processors, periods
    capped at ``k_prime`` max_k (w_k + time_io_k).

    Processor counts are powers of two; each application's I/O time alone,
    time_io / (w + time_io), is drawn uniformly from ``io_share``; work is
    log-uniform in [10, 10^4] s. Same seed, same instance.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise InstanceError(f"seed must be an integer in [0, 2^63), got {_short(seed)}")
    _positive("n_apps", n_apps, integer=True)
    if n_apps > platform.processors:
        raise InstanceError(f"n_apps = {n_apps} exceeds platform.processors = {platform.processors}")
    rng = np.random.default_rng(seed)
    per_app = platform.processors // n_apps
    top = max(0, int(math.floor(math.log2(per_app))))
    apps = []
    for i in range(n_apps):
        beta = int(2 ** rng.integers(0, top + 1))
        work = float(np.round(10 ** rng.uniform(1, 4), 3))
        share = rng.uniform(*io_share)
        rate = min(beta * platform.processor_bandwidth, platform.bandwidth)
        vol = float(np.round(work * share / (1 - share) * rate, 4))
        apps.append(Application(f"A{i + 1}", beta, work, max(vol, 1e-3)))
    return PeriodicInstance(platform, tuple(apps), name=f"random:{seed}:{n_apps}", k_prime=k_prime)


def load(spec: str) -> PeriodicInstance:
    """A built-in name (``paper:set3``, ``random:SEED[:N_APPS]``) or a JSON file path."""
    if spec.startswith("paper:set"):
        tail = spec[len("paper:set"):]
        if not tail.isdigit():
            raise InstanceError(f"unknown built-in instance {spec!r}; try paper:set1 .. paper:set10")
        return paper_set(int(tail))
    if spec.startswith("random:"):
        parts = spec.split(":")[1:]
        if not 1 <= len(parts) <= 2 or not all(p.isdigit() for p in parts):
            raise InstanceError(f"random instances are random:SEED[:N_APPS] with integers >= 0, got {spec!r}")
        return generate(int(parts[0])) if len(parts) == 1 else generate(int(parts[0]), int(parts[1]))
    if not Path(spec).is_file():
        raise InstanceError(f"no such instance file or built-in name: {spec!r}")
    return PeriodicInstance.from_json(Path(spec))


BUILTIN = [f"paper:set{k}" for k in PAPER_SETS]


# --- from Darshan logs ------------------------------------------------------------------------------

def from_darshan(logs, bandwidth: float | None = None, processor_bandwidth: float | None = None,
                 processors: int | None = None, min_compute_s: float | None = None,
                 name: str | None = None) -> PeriodicInstance:
    """One application per Darshan log with a DXT timeline (a log or folder path, a read
    :class:`~iosched.importers.darshan.DarshanLog`, or a list of them), in GB, s and GB/s.

    The timeline: every read and write of DXT_MPIIO (else DXT_POSIX), all ranks and files. I/O
    bursts are the stretches of it whose gaps are shorter than ``min_compute_s`` (default 1 % of
    the job's run time); a longer gap is compute. Per application: β = the job's processes; the
    cycle's compute time ``work`` = the time from the job's start to the end of its last burst
    that is not in a burst, over the number of bursts; ``io_volume`` = the bytes moved over the
    number of bursts. Where bursts are irregular, the spread (coefficient of variation of the
    compute gaps and of the burst volumes) is in ``provenance``. The platform is not in a log:
    ``bandwidth`` B (GB/s) must be given; ``processor_bandwidth`` b defaults to B (no per-processor
    cap) and ``processors`` N to the applications' sum.

    Parameters
    ----------
    logs : str, Path, DarshanLog or list of them
        A log or a folder of logs (read with the DXT modules), or logs already read.
    bandwidth : float
        The file system's bandwidth B (GB/s): required, a log does not hold it.
    processor_bandwidth : float, optional
        b (GB/s per processor); default B.
    processors : int, optional
        N; default the applications' sum.
    min_compute_s : float, optional
        The shortest gap read as compute (s); default 1 % of each job's run time.
    name : str, optional
        The instance's name; default ``darshan:<n>-apps``.

    Returns
    -------
    PeriodicInstance
        One application per log accepted; every assumption in ``provenance["assumed"]``.

    Raises
    ------
    ParameterError
        ``bandwidth`` missing.
    InstanceError
        A bad number, or a log without a DXT timeline, with a partial one, or without compute between its
        bursts (naming it). In a batch such a log is left out and listed in ``provenance["refused"]``; the
        batch is refused only when every log is.
    """
    from iosched.errors import ParameterError
    from iosched.importers import darshan as dx

    if bandwidth is None:
        raise ParameterError("periodic from a Darshan log needs bandwidth (GB/s): the platform's file-system "
                             "bandwidth B, which a log does not hold")
    _positive("bandwidth", bandwidth)
    if processor_bandwidth is not None:
        _positive("processor_bandwidth", processor_bandwidth)
    if min_compute_s is not None:
        _positive("min_compute_s", min_compute_s)
    cycles, refused = dx.each(logs, dx.DXT_MODULES, lambda log: _darshan_cycle(log, min_compute_s))
    apps: list[Application] = []
    seen: dict[str, int] = {}
    for c in cycles:
        stem = c["log"].removesuffix(".darshan")[:40]
        seen[stem] = seen.get(stem, 0) + 1
        c["application"] = stem if seen[stem] == 1 else f"{stem}#{seen[stem]}"
        apps.append(Application(c["application"], c["nprocs"], c.pop("work_s"), c.pop("volume_gb")))
    used = sum(a.processors for a in apps)
    n = used if processors is None else processors
    b = bandwidth if processor_bandwidth is None else processor_bandwidth
    platform = Platform(n, b, bandwidth)
    irregular = [c["application"] for c in cycles if max(c["spread"].values()) > 0.1]
    assumed = (f"{len(apps)} applications from DXT timelines (compute = gaps of at least min_compute_s); "
               f"platform B = {bandwidth} GB/s given, b = {b} GB/s" + (" (= B, no per-processor cap)"
                                                                     if processor_bandwidth is None else "")
               + f", N = {n} processors" + (" (the applications' sum)" if processors is None else "")
               + (f"; irregular bursts (spread above 10 %): {', '.join(irregular)}" if irregular else "")
               + (f"; {len(refused)} logs refused" if refused else ""))
    provenance = {"source": "darshan", "assumed": assumed, "applications": cycles}
    if refused:
        provenance["refused"] = [{"log": n, "reason": r} for n, r in refused]
    return PeriodicInstance(platform, tuple(apps), name=name or f"darshan:{len(apps)}-apps", provenance=provenance)


def _darshan_cycle(log, min_compute_s: float | None) -> dict:
    """One log's compute/I/O cycle (work s, volume GB per burst) with its provenance entry."""
    from iosched.importers import darshan as dx

    where = log.name
    mod = next((m for m in dx.DXT_MODULES if log.dxt.get(m)), None)
    if mod is None:
        raise InstanceError(f"{where}: no DXT timeline (DXT_MPIIO or DXT_POSIX) to find the I/O bursts "
                            f"(modules: {dx.module_list(log)})")
    if log.modules[mod]["partial"]:
        raise InstanceError(f"{where}: {mod} is partial (Darshan's trace buffer filled up): the timeline is cut off")
    segs = np.concatenate([np.concatenate([r.writes, r.reads]) for r in log.dxt[mod]])
    segs = segs[segs[:, 1] > 0]
    if not len(segs):
        raise InstanceError(f"{where}: {mod} holds no read or write of a byte")
    if (segs[:, 2] < 0).any() or (segs[:, 3] < segs[:, 2]).any():
        raise InstanceError(f"{where}: {mod} holds a segment ending before it starts or before the job")
    segs = segs[np.argsort(segs[:, 2], kind="stable")]
    start, end, length = segs[:, 2], segs[:, 3], segs[:, 1]
    reach = np.maximum.accumulate(end)
    run = max(log.end_s - log.start_s, log.run_time_s, float(reach[-1]))
    gap = 0.01 * run if min_compute_s is None else min_compute_s
    first = np.r_[0, np.flatnonzero(start[1:] - reach[:-1] >= gap) + 1]  # the segment opening each burst
    last = np.r_[first[1:] - 1, len(segs) - 1]
    b_start, b_end = start[first], reach[last]
    volumes = np.add.reduceat(length, first)
    bursts = len(first)
    computes = b_start - np.r_[0.0, b_end[:-1]]
    work = float(computes.sum()) / bursts
    if work <= 0:
        raise InstanceError(f"{where}: no compute time before or between its {bursts} I/O bursts ({mod})")

    def cv(x):
        return round(float(np.std(x) / np.mean(x)), 6) if len(x) > 1 and np.mean(x) > 0 else 0.0

    return {**log.provenance([mod], ["segments: start_time, end_time, length"]),
            "work_s": work, "volume_gb": float(volumes.sum()) / 1e9, "bursts": bursts,
            "min_compute_s": gap, "burst_time_s": round(float((b_end - b_start).sum()), 6),
            "spread": {"compute": cv(computes), "volume": cv(volumes)}}

__all__ = [
    "Application", "Platform", "PeriodicInstance", "paper_set", "generate", "load", "K_PRIME",
    "PAPER_TABLE3", "PAPER_TABLE4", "PAPER_TABLE5", "PAPER_FIGURE7", "BUILTIN",
]
