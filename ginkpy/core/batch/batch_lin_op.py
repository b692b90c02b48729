"""BatchLinOp: the base of the batched operators (Ginkgo's ``gko::batch::BatchLinOp``).

A batched operator holds N operators of one common size (the batch items) and applies each
to its own item of a :class:`MultiVector`: ``op.apply(b, x)`` computes x_i = op_i(b_i) for
every item i. Operands on another executor are copied to the operator's executor (and x back).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.batch.multi_vector import MultiVector


class BatchLinOp:
    """N operators of size ``common_size`` (rows, columns) and value type ``dtype`` on ``exec``."""

    def __init__(self, exec: Executor, num_batch_items: int, common_size: tuple[int, int], dtype: Any) -> None:
        self.executor = exec
        self.num_batch_items = int(num_batch_items)
        self.common_size = (int(common_size[0]), int(common_size[1]))
        self.dtype = np.dtype(dtype)
        self._loggers: list[Any] = []

    @property
    def shape(self) -> tuple[int, int, int]:
        """(number of items, rows, columns)."""
        return (self.num_batch_items, *self.common_size)

    # -- loggers -----------------------------------------------------------------------------
    def add_logger(self, logger: Any) -> None:
        """Attach a logger (``gk.batch.log.BatchConvergence()``) to this operator."""
        self._loggers.append(logger)

    def remove_logger(self, logger: Any) -> None:
        self._loggers.remove(logger)

    @property
    def loggers(self) -> tuple[Any, ...]:
        return tuple(self._loggers)

    def _log(self, event: str, *args: Any) -> None:
        for logger in self._loggers:
            getattr(logger, event)(self, *args)

    # -- apply -------------------------------------------------------------------------------
    def apply(self, b: MultiVector, x: MultiVector) -> MultiVector:
        """x_i = op_i(b_i) for every batch item i; returns x."""
        return self._apply_checked(b, x, self._apply_impl)

    def _apply_checked(self, b: MultiVector, x: MultiVector, apply_impl) -> MultiVector:
        """Check b and x, move them to the executor, ``apply_impl(b, x)`` there, copy x back."""
        for name, v in (("b", b), ("x", x)):
            if not isinstance(v, MultiVector):
                raise TypeError(f"apply: {name} must be a gk.batch.MultiVector "
                                f"(gk.batch.MultiVector.from_numpy(exec, array)), not {type(v).__name__}")
        if b is x:
            raise ValueError("apply(b, x): b and x are the same MultiVector, but x is overwritten while b is "
                             "read; pass a copy of b (b.clone()) or a separate x")
        self._check_operands(b, x)
        b_local, x_local = b.to_executor(self.executor), x.to_executor(self.executor)
        apply_impl(b_local, x_local)
        if x_local is not x:
            x.copy_from(x_local)
        return x

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

    def to_executor(self, exec: Executor) -> "BatchLinOp":
        """This operator on ``exec``: itself if already there, else a copy (:meth:`clone`)."""
        return self if exec.same_memory(self.executor) else self.clone(exec)

    def clone(self, exec: Executor | None = None) -> "BatchLinOp":
        raise NotImplementedError(f"{type(self).__name__} cannot be copied to another executor: "
                                  f"generate it on that executor instead")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.num_batch_items} items of {self.common_size[0]} x "
                f"{self.common_size[1]}, {self.dtype}, {self.executor!r})")
