"""Reference kernels of the batched ISAI: every row of every item's approximate inverses of its
ILU(0) factors (generation), and the apply.

Row i of M_L (of M_U) with the pattern J solves L[J, J]^T m = e_i (U[J, J]^T m = e_i): the rows
of one pattern size are solved together for all items, as dense (items, rows, m, m) systems
gathered from the factors' values (np.linalg.solve), at most BATCH_VALUES entries at a time.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.components.batch_solver import item_preconditioners
from ginkpy.reference.factorization.patterns import positions

BATCH_VALUES = 1 << 22  # entries of the dense systems solved at once


def generate(exec, ilu, isai) -> int:
    """Fill ``isai.values`` (N, nnz of M_L and M_U) from the factors in ``ilu``; returns the
    first item * 2n + row (rows of M_U after those of M_L) whose values are not finite, -1 if none."""
    N, n = ilu.num_batch_items, ilu.common_size[0]
    numbered = sp.csr_matrix((np.ones(ilu.col_idxs.size), ilu.col_idxs, ilu.row_ptrs), shape=(n, n))
    ptrs, cols = isai.row_ptrs.astype(np.int64), isai.col_idxs
    # the 2n rows of M_L and M_U: where each row's entries begin (in M's arrays), its size and row
    begins = np.concatenate([ptrs[:n], isai.lower_nnz + ptrs[n + 1:-1]])
    sizes = np.concatenate([np.diff(ptrs[:n + 1]), np.diff(ptrs[n + 1:])])
    rows = np.tile(np.arange(n), 2)
    upper = np.arange(2 * n) >= n
    bad = []
    for size in np.unique(sizes[sizes > 0]):
        group = np.flatnonzero(sizes == size)
        step = max(1, BATCH_VALUES // (N * size * size))
        for start in range(0, group.size, step):
            r = group[start:start + step]
            J = cols[begins[r, None] + np.arange(size)]
            # w[k, a, b] = T[J_b, J_a]: T's entries where T has them (L's unit diagonal: 1), 0 elsewhere
            row_of, col_of = np.broadcast_to(J[:, None, :], (r.size, size, size)), np.broadcast_to(
                J[:, :, None], (r.size, size, size))
            up = upper[r, None, None]
            inside = np.where(up, row_of <= col_of, row_of > col_of)
            where = positions(numbered, row_of.ravel(), col_of.ravel()).reshape(row_of.shape)
            where = np.where(inside, where, -1)
            unit = ~up & (row_of == col_of)
            w = np.where(where >= 0, ilu.values[:, np.maximum(where, 0)], unit.astype(ilu.values.dtype))
            e = np.broadcast_to((J == rows[r, None]).astype(w.dtype), w.shape[:-1])
            with np.errstate(all="ignore"):
                try:
                    y = np.linalg.solve(w, e[..., None])[..., 0]  # (N, rows, size)
                except np.linalg.LinAlgError:
                    y = np.full(e.shape, np.nan, w.dtype)
            isai.values[:, begins[r, None] + np.arange(size)] = y
            failed = ~np.isfinite(y).all(axis=2)  # (N, rows)
            if failed.any():
                items, which = np.nonzero(failed)
                bad.append(int((items * 2 * n + r[which]).min()))
    return min(bad) if bad else -1


def apply(exec, isai, b, x):
    # x_i = M_U,i (M_L,i b_i)
    for i, multiply in enumerate(item_preconditioners(isai, isai.num_batch_items)):
        x.values[i] = multiply(b.values[i])
