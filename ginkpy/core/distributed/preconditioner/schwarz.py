"""Schwarz: the non-overlapping additive Schwarz preconditioner of a distributed matrix
(Ginkgo's ``experimental::distributed::preconditioner::Schwarz``): M = diag(S_0, ..., S_p-1),
S_r a local solver or preconditioner of rank r's local block (the rows and columns it owns).

Applying it needs no communication: each rank applies its S_r to its rows. Any ginkpy solver or
preconditioner factory is a local solver (``with_local_solver``): Jacobi gives block-Jacobi
within the ranks' blocks, Ilu an incomplete factorization per rank, Cg an inner solve per rank
(with its own criteria: a fixed iteration count keeps M the same operator at every apply).
Scalar Jacobi as the local solver keeps its ``inverse_diagonal``, which the Krylov solvers
apply inside their own kernels. Complex local solvers work as real ones; ``conj_transpose``
(M^H, for Bicg) conjugate-transposes each.

A local solver that cannot be generated on some rank (a singular block) raises the same error
on every rank.
"""
from __future__ import annotations

from typing import Any

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.distributed.collective import raise_together
from ginkpy.core.distributed.matrix import Matrix
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import generate_preconditioner


class Schwarz(EnableBuild, LinOp):
    """``gk.distributed.preconditioner.Schwarz.build().with_local_solver(gk.preconditioner.Jacobi.build())``"""

    distributed = True

    @parameters
    class Parameters(Parameters):
        local_solver: Any = None

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        if not isinstance(system_matrix, Matrix):
            raise TypeError(f"Schwarz preconditions a gk.distributed.Matrix, not {type(system_matrix).__name__}")
        if self.parameters.local_solver is None:
            raise ValueError("Schwarz needs a local solver: with_local_solver(gk.preconditioner.Jacobi.build()) "
                             "or any solver or preconditioner factory")
        A = system_matrix
        LinOp.__init__(self, exec, A.shape, A.dtype)
        self.comm, self.partition = A.comm, A.partition
        local, error = None, None
        try:
            local = generate_preconditioner(self.parameters.local_solver, A.local_matrix, exec, "local solver")
        except Exception as err:  # noqa: BLE001 - every rank must learn of it, whatever it is
            error = err
        raise_together(A.comm, error, kind=RuntimeError)
        self.local_solver = local

    @property
    def global_shape(self) -> tuple[int, int]:
        n = self.partition.global_size
        return n, n

    @property
    def inverse_diagonal(self) -> Dense | None:
        """D^-1 of this rank's rows (n_local x 1) when the local solver is scalar Jacobi (the
        solvers apply it inside their kernels), else None."""
        return getattr(self.local_solver, "inverse_diagonal", None)

    def transpose(self) -> "Schwarz":
        """M^T: the local solvers transposed."""
        return self._transposed("transpose")

    def conj_transpose(self) -> "Schwarz":
        """M^H: the local solvers conjugate-transposed (transposed for real values: M^T; Bicg
        uses it for its shadow system)."""
        real = self.dtype.kind != "c"
        return self._transposed("transpose" if real and not hasattr(self.local_solver, "conj_transpose")
                                else "conj_transpose")

    def _transposed(self, method: str) -> "Schwarz":
        # the same Schwarz with local_solver.<method>() as its local solver
        if not hasattr(self.local_solver, method):
            raise TypeError(f"the local solver {type(self.local_solver).__name__} has no {method}()")
        out = object.__new__(Schwarz)
        out.__dict__.update(self.__dict__)
        out._loggers = []
        out.local_solver = getattr(self.local_solver, method)()
        return out

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x_r = S_r b_r on every rank (plain Dense views: the local solver's reductions stay local)
        self.local_solver.apply(_local(b), _local(x))

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x_r = alpha S_r b_r + beta x_r
        self.local_solver.apply(alpha, _local(b), beta, _local(x))


def _local(v: Dense) -> Dense:
    """This rank's rows of ``v`` as a plain Dense sharing its values."""
    return Dense(v.executor, v.values)
