"""Ilu: the incomplete-LU preconditioner M = L U, applied as x = U^-1 (L^-1 b) (Ginkgo's
preconditioner::Ilu).

``generate(A)`` factorizes A with the ``factorization`` factory (default ILU(0),
``gk.factorization.Ilu``), or takes an already generated factorization as A, and generates the
``l_solver`` (default LowerTrs) and ``u_solver`` (default UpperTrs) on the two factors; each
apply is two triangular solves on the executor.
"""
from __future__ import annotations

from typing import Any

import attrs

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, as_factory, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.factorization.factorization import Factorization
from ginkpy.core.factorization.ilu import Ilu as IluFactorization
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.upper_trs import UpperTrs


class Ilu(EnableBuild, LinOp):
    """``gk.preconditioner.Ilu.build().with_l_solver(...).with_u_solver(...).with_factorization(...)``"""

    @parameters
    class Parameters(Parameters):
        l_solver: Any = attrs.field(factory=LowerTrs.build)
        u_solver: Any = attrs.field(factory=UpperTrs.build)
        factorization: Any = attrs.field(factory=IluFactorization.build)

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        fact = system_matrix
        if not isinstance(fact, Factorization):
            fact = as_factory(self.parameters.factorization, exec).generate(system_matrix)
            if not isinstance(fact, Factorization):
                raise TypeError(f"the factorization parameter must build a factorization "
                                f"(gk.factorization.Ilu.build(), ...), not {type(fact).__name__}")
        LinOp.__init__(self, exec, fact.shape, fact.dtype)
        self.factorization = fact
        first, second = (f.to_executor(exec) for f in fact.factors)
        self.l_solver = as_factory(self.parameters.l_solver, exec).generate(first)
        self.u_solver = as_factory(self.parameters.u_solver, exec).generate(second)

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # y = L^-1 b
        y = b.empty_like()
        self.l_solver.apply(b, y)
        # x = U^-1 y
        self.u_solver.apply(y, x)
