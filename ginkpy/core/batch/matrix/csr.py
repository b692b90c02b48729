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
from ginkpy.core.batch.matrix import batch_pattern
from ginkpy.core.batch.multi_vector import MultiVector


class Csr(BatchLinOp):
    """N sparse matrices in CSR format sharing one pattern (``row_ptrs``, ``col_idxs``) with
    values (N, nnz) on an executor (Ginkgo's ``batch::matrix::Csr``).

    The system matrix of the batched solvers: make it with :meth:`from_scipy` from N SciPy
    matrices of one pattern (or one pattern and an (N, nnz) array of values).

    Parameters
    ----------
    exec : Executor
        Where the arrays live.
    common_size : tuple of int
        (rows, columns) of every item.
    row_ptrs, col_idxs : arrays
        The shared pattern (int32).
    values : array
        The executor's (N, nnz) array of every item's values.

    Examples
    --------
    >>> A = gk.batch.matrix.Csr.from_scipy(exec, [S1, S2, S3])
    >>> A.num_batch_items, A.nnz
    >>> X = A.apply(B, X)                       # X_i = A_i B_i
    """

    kind = "csr"  # what the backends' batched kernels dispatch on (a batch format), not its type

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
        """From a list of SciPy sparse matrices, one per item, all of one shape and sparsity
        pattern (the stored entries, explicit zeros included), or from a 3-D NumPy array (N, n,
        m) or a list of 2-D arrays (the pattern: every position nonzero in some item).

        The pattern is checked and the values gathered in one pass (no copy of each matrix), and
        they reach ``exec`` in one transfer. An item whose pattern differs is an error naming it.

        Parameters
        ----------
        exec : Executor
            Where the batch lives.
        matrices : list of scipy.sparse matrices or arrays, or numpy.ndarray of shape (N, n, m)
            The items, in order.
        dtype : numpy dtype, optional
            Value type (default: that of the items; integers become float64).

        Examples
        --------
        >>> items = [scipy.sparse.diags([1.0 + i, 4.0, 1.0 + i], [-1, 0, 1], shape=(5, 5)).tocsr()
        ...          for i in range(3)]
        >>> A = gk.batch.matrix.Csr.from_scipy(gk.ReferenceExecutor(), items)
        >>> A.shape, A.nnz
        ((3, 5, 5), 13)
        """
        if isinstance(matrices, np.ndarray) and matrices.ndim == 3:
            return cls.from_host_batch(exec, batch_pattern.from_dense(matrices, dtype))
        return cls.from_host_batch(exec, batch_pattern.from_list(matrices, dtype))

    @classmethod
    def from_pattern(cls, exec: Executor, pattern: Any, values: Any, dtype: Any = None) -> "Csr":
        """From one pattern (a SciPy sparse matrix: its stored entries, in CSR order, values
        ignored) and the values of every item, an array of shape (N, nnz) whose row i holds
        item i's value of each stored entry of the pattern (duplicates summed, as SciPy does)."""
        return cls.from_host_batch(exec, batch_pattern.from_scipy_pattern(pattern, values, dtype))

    @classmethod
    def from_arrays(cls, exec: Executor, row_ptrs: Any, col_idxs: Any, values: Any, shape: Any = None,
                    dtype: Any = None) -> "Csr":
        """From the arrays of one CSR pattern and the values of every item.

        Parameters
        ----------
        exec : Executor
            Where the batch lives.
        row_ptrs, col_idxs : array_like of int
            The shared pattern, as SciPy's ``indptr`` and ``indices`` (columns in any order
            within a row; duplicates are summed).
        values : array_like of shape (N, nnz)
            Row i: item i's value of each stored entry, in the order of ``col_idxs``.
        shape : (int, int), optional
            Rows and columns of each item (default n x n, n = len(row_ptrs) - 1).
        dtype : numpy dtype, optional
            Value type (default: that of ``values``).

        Examples
        --------
        >>> P = scipy.sparse.eye(4, format="csr")
        >>> A = gk.batch.matrix.Csr.from_arrays(gk.ReferenceExecutor(), P.indptr, P.indices, np.ones((10, 4)))
        >>> A.shape
        (10, 4, 4)
        """
        return cls.from_host_batch(exec, batch_pattern.from_arrays(row_ptrs, col_idxs, values, shape, dtype))

    @classmethod
    def from_host_batch(cls, exec: Executor, batch: batch_pattern.HostBatch, verify: bool = True) -> "Csr":
        """The batch built on the host (see ginkpy/core/batch/matrix/batch_pattern.py) on ``exec``
        (``verify=False``: its pattern check left to the caller, see ``batch_pattern.upload``)."""
        values = batch_pattern.upload(exec, batch, verify=verify)
        return cls(exec, batch.shape, exec.from_host(batch.row_ptrs), exec.from_host(batch.col_idxs), values)

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
