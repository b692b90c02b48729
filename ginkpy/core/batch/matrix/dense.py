"""Dense: a batch of N dense matrices (Ginkgo's ``gko::batch::matrix::Dense``), ``values`` of
shape (N, n, m), each item row-major."""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.matrix import batch_pattern
from ginkpy.core.batch.matrix.batch_pattern import check_finite
from ginkpy.core.batch.matrix.csr import Csr
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.matrix.dense import Dense as SingleDense
from ginkpy.core.matrix.dense import value_dtype


class Dense(BatchLinOp):
    """N dense n x m matrices on an executor (``values``: an array of shape (N, n, m); Ginkgo's
    ``batch::matrix::Dense``).

    Use it for batches of small dense systems (a few dozen rows); sparse items are faster as
    a batch Csr or Ell.

    Parameters
    ----------
    exec : Executor
        The executor of ``values``.
    values : array
        The executor's array of shape (N, n, m); :meth:`from_numpy` makes it from host data.

    Examples
    --------
    >>> A = gk.batch.matrix.Dense.from_numpy(exec, np.stack([np.eye(4)] * 10))
    >>> A.common_size
    (4, 4)
    """

    kind = "dense"  # what the backends' batched kernels dispatch on (a batch format), not its type

    def __init__(self, exec: Executor, values: Any) -> None:
        super().__init__(exec, values.shape[0], values.shape[1:], values.dtype)
        self.values = values

    @classmethod
    def from_numpy(cls, exec: Executor, array: Any, dtype: Any = None) -> "Dense":
        """From a NumPy array of shape (N, n, m) or a list of N matrices (2-D arrays, or SciPy
        sparse matrices of one pattern), copied to ``exec`` in one transfer.

        Parameters
        ----------
        exec : Executor
            Where the batch lives.
        array : numpy.ndarray of shape (N, n, m), or list of N matrices
            The items, in order.
        dtype : numpy dtype, optional
            Value type (default: that of the items; integers become float64).

        Examples
        --------
        >>> A = gk.batch.matrix.Dense.from_numpy(gk.ReferenceExecutor(), np.stack([np.eye(3)] * 4))
        >>> A.shape
        (4, 3, 3)
        """
        if isinstance(array, (list, tuple)) and any(sp.issparse(m) for m in array):
            batch = batch_pattern.from_list(array, dtype)
            N, (n, m) = batch.num_items, batch.shape
            positions = np.repeat(np.arange(n), np.diff(batch.row_ptrs)) * m + batch.col_idxs

            def write(out: np.ndarray) -> None:
                out[...] = 0
                out.reshape(N, n * m)[:, positions] = batch.values()
            return cls(exec, batch_pattern.upload(exec, batch, (N, n, m), write))
        array = np.asarray(array)
        if array.ndim != 3:
            raise ValueError(f"a batch Dense needs an array of shape (N, n, m), got shape {array.shape}")
        if array.shape[0] == 0:
            raise ValueError("a batch needs at least one item: the array has N = 0 items")
        dtype = exec.check_dtype(value_dtype(array.dtype if dtype is None else dtype, "matrix"))
        values = exec.upload(array.shape, dtype, lambda out: np.copyto(out, array, casting="same_kind"))
        if array.size and not exec.run("matrix.dense.is_finite", SingleDense(exec, values.reshape(array.size, 1))):
            check_finite(array, None, None)
        return cls(exec, values)

    def to_numpy(self) -> np.ndarray:
        """The (N, n, m) values on the host."""
        return self.executor.to_host(self.values)

    def to_scipy(self) -> list[sp.csr_matrix]:
        return [sp.csr_matrix(m) for m in self.to_numpy()]

    def to_csr(self) -> Csr:
        """A batch Csr holding every entry (zeros included: one pattern for all items)."""
        N, (n, m) = self.num_batch_items, self.common_size
        row_ptrs = np.arange(n + 1) * m
        col_idxs = np.tile(np.arange(m), n)
        return Csr.from_arrays(self.executor, row_ptrs, col_idxs, self.to_numpy().reshape(N, n * m),
                               self.common_size)

    def clone(self, exec: Executor | None = None) -> "Dense":
        exec = self.executor if exec is None else exec
        return Dense(exec, *exec.copy_arrays(self.executor, self.values))

    def _apply_impl(self, b: MultiVector, x: MultiVector) -> None:
        # x_i = A_i b_i
        self.executor.run("batch.matrix.dense.spmv", self, b, x)
