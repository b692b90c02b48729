"""Reference kernels of the triangular solvers LowerTrs and UpperTrs.

``generate`` keeps the triangle of a Csr matrix (entries of the other triangle are ignored)
with its diagonal; ``solve`` substitutes (SciPy's spsolve_triangular), forward for lower,
backward for upper. A Dense system matrix is solved by the dense TRSV kernel instead and needs
no preparation. The ``jacobi_*`` kernels are the "jacobi" algorithm: x <- D^-1 (b - N x).
"""
from __future__ import annotations

import attrs
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve_triangular

from ginkpy.core.matrix.dense import Dense
from ginkpy.reference.solver.triangle import first_zero, split_triangle


@attrs.frozen
class Triangle:
    """The triangle scaled to a unit diagonal, T D^-1 (sorted CSR), which SciPy's substitution
    takes as it is (a non-unit diagonal would be rescaled into a new matrix at every solve),
    and D^-1 to scale the solution: T^-1 b = D^-1 (T D^-1)^-1 b."""

    lower: bool
    matrix: sp.csr_matrix
    inv_diag: np.ndarray


def generate(exec, a, lower, unit_diagonal):
    """The prepared triangle (None for Dense) and the first row with a zero diagonal (-1 if none)."""
    if isinstance(a, Dense):
        return None, -1 if unit_diagonal else first_zero(np.diagonal(a.values))
    n = a.shape[0]
    counts = np.diff(a.row_ptrs)
    ends = a.row_ptrs[1:] - 1 if lower else a.row_ptrs[:-1]  # where a sorted row of the triangle has its diagonal
    if n and counts.min() > 0 and np.array_equal(a.col_idxs[ends], np.arange(n)):
        # every row's diagonal is its last (lower) / first (upper) entry: a is the triangle itself
        # (the factors of a direct solver), checked and scaled in O(n) + one pass over the values
        diag = np.ones(n, a.dtype) if unit_diagonal else a.values[ends]
        zero_row = first_zero(diag)
        if zero_row >= 0:
            return None, zero_row
        inv_diag = 1 / diag
        values = a.values * inv_diag[a.col_idxs]
        values[ends] = 1
        triangle = sp.csr_matrix((values, a.col_idxs, a.row_ptrs), shape=a.shape)
        triangle.has_sorted_indices = True
        return Triangle(lower, triangle, inv_diag[:, None]), -1
    rows = np.repeat(np.arange(n, dtype=a.col_idxs.dtype), np.diff(a.row_ptrs))
    on_diagonal = a.col_idxs == rows
    if np.count_nonzero(on_diagonal) < n:  # a diagonal entry not stored (unit_diagonal, or singular)
        m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)
        strict, diag, zero_row = split_triangle(m, lower, unit_diagonal)
        if zero_row >= 0:
            return None, zero_row
        triangle = (strict @ sp.diags(1 / diag) + sp.eye(n, dtype=strict.dtype)).tocsr()
        triangle.sort_indices()
        return Triangle(lower, triangle, (1 / diag)[:, None]), -1
    diag = np.ones(n, a.dtype) if unit_diagonal else a.values[on_diagonal]
    zero_row = first_zero(diag)
    if zero_row >= 0:
        return None, zero_row
    inv_diag = 1 / diag
    # T D^-1 with its unit diagonal stored (SciPy's solver sets it in place: no new entries), in
    # one pass over the sorted rows: the entries of the triangle, scaled by their column
    keep = np.flatnonzero((a.col_idxs <= rows) if lower else (a.col_idxs >= rows))
    cols = a.col_idxs[keep]
    values = np.where(on_diagonal[keep], 1, a.values[keep] * inv_diag[cols]).astype(a.dtype, copy=False)
    triangle = sp.csr_matrix((values, cols, np.searchsorted(keep, a.row_ptrs)), shape=a.shape)
    triangle.has_sorted_indices = True
    return Triangle(lower, triangle, inv_diag[:, None]), -1


def update(exec, plan, a, lower, unit_diagonal) -> int:
    """The prepared triangle of ``a``'s new values (the pattern it was prepared from) written
    into ``plan``'s arrays; the first row with a zero diagonal (-1 if none)."""
    new, zero_row = generate(exec, a, lower, unit_diagonal)
    if zero_row >= 0:
        return zero_row
    plan.matrix.data[...] = new.matrix.data  # (the same pattern: the same entries)
    plan.inv_diag[...] = new.inv_diag
    return -1


def solve(exec, plan, b, x):
    # x = T^-1 b = D^-1 (T D^-1)^-1 b by substitution, rows in dependency order
    if b.values.size:
        y = spsolve_triangular(plan.matrix, b.values, lower=plan.lower, overwrite_A=True, unit_diagonal=True)
        x.values[...] = plan.inv_diag * y.reshape(x.shape)


def _strict(a, lower: bool) -> sp.csr_matrix:
    """The strict triangle of a Csr, kept in its cache."""
    key = "strict_lower" if lower else "strict_upper"
    if key not in a.cache:
        m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)
        a.cache[key] = (sp.tril(m, -1) if lower else sp.triu(m, 1)).tocsr()
    return a.cache[key]


def jacobi_generate(exec, a, unit_diagonal, inv_diag) -> int:
    """inv_diag = D^-1 (ones with ``unit_diagonal``); the first row whose diagonal entry is zero
    or not stored, -1 if none."""
    diag = np.ones(a.shape[0], a.dtype) if unit_diagonal else \
        sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape).diagonal()
    with np.errstate(divide="ignore", invalid="ignore"):  # complex 1 / 0 is (nan, nan)
        inv_diag.values[:, 0] = np.where(diag != 0, 1 / diag, 0)
    return first_zero(diag)


def jacobi_inverse_diagonal(exec, a, unit_diagonal, inv_diag):
    """inv_diag = D^-1, unchecked (the caller knows the diagonal is nonzero)."""
    jacobi_generate(exec, a, unit_diagonal, inv_diag)


def jacobi_initialize(exec, inv_diag, b, x):
    # x = D^-1 b
    x.values[...] = inv_diag.values * b.values


def jacobi_sweep(exec, a, lower, inv_diag, b, x, out):
    # out = D^-1 (b - N x)
    out.values[...] = inv_diag.values * (b.values - _strict(a, lower) @ x.values)


def jacobi_two_sweeps(exec, a, lower, inv_diag, b, out):
    # out = D^-1 (b - N D^-1 b): the first two sweeps from x = 0
    out.values[...] = inv_diag.values * (b.values - _strict(a, lower) @ (inv_diag.values * b.values))


def jacobi_three_sweeps(exec, a, lower, inv_diag, b, out):
    # out = D^-1 (b - N D^-1 (b - N D^-1 b)): the first three sweeps from x = 0
    strict = _strict(a, lower)
    second = inv_diag.values * (b.values - strict @ (inv_diag.values * b.values))
    out.values[...] = inv_diag.values * (b.values - strict @ second)


def jacobi_bound(exec, a, lower, unit_diagonal) -> np.ndarray:
    """[[q, work, bad]]: q = max_i |d_i|^-1 sum_{j in N_i} |a_ij| (N_i: the strict triangle's
    columns of row i; d_i = 1 with ``unit_diagonal``), a bound on the contraction of a Jacobi
    sweep in the max-norm, inf where a diagonal entry is zero or not stored; work = max_i
    sum_{j in N_i} (entries of row j), what a row of jacobi_three_sweeps reads; bad 1 where a
    diagonal entry is zero or not stored (not ``unit_diagonal``) or a value is not finite, else
    0. (The device leaves one such row per work-group: the caller takes the maxima.) Zeros for
    no rows."""
    n = a.shape[0]
    real = np.finfo(a.dtype).dtype
    if n == 0:
        return np.zeros((1, 3), real)
    strict = _strict(a, lower)
    with np.errstate(invalid="ignore", over="ignore"):
        off = abs(strict) @ np.ones(n)
    full = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)
    diag = np.ones(n) if unit_diagonal else np.abs(full.diagonal())
    work = sp.csr_matrix((np.ones(strict.nnz), strict.indices, strict.indptr), shape=a.shape) @ \
        np.diff(a.row_ptrs).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = float(np.max(np.where(diag != 0, off / np.where(diag != 0, diag, 1), np.inf)))
    bad = not np.isfinite(a.values).all() or not (diag != 0).all()
    return np.array([[q, work.max(), float(bad)]], real)
