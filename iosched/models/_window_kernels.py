"""The numba kernels of the exact window front, imported only when a front is computed
(``import iosched`` does not load numba). Each has its one signature, so importing this module
compiles them (or loads them from numba's cache): the methods built on the front import it as their
``prepare`` (:func:`iosched.heuristics.window.load_front_kernels`)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit("int64[::1](int64[::1], int64, int64, int64, int64, int64, int64)", cache=True)
def merge_shifted(keys, shift, dn, db, n_cap, b_cap, stride):
    """Sorted union of ``keys`` and ``keys + shift`` (pairs staying within the capacity)."""
    out = np.empty(2 * keys.shape[0], np.int64)
    i = j = k = 0
    m = keys.shape[0]
    shifted = 0
    while i < m or j < m:
        if j < m:
            n, b = keys[j] // stride, keys[j] % stride
            if n + dn > n_cap or b + db > b_cap:
                j += 1
                continue
            shifted = keys[j] + shift
        if j >= m or (i < m and keys[i] < shifted):
            v = keys[i]
            i += 1
        elif i < m and keys[i] == shifted:
            v = keys[i]
            i += 1
            j += 1
        else:
            v = shifted
            j += 1
        out[k] = v
        k += 1
    return out[:k]


@njit("int64[::1](int64[:, :])", cache=True)
def nondominated_sorted(V):
    """Indices of the non-dominated rows of V (distinct rows sorted lexicographically descending,
    all columns maximised: only an earlier row can dominate a later one)."""
    n, d = V.shape
    keep = np.empty(n, np.int64)
    size = 0
    for k in range(n):
        dominated = False
        for a in range(size):
            j = keep[a]
            at_least = True
            for c in range(d):
                if V[j, c] < V[k, c]:
                    at_least = False
                    break
            if at_least:
                dominated = True
                break
        if not dominated:
            keep[size] = k
            size += 1
    return keep[:size]
