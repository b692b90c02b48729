"""Ell: ELLPACK storage, every row padded to the same number of stored entries.

``col_idxs`` and ``values`` hold ``num_stored_elements_per_row`` entries per row, column-major
with ``stride`` (= number of rows): entry ``i`` of row ``r`` is at ``r + stride * i``, so
consecutive rows are consecutive in memory and a work-item per row reads coalesced. A row's
entries come first, sorted by column; the padding after them has column index -1 and value 0.
Padding adds exactly nothing (see :mod:`ginkpy.core.matrix.sparse_format`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.sparse_format import PADDING, PaddedFormat, row_slots, storage_size

class Ell(PaddedFormat):
    """A sparse matrix in ELLPACK format (Ginkgo's ``matrix::Ell``): every row padded to
    ``num_stored_elements_per_row`` entries, stored column-major (entry i of row r at
    r + stride i, padding with column -1), so that a work-item per row reads coalesced.

    Use it for matrices whose rows have about the same length (stencils, FEM on regular
    meshes), where its SpMV reads less index data than Csr's; rows of very different lengths
    waste memory on padding (use :class:`Hybrid` or :class:`Sellp`). Make one with
    :meth:`from_scipy` or :meth:`from_csr`; any solver takes it.

    Parameters
    ----------
    exec : Executor
        The executor of ``col_idxs`` and ``values``.
    shape : tuple of int
        (rows, columns); rows is also the ``stride``.
    col_idxs, values : arrays
        The executor's arrays of stride * num_stored_elements_per_row column indices (int32,
        -1 for padding) and values.
    num_stored_elements_per_row : int
        The padded row length.

    Examples
    --------
    >>> A = gk.matrix.Ell.from_scipy(exec, scipy.sparse.diags([1, 2, 3]))
    >>> A.num_stored_elements_per_row, A.nnz
    (1, 3)
    """

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

    # -- creation and conversion -----------------------------------------------------------------
    @classmethod
    def from_csr(cls, csr: Csr, num_stored_elements_per_row: int | None = None) -> "Ell":
        """The entries of ``csr``, on its executor, padded to ``num_stored_elements_per_row``
        (default: the longest row). Built with numpy on the host (a one-time cost at creation)."""
        cls._check_csr(csr)
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

    def _slot_rows(self, size: int) -> np.ndarray:
        # stored element e belongs to row e % stride
        return np.arange(size) % max(self.stride, 1)

    def clone(self, exec: Executor | None = None) -> "Ell":
        """A copy of this matrix, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        return Ell(exec, self.shape, *exec.copy_arrays(self.executor, self.col_idxs, self.values),
                   self.num_stored_elements_per_row)


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
