"""Covering the jobs' compute nodes with one configuration per forwarding node: the feasibility oracle of
the exact forwarding method (:mod:`iosched.models.forwarding_exact`).

Given, per class of interchangeable forwarding nodes, how many nodes it has and a list of
configurations (compute nodes of each job to place) allowed on each of them, :func:`cover` decides
whether one allowed configuration per node (the empty one is always allowed) can give every job at least
``need`` compute nodes, and returns such a choice. Covering with *at least* is enough: the configurations
allowed under time thresholds form a down-set (:mod:`iosched.models.forwarding_configs`), so a cover can be
trimmed to exactly ``need`` without leaving it.

**The dynamic program.** One job (the one with the most compute nodes) is the value, the others the state:
after the first t nodes, V_t(x) is the most compute nodes of the value job over the choices whose other
jobs' coverages are at least x (componentwise, each capped at its need). Then V_0(0) = 0 and V_{t+1}(y) =
max over the allowed configurations c of V_t(max(y - c, 0)) + c_value, and the jobs are covered iff
V_T(need) >= need_value. V_t is non-increasing, so it is kept only at the capped sums R_t that choices
can reach (the value at any other x is the value at the least point of R_t above x): exact, and small when
configurations are coarse. A class's nodes past the total need are never used (each used node serves at
least one compute node) and are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np

NONE = np.iinfo(np.int64).min // 4  # V of a coverage no choice reaches


CHUNK = 2_000_000  # values gathered at once by the program (memory: 8 bytes each, twice)


Witness = list[tuple[int, np.ndarray]]  # (class, configuration) per node used


class TooLarge(Exception):
    """What the exact method would build passes its limit (the message says what and how large)."""


@dataclass
class Step:
    """One node of the program: its class, the configurations allowed on it, the reachable capped sums
    before it and, per reachable sum after it, the configuration chosen (for the witness)."""

    cls: int
    configs: np.ndarray
    reach: list[np.ndarray]
    choice: np.ndarray | None = None
    source: list[np.ndarray] | None = None


@overload
def cover(need: np.ndarray, classes: list[tuple[int, np.ndarray]], witness: Literal[False] = False,
          max_work: int = 10**9, expired: Callable[[], bool] | None = None) -> bool | None: ...
@overload
def cover(need: np.ndarray, classes: list[tuple[int, np.ndarray]], witness: Literal[True],
          max_work: int = 10**9, expired: Callable[[], bool] | None = None) -> Witness | None: ...
@overload
def cover(need: np.ndarray, classes: list[tuple[int, np.ndarray]], witness: bool,
          max_work: int = 10**9, expired: Callable[[], bool] | None = None) -> bool | Witness | None: ...
def cover(need: np.ndarray, classes: list[tuple[int, np.ndarray]], witness: bool = False,
          max_work: int = 10**9, expired: Callable[[], bool] | None = None) -> bool | Witness | None:
    """Can one configuration per node cover ``need``? ``classes`` lists (nodes, configurations P x k) per
    class; returns None if not, else True, or with ``witness`` the list of (class, configuration) per node
    used (empty nodes left out). TooLarge when a step would gather more than ``max_work`` values;
    TimeoutError when ``expired()`` (checked before each node) says so."""
    need = np.asarray(need, dtype=np.int64)
    k = len(need)
    if k == 0:
        return [] if witness else True
    v = int(np.argmax(need))
    state = [d for d in range(k) if d != v]
    total = int(need.sum())
    reach = [np.zeros(1, dtype=np.int64) for _ in state]
    values = np.zeros((1,) * len(state), dtype=np.int64)
    steps: list[Step] = []
    for index, (count, configs) in enumerate(classes):
        configs = np.asarray(configs, dtype=np.int64).reshape(-1, k)
        configs = configs[configs.any(axis=1)]
        if not len(configs):
            continue
        configs = np.vstack([np.zeros((1, k), dtype=np.int64), configs])  # the empty node
        for _ in range(min(count, total)):
            if expired is not None and expired():
                raise TimeoutError("the time limit stopped the covering program")
            step = Step(index, configs, reach)
            if len(configs) * values.size > max_work:
                raise TooLarge(f"a step of the covering program would gather {len(configs)} x {values.size} "
                               f"values, past {max_work}")
            reach, values = _advance(configs, v, state, need, reach, values, step if witness else None)
            steps.append(step)
    at = tuple(int(np.searchsorted(r, need[d])) for r, d in zip(reach, state))
    if any(i >= len(r) or r[i] != need[d] for i, r, d in zip(at, reach, state)) or values[at] < need[v]:
        return None
    if not witness:
        return True
    return _backtrack(steps, at)


def _advance(configs: np.ndarray, v: int, state: list[int], need: np.ndarray, reach: list[np.ndarray],
             values: np.ndarray, step: Step | None) -> tuple[list[np.ndarray], np.ndarray]:
    """One more node: the new reachable sums and V (module docstring), choices recorded in ``step``."""
    new_reach = [r if len(r) == need[d] + 1 else np.unique(np.minimum(r[:, None] + configs[:, d][None, :], need[d]))
                 for r, d in zip(reach, state)]
    # per configuration and new sum y: the index of the least old sum >= max(y - c, 0) (len(r): none); every sum
    # 0 .. need reached: the sum itself
    gather = [np.maximum(nr[None, :] - configs[:, d][:, None], 0) if len(r) == need[d] + 1 else
              np.searchsorted(r, np.maximum(nr[None, :] - configs[:, d][:, None], 0))
              for r, nr, d in zip(reach, new_reach, state)]
    padded = np.pad(values, [(0, 1)] * len(state), constant_values=NONE) if state else values
    if not state:
        candidates = values + configs[:, v]
        best = candidates.argmax()
        new_values = candidates[best]
    else:
        size = [len(nr) for nr in new_reach]
        new_values = np.full(size, NONE, dtype=np.int64)
        best = np.zeros(size, dtype=np.int64)
        chunk = max(1, CHUNK // int(np.prod(size)))
        for a in range(0, len(configs), chunk):  # a block of configurations at a time: memory stays bounded
            b = min(a + chunk, len(configs))
            index = tuple(g[a:b].reshape([b - a] + [n if e == d else 1 for e, n in enumerate(size)])
                          for d, g in enumerate(gather))
            candidates = padded[index] + configs[a:b, v].reshape([b - a] + [1] * len(state))
            candidates = np.broadcast_to(candidates, [b - a] + size)
            pick = candidates.argmax(axis=0)
            top = np.take_along_axis(candidates, pick[None], axis=0)[0]
            better = top > new_values
            new_values = np.where(better, top, new_values)
            best = np.where(better, pick + a, best)
    new_values = np.where(new_values < 0, NONE, new_values)
    if step is not None:
        step.choice = best
        step.source = [g for g in gather]
    return new_reach, new_values


def _backtrack(steps: list[Step], at: tuple[int, ...]) -> Witness:
    out = []
    for step in reversed(steps):
        assert step.choice is not None and step.source is not None  # (recorded by cover with a witness)
        p = int(step.choice[at]) if at else int(step.choice)
        c = step.configs[p]
        if c.any():
            out.append((step.cls, c))
        at = tuple(int(g[p, i]) for g, i in zip(step.source, at))
    return out
