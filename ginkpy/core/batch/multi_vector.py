"""MultiVector: the right-hand sides and solutions of a batch (Ginkgo's ``gko::batch::MultiVector``).

N items of n x k values, stored as one executor array of shape (N, n, k), row-major: entry
(i, r, c) at (i n + r) k + c. Built from a NumPy array of shape (N, n) (one vector per item,
k = 1) or (N, n, k); :meth:`to_numpy` gives back the shape it was built from.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.polymorphic_object import PolymorphicObject
from ginkpy.core.matrix.dense import Dense, value_dtype


class MultiVector(PolymorphicObject):
    """N items of n x k values on an executor (Ginkgo's ``batch::MultiVector``): the
    right-hand sides and solutions of the batched solvers, ``values`` an array of shape
    (N, n, k).

    Make one with :meth:`from_numpy` (an (N, n) array gives N vectors, read back as (N, n)),
    :meth:`zeros` or :meth:`empty`; read it with :meth:`to_numpy`.

    Parameters
    ----------
    exec : Executor
        Where ``values`` lives.
    values : array
        The executor's array of shape (N, n, k).
    vectors : bool, default False
        Made from an (N, n) array: :meth:`to_numpy` gives (N, n) again (k = 1 only).

    Examples
    --------
    >>> B = gk.batch.MultiVector.from_numpy(exec, np.ones((100, 16)))     # 100 vectors of 16
    >>> X = gk.batch.MultiVector.zeros(exec, (100, 16))
    >>> X.to_numpy().shape
    (100, 16)
    """

    def __init__(self, exec: Executor, values: Any, vectors: bool = False) -> None:
        if len(values.shape) != 3:
            raise ValueError(f"MultiVector values must have shape (N, n, k), got {values.shape}")
        super().__init__(exec)
        self.values = values
        self.dtype = np.dtype(values.dtype)
        self.vectors = bool(vectors) and values.shape[2] == 1  # built from (N, n): to_numpy gives (N, n)

    @property
    def num_batch_items(self) -> int:
        return int(self.values.shape[0])

    @property
    def common_size(self) -> tuple[int, int]:
        """(n, k): rows and columns of each item."""
        return int(self.values.shape[1]), int(self.values.shape[2])

    # -- creation ----------------------------------------------------------------------------
    @classmethod
    def from_numpy(cls, exec: Executor, array: Any, dtype: Any = None) -> "MultiVector":
        """From a NumPy array of shape (N, n) (a vector per item) or (N, n, k), copied to ``exec``."""
        array = np.asarray(array)
        if array.ndim not in (2, 3):
            raise ValueError(f"MultiVector.from_numpy needs an array of shape (N, n) (one vector per batch "
                             f"item) or (N, n, k), got shape {array.shape}")
        dtype = exec.check_dtype(value_dtype(array.dtype if dtype is None else dtype, "MultiVector"))
        shape = array.shape + (1,) if array.ndim == 2 else array.shape
        source = array.reshape(shape)
        if source.dtype == dtype:  # a copy as it is (a GPU's through its staging ring, by its staging threads)
            values = exec.from_host(source)  # (each executor's from_host makes it contiguous)
        else:  # converted a chunk of items at a time: a GPU copies each as soon as it is in its staging buffer
            values = exec.upload_rows(shape, dtype, lambda rows, start: np.copyto(
                rows, source[start:start + rows.shape[0]], casting="unsafe"))
        return cls(exec, values, vectors=array.ndim == 2)

    @classmethod
    def empty(cls, exec: Executor, shape: tuple[int, ...], dtype: Any = np.float64) -> "MultiVector":
        """Uninitialized values of ``shape`` (N, n) or (N, n, k)."""
        full, vectors = _shape3(shape)
        return cls(exec, exec.alloc(full, exec.check_dtype(dtype)), vectors=vectors)

    @classmethod
    def zeros(cls, exec: Executor, shape: tuple[int, ...], dtype: Any = np.float64) -> "MultiVector":
        """Zeros of ``shape`` (N, n) or (N, n, k)."""
        full, vectors = _shape3(shape)
        values = exec.alloc(full, exec.check_dtype(dtype))
        if values.size:  # filled on the executor: nothing copied from the host
            exec.run("matrix.dense.fill", Dense(exec, values.reshape(values.size, 1)), 0.0)
        return cls(exec, values, vectors=vectors)

    def empty_like(self) -> "MultiVector":
        return MultiVector(self.executor, self.executor.alloc(self.values.shape, self.dtype), self.vectors)

    def to_numpy(self) -> np.ndarray:
        """The values on the host: shape (N, n) if built from (N, n), else (N, n, k)."""
        host = self.executor.to_host(self.values)
        return host[:, :, 0] if self.vectors else host

    def clone(self, exec: Executor | None = None) -> "MultiVector":
        """A copy, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        return MultiVector(exec, *exec.copy_arrays(self.executor, self.values), vectors=self.vectors)

    def copy_from(self, other: "MultiVector") -> "MultiVector":
        """Copy ``other``'s values (same shape, any executor) into this MultiVector."""
        if other.values.shape != self.values.shape:
            raise ValueError(f"copy_from: shape {other.values.shape} does not match {self.values.shape}")
        self.values = self.executor.copy_arrays(other.executor, other.values)[0]
        return self

    def __repr__(self) -> str:
        N, (n, k) = self.num_batch_items, self.common_size
        return f"MultiVector({N} items of {n} x {k}, {self.dtype}, {self.executor!r})"


def _shape3(shape: Any) -> tuple[tuple[int, int, int], bool]:
    """(N, n, k) from (N, n) or (N, n, k), and whether it was (N, n)."""
    shape = tuple(int(s) for s in shape)
    if len(shape) not in (2, 3) or min(shape) < 0:
        raise ValueError(f"a MultiVector shape is (N, n) or (N, n, k) with sizes >= 0, got {shape}")
    return (shape + (1,) if len(shape) == 2 else shape), len(shape) == 2
