"""Sellp: sliced ELLPACK (SELL-P), ELL storage per slice of ``slice_size`` consecutive rows.

Each slice is padded only to its own longest row, rounded up to a multiple of
``stride_factor``: ``slice_lengths[s]`` entries per row. ``slice_sets`` is the prefix sum of
the slice lengths; entry ``i`` of local row ``r`` of slice ``s`` is at
``(slice_sets[s] + i) * slice_size + r`` (column-major within a slice, as in Ell). Rows past
the last row of the matrix in the last slice are all padding. Padding has column index -1 and
value 0, read without a branch exactly as in :mod:`ginkpy.core.matrix.ell`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.ell import PADDING, row_slots, storage_size

DEFAULT_SLICE_SIZE = 64
DEFAULT_STRIDE_FACTOR = 1


class Sellp(LinOp):
    """A sparse matrix in SELL-P format on an executor (arrays ``slice_sets``, ``slice_lengths``,
    ``col_idxs``, ``values``; see the module docstring for the layout)."""

    def __init__(self, exec: Executor, shape: tuple[int, int], slice_sets: Any, slice_lengths: Any,
                 col_idxs: Any, values: Any, slice_size: int = DEFAULT_SLICE_SIZE,
                 stride_factor: int = DEFAULT_STRIDE_FACTOR) -> None:
        super().__init__(exec, shape, values.dtype)
        self.slice_size, self.stride_factor = _check_slicing(slice_size, stride_factor)
        self.num_slices = -(-self.shape[0] // self.slice_size)
        if slice_lengths.shape != (self.num_slices,) or slice_sets.shape != (self.num_slices + 1,):
            raise ValueError(f"a Sellp of {self.shape[0]} rows in slices of {self.slice_size} has {self.num_slices} "
                             f"slice lengths and {self.num_slices + 1} slice sets, got {slice_lengths.shape} "
                             f"and {slice_sets.shape}")
        if col_idxs.shape != values.shape or values.ndim != 1 or values.size % self.slice_size:
            raise ValueError(f"Sellp column indices and values must be 1-D of the same length, a multiple of "
                             f"slice_size={self.slice_size}; got {col_idxs.shape} and {values.shape}")
        self.slice_sets = slice_sets
        self.slice_lengths = slice_lengths
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
    def from_csr(cls, csr: Csr, slice_size: int = DEFAULT_SLICE_SIZE,
                 stride_factor: int = DEFAULT_STRIDE_FACTOR) -> "Sellp":
        """The entries of ``csr``, on its executor, in slices of ``slice_size`` rows whose
        lengths are multiples of ``stride_factor``. Built with numpy on the host (a one-time
        cost at creation)."""
        if not isinstance(csr, Csr):
            raise TypeError(f"Sellp.from_csr needs a gk.matrix.Csr, not {type(csr).__name__}")
        slice_size, stride_factor = _check_slicing(slice_size, stride_factor)
        matrix = csr.to_scipy()
        n = matrix.shape[0]
        num_slices = -(-n // slice_size)
        # slice length: the slice's longest row, rounded up to a multiple of stride_factor
        lengths = np.zeros(num_slices * slice_size, dtype=np.int64)
        lengths[:n] = np.diff(matrix.indptr)
        longest = lengths.reshape(num_slices, slice_size).max(axis=1, initial=0)
        slice_lengths = -(-longest // stride_factor) * stride_factor
        slice_sets = np.zeros(num_slices + 1, dtype=np.int64)
        np.cumsum(slice_lengths, out=slice_sets[1:])
        size = storage_size(slice_sets[-1], slice_size, "this Sellp")
        col_idxs = np.full(size, PADDING, dtype=INDEX_DTYPE)
        values = np.zeros(size, dtype=matrix.dtype)
        rows, slots = row_slots(matrix)
        # entry i of local row r of slice s at (slice_sets[s] + i) * slice_size + r
        pos = (slice_sets[rows // slice_size] + slots) * slice_size + rows % slice_size
        col_idxs[pos] = matrix.indices
        values[pos] = matrix.data
        exec = csr.executor
        return cls(exec, matrix.shape, exec.from_host(slice_sets.astype(INDEX_DTYPE)),
                   exec.from_host(slice_lengths.astype(INDEX_DTYPE)), exec.from_host(col_idxs),
                   exec.from_host(values), slice_size, stride_factor)

    @classmethod
    def from_scipy(cls, exec: Executor, matrix: Any, dtype: Any = None, **kwargs: Any) -> "Sellp":
        """From any scipy.sparse matrix or array (or dense numpy array), through :meth:`Csr.from_scipy`."""
        return cls.from_csr(Csr.from_scipy(exec, matrix, dtype), **kwargs)

    def to_scipy(self) -> sp.csr_matrix:
        """A scipy.sparse.csr_matrix copy on the host, padding dropped (built with numpy)."""
        slice_sets, cols, values = self.executor.to_host(self.slice_sets, self.col_idxs, self.values)
        # stored element e belongs to local row e % slice_size of the slice s whose set holds e // slice_size
        slot_rows = np.arange(cols.size) // self.slice_size
        slices = np.searchsorted(slice_sets, slot_rows, side="right") - 1
        rows = slices * self.slice_size + np.arange(cols.size) % self.slice_size
        real = cols != PADDING
        return sp.csr_matrix((values[real], (rows[real], cols[real])), shape=self.shape)

    def to_csr(self) -> Csr:
        """A Csr copy on the same executor (built with numpy on the host, a one-time cost)."""
        return Csr.from_scipy(self.executor, self.to_scipy())

    def clone(self, exec: Executor | None = None) -> "Sellp":
        """A copy of this matrix, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        arrays = exec.copy_arrays(self.executor, self.slice_sets, self.slice_lengths, self.col_idxs, self.values)
        return Sellp(exec, self.shape, *arrays, self.slice_size, self.stride_factor)


    def is_finite(self) -> bool:
        """True when no stored value is NaN or infinite."""
        return Dense(self.executor, self.values.reshape(self.values.size, 1)).is_finite()

    # -- LinOp: SpMV ------------------------------------------------------------------------------
    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x = A b
        self.executor.run("matrix.sellp.spmv", self, b, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha A b + beta x
        self.executor.run("matrix.sellp.advanced_spmv", alpha, self, b, beta, x)

    def __repr__(self) -> str:
        return (f"Sellp({self.shape[0]} x {self.shape[1]}, slice_size={self.slice_size}, "
                f"stride_factor={self.stride_factor}, {self.dtype}, {self.executor!r})")


def _check_slicing(slice_size: Any, stride_factor: Any) -> tuple[int, int]:
    for name, value in (("slice_size", slice_size), ("stride_factor", stride_factor)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"Sellp {name} must be a positive integer, got {value!r}")
    return int(slice_size), int(stride_factor)
