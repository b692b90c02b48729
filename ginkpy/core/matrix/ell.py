"""Ell: ELLPACK storage, every row padded to the same number of stored entries.

``col_idxs`` and ``values`` hold ``num_stored_elements_per_row`` entries per row, column-major
with ``stride`` (= number of rows): entry ``i`` of row ``r`` is at ``r + stride * i``, so
consecutive rows are consecutive in memory and a work-item per row reads coalesced. A row's
entries come first, sorted by column; the padding after them has column index -1 and value 0.
Kernels read ``b[max(col, 0)]`` and keep the product only where ``col >= 0`` (relational
built-ins instead of a branch, seed 002), so padding adds exactly nothing even where b holds
Inf or NaN, and explicit zeros of the matrix stay distinguishable from padding.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense

PADDING = -1  # column index of a padding entry (Ginkgo's invalid_index)


def storage_size(rows: int, per_row: int, what: str) -> int:
    """``rows * per_row`` stored entries, checked to be addressable by int32 indices."""
    size = int(rows) * int(per_row)
    if size > np.iinfo(INDEX_DTYPE).max:
        raise ValueError(f"{what} would store {size} entries (with padding), more than int32 indices can "
                         f"address: use gk.matrix.Hybrid, Coo or Csr for a matrix with such long rows")
    return size


def row_slots(matrix: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Row and position within its row of each entry of a host CSR matrix."""
    lengths = np.diff(matrix.indptr)
    rows = np.repeat(np.arange(matrix.shape[0]), lengths)
    return rows, np.arange(matrix.nnz) - np.repeat(matrix.indptr[:-1], lengths)


class Ell(LinOp):
    """A sparse matrix in ELL format on an executor (arrays ``col_idxs`` and ``values`` of
    ``stride * num_stored_elements_per_row`` entries, column-major, padded with column -1)."""

    def __init__(self, exec: Executor, shape: tuple[int, int], col_idxs: Any, values: Any,
                 num_stored_elements_per_row: int) -> None:
        super().__init__(exec, shape, values.dtype)
        self.stride = self.shape[0]
        self.num_stored_elements_per_row = int(num_stored_elements_per_row)
        if values.shape != (self.stride * self.num_stored_elements_per_row,) or col_idxs.shape != values.shape:
            raise ValueError(f"an Ell of {self.shape[0]} rows with {self.num_stored_elements_per_row} entries per row "
                             f"stores {self.stride * self.num_stored_elements_per_row} column indices and values, "
                             f"got {col_idxs.shape} and {values.shape}")
        self.col_idxs = col_idxs
        self.values = values
        self._nnz: int | None = None

    @property
    def nnz(self) -> int:
        """Number of stored entries of the matrix, padding excluded (counted on the host once)."""
        if self._nnz is None:
            self._nnz = int(np.count_nonzero(self.executor.to_host(self.col_idxs) != PADDING))
        return self._nnz

    # -- creation and conversion -----------------------------------------------------------------
    @classmethod
    def from_csr(cls, csr: Csr, num_stored_elements_per_row: int | None = None) -> "Ell":
        """The entries of ``csr``, on its executor, padded to ``num_stored_elements_per_row``
        (default: the longest row). Built with numpy on the host (a one-time cost at creation)."""
        if not isinstance(csr, Csr):
            raise TypeError(f"Ell.from_csr needs a gk.matrix.Csr, not {type(csr).__name__}")
        return cls._from_host(csr.executor, csr.to_scipy(), num_stored_elements_per_row)

    @classmethod
    def _from_host(cls, exec: Executor, matrix: sp.csr_matrix, num_stored_elements_per_row: int | None = None) -> "Ell":
        """From a host scipy CSR matrix with sorted indices and no duplicates (as Csr holds)."""
        longest = int(np.diff(matrix.indptr).max(initial=0))
        width = longest if num_stored_elements_per_row is None else int(num_stored_elements_per_row)
        if width < longest:
            raise ValueError(f"num_stored_elements_per_row={width} is less than the longest row ({longest} entries): "
                             f"leave it out, or use gk.matrix.Hybrid to store the overflow in a Coo part")
        if matrix.shape[1] == 0:
            width = 0  # padding reads b[0]: a matrix without columns stores none
        stride = matrix.shape[0]
        col_idxs = np.full(storage_size(stride, width, "this Ell"), PADDING, dtype=INDEX_DTYPE)
        values = np.zeros(col_idxs.size, dtype=matrix.dtype)
        rows, slots = row_slots(matrix)
        # entry i of row r at r + stride * i
        col_idxs[rows + stride * slots] = matrix.indices
        values[rows + stride * slots] = matrix.data
        return cls(exec, matrix.shape, exec.from_host(col_idxs), exec.from_host(values), width)

    @classmethod
    def from_scipy(cls, exec: Executor, matrix: Any, dtype: Any = None, **kwargs: Any) -> "Ell":
        """From any scipy.sparse matrix or array (or dense numpy array), through :meth:`Csr.from_scipy`."""
        return cls.from_csr(Csr.from_scipy(exec, matrix, dtype), **kwargs)

    def to_scipy(self) -> sp.csr_matrix:
        """A scipy.sparse.csr_matrix copy on the host, padding dropped (built with numpy)."""
        cols, values = self.executor.to_host(self.col_idxs, self.values)
        # stored element e belongs to row e % stride
        rows = np.arange(cols.size) % max(self.stride, 1)
        real = cols != PADDING
        return sp.csr_matrix((values[real], (rows[real], cols[real])), shape=self.shape)

    def to_csr(self) -> Csr:
        """A Csr copy on the same executor (built with numpy on the host, a one-time cost)."""
        return Csr.from_scipy(self.executor, self.to_scipy())

    def clone(self, exec: Executor | None = None) -> "Ell":
        """A copy of this matrix, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        return Ell(exec, self.shape, *exec.copy_arrays(self.executor, self.col_idxs, self.values),
                   self.num_stored_elements_per_row)


    def is_finite(self) -> bool:
        """True when no stored value is NaN or infinite."""
        return Dense(self.executor, self.values.reshape(self.values.size, 1)).is_finite()

    # -- LinOp: SpMV ------------------------------------------------------------------------------
    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x = A b
        self.executor.run("matrix.ell.spmv", self, b, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha A b + beta x
        self.executor.run("matrix.ell.advanced_spmv", alpha, self, b, beta, x)

    def __repr__(self) -> str:
        return (f"Ell({self.shape[0]} x {self.shape[1]}, {self.num_stored_elements_per_row} per row, "
                f"{self.dtype}, {self.executor!r})")
