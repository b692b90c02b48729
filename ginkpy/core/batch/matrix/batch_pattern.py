"""What the batch matrix formats share: one sparsity pattern for every item, checked once on
the host when a batch is built, and the per-item values checked to be finite."""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.matrix.csr import INDEX_DTYPE
from ginkpy.core.matrix.dense import value_dtype


def canonical(matrix: Any, what: str) -> sp.csr_matrix:
    """``matrix`` (SciPy sparse or 2-D NumPy) as a CSR copy with sorted indices, duplicates summed."""
    if isinstance(matrix, np.ndarray):
        if matrix.ndim != 2:
            raise ValueError(f"{what} must be 2-D, got a {matrix.ndim}-D array")
    elif not sp.issparse(matrix):
        raise TypeError(f"{what} must be a SciPy sparse matrix or a 2-D NumPy array, not {type(matrix).__name__}")
    m = sp.csr_matrix(matrix, copy=True)
    m.sum_duplicates()
    return m


def pattern_and_values(matrices: Any, dtype: Any = None) -> tuple[sp.csr_matrix, np.ndarray]:
    """The shared pattern (a CSR matrix, item 0's values) and the values (N, nnz) of a list of
    matrices; an error names the first item whose shape or pattern differs from item 0's."""
    if sp.issparse(matrices) or isinstance(matrices, np.ndarray) or not hasattr(matrices, "__len__"):
        raise TypeError("a batch is built from a list of SciPy sparse matrices (one per item), not "
                        f"{type(matrices).__name__}")
    if len(matrices) == 0:
        raise ValueError("a batch needs at least one item: the list of matrices is empty")
    items = [canonical(m, f"item {i}") for i, m in enumerate(matrices)]
    first = items[0]
    for i, m in enumerate(items[1:], start=1):
        how = _difference(first, m)
        if how:
            raise ValueError(f"every item of a batch must have the shape and sparsity pattern of item 0, but "
                             f"item {i} {how} (an entry that is zero in some items must still be stored in "
                             f"all; or build the batch from one pattern and a values array)")
    dtype = value_dtype(first.dtype if dtype is None else dtype, "matrix")
    values = np.stack([m.data for m in items]).astype(dtype, copy=False) if first.nnz else \
        np.zeros((len(items), 0), dtype)
    return first, values


def _difference(first: sp.csr_matrix, m: sp.csr_matrix) -> str:
    """How the pattern of ``m`` differs from ``first``'s ('' when it does not)."""
    if m.shape != first.shape:
        return f"is {m.shape[0]} x {m.shape[1]} where item 0 is {first.shape[0]} x {first.shape[1]}"
    lengths, first_lengths = np.diff(m.indptr), np.diff(first.indptr)
    if m.nnz == first.nnz and np.array_equal(m.indices, first.indices) and np.array_equal(lengths, first_lengths):
        return ""
    if m.nnz != first.nnz:
        detail = f"stores {m.nnz} entries where item 0 stores {first.nnz}"
    else:
        detail = "stores entries at other positions than item 0"
    rows = np.flatnonzero(lengths != first_lengths)
    if rows.size == 0:  # same row lengths: the first row whose columns differ
        rows = np.unique(np.repeat(np.arange(m.shape[0]), lengths)[m.indices != first.indices])
    r = int(rows[0])
    cols = m.indices[m.indptr[r]:m.indptr[r + 1]].tolist()
    first_cols = first.indices[first.indptr[r]:first.indptr[r + 1]].tolist()
    return f"{detail}: row {r} stores columns {_short(cols)} where item 0 stores {_short(first_cols)}"


def _short(cols: list) -> str:
    return str(cols) if len(cols) <= 8 else f"[{', '.join(map(str, cols[:8]))}, ...]"


def pattern_arrays(pattern: Any) -> tuple[tuple[int, int], np.ndarray, np.ndarray, np.ndarray]:
    """(shape, row_ptrs, col_idxs, order) of a pattern given as a SciPy sparse matrix: its stored
    entries in CSR order (values ignored), ``order`` the permutation that sorts each row's
    columns (the values of a (pattern, values) batch follow the pattern's own order)."""
    if not sp.issparse(pattern):
        raise TypeError(f"the pattern must be a SciPy sparse matrix (its stored entries are the pattern), "
                        f"not {type(pattern).__name__}")
    m = sp.csr_matrix(pattern)
    positions = sp.csr_matrix((np.arange(m.nnz, dtype=np.float64) + 1, m.indices.copy(), m.indptr.copy()),
                              shape=m.shape)
    positions.has_canonical_format = False
    positions.sort_indices()
    rows = np.repeat(np.arange(m.shape[0]), np.diff(positions.indptr))
    dup = np.flatnonzero((np.diff(positions.indices) == 0) & (np.diff(rows) == 0))
    if dup.size:
        r, c = int(rows[dup[0]]), int(positions.indices[dup[0]])
        raise ValueError(f"the pattern stores entry ({r}, {c}) more than once: each position may appear once "
                         f"(sum the duplicates first, S.sum_duplicates())")
    order = positions.data.astype(np.int64) - 1
    return m.shape, positions.indptr.astype(INDEX_DTYPE), positions.indices.astype(INDEX_DTYPE), order


def batch_values(values: Any, nnz: int, dtype: Any, what: str = "values") -> np.ndarray:
    """``values`` as a (N, nnz) array of a ginkpy value type, N >= 1."""
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[1] != nnz:
        raise ValueError(f"{what} must have shape (N, {nnz}): one row of {nnz} stored entries per item, "
                         f"got shape {values.shape}")
    if values.shape[0] == 0:
        raise ValueError(f"a batch needs at least one item: {what} has 0 rows")
    return values.astype(value_dtype(values.dtype if dtype is None else dtype, what), copy=False)


def check_finite(values: np.ndarray, row_ptrs: np.ndarray | None, col_idxs: np.ndarray | None,
                 what: str = "matrix") -> None:
    """Raise ValueError naming the first item (and entry) whose values are NaN or infinite;
    ``values`` is (N, nnz) in CSR order of the pattern (row_ptrs, col_idxs), or (N, n, m)."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    items = np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1))
    i = int(items[0])
    if values.ndim == 3:
        r, c = (int(v) for v in np.argwhere(bad[i])[0])
    else:
        e = int(np.flatnonzero(bad[i])[0])
        r = int(np.searchsorted(row_ptrs, e, side="right") - 1)
        c = int(col_idxs[e])
    more = f" (and {items.size - 1} more items)" if items.size > 1 else ""
    raise ValueError(f"the {what} of item {i} has a NaN or infinite value at ({r}, {c}){more}: every value of "
                     f"every item must be finite")
