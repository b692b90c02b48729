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
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense


class Coo(LinOp):
    """A sparse matrix in COO format on an executor (arrays ``row_idxs``, ``col_idxs``, ``values``).

    The entries must be sorted by row (the OpenCL SpMV relies on it): create a Coo with
    :meth:`from_csr` or :meth:`from_scipy`, which sort them, rather than from raw arrays.
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
        if not isinstance(csr, Csr):
            raise TypeError(f"Coo.from_csr needs a gk.matrix.Csr, not {type(csr).__name__}")
        return cls._from_host(csr.executor, csr.to_scipy())

    @classmethod
    def _from_host(cls, exec: Executor, matrix: sp.csr_matrix) -> "Coo":
        """From a host scipy CSR matrix with sorted indices and no duplicates (as Csr holds)."""
        rows = np.repeat(np.arange(matrix.shape[0], dtype=INDEX_DTYPE), np.diff(matrix.indptr))
        return cls(exec, matrix.shape, exec.from_host(rows), exec.from_host(matrix.indices.astype(INDEX_DTYPE)),
                   exec.from_host(matrix.data))

    @classmethod
    def from_scipy(cls, exec: Executor, matrix: Any, dtype: Any = None) -> "Coo":
        """From any scipy.sparse matrix or array (or dense numpy array), through :meth:`Csr.from_scipy`."""
        return cls.from_csr(Csr.from_scipy(exec, matrix, dtype))

    def to_scipy(self) -> sp.csr_matrix:
        """A scipy.sparse.csr_matrix copy on the host."""
        rows, cols, values = self.executor.to_host(self.row_idxs, self.col_idxs, self.values)
        return sp.csr_matrix((values, (rows, cols)), shape=self.shape)

    def to_csr(self) -> Csr:
        """A Csr copy on the same executor (built with numpy on the host, a one-time cost)."""
        return Csr.from_scipy(self.executor, self.to_scipy())

    def clone(self, exec: Executor | None = None) -> "Coo":
        """A copy of this matrix, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        return Coo(exec, self.shape, *exec.copy_arrays(self.executor, self.row_idxs, self.col_idxs, self.values))


    def is_finite(self) -> bool:
        """True when no stored value is NaN or infinite."""
        return Dense(self.executor, self.values.reshape(self.nnz, 1)).is_finite()

    # -- LinOp: SpMV ------------------------------------------------------------------------------
    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x = A b
        self.executor.run("matrix.coo.spmv", self, b, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha A b + beta x
        self.executor.run("matrix.coo.advanced_spmv", alpha, self, b, beta, x)

    def __repr__(self) -> str:
        return f"Coo({self.shape[0]} x {self.shape[1]}, nnz={self.nnz}, {self.dtype}, {self.executor!r})"
