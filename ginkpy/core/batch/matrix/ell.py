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
from ginkpy.core.batch.matrix.csr import Csr
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.matrix.csr import INDEX_DTYPE
from ginkpy.core.matrix.ell import PADDING, row_slots, storage_size


class Ell(BatchLinOp):
    """N sparse matrices in ELL format sharing the column indices ``col_idxs`` (n * width,
    column-major) with values (N, n * width) on an executor."""

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
        exec = csr.executor
        row_ptrs, col_idxs, values = exec.to_host(csr.row_ptrs, csr.col_idxs, csr.values)
        n = csr.common_size[0]
        pattern = sp.csr_matrix((np.ones(col_idxs.size), col_idxs, row_ptrs), shape=csr.common_size)
        width = int(np.diff(row_ptrs).max(initial=0))
        rows, slots = row_slots(pattern)
        # entry k of row r at r + n k
        position = rows + n * slots
        ell_cols = np.full(storage_size(n, width, "this batch Ell"), PADDING, dtype=INDEX_DTYPE)
        ell_cols[position] = col_idxs
        ell_values = np.zeros((csr.num_batch_items, ell_cols.size), dtype=csr.dtype)
        ell_values[:, position] = values
        return cls(exec, csr.common_size, exec.from_host(ell_cols), exec.from_host(ell_values), width)

    @classmethod
    def from_scipy(cls, exec: Executor, matrices: Any, dtype: Any = None) -> "Ell":
        """From a list of SciPy sparse matrices of one shape and pattern (see Csr.from_scipy)."""
        return cls.from_csr(Csr.from_scipy(exec, matrices, dtype))

    @classmethod
    def from_pattern(cls, exec: Executor, pattern: Any, values: Any, dtype: Any = None) -> "Ell":
        """From one pattern and the (N, nnz) values of the items (see Csr.from_pattern)."""
        return cls.from_csr(Csr.from_pattern(exec, pattern, values, dtype))

    def to_csr(self) -> Csr:
        """A batch Csr copy on the same executor, padding dropped."""
        col_idxs, values = self.executor.to_host(self.col_idxs, self.values)
        n = self.common_size[0]
        stored = np.flatnonzero(col_idxs != PADDING)
        rows = stored % max(n, 1)
        order = stored[np.lexsort((col_idxs[stored], rows))]
        row_ptrs = np.r_[0, np.cumsum(np.bincount(rows, minlength=n))]
        return Csr._from_host(self.executor, self.common_size, row_ptrs, col_idxs[order], values[:, order])

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
