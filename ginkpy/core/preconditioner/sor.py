"""Sor: the (symmetric) successive over-relaxation preconditioner (Ginkgo's preconditioner::Sor).

With A = D + L + U (D the diagonal, L and U the strictly lower and upper parts) and the
relaxation factor omega (0 < omega < 2, default 1.2 as Ginkgo's), SOR is M = (D + omega L) / omega
and SSOR (``symmetric``) is M = (D + omega L) D^-1 (D + omega U) / (omega (2 - omega)); the
operator applies M^-1 (Saad, Iterative Methods for Sparse Linear Systems, 4.1). Gauss-Seidel is
omega = 1 (:class:`ginkpy.core.preconditioner.gauss_seidel.GaussSeidel`).

``generate(A)`` writes the factors on the executor, as Ginkgo does: the lower factor
D / omega + L and, for SSOR, the upper factor D^-1 (D + omega U) / (2 - omega), then generates
``l_solver`` (default LowerTrs) on the first and ``u_solver`` (default UpperTrs) on the second.
Each apply is the triangular solves, on the executor: exact substitution, level-scheduled on
OpenCL, or e.g. ``gk.solver.LowerTrs.build().with_algorithm("jacobi")`` for a few Jacobi sweeps
of fixed cost instead. A zero or missing diagonal entry is refused at generate().

As a multigrid smoother (``gk.solver.Multigrid.build().with_pre_smoother(Sor.build())``) it
relaxes the x it is given: x = x + M^-1 (b - A x) (:meth:`Sor.apply_with_initial_guess`), and
without a post-smoother of its own the cycle post-smooths with the backward sweep
M = (D + omega U) / omega (:meth:`Sor.backward`), so that the cycle stays symmetric for CG.
"""
from __future__ import annotations

import copy
from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, as_factory, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.checks import system_csr
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense, as_scalar
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.upper_trs import UpperTrs

DEFAULT_RELAXATION_FACTOR = 1.2  # Ginkgo's


def _check_bool(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"with_{attribute.name} takes True or False, not {value!r}")


def _check_relaxation_factor(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not 0 < value < 2:
        raise ValueError(f"Sor.with_relaxation_factor({value!r}): the relaxation factor must be a number "
                         f"strictly between 0 and 2 (SOR diverges outside); 1 is Gauss-Seidel")


@parameters
class SweepParameters(Parameters):
    """What SOR and Gauss-Seidel take: whether to sweep back as well (``symmetric``), the solvers of
    the triangular factors, and Ginkgo's ``skip_sorting``."""

    skip_sorting: bool = attrs.field(default=False, validator=_check_bool)
    symmetric: bool = attrs.field(default=False, validator=_check_bool)
    l_solver: Any = None
    u_solver: Any = None


class Sor(EnableBuild, LinOp):
    """(S)SOR preconditioner: x = M^-1 b with M = (D + omega L) / omega, or SSOR's symmetric M.

    Use SSOR (``with_symmetric(True)``) with Cg: its M is symmetric (Hermitian) positive
    definite where A is; SOR suits Gmres, Bicgstab and other nonsymmetric solvers, and both
    are multigrid smoothers.

    Parameters
    ----------
    relaxation_factor : float, default 1.2
        omega, strictly between 0 and 2.
    symmetric : bool, default False
        SSOR (a forward and a backward sweep) instead of SOR (a forward sweep).
    l_solver, u_solver : factory, default LowerTrs / UpperTrs
        The solvers of the lower factor and (SSOR only) the upper factor.
    skip_sorting : bool, default False
        Accepted as Ginkgo's; ginkpy's Csr is always sorted, so nothing is sorted either way.

    Examples
    --------
    >>> M = gk.preconditioner.Sor.build().with_relaxation_factor(1.5).with_symmetric(True)
    >>> solver = gk.solver.Cg.build().with_preconditioner(M).with_criteria(...).on(exe).generate(A)
    >>> x, info = gk.linalg.gmres(A, b, M="sor")
    """

    @parameters
    class Parameters(SweepParameters):
        relaxation_factor: float = attrs.field(default=DEFAULT_RELAXATION_FACTOR, validator=_check_relaxation_factor)

    def __init__(self, factory: Factory, system_matrix: LinOp, backward: bool = False) -> None:
        EnableBuild.__init__(self, factory)
        exec, name = factory.executor, type(self).__name__
        A = system_csr(system_matrix, exec, name)
        LinOp.__init__(self, exec, A.shape, A.dtype)
        self.system_matrix = A
        self.relaxation_factor = self._omega()
        self.symmetric = bool(self.parameters.symmetric)
        self.is_backward = backward and not self.symmetric
        # the patterns of A's lower part (the diagonal last) and upper part (the diagonal first)
        (l_ptrs, l_cols, l_vals), (u_ptrs, u_cols, u_vals), row = exec.run(
            "factorization.factorization.initialize_l_u", A)
        if row < 0:
            L, U = Csr(exec, A.shape, l_ptrs, l_cols, l_vals), Csr(exec, A.shape, u_ptrs, u_cols, u_vals)
            # L = D / omega + L_A;  U = D^-1 (D + omega U_A) / (2 - omega) (SSOR) or D / omega + U_A (backward)
            row = exec.run("preconditioner.sor.initialize_weighted_l_u", A, self.relaxation_factor, L,
                           U if self.symmetric or self.is_backward else None, self.symmetric)
        if row >= 0:
            raise ValueError(f"{name}: the diagonal entry of row {row} is zero or not stored, and Gauss-Seidel and "
                             f"SOR divide by the diagonal; use block-Jacobi (gk.preconditioner.Jacobi with "
                             f"max_block_size > 1) or an ILU preconditioner for this matrix")
        p = self.parameters
        lower = None if self.is_backward else as_factory(p.l_solver or LowerTrs.build(), exec).generate(L)
        upper = as_factory(p.u_solver or UpperTrs.build(), exec).generate(U) \
            if self.symmetric or self.is_backward else None
        # the solvers in the order they are applied: x = M^-1 b = U^-1 (L^-1 b)
        self.solvers = [s for s in (lower, upper) if s is not None]
        self._work: dict = {}
        self._one = as_scalar(exec, 1.0, A.dtype)

    def _omega(self) -> float:
        return float(self.parameters.relaxation_factor)

    @property
    def l_solver(self) -> LinOp | None:
        """The solver of the lower factor D / omega + L (None for the backward sweep)."""
        return None if self.is_backward else self.solvers[0]

    @property
    def u_solver(self) -> LinOp | None:
        """The solver of the upper factor (SSOR and the backward sweep; None for SOR)."""
        return self.solvers[-1] if self.symmetric or self.is_backward else None

    def backward(self) -> "Sor":
        """The backward sweep M = (D + omega U) / omega, with the same parameters (the upper
        factor solved by ``u_solver``): Multigrid post-smooths with it after a forward SOR
        pre-smoother, which keeps the cycle symmetric. SSOR is its own backward sweep."""
        if self.symmetric or self.is_backward:
            return self
        return self.factory.generate(self.system_matrix, backward=True)

    def transpose(self) -> "Sor":
        """M^-T, applied as the transposed solvers in the other order (Ginkgo's Transposable)."""
        return self._transposed("transpose")

    def conj_transpose(self) -> "Sor":
        """M^-H (M^-T for real values): Bicg applies it in its shadow system."""
        return self._transposed("conj_transpose")

    def _transposed(self, method: str) -> "Sor":
        for solver in self.solvers:
            if not hasattr(solver, method):
                raise TypeError(f"{type(self).__name__}.{method}() needs the {method}() of its triangular "
                                f"solvers, which a {type(solver).__name__} does not have")
        out = copy.copy(self)
        out._loggers, out._work = [], {}
        out.solvers = [getattr(s, method)() for s in reversed(self.solvers)]
        return out

    def _vector(self, name: str, like: Dense) -> Dense:
        """A work vector shaped as ``like``, made once per column count."""
        key = (name, like.shape[1])
        if key not in self._work:
            self._work[key] = like.empty_like()
        return self._work[key]

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if len(self.solvers) == 1:
            # x = M^-1 b: one triangular solve
            self.solvers[0].apply(b, x)
            return
        # y = L^-1 b;  x = U^-1 y
        y = self._vector("y", b)
        self.solvers[0].apply(b, y)
        self.solvers[1].apply(y, x)

    def apply_with_initial_guess(self, b: Dense, x: Dense, zero_guess: bool) -> Dense:
        """One relaxation sweep from x: x = x + M^-1 (b - A x); from x = 0 where ``zero_guess``
        (x is then not read): x = M^-1 b. How Multigrid applies a smoother."""
        self._check_operands(b, x)
        if zero_guess:
            self._apply_impl(b, x)
            return x
        r, d = self._vector("r", b), self._vector("d", b)
        # r = b - A x
        self.executor.run("components.relaxation.residual", self.system_matrix, b, x, r)
        # d = M^-1 r;  x = x + d
        self._apply_impl(r, d)
        x.add_scaled(self._one, d)
        return x
