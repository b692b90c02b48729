"""The exact ILU(0) elimination on the host, shared by the reference kernels of Ilu and Ic.

ILU(0) keeps the sparsity pattern of A. Row by row (the IKJ variant of Gaussian elimination),
each entry left of the diagonal becomes l_ik = a_ik / u_kk, and row k's upper part, restricted
to row i's pattern, is subtracted: a_ij -= l_ik u_kj. Rows that need no unfinished row are
independent, so the rows are grouped by level (components.level_set) and each step eliminates
the r-th entry left of the diagonal of every row of one level at once: one vectorized numpy
step per (level, r), no loop over rows. A 2D five-point matrix of 700^2 rows has 1399 levels.

Memory stays proportional to the factors: the updates a_ij -= l_ik u_kj are found by walking,
for each l_ik, the shorter of row k's upper part and row i's part right of l_ik (an arrow
matrix's full row is never walked once per row), in chunks of at most :data:`CHUNK`
candidates, and only the updates that hit a stored a_ij are kept. A pattern whose elimination
needs more than :data:`WORK_PER_ENTRY` candidates per stored entry (dense blocks, where ILU(0)
is as costly as a dense LU) is refused at once with an error that says so.

Zero and tiny pivots (|u_ii| <= :func:`pivot_floor` ||a_i||_1, a_i row i of A) are replaced by
that floor with u_ii's sign (PETSc's nonzero shift, SPARSKIT's ILUT replacement), when
``shift_pivots``; each pivot is final, and replaced, once its level is eliminated, before any
row of a later level divides by it.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.core.factorization.factorization import EliminationTooCostly, pivot_floor
from ginkpy.reference.factorization.patterns import floor_pivots

CHUNK = 1 << 22  # candidate updates examined at once
WORK_PER_ENTRY = 64  # most candidate updates per stored entry of A (and at least MIN_WORK)
MIN_WORK = 1 << 24


def ranges(begins: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The concatenated index ranges begins[r]:ends[r] and their lengths."""
    lengths = ends - begins
    offsets = np.repeat(begins - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + offsets, lengths


def add_diagonal(m: sp.csr_matrix) -> sp.csr_matrix:
    """``m`` (square, sorted indices) with an explicit zero stored on every diagonal position it
    lacks (Ginkgo's add_diagonal_elements); ``m`` itself when none is missing."""
    n = m.shape[0]
    rows = np.repeat(np.arange(n), np.diff(m.indptr))
    has = np.zeros(n, bool)
    has[rows[m.indices == rows]] = True
    if has.all():
        return m
    missing = np.flatnonzero(~has)
    # the new entries go before the first column greater than the row
    at = (m.indptr[:-1] + np.bincount(rows[m.indices < rows], minlength=n))[missing]
    indices = np.insert(m.indices, at, missing)
    data = np.insert(m.data, at, 0)
    indptr = m.indptr + np.concatenate([[0], np.cumsum(~has)])
    return sp.csr_matrix((data, indices, indptr), shape=m.shape)


def _diagonal(m: sp.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """The position of every row's diagonal entry (every row stores one: see add_diagonal)."""
    return (m.indptr[:-1] + np.bincount(rows[m.indices < rows], minlength=m.shape[0])).astype(np.int64)


class _Positions:
    """Positions of entries (row, col) in a CSR matrix's arrays, -1 where none is stored."""

    def __init__(self, m: sp.csr_matrix) -> None:
        self.numbered = sp.csr_matrix((np.arange(1, m.nnz + 1, dtype=np.int64), m.indices, m.indptr),
                                      shape=m.shape)

    def __call__(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        if rows.size == 0:
            return np.zeros(0, np.int64)
        return np.asarray(self.numbered[rows, cols]).ravel() - 1


def _updates(m: sp.csr_matrix, rows: np.ndarray, diag: np.ndarray, lower: np.ndarray, name: str):
    """The updates a_ij -= l_ik u_kj of ILU(0) as (o, q, t): o the number of l_ik among
    ``lower``, q the position of u_kj, t that of a_ij; sorted by o."""
    ptrs, cols = m.indptr.astype(np.int64), m.indices
    l_rows, l_cols = rows[lower], cols[lower]
    # walk the shorter side: row k's entries right of its diagonal, or row i's right of l_ik
    from_u = ptrs[l_cols + 1] - diag[l_cols] - 1
    from_row = ptrs[l_rows + 1] - lower - 1
    walk_u = from_u <= from_row
    cost = np.where(walk_u, from_u, from_row)
    work = int(cost.sum())
    limit = max(WORK_PER_ENTRY * m.nnz, MIN_WORK)
    if work > limit:
        longest = int(np.argmax(np.diff(ptrs)))
        raise EliminationTooCostly(
            f"{name}: eliminating this sparsity pattern takes {work:.2e} candidate updates, more than "
            f"{WORK_PER_ENTRY} per stored entry (row {longest} has {int(np.diff(ptrs)[longest])} entries: dense rows "
            f"or blocks make ILU(0) as costly as a dense LU); use gk.factorization.ParIlu, whose memory is that of "
            f"the factors")
    find = _Positions(m)
    found = []
    bounds = np.searchsorted(np.cumsum(cost), np.arange(CHUNK, work + CHUNK, CHUNK), side="right")
    start = 0
    for end in np.unique(np.concatenate([bounds, [lower.size]])):
        o = np.arange(start, end)
        start = end
        ou, orow = o[walk_u[o]], o[~walk_u[o]]
        # row k's upper part: q walks it, t is looked up in row i
        q, lengths = ranges(diag[l_cols[ou]] + 1, ptrs[l_cols[ou] + 1])
        o1 = np.repeat(ou, lengths)
        t = find(l_rows[o1], cols[q])
        hit = t >= 0
        o1, q1, t1 = o1[hit], q[hit], t[hit]
        # row i right of l_ik: t walks it, q is looked up in row k
        t, lengths = ranges(lower[orow] + 1, ptrs[l_rows[orow] + 1])
        o2 = np.repeat(orow, lengths)
        q = find(l_cols[o2], cols[t])
        hit = q >= 0
        found.append((np.concatenate([o1, o2[hit]]), np.concatenate([q1, q[hit]]), np.concatenate([t1, t[hit]])))
    o, q, t = (np.concatenate([f[i] for f in found]) if found else np.zeros(0, np.int64) for i in range(3))
    order = np.argsort(o, kind="stable")
    return o[order], q[order], t[order]


def _depths(rows: np.ndarray, cols: np.ndarray, lower: np.ndarray, o: np.ndarray, t: np.ndarray) -> np.ndarray:
    """When each l_ik is final within its row: 0 when no update of the row reaches it, else one
    more than the deepest l_ik' whose update does."""
    depth = np.zeros(lower.size, dtype=np.int64)
    into_l = np.flatnonzero(cols[t] < rows[t])
    if into_l.size == 0:
        return depth
    target = np.searchsorted(lower, t[into_l])  # the number of the l_ij updated
    l_rows = rows[lower]
    rank = target - np.searchsorted(l_rows, l_rows[target])  # its place among its row's l entries
    order = np.argsort(rank, kind="stable")
    source, target, rank = o[into_l][order], target[order], rank[order]
    cuts = np.flatnonzero(np.diff(rank)) + 1
    # the entries left of the diagonal of a row, in column order: a source is left of its target
    for s, e in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [rank.size]])):
        np.maximum.at(depth, target[s:e], depth[source[s:e]] + 1)
    return depth


def ilu0_values(exec, m: sp.csr_matrix, name: str, shift_pivots: bool = True):
    """The ILU(0) values of a square CSR matrix with sorted indices and every diagonal entry
    stored, in its own pattern (L's strictly lower entries and U's upper entries in one array,
    float64 or complex128), the diagonal positions and the rows whose pivots were replaced
    (``shift_pivots``; see the module). A pivot that is zero or not finite after that raises a
    ValueError naming the row."""
    n = m.shape[0]
    ptrs, cols = m.indptr.astype(np.int64), m.indices
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptrs))
    diag = _diagonal(m, rows)
    lower = np.flatnonzero(cols < rows)  # the positions of the l_ik, numbered 0 .. len(lower) - 1
    l_rows, l_cols = rows[lower], cols[lower]
    o, q, t = _updates(m, rows, diag, lower, name)
    # when l_ik is final: its row's level, then its depth within the row
    level = exec.host.run("components.level_set.compute_levels", _strict_lower_ptrs(diag, ptrs), l_cols)
    depth = _depths(rows, cols, lower, o, t)
    step = level[l_rows] * (int(depth.max(initial=0)) + 1) + depth
    order = np.argsort(step, kind="stable")
    bounds = np.flatnonzero(np.diff(step[order], prepend=-1, append=step.max(initial=0) + 1))
    step_levels = level[l_rows[order[bounds[:-1]]]] if lower.size else np.zeros(0, np.int64)
    # the updates in the order of their l_ik's steps: o is sorted, so each l_ik's updates are a
    # contiguous run, taken in the order of the l_ik's
    runs = np.zeros(lower.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(o, minlength=lower.size), out=runs[1:])
    update, counts = ranges(runs[order], runs[order + 1])
    update_bounds = np.concatenate([[0], np.cumsum(counts)])[bounds]
    up, uq, ut = lower[o[update]], q[update], t[update]
    p_sorted, pivot = lower[order], diag[l_cols[order]]
    vals = m.data.astype(np.result_type(m.data.dtype, np.float64))
    # the rows by level, to replace each level's tiny pivots once they are final
    by_level = np.argsort(level, kind="stable")
    level_ends = np.searchsorted(level[by_level], np.arange(int(level.max(initial=-1)) + 2))
    floor = pivot_floor(vals.dtype) * np.asarray(abs(m).sum(axis=1)).ravel()
    shifted = []

    def shift(first_level: int, end_level: int) -> None:
        if shift_pivots:
            done = by_level[level_ends[first_level]:level_ends[end_level]] if end_level > first_level else by_level[:0]
            shifted.append(done[floor_pivots(vals, diag[done], floor[done])])

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        finished = 0  # the levels whose pivots are final and replaced
        for s in range(len(bounds) - 1):
            if step_levels[s] > finished:
                shift(finished, int(step_levels[s]))
                finished = int(step_levels[s])
            a, b = bounds[s], bounds[s + 1]
            # l_ik = a_ik / u_kk
            vals[p_sorted[a:b]] /= vals[pivot[a:b]]
            # a_ij -= l_ik u_kj (several l_ik of a row may update the same a_ij in one step)
            c, d = update_bounds[s], update_bounds[s + 1]
            np.subtract.at(vals, ut[c:d], vals[up[c:d]] * vals[uq[c:d]])
        shift(finished, len(level_ends) - 1)
    pivots = vals[diag]
    bad = np.flatnonzero((pivots == 0) | ~np.isfinite(pivots))
    if bad.size:
        raise ValueError(f"{name} breaks down: the pivot of row {bad[0]} is {pivots[bad[0]]} (zero or not finite); "
                         f"scale the matrix (its entries overflow), or use gk.factorization.ParIlu")
    return vals, diag, np.sort(np.concatenate(shifted)) if shifted else np.zeros(0, np.int64)


def _strict_lower_ptrs(diag: np.ndarray, ptrs: np.ndarray) -> np.ndarray:
    """Row pointers of the strictly lower part (the entries before each row's diagonal)."""
    out = np.zeros(diag.shape[0] + 1, dtype=np.int64)
    np.cumsum(diag - ptrs[:-1], out=out[1:])
    return out


def _split(m: sp.csr_matrix, vals: np.ndarray, diag: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """L (its unit diagonal stored) and U from the combined values in m's pattern."""
    n = m.shape[0]
    rows = np.repeat(np.arange(n), np.diff(m.indptr))
    in_l = m.indices <= rows
    l_vals = vals[in_l]
    l_ptrs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(diag - m.indptr[:-1] + 1, out=l_ptrs[1:])
    l_vals[l_ptrs[1:] - 1] = 1.0
    u_ptrs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(m.indptr[1:] - diag, out=u_ptrs[1:])
    in_u = m.indices >= rows
    return (sp.csr_matrix((l_vals, m.indices[in_l], l_ptrs), shape=m.shape),
            sp.csr_matrix((vals[in_u], m.indices[in_u], u_ptrs), shape=m.shape))


def ilu0(exec, m: sp.csr_matrix, name: str = "ILU(0)", shift_pivots: bool = True):
    """ILU(0) of a square CSR matrix with sorted indices: L unit lower (its diagonal of ones
    stored) and U upper, both in float64 (complex128 for complex values) with the pattern of
    ``m`` and a stored diagonal (a missing diagonal entry is added as a zero first), and the
    rows whose pivots were replaced (see the module)."""
    m = add_diagonal(m)
    vals, diag, shifted = ilu0_values(exec, m, name, shift_pivots)
    return (*_split(m, vals, diag), shifted)


def host_matrix(exec, a) -> sp.csr_matrix:
    """A Csr of ``exec`` as a scipy CSR on the host."""
    row_ptrs, col_idxs, values = exec.to_host(a.row_ptrs, a.col_idxs, a.values)
    return sp.csr_matrix((values, col_idxs, row_ptrs), shape=a.shape)


def to_csr_arrays(exec, factor: sp.csr_matrix, dtype) -> tuple:
    """Row pointers, column indices and values of a host factor on ``exec`` (int32, ``dtype``)."""
    with np.errstate(over="ignore"):
        values = factor.data.astype(dtype, copy=False)
    if not np.isfinite(values).all():
        raise ValueError(f"the incomplete factors overflow {np.dtype(dtype)} (a tiny pivot): "
                         f"use float64, or scale the matrix")
    return (exec.from_host(factor.indptr.astype(np.int32, copy=False)),
            exec.from_host(factor.indices.astype(np.int32, copy=False)), exec.from_host(values))
