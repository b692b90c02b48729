"""Host kernels of ParILUT and ParICT (threshold incomplete factorizations with fill-in; H. Anzt,
E. Chow, J. Dongarra, ParILUT - a new parallel threshold ILU factorization, SIAM J. Sci. Comput.
40, C503-C519, 2018), run through ``exec.host``, vectorized with SciPy.

One step of the algorithm: ``add_candidates`` grows the factors' pattern by the entries of
A - L U (A - L L^T) outside it, with the values the fixed-point equations give them;
``compute_l_u_factors`` (``compute_factor``) sweeps once over all entries as ParILU (ParIC)
does, on the grown pattern; ``threshold_filter`` keeps the diagonal and the largest entries
up to the fill-in limit.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.factorization.patterns import (csr_arrays, entry_rows, floor_pivots, on_pattern, scipy_view,
                                                      union_pattern, with_values)

SAMPLE = 1 << 13  # entries sampled by the approximate threshold selection


def add_candidates(exec, a, l, u):
    """L and U grown by the pattern of A - L U: new l_ij = (a_ij - (LU)_ij) / u_jj, new
    u_ij = a_ij - (LU)_ij; as CSR arrays (L's first)."""
    A, L, U = scipy_view(a), scipy_view(l), scipy_view(u)
    product = (L @ U).tocsr()
    union = union_pattern(A, product, L, U)
    rows, cols = entry_rows(union), union.indices
    residual = on_pattern(A, rows, cols) - on_pattern(product, rows, cols)
    pivots = U.diagonal()
    with np.errstate(divide="ignore", invalid="ignore"):
        new = np.where(cols < rows, residual / pivots[cols], residual)
    grown = sp.csr_matrix((new, cols, union.indptr), shape=union.shape)
    lower, upper = sp.tril(union).tocsr(), sp.triu(union).tocsr()
    return (csr_arrays(with_values(lower, L, on_pattern(grown, entry_rows(lower), lower.indices)), l.dtype)
            + csr_arrays(with_values(upper, U, on_pattern(grown, entry_rows(upper), upper.indices)), u.dtype))


def compute_l_u_factors(exec, a, l, u, floors):
    # one sweep, U then L, as ParILU's (in place):
    # u_ij = a_ij - sum_{k<i} l_ik u_kj (|u_ii| >= floor_i);  l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj
    A = scipy_view(a)
    u_rows, l_rows = np.repeat(np.arange(u.shape[0]), np.diff(u.row_ptrs)), \
        np.repeat(np.arange(l.shape[0]), np.diff(l.row_ptrs))
    sums = on_pattern(scipy_view(l, strict=True) @ scipy_view(u, strict=True), u_rows, u.col_idxs)
    u.values[:] = on_pattern(A, u_rows, u.col_idxs) - sums
    floor_pivots(u.values, u.row_ptrs[:-1], floors.values[:, 0])
    sums = on_pattern(scipy_view(l, strict=True) @ scipy_view(u, strict=True), l_rows, l.col_idxs)
    pivots = u.values[u.row_ptrs[:-1]]
    with np.errstate(divide="ignore", invalid="ignore"):
        l.values[:] = np.where(l.col_idxs == l_rows, 1, (on_pattern(A, l_rows, l.col_idxs) - sums) / pivots[l.col_idxs])


def residual_norm(exec, a, l, u) -> float:
    """||A - L U|| on A's pattern, relative to ||A|| (Frobenius norms): small once the sweeps
    have converged, large when they diverge."""
    A = scipy_view(a)
    rows = entry_rows(A)
    residual = A.data - on_pattern((scipy_view(l) @ scipy_view(u)).tocsr(), rows, A.indices)
    return float(np.linalg.norm(residual) / max(np.linalg.norm(A.data), np.finfo(np.float64).tiny))


def threshold_filter(exec, factor, limit, approximate):
    """The factor with its diagonal and its largest other entries, at most ``limit`` entries
    in all, as CSR arrays. ``approximate``: the threshold is taken from a sample of the
    magnitudes (what it keeps beyond the limit is then cut exactly)."""
    m = scipy_view(factor)
    rows = entry_rows(m)
    off = np.flatnonzero(m.indices != rows)
    keep_off = max(int(limit) - m.shape[0], 0)
    magnitude = np.abs(m.data[off])
    if keep_off >= off.size:
        chosen = off
    else:
        candidates = np.arange(off.size)
        if approximate and off.size > SAMPLE:
            sample = np.sort(magnitude[:: off.size // SAMPLE])
            threshold = sample[int((1 - keep_off / off.size) * sample.size)]
            candidates = np.flatnonzero(magnitude >= threshold)
        if candidates.size > keep_off:
            candidates = candidates[np.argpartition(-magnitude[candidates], keep_off - 1)[:keep_off]] \
                if keep_off else candidates[:0]
        chosen = off[np.sort(candidates)]
    keep = np.zeros(m.nnz, bool)
    keep[chosen] = True
    keep[m.indices == rows] = True
    kept = sp.csr_matrix((m.data[keep], m.indices[keep],
                          np.concatenate([[0], np.cumsum(np.bincount(rows[keep], minlength=m.shape[0]))])),
                         shape=m.shape)
    return csr_arrays(kept, factor.dtype)
