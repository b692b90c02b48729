"""Direct: a sparse direct solver, x = A^-1 b by a factorization and two triangular solves
(Ginkgo's experimental::solver::Direct).

``generate(A)`` factorizes A once with ``factorization`` (gk.factorization.Lu by default,
Cholesky for Hermitian positive definite matrices; or takes an already generated one as A)
and prepares the triangular solvers of its factors on the executor (LowerTrs / UpperTrs,
"sparselib": exact substitution, level-scheduled on OpenCL). Each apply is

    t = R b,  y = L^-1 t,  z = U^-1 y,  x = C^T z     (A[R][:, C] = L U)

on the executor, exact to rounding. On the host (the reference executor) the factorization's
own SuperLU solve does the same two substitutions on its supernodal factors, without making
L and U explicit. x's initial contents are not used.
"""
from __future__ import annotations

from typing import Any

import attrs

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, as_factory, integer, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.factorization.lu import Lu
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.upper_trs import UpperTrs


class Direct(EnableBuild, LinOp):
    """A sparse direct solver: factorize once, then each apply solves exactly.

    Use it for systems an iterative method finds hard (indefinite, badly conditioned, zero
    diagonals), many right-hand sides with one matrix, as the coarsest solver of a Multigrid
    (``with_coarsest_solver(gk.solver.Direct.build())``) or as the local solver of a Schwarz
    preconditioner. Factorization time and memory grow with the fill: best up to some 1e5 rows
    of a 2D problem, fewer in 3D. ``ginkpy solve --solver direct`` and ``ginkpy.linalg.spsolve``
    / ``splu`` use it.

    Parameters
    ----------
    factorization : factory, optional
        ``gk.factorization.Lu.build()`` (default: threshold partial pivoting, any nonsingular
        matrix) or ``gk.factorization.Cholesky.build()`` (Hermitian positive definite matrices);
        each takes ``with_ordering`` (default ``gk.reorder.Amd``).
    num_rhs : int, default 1
        Ginkgo's hint of the right-hand sides to prepare for: accepted for its configurations
        (ginkpy sizes its work per apply).

    Examples
    --------
    >>> solver = gk.solver.Direct.build().on(exec).generate(A)
    >>> solver.apply(b, x)                  # x = A^-1 b
    >>> chol = gk.solver.Direct.build().with_factorization(gk.factorization.Cholesky.build()).on(exec).generate(A)
    """

    @parameters
    class Parameters(Parameters):
        factorization: Any = None
        num_rhs: int = attrs.field(default=1, validator=integer(min=1))

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        fact = system_matrix
        if not isinstance(fact, Lu):
            fact = as_factory(self.parameters.factorization or Lu.build(), exec).generate(system_matrix)
            if not isinstance(fact, Lu):
                raise TypeError(f"Direct: the factorization must be gk.factorization.Lu or Cholesky (a complete "
                                f"factorization), not {type(fact).__name__}; for an incomplete one use "
                                f"gk.preconditioner.Ilu")
        LinOp.__init__(self, exec, fact.shape, fact.dtype)
        self.factorization = fact
        # on the host: SuperLU's own triangular solves with its factorization
        self.host_plan = fact.host_plan if exec.same_memory(exec.host) else None
        if self.host_plan is not None:
            return
        L, U = (f.to_executor(exec) for f in fact.factors)
        self.lower_solver = LowerTrs.build().on(exec).generate(L)
        self.upper_solver = UpperTrs.build().on(exec).generate(U)
        self.row_permutation = fact.row_permutation.to_executor(exec)
        self.inverse_column_permutation = fact.column_permutation.compute_inverse().to_executor(exec)
        self._work: tuple[Dense, Dense] | None = None

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if self.host_plan is not None:
            # x = A^-1 b: SuperLU's permutations and substitutions, on the host
            self.executor.host.run("factorization.lu.solve", self.host_plan, b, x)
            return
        if self._work is None or self._work[0].shape != b.shape:
            self._work = (b.empty_like(), b.empty_like())
        t, y = self._work
        # t = R b
        self.row_permutation.apply(b, t)
        # y = L^-1 t
        self.lower_solver.apply(t, y)
        # t = U^-1 y
        self.upper_solver.apply(y, t)
        # x = C^T t
        self.inverse_column_permutation.apply(t, x)
