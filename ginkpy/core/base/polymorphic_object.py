"""PolymorphicObject: what every operator has, single or batched (Ginkgo's
``PolymorphicObject``): its executor, loggers, and copies onto another executor."""
from __future__ import annotations

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.enable_logging import EnableLogging


class PolymorphicObject(EnableLogging):
    """Base of LinOp and BatchLinOp: ``executor``, the loggers (:class:`EnableLogging`),
    ``clone(exec)`` (a subclass that can be copied implements it) and ``to_executor(exec)``.

    Parameters
    ----------
    exec : Executor
        Where the object lives and computes.

    Examples
    --------
    >>> A = gk.matrix.Csr.from_scipy(gk.ReferenceExecutor(), scipy.sparse.eye(3))
    >>> B = A.to_executor(gk.executor("opencl"))   # a copy on the device
    >>> A.to_executor(A.executor) is A
    True
    """

    def __init__(self, exec: Executor) -> None:
        self.executor = exec
        self._loggers: list = []

    # the operands of apply: their type, how errors name it, and how to make one
    _operand: tuple = (object, "operand", "")

    def _apply_checked(self, b, x, apply_impl):
        """Check b and x (of the ``_operand`` type, not one object, ``_check_operands``), move
        them to the executor, ``apply_impl(b, x)`` there, copy x back; returns x."""
        kind, name, make = self._operand
        for which, v in (("b", b), ("x", x)):
            if not isinstance(v, kind):
                raise TypeError(f"apply: {which} must be a {name} ({make}), not {type(v).__name__}")
        if b is x:
            raise ValueError(f"apply(b, x): b and x are the same {name.split()[-1]}, but x is overwritten while b "
                             f"is read; pass a copy of b (b.clone()) or a separate x")
        self._check_operands(b, x)
        b_local, x_local = b.to_executor(self.executor), x.to_executor(self.executor)
        apply_impl(b_local, x_local)
        if x_local is not x:
            x.copy_from(x_local)
        return x

    def _check_operands(self, b, x) -> None:
        """Raise where b and x do not fit the object (shapes, value types)."""

    def to_executor(self, exec: Executor) -> "PolymorphicObject":
        """This object on ``exec``: itself if already there, else a copy (:meth:`clone`)."""
        return self if exec.same_memory(self.executor) else self.clone(exec)

    def clone(self, exec: Executor | None = None) -> "PolymorphicObject":
        """A copy of this object, on ``exec`` if given (matrices and vectors implement it)."""
        raise NotImplementedError(f"{type(self).__name__} cannot be copied to another executor: "
                                  f"generate it on that executor instead")
