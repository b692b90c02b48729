"""Reference kernels of the ISAI preconditioner (incomplete sparse approximate inverse).

``pattern`` (run on the host) gives the matrix whose entries form the small systems and the
pattern of the inverse M: for the lower (upper) type the lower (upper) triangle T of A and the
pattern of T^power; for the general type A and |A|^power; for the spd type A and the lower
triangle of |A|^power. ``generate_inverse`` computes each row i of M, with J the columns of
row i: the small dense system S[J, J]^T m = e_i (S restricted to J, transposed; e_i the unit
vector at i's place in J), solved by Gaussian elimination with partial pivoting, which makes
(M S)_ij = delta_ij on the pattern. For spd, m is then scaled by 1/sqrt(m_i) (Ginkgo's SPD
ISAI, the factorized sparse approximate inverse: G A G^H ~ I, M = G^H G; m_i is real for a
Hermitian positive definite A, its real part is taken). Rows with the same
pattern size are solved together as a batch, column by column, in the order of operations of
the OpenCL kernel.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

BATCH_VALUES = 1 << 22  # entries of the dense systems solved in one batch


def _system(a, isai_type) -> sp.csr_matrix:
    """The matrix whose inverse is approximated: A's lower or upper triangle, or A."""
    m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)
    system = {"lower": sp.tril(m), "upper": sp.triu(m)}.get(isai_type, m).tocsr()
    system.sort_indices()
    return system


def system_values(exec, a, isai_type):
    """The values of the system (as :func:`pattern` gives it) after new values of ``a`` on its
    pattern, and the first row whose diagonal entry is zero or not stored (-1: none)."""
    system = _system(a, isai_type)
    zeros = np.flatnonzero(system.diagonal() == 0)
    return system.data.astype(a.values.dtype), int(zeros[0]) if zeros.size else -1


def pattern(exec, a, isai_type, power):
    """(system row_ptrs, col_idxs, values), (inverse row_ptrs, col_idxs), all int32 / A's type,
    and the first row whose diagonal entry in the system is zero or not stored (-1: none)."""
    m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)
    system = _system(a, isai_type)
    grown = sp.csr_matrix((np.ones(system.nnz), system.indices, system.indptr), shape=m.shape)
    step = grown
    for _ in range(power - 1):
        grown = grown @ step
    # the diagonal always belongs to the pattern: row i's system needs e_i
    grown = (grown + sp.eye(m.shape[0], format="csr")).tocsr()
    if isai_type == "spd":
        grown = sp.tril(grown).tocsr()
    grown.sort_indices()
    zeros = np.flatnonzero(system.diagonal() == 0)
    return ((system.indptr.astype(np.int32), system.indices.astype(np.int32), system.data.astype(a.values.dtype)),
            (grown.indptr.astype(np.int32), grown.indices.astype(np.int32)), int(zeros[0]) if zeros.size else -1)


def _solve(w: np.ndarray, y: np.ndarray) -> np.ndarray:
    """y = w^-1 y for a batch (w: B x m x m, y: B x m) by Gaussian elimination with partial
    pivoting, in place; returns which systems are singular (a zero pivot)."""
    batch, m = y.shape
    idx = np.arange(batch)
    singular = np.zeros(batch, bool)
    pivots = np.ones((batch, m), w.dtype)
    for c in range(m):
        piv = c + np.argmax(np.abs(w[:, c:, c]), axis=1)
        singular |= w[idx, piv, c] == 0
        row = w[idx, c, c:].copy()
        w[idx, c, c:] = w[idx, piv, c:]
        w[idx, piv, c:] = row
        yc = y[idx, c].copy()
        y[idx, c] = y[idx, piv]
        y[idx, piv] = yc
        pivots[:, c] = np.where(singular, 1, w[:, c, c])
        # row r -= f row c, f = w_rc / w_cc
        f = w[:, c + 1:, c] / pivots[:, c, None]
        w[:, c + 1:, c + 1:] -= f[:, :, None] * w[:, None, c, c + 1:]
        y[:, c + 1:] -= f * y[:, c, None]
    for r in range(m - 1, -1, -1):
        s = y[:, r].copy()
        for c in range(r + 1, m):
            s -= w[:, r, c] * y[:, c]
        y[:, r] = s / pivots[:, r]
    return singular


def generate_inverse(exec, system, inverse, spd) -> int:
    """Fill the values of ``inverse`` (its pattern set); returns the first row whose system is
    singular (for spd: whose m_i is not positive), -1 if none."""
    ptrs, cols = inverse.row_ptrs, inverse.col_idxs
    s = sp.csr_matrix((system.values, system.col_idxs, system.row_ptrs), shape=system.shape)
    sizes = np.diff(ptrs)
    failed = []
    for size in np.unique(sizes[sizes > 0]):
        rows_of_size = np.flatnonzero(sizes == size)
        for start in range(0, rows_of_size.size, max(1, BATCH_VALUES // (size * size))):
            rows = rows_of_size[start:start + max(1, BATCH_VALUES // (size * size))]
            positions = ptrs[rows, None] + np.arange(size)
            J = cols[positions]
            # w[r, a, b] = S[J_b, J_a]
            w = np.asarray(s[np.broadcast_to(J[:, None, :], (J.shape[0], size, size)).ravel(),
                             np.broadcast_to(J[:, :, None], (J.shape[0], size, size)).ravel()])
            w = w.reshape(J.shape[0], size, size).astype(inverse.dtype)
            y = (J == rows[:, None]).astype(inverse.dtype)
            singular = _solve(w, y)
            if spd:
                d = y[:, -1].real
                singular |= ~(d > 0)
                with np.errstate(invalid="ignore", divide="ignore"):
                    y /= np.sqrt(d)[:, None]
            inverse.values[positions] = y
            failed.extend(rows[singular][:1])
    return int(min(failed)) if failed else -1
