"""Sellp: sliced ELLPACK (SELL-P), ELL storage per slice of ``slice_size`` consecutive rows.

Each slice is padded only to its own longest row, rounded up to a multiple of
``stride_factor``: ``slice_lengths[s]`` entries per row. ``slice_sets`` is the prefix sum of
the slice lengths; entry ``i`` of local row ``r`` of slice ``s`` is at
``(slice_sets[s] + i) * slice_size + r`` (column-major within a slice, as in Ell). Rows past
the last row of the matrix in the last slice are all padding. Padding has column index -1 and
value 0, read without a branch (see :mod:`ginkpy.core.matrix.sparse_format`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.sparse_format import PADDING, PaddedFormat, row_slots, storage_size

DEFAULT_SLICE_SIZE = 64
DEFAULT_STRIDE_FACTOR = 1


class Sellp(PaddedFormat):
    """A sparse matrix in sliced ELLPACK format (Ginkgo's ``matrix::Sellp``): the rows in
    slices of ``slice_size``, each slice padded only to its own longest row (arrays
    ``slice_sets``, ``slice_lengths``, ``col_idxs``, ``values``; the module docstring has the
    layout).

    Use it where row lengths vary between regions of the matrix but little within a few dozen
    consecutive rows: it pads far less than :class:`Ell` and keeps its coalesced reads. Make one
    with :meth:`from_scipy` or :meth:`from_csr`; any solver takes it.

    Parameters
    ----------
    exec : Executor
        Where the four arrays live.
    shape : tuple of int
        (rows, columns); the last slice may extend past the last row.
    slice_sets, slice_lengths : arrays
        The executor's int32 arrays: the prefix sum of the slice lengths (num_slices + 1) and
        each slice's padded row length (num_slices).
    col_idxs, values : arrays
        The stored column indices (int32, -1 for padding) and values.
    slice_size : int, default 64
        Rows per slice.
    stride_factor : int, default 1
        Each slice length is a multiple of it.

    Examples
    --------
    >>> A = gk.matrix.Sellp.from_scipy(exec, scipy.sparse.diags([1, 2, 3]), slice_size=2)
    >>> A.num_slices, A.nnz
    (2, 3)
    """

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

    # -- creation and conversion -----------------------------------------------------------------
    @classmethod
    def from_csr(cls, csr: Csr, slice_size: int = DEFAULT_SLICE_SIZE,
                 stride_factor: int = DEFAULT_STRIDE_FACTOR) -> "Sellp":
        """The entries of ``csr``, on its executor, in slices of ``slice_size`` rows whose
        lengths are multiples of ``stride_factor``. Built with numpy on the host (a one-time
        cost at creation)."""
        cls._check_csr(csr)
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

    def _slot_rows(self, size: int) -> np.ndarray:
        # stored element e belongs to local row e % slice_size of the slice s whose set holds e // slice_size
        slice_sets = self.executor.to_host(self.slice_sets)
        slices = np.searchsorted(slice_sets, np.arange(size) // self.slice_size, side="right") - 1
        return slices * self.slice_size + np.arange(size) % self.slice_size

    def clone(self, exec: Executor | None = None) -> "Sellp":
        """A copy of this matrix, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        arrays = exec.copy_arrays(self.executor, self.slice_sets, self.slice_lengths, self.col_idxs, self.values)
        return Sellp(exec, self.shape, *arrays, self.slice_size, self.stride_factor)


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
