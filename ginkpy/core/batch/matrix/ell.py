"""Ell: a batch of N sparse matrices in ELLPACK format (Ginkgo's ``gko::batch::matrix::Ell``).

Every row is padded to ``num_stored_elements_per_row`` entries. The column indices are stored
once for all items, column-major as the single-system :class:`ginkpy.matrix.Ell` (entry k of
row r at r + n k, padding column -1); ``values`` has shape (N, n * num_stored_elements_per_row),
padding 0.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.matrix import batch_pattern
from ginkpy.core.batch.matrix.csr import Csr
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.matrix.csr import INDEX_DTYPE
from ginkpy.core.matrix.sparse_format import PADDING, row_slots, storage_size


class Ell(BatchLinOp):
    """N sparse matrices in ELL format sharing the column indices ``col_idxs`` (n * width,
    column-major) with values (N, n * width) on an executor (Ginkgo's ``batch::matrix::Ell``).

    Use it for batches whose rows have about the same length (stencils): the batched kernels
    read it coalesced, without row pointers.

    Parameters
    ----------
    exec : Executor
        Where the column indices and values live.
    common_size : tuple of int
        (rows, columns) of every item.
    col_idxs : array
        The shared padded column indices (int32, -1 for padding).
    values : array
        (N, n * width) values.
    num_stored_elements_per_row : int
        The padded row length (width).

    Examples
    --------
    >>> A = gk.batch.matrix.Ell.from_scipy(exec, matrices)
    >>> A.num_stored_elements_per_row
    >>> solver = gk.batch.solver.Cg.build().on(exec).generate(A)
    """

    kind = "ell"  # what the backends' batched kernels dispatch on (a batch format), not its type

    def __init__(self, exec: Executor, common_size: tuple[int, int], col_idxs: Any, values: Any,
                 num_stored_elements_per_row: int) -> None:
        super().__init__(exec, values.shape[0], common_size, values.dtype)
        self.num_stored_elements_per_row = int(num_stored_elements_per_row)
        self.col_idxs = col_idxs
        self.values = values

    @classmethod
    def from_csr(cls, csr: Csr) -> "Ell":
        """The entries of a batch Csr, on its executor (built with numpy on the host, once)."""
        if not isinstance(csr, Csr):
            raise TypeError(f"Ell.from_csr needs a gk.batch.matrix.Csr, not {type(csr).__name__}")
        row_ptrs, col_idxs, values = csr.executor.to_host(csr.row_ptrs, csr.col_idxs, csr.values)
        return cls.from_host_batch(csr.executor, batch_pattern.from_arrays(row_ptrs, col_idxs, values,
                                                                           csr.common_size))

    @classmethod
    def from_scipy(cls, exec: Executor, matrices: Any, dtype: Any = None) -> "Ell":
        """From a list of SciPy sparse matrices of one shape and pattern, or a 3-D array (see
        Csr.from_scipy)."""
        if isinstance(matrices, np.ndarray) and matrices.ndim == 3:
            return cls.from_host_batch(exec, batch_pattern.from_dense(matrices, dtype))
        return cls.from_host_batch(exec, batch_pattern.from_list(matrices, dtype))

    @classmethod
    def from_pattern(cls, exec: Executor, pattern: Any, values: Any, dtype: Any = None) -> "Ell":
        """From one pattern and the (N, nnz) values of the items (see Csr.from_pattern)."""
        return cls.from_host_batch(exec, batch_pattern.from_scipy_pattern(pattern, values, dtype))

    @classmethod
    def from_host_batch(cls, exec: Executor, batch: batch_pattern.HostBatch) -> "Ell":
        """The batch built on the host (see ginkpy/core/batch/matrix/batch_pattern.py) on ``exec``,
        its values padded into ELL layout on the way."""
        n = batch.shape[0]
        pattern = sp.csr_matrix((np.ones(batch.nnz), batch.col_idxs, batch.row_ptrs), shape=batch.shape)
        width = int(np.diff(batch.row_ptrs).max(initial=0))
        rows, slots = row_slots(pattern)
        # entry k of row r at r + n k
        position = rows + n * slots
        ell_cols = np.full(storage_size(n, width, "this batch Ell"), PADDING, dtype=INDEX_DTYPE)
        ell_cols[position] = batch.col_idxs

        def write(out: np.ndarray) -> None:
            out[...] = 0
            out[:, position] = batch.values()

        values = batch_pattern.upload(exec, batch, (batch.num_items, ell_cols.size), write)
        return cls(exec, batch.shape, exec.from_host(ell_cols), values, width)

    def to_csr(self) -> Csr:
        """A batch Csr copy on the same executor, padding dropped."""
        col_idxs, values = self.executor.to_host(self.col_idxs, self.values)
        n = self.common_size[0]
        stored = np.flatnonzero(col_idxs != PADDING)
        rows = stored % max(n, 1)
        order = stored[np.lexsort((col_idxs[stored], rows))]
        row_ptrs = np.r_[0, np.cumsum(np.bincount(rows, minlength=n))]
        return Csr.from_arrays(self.executor, row_ptrs, col_idxs[order], values[:, order], self.common_size)

    def to_scipy(self) -> list[sp.csr_matrix]:
        """The items as a list of SciPy CSR matrices (host copies)."""
        return self.to_csr().to_scipy()

    def clone(self, exec: Executor | None = None) -> "Ell":
        exec = self.executor if exec is None else exec
        return Ell(exec, self.common_size, *exec.copy_arrays(self.executor, self.col_idxs, self.values),
                   self.num_stored_elements_per_row)

    def _apply_impl(self, b: MultiVector, x: MultiVector) -> None:
        # x_i = A_i b_i
        self.executor.run("batch.matrix.ell.spmv", self, b, x)
