"""Csr: a batch of N sparse matrices with one CSR pattern (Ginkgo's ``gko::batch::matrix::Csr``).

The pattern (``row_ptrs``, ``col_idxs``, int32, columns sorted in each row) is stored once
and shared by every item; ``values`` has shape (N, nnz), row i the stored entries of item i in
the pattern's order.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.matrix.batch_pattern import (batch_values, check_finite, pattern_and_values,
                                                    pattern_arrays)
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.matrix.csr import INDEX_DTYPE


class Csr(BatchLinOp):
    """N sparse matrices in CSR format sharing one pattern (``row_ptrs``, ``col_idxs``) with
    values (N, nnz) on an executor."""

    def __init__(self, exec: Executor, common_size: tuple[int, int], row_ptrs: Any, col_idxs: Any,
                 values: Any) -> None:
        super().__init__(exec, values.shape[0], common_size, values.dtype)
        self.row_ptrs = row_ptrs
        self.col_idxs = col_idxs
        self.values = values

    @property
    def nnz(self) -> int:
        """Stored entries per item."""
        return int(self.values.shape[1])

    # -- creation and conversion -----------------------------------------------------------------
    @classmethod
    def from_scipy(cls, exec: Executor, matrices: Any, dtype: Any = None) -> "Csr":
        """From a list of SciPy sparse matrices (or 2-D arrays), one per item, all of one shape
        and sparsity pattern (the stored entries, explicit zeros included)."""
        pattern, values = pattern_and_values(matrices, dtype)
        return cls._from_host(exec, pattern.shape, pattern.indptr, pattern.indices, values)

    @classmethod
    def from_pattern(cls, exec: Executor, pattern: Any, values: Any, dtype: Any = None) -> "Csr":
        """From one pattern (a SciPy sparse matrix: its stored entries, in CSR order, values
        ignored) and the values of every item, an array of shape (N, nnz) whose row i holds
        item i's value of each stored entry of the pattern."""
        shape, row_ptrs, col_idxs, order = pattern_arrays(pattern)
        values = batch_values(values, order.size, dtype)
        return cls._from_host(exec, shape, row_ptrs, col_idxs, values[:, order])

    @classmethod
    def _from_host(cls, exec: Executor, shape, row_ptrs, col_idxs, values) -> "Csr":
        dtype = exec.check_dtype(values.dtype)
        check_finite(values, row_ptrs, col_idxs)
        return cls(exec, shape, exec.from_host(np.asarray(row_ptrs, INDEX_DTYPE)),
                   exec.from_host(np.asarray(col_idxs, INDEX_DTYPE)),
                   exec.from_host(np.ascontiguousarray(values, dtype=dtype)))

    def to_scipy(self) -> list[sp.csr_matrix]:
        """The items as a list of SciPy CSR matrices (host copies)."""
        row_ptrs, col_idxs, values = self.executor.to_host(self.row_ptrs, self.col_idxs, self.values)
        return [sp.csr_matrix((v, col_idxs, row_ptrs), shape=self.common_size) for v in values]

    def to_csr(self) -> "Csr":
        return self

    def clone(self, exec: Executor | None = None) -> "Csr":
        """A copy, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        return Csr(exec, self.common_size, *exec.copy_arrays(self.executor, self.row_ptrs, self.col_idxs,
                                                             self.values))

    # -- BatchLinOp: SpMV --------------------------------------------------------------------------
    def _apply_impl(self, b: MultiVector, x: MultiVector) -> None:
        # x_i = A_i b_i
        self.executor.run("batch.matrix.csr.spmv", self, b, x)
