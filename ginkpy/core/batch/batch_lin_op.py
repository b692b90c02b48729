"""BatchLinOp: the base of the batched operators (Ginkgo's ``gko::batch::BatchLinOp``).

A batched operator holds N operators of one common size (the batch items) and applies each
to its own item of a :class:`MultiVector`: ``op.apply(b, x)`` computes x_i = op_i(b_i) for
every item i. Operands on another executor are copied to the operator's executor (and x back).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.polymorphic_object import PolymorphicObject
from ginkpy.core.batch.multi_vector import MultiVector


class BatchLinOp(PolymorphicObject):
    """N operators of size ``common_size`` (rows, columns) and value type ``dtype`` on ``exec``
    (Ginkgo's ``batch::BatchLinOp``): ``apply(b, x)`` computes x_i = op_i(b_i) for every item i
    of the :class:`MultiVector` operands.

    The base of the batched matrices, solvers and preconditioners of ``gk.batch``; use those.

    Parameters
    ----------
    exec : Executor
        Where the items are stored and computed.
    num_batch_items : int
        N, the number of operators.
    common_size : tuple of int
        (rows, columns) of every item.
    dtype : dtype
        The value type.

    Examples
    --------
    >>> A = gk.batch.matrix.Csr.from_scipy(exec, [S1, S2, S3])       # a BatchLinOp of 3 items
    >>> A.num_batch_items, A.common_size
    >>> x = A.apply(b, x)                       # x_i = A_i b_i
    """

    _operand = (MultiVector, "gk.batch.MultiVector", "gk.batch.MultiVector.from_numpy(exec, array)")

    def __init__(self, exec: Executor, num_batch_items: int, common_size: tuple[int, int], dtype: Any) -> None:
        super().__init__(exec)
        self.num_batch_items = int(num_batch_items)
        self.common_size = (int(common_size[0]), int(common_size[1]))
        self.dtype = np.dtype(dtype)

    @property
    def shape(self) -> tuple[int, int, int]:
        """(number of items, rows, columns)."""
        return (self.num_batch_items, *self.common_size)

    # -- apply -------------------------------------------------------------------------------
    def apply(self, b: MultiVector, x: MultiVector) -> MultiVector:
        """x_i = op_i(b_i) for every batch item i; returns x."""
        return self._apply_checked(b, x, self._apply_impl)

    def _check_operands(self, b: MultiVector, x: MultiVector) -> None:
        N, (n, m) = self.num_batch_items, self.common_size
        for name, v in (("b", b), ("x", x)):
            if v.num_batch_items != N:
                raise ValueError(f"batch size mismatch: the operator has {N} items but {name} has "
                                 f"{v.num_batch_items}")
            if v.dtype != self.dtype:
                raise TypeError(f"value type mismatch: the operator is {self.dtype} but {name} is {v.dtype}; "
                                f"create {name} with dtype={self.dtype}")
        if b.common_size[0] != m:
            raise ValueError(f"dimension mismatch: each item is {n} x {m} but b has {b.common_size[0]} rows "
                             f"per item (needs {m})")
        if x.common_size != (n, b.common_size[1]):
            raise ValueError(f"dimension mismatch: each item is {n} x {m} and b is {b.common_size[0]} x "
                             f"{b.common_size[1]} per item, so x must be {n} x {b.common_size[1]} per item, "
                             f"but it is {x.common_size[0]} x {x.common_size[1]}")

    def _apply_impl(self, b: MultiVector, x: MultiVector) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement apply")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.num_batch_items} items of {self.common_size[0]} x "
                f"{self.common_size[1]}, {self.dtype}, {self.executor!r})")
