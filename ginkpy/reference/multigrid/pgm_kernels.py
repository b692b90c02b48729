"""Reference kernels of Pgm (parallel graph match aggregation), vectorized with numpy.

They define what the OpenCL kernels compute, bit for bit where the deterministic mode needs it:
each kernel reads only what was there before it ran, coarse entries are summed in a fixed order
(fine rows ascending, their columns ascending), and ties between equal weights are broken by a
hash of the edge (:func:`_edge_hash`), so the device gives the same aggregates and coarse matrix.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.core.multigrid.pgm import matching_stopped

UNAGGREGATED = -1
NONSYMMETRIC, TOO_LARGE = 0, 1  # entries of the flags array


def _rows(a) -> np.ndarray:
    """The row of each stored entry."""
    return np.repeat(np.arange(a.shape[0], dtype=np.int64), np.diff(a.row_ptrs))


def _edge_hash(i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """A 32-bit hash of the undirected edge {i, j}: the tie-break between equal weights, the same
    seen from both ends (so that the strongest edge of a region is chosen by both its rows)."""
    lo = np.minimum(i, j).astype(np.uint32)
    x = lo * np.uint32(0x9E3779B1) + np.maximum(i, j).astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x85EBCA6B)
    x ^= x >> np.uint32(13)
    x *= np.uint32(0xC2B2AE35)
    x ^= x >> np.uint32(16)
    return x


def start_pass(exec, n, threshold, sweeps):
    """The arrays a pass starts from, made on the executor without a blocking write: the
    aggregates (n, all -1: none yet), the matching state [threshold, n, 0 for each of ``sweeps``
    sweeps] (see core/multigrid/pgm.py: matching_stopped) and the flags [0, 0]."""
    state = np.zeros(2 + sweeps, dtype=np.int32)
    state[:2] = threshold, n
    return np.full(n, UNAGGREGATED, dtype=np.int32), state, np.zeros(2, dtype=np.int32)


def diagonal_scale(exec, a):
    """1 / |a_ii| per row, real (computed in float64, rounded once to A's real type; infinity
    where a_ii is zero or not stored): the scale of the weights."""
    real = np.finfo(a.dtype).dtype
    d = np.abs(sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape).diagonal()).astype(np.float64)
    with np.errstate(divide="ignore"):
        return np.where(d == 0, np.inf, 1.0 / d).astype(real)


def compute_weights(exec, a, scale, weights, flags, strongest_neighbor):
    """weights[e] of entry e = (i, j): (|a_ij| + |a_ji|) / 2 times min(scale_i, scale_j) (that
    is, over max(|a_ii|, |a_jj|), with the scale of :func:`diagonal_scale`; times 1 where both
    are infinite), a_ji = 0 where it is not stored; 0 on the diagonal; real (of A's real type)
    also for complex values. flags[NONSYMMETRIC] = 1 where the pattern is not symmetric (an
    a_ji not stored). strongest_neighbor: the first matching sweep's choice, each row's
    strongest neighbour (see find_strongest_neighbor), or the row itself where it has none."""
    n = a.shape[0]
    strongest_neighbor[...] = np.arange(n)
    if a.nnz == 0:
        return
    rows, cols = _rows(a), a.col_idxs.astype(np.int64)
    keys = rows * n + cols  # ascending: CSR rows in order, columns sorted
    pos = np.minimum(np.searchsorted(keys, cols * n + rows), keys.size - 1)
    found = keys[pos] == cols * n + rows
    real = weights.dtype
    absval = np.abs(a.values)
    sym = (absval + np.where(found, absval[pos], 0).astype(real)) * real.type(0.5)
    m = np.minimum(scale[rows], scale[cols])
    weights[...] = np.where(rows == cols, 0, sym * np.where(np.isinf(m), 1, m).astype(real)).astype(real)
    if not found.all():
        flags[NONSYMMETRIC] = 1
    edge = weights > 0
    best = _strongest(rows[edge], cols[edge], weights[edge], n)
    strongest_neighbor[best >= 0] = best[best >= 0]


def symmetrize(exec, a):
    """Row pointers, column indices and values of (|A| + |A^T|) / 2 (a host kernel: the graph
    that Pgm matches on where the pattern of A is not symmetric)."""
    s = sp.csr_matrix((np.abs(a.values), a.col_idxs, a.row_ptrs), shape=a.shape)
    s = ((s + s.T) * s.dtype.type(0.5)).tocsr()
    s.sort_indices()
    return s.indptr.astype(np.int32), s.indices.astype(np.int32), s.data.astype(a.dtype, copy=False)


def _strongest(rows, cols, w, n) -> np.ndarray:
    """Per row, the column of its largest (weight, edge hash, column) among the given entries,
    -1 for rows without any."""
    out = np.full(n, -1, dtype=np.int64)
    if rows.size:
        order = np.lexsort((cols, _edge_hash(rows, cols), w, rows))
        r = rows[order]
        last = np.r_[r[1:] != r[:-1], True]
        out[r[last]] = cols[order][last]
    return out


def find_strongest_neighbor(exec, a, weights, agg, strongest_neighbor, state, sweep):
    """Matching sweep ``sweep`` (nothing where the matching stopped before it, see
    core/multigrid/pgm.py: matching_stopped):
    for each unaggregated row i its strongest unaggregated neighbour j (largest weight, ties by
    the edge hash, then the larger column); if all its neighbours are aggregated, -2 - c with c
    its strongest aggregated neighbour (i joins c's aggregate); if it has none, i itself.
    Neighbours are the entries of positive weight."""
    if matching_stopped(state, sweep):
        return
    n = a.shape[0]
    rows, cols = _rows(a), a.col_idxs.astype(np.int64)
    edge = (weights > 0) & (agg[rows] == UNAGGREGATED)
    free = edge & (agg[cols] == UNAGGREGATED)
    taken = edge & ~free
    best_free = _strongest(rows[free], cols[free], weights[free], n)
    best_taken = _strongest(rows[taken], cols[taken], weights[taken], n)
    out = np.where(best_free >= 0, best_free, np.where(best_taken >= 0, -2 - best_taken, np.arange(n)))
    unagg = agg == UNAGGREGATED
    strongest_neighbor[unagg] = out[unagg]


def match_edge(exec, strongest_neighbor, agg, state, sweep):
    """Matching sweep ``sweep`` (nothing where the matching stopped before it): unaggregated
    rows i and j that are each other's strongest neighbour form the aggregate named i (i <= j);
    a row with no neighbour its own; a row whose neighbours are all aggregated joins the
    aggregate of its strongest one. state[2 + sweep] counts the rows aggregated."""
    if matching_stopped(state, sweep):
        return
    i = np.flatnonzero(agg == UNAGGREGATED)
    s = strongest_neighbor[i].astype(np.int64)
    new = agg.copy()
    join = s <= -2
    new[i[join]] = agg[-2 - s[join]]
    pair = ~join & (s >= 0)
    i, s = i[pair], s[pair]
    mutual = (strongest_neighbor[s] == i) & (i <= s)
    new[i[mutual]] = i[mutual]
    new[s[mutual]] = i[mutual]
    state[2 + sweep] = int(np.count_nonzero(agg == UNAGGREGATED) - np.count_nonzero(new == UNAGGREGATED))
    agg[...] = new


def assign_to_exist_agg(exec, a, weights, agg, intermediate_agg):
    """Each row still unaggregated joins the aggregate of its strongest aggregated neighbour,
    or forms its own where it has none. Writes ``intermediate_agg`` (then copied to ``agg``) or,
    where that is None, ``agg`` in place; here both read only the values from before the call."""
    n = a.shape[0]
    rows, cols = _rows(a), a.col_idxs.astype(np.int64)
    cand = (weights > 0) & (agg[rows] == UNAGGREGATED) & (agg[cols] != UNAGGREGATED)
    best = _strongest(rows[cand], cols[cand], weights[cand], n)
    left = np.flatnonzero(agg == UNAGGREGATED)
    new = agg.copy()
    new[left] = np.where(best[left] >= 0, agg[np.maximum(best[left], 0)], left)
    if intermediate_agg is not None:
        intermediate_agg[...] = new
    agg[...] = new


def find_aggregates(exec, a, agg, member_ptrs, flags):
    """Aggregate names (their root rows) -> 0, 1, ... in ascending order of the roots, in agg.
    Returns (agg_ptrs, agg_rows, bounds, fine_ptrs, sizes): the rows of each aggregate
    (pointers, rows ascending within each), bounds[I] = the entries of A in the rows of the
    aggregates before I (where the Galerkin product may write coarse row I), fine_ptrs the
    pointers of the members of each aggregate where row r of A stands for the members
    member_ptrs[r] to member_ptrs[r + 1] (the rows of the first pass's aggregate r, in a second
    pass; None without member_ptrs) and sizes = [aggregates, entries of A, members]. The arrays
    may be longer than the aggregates need (a device's are sized by the rows of A): only the
    first sizes[0] + 1 pointers count. flags[TOO_LARGE] = 1 where a device could not sort the
    rows of an aggregate (too many: the host sorts them, sort_aggregates)."""
    n = agg.size
    used = np.zeros(n + 1, dtype=np.int64)
    used[agg] = 1
    index = np.cumsum(used) - used
    agg[...] = index[agg]
    m = int(used.sum())
    counts = np.bincount(agg, minlength=m)
    agg_ptrs = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    agg_rows = np.argsort(agg, kind="stable").astype(np.int32)
    lengths = np.bincount(agg, weights=np.diff(a.row_ptrs), minlength=m).astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    fine_ptrs = None
    fine_total = 0
    if member_ptrs is not None:
        fine = np.bincount(agg, weights=np.diff(member_ptrs), minlength=m).astype(np.int64)
        fine_ptrs = np.concatenate([[0], np.cumsum(fine)]).astype(np.int32)
        fine_total = int(fine_ptrs[-1])
    return agg_ptrs, agg_rows, bounds, fine_ptrs, np.array([m, bounds[-1], fine_total], dtype=np.int32)


def sort_aggregates(exec, agg, num_agg):
    """The rows of each aggregate (a host kernel: where a device could not sort those of a
    large one): pointers (num_agg + 1) and the rows, ascending within each aggregate."""
    ptrs = np.zeros(num_agg + 1, dtype=np.int32)
    ptrs[1:] = np.cumsum(np.bincount(agg, minlength=num_agg))
    return ptrs, np.argsort(agg, kind="stable").astype(np.int32)


def compose(exec, agg, agg_ptrs, agg_rows, coarse_agg, coarse_ptrs, coarse_rows, fine_ptrs, sizes, flags):
    """Two passes as one (agg, agg_ptrs, agg_rows: the first pass, coarse_*: the second, on the
    first's coarse matrix): returns the composed aggregates, a new array (fine[i] =
    coarse_agg[agg[i]]; ``agg`` is left as it is, so that a pass run again composes from it),
    and the rows of each two-pass aggregate (pointers ``fine_ptrs`` and ``sizes`` from
    find_aggregates of the second pass), ascending; flags[TOO_LARGE] = 1 where a device could not
    sort those of an aggregate."""
    fine = coarse_agg[agg].astype(agg.dtype)
    return fine, np.argsort(fine, kind="stable").astype(np.int32)


def compute_coarse(exec, a, agg, agg_ptrs, agg_rows, bounds, sizes):
    """The Galerkin product P^T A P for the piecewise constant P of ``agg``: coarse entry (I, J)
    sums a_ij over the rows i of I (ascending) and their entries j in J (in the order stored).
    Returns (row_ptrs, starts, cols, vals, sizes): row I has row_ptrs[I + 1] - row_ptrs[I]
    entries (columns ascending) at cols/vals[starts[I]:], sizes = [entries]; a device may
    leave gaps between rows (starts from ``bounds``), which :func:`pack` closes. ``bounds`` and
    ``sizes`` (sizes[0]: the number of aggregates) come from find_aggregates."""
    rows, cols = _rows(a), agg[a.col_idxs].astype(np.int64)
    coarse_rows = agg[rows].astype(np.int64)
    m = int(sizes[0])
    # entries in the order (I, J), within each (i, j) ascending: CSR order, stably sorted
    order = np.lexsort((cols, coarse_rows))
    keys = coarse_rows[order] * max(m, 1) + cols[order]
    first = np.r_[True, keys[1:] != keys[:-1]] if keys.size else np.zeros(0, bool)
    owner = np.cumsum(first) - 1
    vals = np.zeros(int(first.sum()), dtype=a.values.dtype)
    np.add.at(vals, owner, a.values[order])
    c_rows, c_cols = coarse_rows[order][first], cols[order][first]
    ptrs = np.concatenate([[0], np.cumsum(np.bincount(c_rows, minlength=m))]).astype(np.int32)
    return ptrs, ptrs[:-1].copy(), c_cols.astype(np.int32), vals, np.array([c_cols.size], dtype=np.int32)


def pack(exec, row_ptrs, starts, cols, vals, num_agg, nnz, scale):
    """The coarse matrix of compute_coarse as CSR arrays (row pointers, columns, values), the
    values multiplied by ``scale``."""
    ptrs = np.array(row_ptrs[:num_agg + 1], dtype=np.int32)
    take = np.repeat(starts[:num_agg].astype(np.int64) - ptrs[:-1], np.diff(ptrs)) + np.arange(nnz)
    return ptrs, cols[take].astype(np.int32), (vals[take] * vals.dtype.type(scale)).astype(vals.dtype)
