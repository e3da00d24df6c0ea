"""Filedomain instances to solve: :func:`platform` (an instance from a few numbers), the seed's Figure 2, the
sweep platform, a GPFS-like and a strided example, the seeded generator, and the built-in names :func:`load`
knows (the schema is :mod:`iosched.instances.filedomain`). Units: bytes, GB/s, seconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iosched.errors import InstanceError
from iosched.instances.filedomain import (
    MAX_AGGREGATORS,
    MAX_OFFSET,
    MAX_SERVERS,
    Bandwidth,
    FileDomainInstance,
    KiB,
    Locking,
    MiB,
)
from iosched.validate import choice, integer


def platform(servers: int, aggregators: int | list, stripe_size: int, region: tuple[int, int] | None = None,
             requests=None, aggregator_gbs: float = 1.0, server_gbs: float = 1.0, node_gbs: float | None = None,
             locking: str = "extent", block_size: int | None = None, acquire_s: float = 1e-4,
             revoke_s: float = 1e-3, first_server: int = 0, name: str = "filedomain") -> FileDomainInstance:
    """An instance with equal bandwidths everywhere (GB/s) and the default lock costs (s)."""
    nodes = tuple(range(aggregators)) if isinstance(aggregators, int) else tuple(aggregators)
    n_nodes = max(nodes) + 1
    bw = Bandwidth((aggregator_gbs,) * len(nodes), None if node_gbs is None else (node_gbs,) * n_nodes,
                   (server_gbs,) * servers)
    if requests is not None:
        requests = tuple(tuple((int(o), int(n)) for o, n in rank) for rank in requests)
        pieces = [(o, o + n) for rank in requests for o, n in rank if n]
        region = (min(p[0] for p in pieces), max(p[1] for p in pieces) - min(p[0] for p in pieces))
    if locking == "token" and block_size is None:
        block_size = stripe_size
    return FileDomainInstance(region[0], region[1], stripe_size, servers, nodes, bw, locking, acquire_s, revoke_s,
                              first_server, block_size, requests, name=name)


def paper_figure2(aggregators: int = 6) -> FileDomainInstance:
    """The seed's Figure 2: 3 servers, 12 stripes of 1 MiB from offset 0; 6 aggregators
    (panels a-c) or 5 (panel d, co-prime to the servers)."""
    return platform(3, aggregators, MiB, (0, 12 * MiB), name=f"paper:fig2{'d' if aggregators == 5 else ''}")


def template() -> FileDomainInstance:
    """A small instance to start from (``iosched show filedomain --template``): the seed's Figure 2, 12 stripes
    of 1 MiB on 3 servers, with 6 aggregators two to a node."""
    return platform(3, [a // 2 for a in range(6)], MiB, (0, 12 * MiB), node_gbs=1.5, name="example")


def sweep(servers: int, aggregators: int, stripes_per_server: int = 16, stripe_size: int = MiB) -> FileDomainInstance:
    """The sweep platform: S servers at 1 GB/s, P aggregators at 0.25 GB/s on their own nodes (so
    4 S aggregators saturate the servers), a region of 16 S stripes of 1 MiB from offset 0,
    0.1 ms per lock acquisition, 1 ms per conflict."""
    integer("servers", servers, 1, MAX_SERVERS)
    integer("aggregators", aggregators, 1, MAX_AGGREGATORS)
    integer("stripes_per_server", stripes_per_server, 1, MAX_OFFSET // (servers * stripe_size))
    return platform(servers, aggregators, stripe_size, (0, stripes_per_server * servers * stripe_size),
                    aggregator_gbs=0.25,
                    name=f"sweep:{servers}:{aggregators}" + (f":{stripes_per_server}" if stripes_per_server != 16
                                                             else ""))


def example_gpfs() -> FileDomainInstance:
    """A GPFS-like write: 8 servers, 4 MiB blocks as stripes and tokens, 12 aggregators two per node,
    a 100 MiB region starting at 3 MiB (not block-aligned)."""
    return platform(8, [a // 2 for a in range(12)], 4 * MiB, (3 * MiB, 100 * MiB), node_gbs=1.5, locking="token",
                    name="example:gpfs")


def example_requests() -> FileDomainInstance:
    """A strided write with holes: 8 ranks each writing 3 pieces of 300 KiB every 2.4 MiB, on 4 servers
    with 1 MiB stripes and 6 aggregators."""
    reqs = [[(r * 300 * KiB + i * 2400 * KiB, 300 * KiB) for i in range(3)] for r in range(6)]
    reqs += [[(7 * MiB + r * MiB + KiB, 500 * KiB)] for r in range(2)]
    return platform(4, 6, MiB, requests=reqs, name="example:requests")


BUILTIN = ["paper:fig2", "paper:fig2d", "example:gpfs", "example:requests", "sweep:S:P[:STRIPES_PER_SERVER]",
           "random:SEED[:S[:P[:MAX_STRIPES[:LOCKING[:requests]]]]]"]


def generate(seed: int, servers: int | None = None, aggregators: int | None = None, max_stripes: int = 64,
             locking: str = "extent", requests: bool = False) -> FileDomainInstance:
    """A random collective write; same seed, same instance.

    S in [2, 16] and P in [1, 4 S] unless given; a stripe size among 64 KiB, 1 MiB, 1.5 MiB
    (not a power of two) and 4 MiB; a region of 1..``max_stripes`` stripes starting at a
    random 4 KiB-aligned offset; bandwidths 0.5-2 GB/s (aggregators 0.5-2, servers 0.5-2,
    nodes holding two aggregators each with probability 1/2); acquisition 10-500 us,
    conflict 0.1-5 ms. With ``requests`` the region comes from 2-8 ranks writing 1-4
    strided pieces each (holes between them).
    """
    integer("seed", seed, None)
    integer("max_stripes", max_stripes, 1, 10**6)
    choice("locking", locking, tuple(Locking))
    if not isinstance(requests, bool):
        raise InstanceError(f"requests must be true or false, got {requests!r}")
    rng = np.random.default_rng(seed)
    S, u = int(rng.integers(2, 17)), rng.random()  # drawn always, so that a given size keeps the rest
    S = integer("servers", servers, 1, MAX_SERVERS) if servers is not None else S
    P = integer("aggregators", aggregators, 1, MAX_AGGREGATORS) if aggregators is not None else 1 + int(u * 4 * S)
    w = int(rng.choice([64 * KiB, MiB, 3 * MiB // 2, 4 * MiB]))
    offset = int(rng.integers(0, 4 * S)) * 4 * KiB * int(rng.integers(1, 64))
    length = int(rng.integers(1, max_stripes + 1)) * w - int(rng.integers(0, w // 4096)) * 4096
    nodes = [a // 2 for a in range(P)] if rng.random() < 0.5 else list(range(P))
    node_gbs = float(np.round(rng.uniform(0.5, 3), 2)) if nodes[-1] != P - 1 else None
    reqs = None
    if requests:
        ranks, pieces = int(rng.integers(2, 9)), int(rng.integers(1, 5))
        size = max(1, length // (ranks * pieces * 2))
        reqs = [[(offset + (i * ranks + r) * 2 * size + int(rng.integers(0, size)), size) for i in range(pieces)]
                for r in range(ranks)]
    inst = platform(S, nodes, w, (offset, length), reqs, float(np.round(rng.uniform(0.5, 2), 2)),
                    float(np.round(rng.uniform(0.5, 2), 2)), node_gbs, locking,
                    w * int(rng.choice([1, 2])) if locking == "token" else None,
                    float(np.round(rng.uniform(1e-5, 5e-4), 6)), float(np.round(rng.uniform(1e-4, 5e-3), 6)),
                    int(rng.integers(0, S)), name=_random_name(seed, S, P, max_stripes, locking, requests))
    return inst


def _random_name(seed, S, P, max_stripes, locking, requests) -> str:
    """random:SEED:S:P, then the options that differ from the defaults (so that the name loads back)."""
    tail = [str(max_stripes), locking, "requests"] if requests else [str(max_stripes), locking]
    while tail and tail[-1] in ("64", "extent"):
        tail.pop()
    return ":".join(["random", str(seed), str(S), str(P), *tail])


def load(spec: str) -> FileDomainInstance:
    """A built-in name (``paper:fig2``, ``paper:fig2d``, ``example:gpfs``, ``example:requests``,
    ``sweep:S:P[:STRIPES_PER_SERVER]``, ``random:SEED[:S[:P[:MAX_STRIPES[:LOCKING[:requests]]]]]``)
    or a JSON file."""
    if spec in ("paper:fig2", "paper:fig2d"):
        return paper_figure2(5 if spec.endswith("d") else 6)
    if spec == "example:gpfs":
        return example_gpfs()
    if spec == "example:requests":
        return example_requests()
    if spec.startswith("sweep:"):
        parts = spec[6:].split(":")
        if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
            raise InstanceError(f"built-in name must be sweep:S:P[:STRIPES_PER_SERVER] with integers, got {spec!r}")
        return sweep(*(int(p) for p in parts))
    if spec.startswith("random:"):
        parts = spec[7:].split(":")
        numbers, options = parts[:4], parts[4:]
        ok = 1 <= len(numbers) and all(p.isdigit() for p in numbers) and len(options) <= 2 and \
            (not options or options[0] in tuple(Locking)) and (len(options) < 2 or options[1] == "requests")
        if not ok:
            raise InstanceError(f"built-in name must be random:SEED[:S[:P[:MAX_STRIPES[:LOCKING[:requests]]]]], "
                                f"got {spec!r}")
        args = [int(p) for p in numbers] + [None] * (3 - len(numbers[1:]))
        kw = {"max_stripes": args[3]} if len(numbers) == 4 else {}
        return generate(args[0], args[1], args[2], **kw, locking=options[0] if options else "extent",
                        requests=len(options) == 2)
    if not Path(spec).is_file():
        raise InstanceError(f"no such instance file or built-in name: {spec!r}")
    return FileDomainInstance.from_json(Path(spec))
