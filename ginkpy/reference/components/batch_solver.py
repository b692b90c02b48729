"""What the reference kernels of the batched solvers share: each item's matrix and
preconditioner as host operators, and the checks every solver makes on a step."""
from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve_triangular

from ginkpy.core.matrix.sparse_format import PADDING
from ginkpy.core.stop.stopping_status import StopReason


def item_matrices(a) -> list:
    """The items of a batch Csr, Ell or Dense (host arrays) as SciPy CSR or NumPy matrices."""
    if a.kind == "csr":
        return [sp.csr_matrix((v, a.col_idxs, a.row_ptrs), shape=a.common_size) for v in a.values]
    if a.kind == "ell":  # entry k of row r at r + n k
        n = a.common_size[0]
        stored = np.flatnonzero(a.col_idxs != PADDING)
        rows, cols = stored % max(n, 1), a.col_idxs[stored]
        return [sp.csr_matrix((v[stored], (rows, cols)), shape=a.common_size) for v in a.values]
    return list(a.values)


def item_preconditioners(preconditioner, num_items: int) -> list[Callable[[np.ndarray], np.ndarray]]:
    """z = M_i r for each item: the batch Jacobi's inverse blocks, the batch ILU's triangular
    solves, the batch ISAI's two products, or a copy without one."""
    if preconditioner is None:
        return [np.copy] * num_items
    if preconditioner.kind == "ilu":
        return [_ilu_item(preconditioner, v) for v in preconditioner.values]
    if preconditioner.kind == "isai":
        return [_isai_item(preconditioner, v) for v in preconditioner.values]
    n, stride = preconditioner.common_size[0], preconditioner.block_stride
    block = preconditioner.row_blocks
    start = preconditioner.block_ptrs[block]
    j = np.arange(stride)
    cols = start[:, None] + j
    inside = cols < preconditioner.block_ptrs[block + 1][:, None]
    cols = np.where(inside, cols, 0)
    # z[r] = sum_j blocks[k, j, r - start_k] r[start_k + j] over the rows of r's block k
    weights = preconditioner.blocks[:, block[:, None], j, (np.arange(n) - start)[:, None]]

    def apply(w):
        return lambda r: (w * np.where(inside, r[cols], 0)).sum(axis=1)
    return [apply(w) for w in weights]


def _ilu_item(ilu, values: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """r -> U^-1 (L^-1 r) for the factors of one item (L unit lower and U in one pattern)."""
    combined = sp.csr_matrix((values, ilu.col_idxs, ilu.row_ptrs), shape=ilu.common_size)
    lower, upper = sp.tril(combined, -1, format="csr"), sp.triu(combined, format="csr")
    lower = lower + sp.identity(combined.shape[0], values.dtype, format="csr")
    return lambda r: spsolve_triangular(upper, spsolve_triangular(lower, r, lower=True, unit_diagonal=True),
                                        lower=False)


def _isai_item(isai, values: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """r -> M_U (M_L r) for the approximate inverses of one item's factors."""
    n, split = isai.common_size[0], isai.lower_nnz
    m_l = sp.csr_matrix((values[:split], isai.col_idxs[:split], isai.row_ptrs[:n + 1]), shape=isai.common_size)
    m_u = sp.csr_matrix((values[split:], isai.col_idxs[split:], isai.row_ptrs[n + 1:]), shape=isai.common_size)
    return lambda r: m_u @ (m_l @ r)


def solve_items(a, preconditioner, b, x, iterations, residual_norms, reasons,
                solve: Callable[..., tuple]) -> None:
    """Each item in turn: ``solve(A_i, M_i, b_i, x_i)`` updates the view x_i and returns its
    (iterations, ||r||, reason), stored at item i (the batched solvers' common loop)."""
    precs = item_preconditioners(preconditioner, a.num_batch_items)
    for i, (A, M) in enumerate(zip(item_matrices(a), precs)):
        with np.errstate(all="ignore"):  # as on a device: overflow and 0/0 are detected, not warned about
            iterations[i], residual_norms[i], reasons[i] = solve(A, M, b.values[i, :, 0], x.values[i, :, 0])


def start(A, b, x, rtol, atol) -> tuple:
    """What every batched solver does first on an item: r = b - A x, ||r||, the threshold
    max(rtol ||b||, atol) and, where the item needs no iteration, how it ends: (-1, ||r||,
    DIVERGED) for b or x not finite (-1: bad input, reported as such), (0, ||r||, CONVERGED)
    where x meets the threshold already (None otherwise). Returns (r, ||r||, threshold, end)."""
    # r = b - A x
    r = b - A @ x
    b_norm, res = norm(b), norm(r)
    if not finite(b_norm, res):
        return r, res, None, (-1, res, StopReason.DIVERGED)
    limit = threshold(rtol, atol, b_norm)
    return r, res, limit, ((0, res, StopReason.CONVERGED) if res <= limit else None)


def threshold(rtol, atol, b_norm):
    """The residual norm an item must reach: max(rtol ||b||, atol)."""
    return max(rtol * b_norm, atol)


def norm(v):
    # ||v|| = sqrt(v^H v), as the device computes it
    return np.sqrt(dot(v, v).real)


def dot(u, v):
    """u^H v (u . v for real values), as the device kernels compute it."""
    return np.vdot(u, v)


def finite(*values) -> bool:
    return bool(np.isfinite(values).all())
