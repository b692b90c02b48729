"""Reference kernels of gk.distributed.Matrix: the split of a rank's rows (host setup), the
gather of the rows other ranks need (the send buffer of the halo exchange) and the non-local
part of a product."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.core.matrix.csr import INDEX_DTYPE
from ginkpy.reference.components.reduction_kernels import _column_sums, _set


def separate_local_nonlocal(exec, a, offsets, rank):
    # a: this rank's rows with global column indices (host Csr, sorted, no duplicates).
    # Returns the local block (columns offsets[rank] .. offsets[rank + 1] - 1, renumbered from 0)
    # and the non-local block (the other columns renumbered 0 .. g-1 in the order of their global
    # indices) as (row_ptrs, col_idxs, values) each, the g ghost columns' global indices, their
    # local indices at their owners and the number of ghost columns each rank owns.
    first, end = int(offsets[rank]), int(offsets[rank + 1])
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.row_ptrs))
    cols = a.col_idxs.astype(np.int64)
    local = (cols >= first) & (cols < end)
    ghost_columns, compact = np.unique(cols[~local], return_inverse=True)
    owners = np.searchsorted(offsets, ghost_columns, side="right") - 1

    def csr(keep, col_idxs):
        row_ptrs = np.zeros(a.shape[0] + 1, INDEX_DTYPE)
        np.cumsum(np.bincount(rows[keep], minlength=a.shape[0]), out=row_ptrs[1:])
        return row_ptrs, np.ascontiguousarray(col_idxs, INDEX_DTYPE), np.ascontiguousarray(a.values[keep])

    return (csr(local, cols[local] - first), csr(~local, compact.reshape(-1)), ghost_columns.astype(np.int64),
            (ghost_columns - offsets[owners]).astype(np.int64),
            np.bincount(owners, minlength=offsets.size - 1).astype(np.int64))


def row_gather(exec, b, rows, out):
    # out[i, :] = b[rows[i], :]
    out.values[...] = b.values[rows]


def transpose_entries(exec, local, non_local, ghost_columns, offsets, rank, conjugate):
    # the entries (j, i, a_ij) of A^T (conjugate: (j, i, conj(a_ij)) of A^H) from this rank's rows
    # i (local and non_local: SciPy CSR of its two blocks), global indices, sorted by the rank
    # that owns row j of A^T; returns (rows, cols, values, count per rank)
    first = int(offsets[rank])
    blocks = [(local.tocoo(), lambda c: c + first), (non_local.tocoo(), lambda c: ghost_columns[c])]
    rows = np.concatenate([to_global(b.col.astype(np.int64)) for b, to_global in blocks])
    cols = np.concatenate([b.row.astype(np.int64) + first for b, _ in blocks])
    values = np.concatenate([b.data for b, _ in blocks])
    if conjugate:
        values = np.conj(values)
    owners = np.searchsorted(offsets, rows, side="right") - 1
    order = np.argsort(owners, kind="stable")
    return (rows[order], cols[order], np.ascontiguousarray(values[order]),
            np.bincount(owners, minlength=offsets.size - 1).astype(np.int64))


def add_non_local(exec, alpha, b, rows, ghost, scale, x, u, w, partials):
    # y = B ghost (B: the r rows with non-local entries, rows[i] their rows of x);
    # x[rows] += alpha scale[rows] y;  partials = [u[rows]^H added, w[rows]^H added] per column
    if b.shape[0] == 0:
        if u is not None:
            _set(partials, np.zeros((1 if w is None else 2) * x.shape[1], partials.dtype))
        return
    y = sp.csr_matrix((b.values, b.col_idxs, b.row_ptrs), shape=b.shape) @ ghost.values
    if scale is not None:
        y = scale.values[rows] * y
    y = alpha.values * y
    x.values[rows] += y
    if u is not None:
        sums = [_column_sums(v.values[rows].conj() * y) for v in (u, w) if v is not None]
        _set(partials, np.concatenate(sums))


def row_bounds(exec, local, non_local, rows, inv_diag, out):
    # out[i] = |inv_diag[rows[i]]| (sum_j |local[rows[i], j]| + sum_j |non_local[i, j]|)
    if non_local.shape[0] == 0:
        return
    def abs_sums(a, which):
        m = sp.csr_matrix((np.abs(a.values), a.col_idxs, a.row_ptrs), shape=a.shape)
        return np.asarray((m[which] if which is not None else m).sum(axis=1)).ravel()
    out[...] = np.abs(inv_diag.values[rows, 0]) * (abs_sums(local, rows) + abs_sums(non_local, None))
