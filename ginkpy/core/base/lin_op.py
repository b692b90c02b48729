"""LinOp: the one interface of every matrix, solver and preconditioner.

``op.apply(b, x)`` computes x = op(b); ``op.apply(alpha, b, beta, x)`` computes
x = alpha * op(b) + beta * x. Operands on another executor are copied to the operator's
executor (and x back again); shapes and value types are checked before any work.
"""
from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.polymorphic_object import PolymorphicObject


class LinOp(PolymorphicObject):
    """A linear operator of ``shape`` (rows, columns) and value type ``dtype`` on ``executor``
    (Ginkgo's ``LinOp``): the one interface of every matrix, solver, preconditioner and
    factorization. ``apply(b, x)`` computes x = op(b), ``apply(alpha, b, beta, x)`` x = alpha
    op(b) + beta x.

    Subclass it for an operator of your own (write ``_apply_impl(b, x)``); every solver takes
    it as a system matrix or preconditioner. An operator of ``gk.distributed`` spans the ranks of
    an MPI communicator (``distributed``): its ``shape`` is that of this rank's part (what the
    kernels work on), ``global_shape`` the whole, and every decision a solve takes on the host
    must be the same on every rank.

    Parameters
    ----------
    exec : Executor
        Where the operator computes; operands elsewhere are copied there and back.
    shape : tuple of int
        (rows, columns).
    dtype : dtype
        The value type of the operands (float32, float64, complex64, complex128).

    Examples
    --------
    >>> class Scale(gk.LinOp):
    ...     def _apply_impl(self, b, x):
    ...         x.copy_from(b); x.scale(gk.matrix.Dense.from_numpy(self.executor, [[2.0]]))
    >>> x = Scale(exec, (n, n), np.float64).apply(b, x)         # x = 2 b
    """

    distributed = False
    _profiler = None  # a gk.log.ProfilerHook attached to this operator

    @property
    def _operand(self) -> tuple:
        return LinOp, "ginkpy matrix", "gk.matrix.Dense.from_numpy(exec, array)"

    def __init__(self, exec: Executor, shape: tuple[int, int], dtype: Any) -> None:
        super().__init__(exec)
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)

    @property
    def global_shape(self) -> tuple[int, int]:
        """The shape of the whole operator: ``shape``, unless the operator is distributed."""
        return self.shape

    # -- loggers: a profiler hook (the others: EnableLogging's) -----------------------------------
    def add_logger(self, logger: Any) -> None:
        """Attach a logger (``gk.log.Convergence()``, ``gk.log.Stream()``) to this operator; a
        ``gk.log.ProfilerHook`` times what runs during its applies."""
        if getattr(logger, "profiles", False):
            if self._profiler is not None:
                raise ValueError("this operator has a ProfilerHook already: remove it first (remove_logger)")
            self._profiler = logger
            self.executor._profiled += 1  # its applies inside another solver's iterations run uncaptured
            return
        super().add_logger(logger)

    def remove_logger(self, logger: Any) -> None:
        """Detach a logger or ProfilerHook added with :meth:`add_logger`."""
        if logger is not None and logger is self._profiler:
            self._profiler = None
            self.executor._profiled -= 1
            return
        super().remove_logger(logger)

    # -- apply -------------------------------------------------------------------------------
    def apply(self, *args: Any) -> Any:
        """``apply(b, x)``: x = op(b). ``apply(alpha, b, beta, x)``: x = alpha op(b) + beta x. Returns x."""
        hook = self.executor._profiler or self._profiler
        if hook is not None:
            return hook.apply(self, lambda: self._apply_args(args))
        return self._apply_args(args)

    def _apply_args(self, args: tuple) -> Any:
        if len(args) == 2:
            b, x = args
            alpha = beta = None
        elif len(args) == 4:
            alpha, b, beta, x = args
        else:
            raise TypeError("apply takes (b, x) or (alpha, b, beta, x)")
        if alpha is None:
            return self._apply_checked(b, x, self._apply_impl)
        exec = self.executor
        return self._apply_checked(b, x, lambda b_, x_: self._apply_advanced_impl(
            dense_scalar(exec, alpha, self.dtype), b_, dense_scalar(exec, beta, self.dtype), x_))

    def _check_operands(self, b: "LinOp", x: "LinOp") -> None:
        n, m = self.shape
        if b.shape[0] != m:
            raise ValueError(f"dimension mismatch: operator is {n} x {m} but b has {b.shape[0]} rows (needs {m})")
        if x.shape != (n, b.shape[1]):
            raise ValueError(f"dimension mismatch: operator is {n} x {m} and b is {b.shape[0]} x {b.shape[1]}, "
                             f"so x must be {n} x {b.shape[1]}, but it is {x.shape[0]} x {x.shape[1]}")
        for name, v in (("b", b), ("x", x)):
            if v.dtype != self.dtype:
                raise TypeError(f"value type mismatch: operator is {self.dtype} but {name} is {v.dtype}; "
                                f"create {name} with dtype={self.dtype}")

    def _apply_impl(self, b: Any, x: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement apply")

    def _apply_advanced_impl(self, alpha: Any, b: Any, beta: Any, x: Any) -> None:
        """Default: x = alpha * op(b) + beta * x through a temporary."""
        tmp = x.clone()
        self._apply_impl(b, tmp)
        x.scale(beta)
        x.add_scaled(alpha, tmp)

    def reduce_sums(self, *partials: Any) -> None:
        """Make the partial sums of reductions over vectors of this operator's rows global:
        nothing for an operator on one executor (every kernel that needs the sums adds them
        up); a distributed operator adds them over its ranks (all ``partials`` given at once in
        one exchange). Solvers call it after each kernel that writes partial sums."""

    def start_sums(self, *partials: Any, extras: dict | None = None) -> None:
        """Start :meth:`reduce_sums` of ``partials``, to be ended by :meth:`finish_sums` after
        work that does not need them (which a distributed operator overlaps with the exchange;
        ``extras``: partial sums it adds to those of ``partials[i]``); nothing on one executor."""

    def finish_sums(self, *partials: Any) -> None:
        """End the :meth:`start_sums` of ``partials``: kernels enqueued after it get the sums."""

    def reduce_flags(self, flags: np.ndarray) -> np.ndarray:
        """The host booleans ``flags`` or-ed over the ranks of a distributed operator (the flags
        themselves on one executor): so that every rank takes the same decision on them."""
        return flags

    def reduce_max(self, values: np.ndarray) -> np.ndarray:
        """The largest of the ranks' host ``values`` for a distributed operator (``values`` on
        one executor): a number every rank decides on alike."""
        return values

    #: whether a solve on this operator must take every host decision alike with other
    #: processes (a distributed operator over several ranks)
    collective_loop = False

    def collective_errors(self, outermost: bool) -> Any:
        """A context around a solve on this operator (the ``outermost`` one, not an inner
        solver's): where the operator spans several ranks, an error raised in the solve on one
        of them is raised on every rank; nothing on one executor."""
        return contextlib.nullcontext()

    def apply_with_dots(self, b: Any, x: Any, u: Any, w: Any, partials: Any) -> None:
        """x = op(b), and into ``partials`` the partial sums of the dot products u . x (and
        w . x, unless w is None) per column, as ``components.reduction.dots`` makes them: the
        dot products a Krylov solver needs right after a product. Operators that can form them
        in the same pass over x (Csr) do so."""
        self.apply(b, x)
        self.executor.run("components.reduction.dots", x, u, w, partials)
        self.reduce_sums(partials)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.shape[0]} x {self.shape[1]}, {self.dtype}, {self.executor!r})"


# gk.matrix.Dense's zeros and as_scalar, registered by ginkpy.core.matrix.dense when it is
# imported (see register_dense)
_DENSE: dict = {}


def register_dense(zeros: Any, as_scalar: Any) -> None:
    """Name how work vectors (``zeros(exec, shape, dtype)``) and scalars (``as_scalar(exec,
    value, dtype)``) of applies are made; called by :mod:`ginkpy.core.matrix.dense` when it is
    imported. Base does not import the formats above it: every operand of an apply is a Dense
    or made of them, so both are registered before any apply needs them."""
    _DENSE.update(zeros=zeros, as_scalar=as_scalar)


def _dense(what: str) -> Any:
    try:
        return _DENSE[what]
    except KeyError:
        raise RuntimeError("no vector type registered: import ginkpy (or ginkpy.core.matrix.dense) "
                           "before applying an operator") from None


def dense_zeros(exec: Executor, shape: tuple[int, int], dtype: Any) -> Any:
    """A ``gk.matrix.Dense`` of zeros (see :func:`register_dense`)."""
    return _dense("zeros")(exec, shape, dtype)


def dense_scalar(exec: Executor, value: Any, dtype: Any) -> Any:
    """``value`` as a 1 x 1 (or 1 x k) ``gk.matrix.Dense`` on ``exec`` (see
    :func:`register_dense`)."""
    return _dense("as_scalar")(exec, value, dtype)


def improve(op: LinOp, b: Any, x: Any, zero_guess: bool) -> None:
    """Apply ``op`` as a smoother: improve the x it is given (from 0 where ``zero_guess``),
    through its ``apply_with_initial_guess`` where it has one, else by a plain apply."""
    if hasattr(op, "apply_with_initial_guess"):
        op.apply_with_initial_guess(b, x, zero_guess)
        return
    if zero_guess:
        x.fill(0.0)
    op.apply(b, x)
