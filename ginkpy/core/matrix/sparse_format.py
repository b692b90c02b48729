"""What the sparse formats besides Csr share (Coo, Ell, Sellp, Hybrid): each is made from a Csr
(``from_csr``; from SciPy through Csr) and converted back through the host (``to_scipy``,
``to_csr``); Ell and Sellp pad their rows (:class:`PaddedFormat`): a padding entry has column
index PADDING (-1) and value 0, and kernels read ``b[max(col, 0)]`` and keep the product only
where ``col >= 0`` (relational built-ins instead of a branch, seed 002), so padding adds
exactly nothing even where b holds Inf or NaN, and explicit zeros stay distinguishable from it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lazy import sp
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


class SparseFormat(LinOp):
    """Base of the sparse formats converted from and to Csr (Coo, Ell, Sellp, Hybrid): a
    subclass writes ``from_csr``, ``to_scipy``, ``clone`` and its SpMV; the conversions from
    SciPy and to Csr and the finiteness check of ``values`` are shared. Not used itself.

    Examples
    --------
    >>> ell = gk.matrix.Ell.from_scipy(exec, scipy.sparse.eye(4))
    >>> ell.to_csr().nnz
    4
    """

    @classmethod
    def from_csr(cls, csr: Csr, **kwargs: Any) -> "SparseFormat":
        raise NotImplementedError

    @classmethod
    def _check_csr(cls, csr: Any) -> None:
        if not isinstance(csr, Csr):
            raise TypeError(f"{cls.__name__}.from_csr needs a gk.matrix.Csr, not {type(csr).__name__}")

    @classmethod
    def from_scipy(cls, exec: Executor, matrix: Any, dtype: Any = None, **kwargs: Any) -> "SparseFormat":
        """From any scipy.sparse matrix or array (or dense numpy array), through
        :meth:`Csr.from_scipy`; ``kwargs`` go to :meth:`from_csr`."""
        return cls.from_csr(Csr.from_scipy(exec, matrix, dtype), **kwargs)

    def to_scipy(self) -> sp.csr_matrix:
        raise NotImplementedError

    def to_csr(self) -> Csr:
        """A Csr copy on the same executor (built with numpy on the host, a one-time cost)."""
        return Csr.from_scipy(self.executor, self.to_scipy())

    def is_finite(self) -> bool:
        """True when no stored value is NaN or infinite."""
        return Dense(self.executor, self.values.reshape(self.values.size, 1)).is_finite()


class PaddedFormat(SparseFormat):
    """Base of Ell and Sellp: ``col_idxs`` and ``values`` of the same length, padding entries
    with column PADDING; a subclass says which row each stored slot belongs to
    (:meth:`_slot_rows`). Not used itself.

    Examples
    --------
    >>> sellp = gk.matrix.Sellp.from_scipy(exec, scipy.sparse.eye(4))
    >>> sellp.nnz                               # padding excluded
    4
    """

    _nnz: int | None = None

    @property
    def nnz(self) -> int:
        """Number of stored entries of the matrix, padding excluded (counted on the host once)."""
        if self._nnz is None:
            self._nnz = int(np.count_nonzero(self.executor.to_host(self.col_idxs) != PADDING))
        return self._nnz

    def _slot_rows(self, size: int) -> np.ndarray:
        """The row of each of the ``size`` stored slots."""
        raise NotImplementedError

    def to_scipy(self) -> sp.csr_matrix:
        """A scipy.sparse.csr_matrix copy on the host, padding dropped (built with numpy)."""
        cols, values = self.executor.to_host(self.col_idxs, self.values)
        rows = self._slot_rows(cols.size)
        real = cols != PADDING
        return sp.csr_matrix((values[real], (rows[real], cols[real])), shape=self.shape)
