"""Reference kernels of the batched ILU(0): the diagonal positions of the shared pattern (on
the host), the numeric factorization of every item vectorized over the items, and the apply.

The factorization is the IKJ elimination of each row, l_ik = a_ik / u_kk, then a_ij -= l_ik u_kj
for the j > k of row k that row i's pattern holds. Rows of one level of L's dependency graph
(components.level_set) are independent, and within a row the entries left of the diagonal are
eliminated in column order; so step s eliminates the r-th such entry of every row of one level,
for all items at once: one vectorized numpy step per (level, r), the items the second axis. The
operations on each value come in the order of the OpenCL kernel (row by row).
"""
from __future__ import annotations

import types

import numpy as np

from ginkpy.reference.components.batch_solver import item_preconditioners
from ginkpy.reference.factorization.elimination import ranges
from ginkpy.reference.factorization.patterns import diagonal_positions as _positions
from ginkpy.reference.factorization.patterns import positions


def diagonal_positions(exec, row_ptrs, col_idxs):
    """The position of each row's diagonal entry in the pattern (int32) and the first row
    without a stored one (-1: none)."""
    n = row_ptrs.shape[0] - 1
    diag, missing = _positions(types.SimpleNamespace(shape=(n, n), row_ptrs=row_ptrs, col_idxs=col_idxs))
    return diag.astype(np.int32), missing


def factorize(exec, ilu):
    """ILU(0) of every item in place of ``ilu.values`` (N, nnz); returns per item the first row
    whose pivot u_ii is zero or not finite (-1 where every pivot is valid)."""
    import scipy.sparse as sp
    n = ilu.common_size[0]
    ptrs, cols, diag = ilu.row_ptrs.astype(np.int64), ilu.col_idxs, ilu.diag.astype(np.int64)
    vals = ilu.values.T  # (nnz, N): a step takes whole rows
    rows = np.repeat(np.arange(n), np.diff(ptrs))
    lower = np.flatnonzero(cols < rows)
    l_rows, l_cols = rows[lower], cols[lower]
    # the updates a_ij -= l_ik u_kj: the l_ik numbered o, u_kj at q, a_ij at t (where row i has j)
    q, lengths = ranges(diag[l_cols] + 1, ptrs[l_cols + 1])
    o = np.repeat(np.arange(lower.size), lengths)
    t = positions(sp.csr_matrix((np.ones(cols.size), cols, ptrs), shape=(n, n)), l_rows[o], cols[q])
    kept = t >= 0
    o, q, t = o[kept], q[kept], t[kept]
    # the step of each l_ik: its row's level in L's dependency graph, then its rank in the row
    strict_ptrs = np.concatenate([[0], np.cumsum(diag - ptrs[:-1])])
    level = exec.host.run("components.level_set.compute_levels", strict_ptrs, l_cols)
    rank = lower - ptrs[l_rows]
    width = int(rank.max(initial=0)) + 1
    step = level[l_rows] * width + rank
    order = np.argsort(step, kind="stable")
    bounds = np.flatnonzero(np.diff(step[order], prepend=-1, append=step.max(initial=0) + 1))
    by_step = np.argsort(step[o], kind="stable")  # the updates, grouped by the step of their l_ik
    update_bounds = np.searchsorted(step[o][by_step], step[order][bounds[:-1]], side="left")
    update_bounds = np.append(update_bounds, o.size)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for s in range(len(bounds) - 1):
            p = lower[order[bounds[s]:bounds[s + 1]]]
            # l_ik = a_ik / u_kk
            vals[p] /= vals[diag[cols[p]]]
            u = by_step[update_bounds[s]:update_bounds[s + 1]]
            # a_ij -= l_ik u_kj (the targets of one step are distinct)
            vals[t[u]] -= vals[lower[o[u]]] * vals[q[u]]
        pivots = vals[diag].T  # (N, n)
        bad = (pivots == 0) | ~np.isfinite(pivots)
    return np.where(bad.any(axis=1), np.argmax(bad, axis=1), -1).astype(np.int32)


def apply(exec, ilu, b, x):
    # x_i = U_i^-1 (L_i^-1 b_i)
    for i, solve in enumerate(item_preconditioners(ilu, ilu.num_batch_items)):
        x.values[i] = solve(b.values[i])
