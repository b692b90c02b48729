"""Host helpers of the reference factorization kernels: SciPy views of a Csr, products read
on a pattern, diagonal positions, unions of patterns."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def scipy_view(m, strict: bool = False) -> sp.csr_matrix:
    """A Csr as SciPy CSR (sharing the arrays); ``strict`` drops the diagonal entries."""
    out = sp.csr_matrix((m.values, m.col_idxs, m.row_ptrs), shape=m.shape)
    if strict:
        rows = np.repeat(np.arange(m.shape[0]), np.diff(m.row_ptrs))
        keep = m.col_idxs != rows
        out = sp.csr_matrix((m.values[keep], m.col_idxs[keep], np.concatenate(
            [[0], np.cumsum(np.bincount(rows[keep], minlength=m.shape[0]))])), shape=m.shape)
    return out


def on_pattern(product: sp.csr_matrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The entries (rows, cols) of ``product`` (zero where it stores none)."""
    if rows.size == 0:
        return np.zeros(0, product.dtype)
    return np.asarray(sp.csr_matrix(product)[rows, cols]).ravel()


def positions(m: sp.csr_matrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The positions of the entries (rows, cols) in m's arrays, -1 where m stores none."""
    if rows.size == 0:
        return np.zeros(0, np.int64)
    numbered = sp.csr_matrix((np.arange(1, m.nnz + 1, dtype=np.int64), m.indices, m.indptr), shape=m.shape)
    return np.asarray(numbered[rows, cols]).ravel() - 1


def diagonal_positions(a) -> tuple[np.ndarray, int]:
    """Position of each row's diagonal entry in A and the first row without one (-1: none)."""
    n = a.shape[0]
    rows = np.repeat(np.arange(n), np.diff(a.row_ptrs))
    diag = a.row_ptrs[:-1] + np.bincount(rows[a.col_idxs < rows], minlength=n)
    stored = diag < a.row_ptrs[1:]
    stored[stored] = a.col_idxs[diag[stored]] == np.flatnonzero(stored)
    missing = np.flatnonzero(~stored)
    return diag, int(missing[0]) if missing.size else -1


def entry_rows(m: sp.csr_matrix) -> np.ndarray:
    return np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))


def csr_arrays(m: sp.csr_matrix, dtype) -> tuple:
    m.sort_indices()
    return m.indptr.astype(np.int32), m.indices.astype(np.int32), m.data.astype(dtype)


def union_pattern(*matrices: sp.csr_matrix) -> sp.csr_matrix:
    """The union of the patterns (values 1), sorted."""
    union = sum(sp.csr_matrix((np.ones(m.nnz), m.indices, m.indptr), shape=m.shape) for m in matrices)
    union = sp.csr_matrix(union)
    union.sort_indices()
    return union


def with_values(pattern: sp.csr_matrix, old: sp.csr_matrix, new_values: np.ndarray) -> sp.csr_matrix:
    """``pattern`` with the values of ``old`` where it has entries, ``new_values`` elsewhere."""
    rows, cols = entry_rows(pattern), pattern.indices
    values = on_pattern(old, rows, cols)
    present = on_pattern(sp.csr_matrix((np.ones(old.nnz), old.indices, old.indptr), shape=old.shape), rows, cols)
    return sp.csr_matrix((np.where(present > 0, values, new_values), cols, pattern.indptr), shape=pattern.shape)


def floor_pivots(values: np.ndarray, positions: np.ndarray, floors: np.ndarray) -> np.ndarray:
    """Replace the pivots at ``positions`` whose magnitude is not above their floor (a zero floor
    counts as 1) by the floor with their sign (a zero pivot: positive), in place; returns which
    were replaced."""
    floors = np.where(floors > 0, floors, 1)
    pivots = values[positions]
    magnitude = np.abs(pivots)
    tiny = magnitude <= floors
    with np.errstate(divide="ignore", invalid="ignore"):
        values[positions[tiny]] = np.where(magnitude[tiny] > 0, pivots[tiny] * (floors[tiny] / magnitude[tiny]),
                                           floors[tiny])
    return tiny
