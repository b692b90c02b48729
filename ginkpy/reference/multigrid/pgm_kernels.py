"""Reference kernels of Pgm (parallel graph match aggregation), vectorized with numpy.

They define what the OpenCL kernels compute, bit for bit where the deterministic mode needs it:
each kernel reads only what was there before it ran, coarse entries are summed in a fixed order
(fine rows ascending, their columns ascending), and ties between equal weights are broken by a
hash of the edge (:func:`_edge_hash`), so the device gives the same aggregates and coarse matrix.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

UNAGGREGATED = -1


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


def compute_weights(exec, a, diag, weights) -> bool:
    """weights[e] of entry e = (i, j): (|a_ij| + |a_ji|) / 2 / max(|a_ii|, |a_jj|) (divided by
    1 where both diagonal entries are 0), a_ji = 0 where it is not stored; 0 on the diagonal;
    real (of A's real type) also for complex values. Returns whether the pattern is symmetric
    (every a_ji stored)."""
    n = a.shape[0]
    if a.nnz == 0:
        return True
    rows, cols = _rows(a), a.col_idxs.astype(np.int64)
    keys = rows * n + cols  # ascending: CSR rows in order, columns sorted
    pos = np.minimum(np.searchsorted(keys, cols * n + rows), keys.size - 1)
    found = keys[pos] == cols * n + rows
    real = weights.dtype
    absval = np.abs(a.values)
    sym = (absval + np.where(found, absval[pos], 0).astype(real)) * real.type(0.5)
    d = np.abs(diag.values[:, 0])
    denom = np.maximum(d[rows], d[cols])
    denom = np.where(denom == 0, 1, denom).astype(real)
    weights[...] = np.where(rows == cols, 0, sym / denom).astype(real)
    return bool(found.all())


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


def find_strongest_neighbor(exec, a, weights, agg, strongest_neighbor):
    """For each unaggregated row i: its strongest unaggregated neighbour j (largest weight, ties
    by the edge hash, then the larger column); if all its neighbours are aggregated, -2 - c with
    c its strongest aggregated neighbour (i joins c's aggregate); if it has none, i itself.
    Neighbours are the entries of positive weight."""
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


def match_edge(exec, strongest_neighbor, agg):
    """Unaggregated rows i and j that are each other's strongest neighbour form the aggregate
    named i (i <= j); a row with no neighbour its own; a row whose neighbours are all aggregated
    joins the aggregate of its strongest one."""
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
    agg[...] = new


def count_unagg(exec, agg) -> int:
    """The number of unaggregated rows."""
    return int(np.count_nonzero(agg == UNAGGREGATED))


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


def renumber(exec, agg) -> int:
    """Aggregate names (their root rows) -> 0, 1, ... in ascending order; returns their count."""
    used = np.zeros(agg.size + 1, dtype=np.int64)
    used[agg] = 1
    index = np.cumsum(used) - used
    agg[...] = index[agg]
    return int(used.sum())


def compose(exec, agg, coarse_agg):
    """agg[i] = coarse_agg[agg[i]]: the aggregates of two passes as one."""
    agg[...] = coarse_agg[agg]


def find_aggregate_rows(exec, agg, num_agg):
    """The rows of each aggregate (the pattern of the restriction P^T): pointers (num_agg + 1)
    and the rows, ascending within each aggregate."""
    ptrs = np.zeros(num_agg + 1, dtype=np.int32)
    ptrs[1:] = np.cumsum(np.bincount(agg, minlength=num_agg))
    return ptrs, np.argsort(agg, kind="stable").astype(np.int32)


def compute_coarse(exec, a, agg, agg_ptrs, agg_rows, num_agg):
    """Row pointers, column indices (ascending) and values of the Galerkin product P^T A P for
    the piecewise constant P of ``agg``: entry (I, J) sums a_ij over i in I, j in J.

    In two steps, each a sum in a fixed order: B = A P (b_iJ: a_ij summed over the columns j of
    row i in J, ascending), then P^T B (c_IJ: b_iJ summed over the rows i of I, ascending)."""
    n = a.shape[0]
    rows, cols = _rows(a), agg[a.col_idxs].astype(np.int64)
    b_rows, b_cols, b_vals = _sum_duplicates(rows, cols, a.values, num_agg)
    # the rows of each aggregate in ascending order: position of each fine row in agg_rows
    rank = np.empty(n, dtype=np.int64)
    rank[agg_rows] = np.arange(n)
    order = np.lexsort((b_cols, rank[b_rows]))
    c_rows, c_cols, c_vals = _sum_duplicates(agg[b_rows[order]].astype(np.int64), b_cols[order],
                                             b_vals[order], num_agg)
    ptrs = np.zeros(num_agg + 1, dtype=np.int32)
    ptrs[1:] = np.cumsum(np.bincount(c_rows, minlength=num_agg))
    return ptrs, c_cols.astype(np.int32), c_vals


def _sum_duplicates(rows, cols, vals, m):
    """Entries (rows, cols, vals) with equal (row, col) summed in the order given, sorted by
    (row, col)."""
    keys = rows * m + cols
    unique, inverse = np.unique(keys, return_inverse=True)
    sums = np.zeros(unique.size, dtype=vals.dtype)
    np.add.at(sums, inverse, vals)
    return unique // m, unique % m, sums

