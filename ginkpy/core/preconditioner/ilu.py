"""Ilu: the incomplete-LU preconditioner M = L U, applied as x = U^-1 (L^-1 b) (Ginkgo's
preconditioner::Ilu).

``generate(A)`` factorizes A with the ``factorization`` factory, or takes an already generated
factorization as A, and generates the ``l_solver`` on L and the ``u_solver`` on U; each apply is
the two solvers on the executor.

Unset parameters (None) take the combination that was fastest for whole preconditioned solves
of 2D PDE problems on PoCL (README, benchmarks/bench_ilu.py), and that suits a GPU best, where
a triangular solve costs a launch or a barrier per level: the factorization by ParIlu
(fixed-point sweeps on the executor), the triangular factors applied by ISAI (LowerIsai /
UpperIsai: one SpMV each). ISAI can be a poor inverse of a very non-normal
triangle: the default solvers are kept only if ISAI approximates each factor's inverse on a
random vector v (||v - T M v|| < ||v||, :data:`ISAI_ACCEPTANCE`), else the exact substitution
(LowerTrs / UpperTrs) applies both factors. Set the parameters to choose, e.g. exact ILU(0) with
level-scheduled substitution (``M="ilu0_exact"`` in gk.linalg and the command line):
``Ilu.build().with_factorization(gk.factorization.Ilu.build())
.with_l_solver(gk.solver.LowerTrs.build()).with_u_solver(gk.solver.UpperTrs.build())``.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, as_factory, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.factorization.factorization import Factorization
from ginkpy.core.factorization.par_ilu import ParIlu
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.preconditioner.isai import LowerIsai, UpperIsai
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.upper_trs import UpperTrs

ISAI_ACCEPTANCE = 1.0  # the default ISAI is kept while ||v - T M v|| / ||v|| is below this


def inverse_error(solver: LinOp, factor: Csr) -> float:
    """||v - T (solver v)|| / ||v|| for a fixed random v: how well ``solver`` inverts T."""
    exec = factor.executor
    v = Dense.from_numpy(exec, np.random.default_rng(0).standard_normal(factor.shape[0]), factor.dtype)
    y, r = v.empty_like(), v.clone()
    solver.apply(v, y)
    # r = v - T y
    factor.apply(-1.0, y, 1.0, r)
    v_norm = float(v.compute_norm2().to_numpy()[0, 0])
    return float(r.compute_norm2().to_numpy()[0, 0]) / v_norm if v_norm else 0.0


class Ilu(EnableBuild, LinOp):
    """``gk.preconditioner.Ilu.build().with_factorization(...).with_l_solver(...).with_u_solver(...)``"""

    default_factorization: type = ParIlu  # Ic: ParIc

    @parameters
    class Parameters(Parameters):
        l_solver: Any = None
        u_solver: Any = None
        factorization: Any = None

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        params = self.parameters
        fact = system_matrix
        if not isinstance(fact, Factorization):
            fact = as_factory(params.factorization or self.default_factorization.build(), exec).generate(system_matrix)
            if not isinstance(fact, Factorization):
                raise TypeError(f"the factorization parameter must build a factorization "
                                f"(gk.factorization.ParIlu.build(), ...), not {type(fact).__name__}")
        LinOp.__init__(self, exec, fact.shape, fact.dtype)
        self.factorization = fact
        first, second = (f.to_executor(exec) for f in fact.factors)
        self.l_solver, self.u_solver = self._solvers(first, second)
        self._tmp: Dense | None = None

    def _solvers(self, first: Csr, second: Csr) -> tuple[LinOp, LinOp]:
        """The solvers of the two factors: those set, else ISAI if it inverts both well enough,
        else the exact substitution."""
        exec, params = self.executor, self.parameters
        if params.l_solver is not None and params.u_solver is not None:
            return (as_factory(params.l_solver, exec).generate(first),
                    as_factory(params.u_solver, exec).generate(second))
        l_solver, u_solver = self._isai(first, second)
        if max(inverse_error(l_solver, first), inverse_error(u_solver, second)) >= ISAI_ACCEPTANCE:
            l_solver, u_solver = self._exact(first, second)
        return l_solver, u_solver

    def _isai(self, first: Csr, second: Csr) -> tuple[LinOp, LinOp]:
        p, exec = self.parameters, self.executor
        return (as_factory(p.l_solver or LowerIsai.build(), exec).generate(first),
                as_factory(p.u_solver or UpperIsai.build(), exec).generate(second))

    def _exact(self, first: Csr, second: Csr) -> tuple[LinOp, LinOp]:
        p, exec = self.parameters, self.executor
        return (as_factory(p.l_solver or LowerTrs.build(), exec).generate(first),
                as_factory(p.u_solver or UpperTrs.build(), exec).generate(second))

    def transpose(self) -> "Ilu":
        """M^T = L^-T U^-T (Ginkgo's Transposable): the solvers transposed, in the other order."""
        return self._transposed("transpose")

    def conj_transpose(self) -> "Ilu":
        """M^H = L^-H U^-H (M^T for real values): the solvers conjugate-transposed, in the other
        order. Bicg uses it for its shadow system."""
        return self._transposed("conj_transpose")

    def _transposed(self, method: str) -> "Ilu":
        for solver in (self.l_solver, self.u_solver):
            if not hasattr(solver, method):
                raise TypeError(f"{type(self).__name__}.{method}() needs the {method}() of its solvers, "
                                f"which a {type(solver).__name__} does not have")
        out = copy.copy(self)
        out._loggers = []
        # x = L^-H (U^-H b): U's solver first
        out.l_solver, out.u_solver = getattr(self.u_solver, method)(), getattr(self.l_solver, method)()
        out._tmp = None
        return out

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if self._tmp is None or self._tmp.shape != b.shape:
            self._tmp = b.empty_like()
        # y = L^-1 b
        self.l_solver.apply(b, self._tmp)
        # x = U^-1 y
        self.u_solver.apply(self._tmp, x)
