"""Coo: coordinate storage, one (row, column, value) triple per stored entry.

Entries are sorted by row, then column (as :meth:`Coo.from_csr` gives them): the OpenCL SpMV
is a segmented reduction over the sorted rows, which balances the work per entry rather than
per row, so very long rows cost no more than many short ones. Row and column indices are
int32, values float32, float64, complex64 or complex128.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.sparse_format import SparseFormat


class Coo(SparseFormat):
    """A sparse matrix in coordinate format (Ginkgo's ``matrix::Coo``): one (row, column,
    value) triple per stored entry, sorted by row.

    Use it for matrices with a few very long rows (power-law graphs, circuit matrices): its
    SpMV balances the work per entry, so long rows cost no more than many short ones; for
    regular matrices Csr is faster. The entries must be sorted by row (the OpenCL SpMV relies
    on it): create a Coo with :meth:`from_csr` or :meth:`from_scipy`, which sort them.

    Parameters
    ----------
    exec, shape : Executor, tuple of int
        The executor that holds the arrays; (rows, columns).
    row_idxs, col_idxs, values : arrays
        The executor's arrays of the entries (int32 indices), sorted by row.

    Examples
    --------
    >>> A = gk.matrix.Coo.from_scipy(exec, scipy.sparse.random(5, 5, density=0.4))
    >>> x = A.apply(b, x)
    >>> S = A.to_scipy()
    """

    def __init__(self, exec: Executor, shape: tuple[int, int], row_idxs: Any, col_idxs: Any, values: Any) -> None:
        super().__init__(exec, shape, values.dtype)
        self.row_idxs = row_idxs
        self.col_idxs = col_idxs
        self.values = values

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.values.shape[0])

    # -- creation and conversion -----------------------------------------------------------------
    @classmethod
    def from_csr(cls, csr: Csr) -> "Coo":
        """The entries of ``csr``, on its executor. The row indices are expanded from the row
        pointers with numpy on the host (a one-time cost at creation)."""
        cls._check_csr(csr)
        return cls._from_host(csr.executor, csr.to_scipy())

    @classmethod
    def _from_host(cls, exec: Executor, matrix: sp.csr_matrix) -> "Coo":
        """From a host scipy CSR matrix with sorted indices and no duplicates (as Csr holds)."""
        rows = np.repeat(np.arange(matrix.shape[0], dtype=INDEX_DTYPE), np.diff(matrix.indptr))
        return cls(exec, matrix.shape, exec.from_host(rows), exec.from_host(matrix.indices.astype(INDEX_DTYPE)),
                   exec.from_host(matrix.data))

    def to_scipy(self) -> sp.csr_matrix:
        """A scipy.sparse.csr_matrix copy on the host."""
        rows, cols, values = self.executor.to_host(self.row_idxs, self.col_idxs, self.values)
        return sp.csr_matrix((values, (rows, cols)), shape=self.shape)

    def clone(self, exec: Executor | None = None) -> "Coo":
        """A copy of this matrix, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        return Coo(exec, self.shape, *exec.copy_arrays(self.executor, self.row_idxs, self.col_idxs, self.values))


    # -- LinOp: SpMV ------------------------------------------------------------------------------
    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x = A b
        self.executor.run("matrix.coo.spmv", self, b, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha A b + beta x
        self.executor.run("matrix.coo.advanced_spmv", alpha, self, b, beta, x)

    def __repr__(self) -> str:
        return f"Coo({self.shape[0]} x {self.shape[1]}, nnz={self.nnz}, {self.dtype}, {self.executor!r})"
