"""Host kernels of ParICT (the threshold incomplete Cholesky with fill-in), run through
``exec.host``: as ParILUT's (par_ilut_kernels.py) for L L^H (L L^T for real values), with
ParIC's sweep."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.factorization.patterns import (csr_arrays, entry_rows, on_pattern, scipy_view,
                                                      union_pattern, with_values)


def add_candidates(exec, a, l):
    """L grown by the lower pattern of A - L L^H: new l_ij = (a_ij - (L L^H)_ij) / l_jj; as CSR arrays."""
    A, L = scipy_view(a), scipy_view(l)
    product = (L @ L.conj().T).tocsr()
    union = sp.tril(union_pattern(sp.tril(A).tocsr(), sp.tril(product).tocsr(), L)).tocsr()
    union.sort_indices()
    rows, cols = entry_rows(union), union.indices
    residual = on_pattern(A, rows, cols) - on_pattern(product, rows, cols)
    with np.errstate(divide="ignore", invalid="ignore"):
        new = residual / L.diagonal().real[cols]
    return csr_arrays(with_values(union, L, new), l.dtype)


def compute_factor(exec, a, l, shift):
    # one sweep as ParIC's on A + shift diag(A) (in place): the diagonal, then the entries below it
    # l_ii = sqrt((1 + shift) a_ii - sum_{k<i} |l_ik|^2);  l_ij = (a_ij - sum_{k<j} l_ik conj(l_jk)) / l_jj
    A = scipy_view(a)
    rows = np.repeat(np.arange(l.shape[0]), np.diff(l.row_ptrs))
    a_l = on_pattern(A, rows, l.col_idxs)
    diag = l.row_ptrs[1:] - 1
    strict = scipy_view(l, strict=True)
    sums = on_pattern(strict @ strict.conj().T.tocsr(), rows, l.col_idxs)
    with np.errstate(invalid="ignore", divide="ignore"):
        l.values[diag] = np.sqrt((1 + shift) * a_l[diag].real - sums[diag].real)
        off = l.col_idxs != rows
        l.values[off] = (a_l[off] - sums[off]) / l.values[l.row_ptrs[l.col_idxs[off] + 1] - 1].real


def residual_norm(exec, a, l, shift) -> float:
    """||A' - L L^H|| on A's lower pattern, A' = A + shift diag(A), relative to ||tril(A')||:
    small once the sweeps have converged, large when they diverge."""
    A, L = sp.tril(scipy_view(a)).tocsr(), scipy_view(l)
    A = (A + shift * sp.diags(A.diagonal())).tocsr()
    residual = A.data - on_pattern((L @ L.conj().T).tocsr(), entry_rows(A), A.indices)
    return float(np.linalg.norm(residual) / max(np.linalg.norm(A.data), np.finfo(np.float64).tiny))
