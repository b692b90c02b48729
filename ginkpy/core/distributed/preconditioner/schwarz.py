"""Schwarz: the non-overlapping additive Schwarz preconditioner of a distributed matrix
(Ginkgo's ``experimental::distributed::preconditioner::Schwarz``): M = diag(S_0, ..., S_p-1),
S_r a local solver or preconditioner of rank r's local block (the rows and columns it owns),
and, with a coarse level, two-level Schwarz: M = diag(S_r) + P C P^T.

Applying it needs no communication: each rank applies its S_r to its rows. Any ginkpy solver or
preconditioner factory is a local solver (``with_local_solver``): Jacobi gives block-Jacobi
within the ranks' blocks, Ilu an incomplete factorization per rank, Cg an inner solve per rank
(with its own criteria: a fixed iteration count keeps M the same operator at every apply).
Scalar Jacobi as the local solver keeps its ``inverse_diagonal``, which the Krylov solvers
apply inside their own kernels. Complex local solvers work as real ones; ``conj_transpose``
(M^H, for Bicg) conjugate-transposes each.

Two-level (``with_coarse_level(gk.multigrid.Pgm.build())``): the local solves see only their
block, so their iterations grow with the ranks; a coarse correction carries the error across
them. The coarse space is aggregation's, as the distributed Multigrid's first level (each rank
aggregates its rows, P piecewise constant; the coarse matrix A_c = R A P over the ranks), and
C is ``coarse_solver`` generated on A_c (default: one cycle of ``gk.solver.Multigrid``, which
gathers A_c onto every rank once it is small). The correction is added to the local solves
(``coarse_weight`` < 0, the default: M = diag(S_r) + P C P^T) or blended with them (w in
[0, 1]: M = (1 - w) diag(S_r) + w P C P^T), as Ginkgo's ``coarse_weight``. Restriction and
prolongation need no communication (the aggregates are within the ranks); C's apply does.

A local solver that cannot be generated on some rank (a singular block) raises the same error
on every rank.
"""
from __future__ import annotations

from typing import Any

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, as_factory, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.distributed.collective import raise_together
from ginkpy.core.distributed.matrix import Matrix
from ginkpy.core.distributed.multigrid import aggregate
from ginkpy.core.distributed.vector import Vector
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.multigrid.pgm import Pgm
from ginkpy.core.solver.multigrid import Multigrid
from ginkpy.core.solver.solver_base import generate_preconditioner


@Matrix.register_local_wrapper
class Schwarz(EnableBuild, LinOp):
    """Additive Schwarz of a ``gk.distributed.Matrix``: a local solver on each rank's block, and
    optionally a coarse correction over the ranks (two-level Schwarz; see the module).

    Use it as the preconditioner of a distributed solve; one-level with a strong local solver
    (Ilu, Ic, a direct solve) where few ranks share the problem, two-level where the iterations
    must not grow with the ranks.

    Parameters
    ----------
    (set with ``with_<name>`` on ``Schwarz.build()``)
    local_solver : factory or LinOp, required
        Generated on each rank's local block (``gk.preconditioner.Jacobi``, ``Ilu``, ``Ic``, a
        few ``Cg`` or ``Ir`` iterations, ``gk.solver.Direct``).
    coarse_level : factory, default None (one level)
        The coarse space: ``gk.multigrid.Pgm.build()`` (aggregation within each rank).
    coarse_solver : factory, default one cycle of ``gk.solver.Multigrid``
        C, generated on the coarse matrix over the ranks.
    coarse_weight : float, default -1
        < 0: the correction is added (M = S + P C P^T); in [0, 1]: blended, (1 - w) S + w P C P^T.

    Examples
    --------
    >>> M = gk.distributed.preconditioner.Schwarz.build().with_local_solver(gk.preconditioner.Ic.build()) \
    ...     .with_coarse_level(gk.multigrid.Pgm.build())
    >>> solver = gk.solver.Cg.build().with_preconditioner(M).with_criteria(...).on(exec).generate(A)
    """

    distributed = True

    @parameters
    class Parameters(Parameters):
        local_solver: Any = None
        coarse_level: Any = None
        coarse_solver: Any = None
        coarse_weight: float = -1.0

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
        self.coarse = self.coarse_solver = None
        params = self.parameters
        if params.coarse_level is not None:
            factory = as_factory(params.coarse_level, exec)
            if not issubclass(factory.parameters.product, Pgm):
                raise TypeError(f"with_coarse_level takes an aggregation (gk.multigrid.Pgm.build()), not "
                                f"{factory.parameters.product.__name__}")
            if not (params.coarse_weight < 0 or 0 <= params.coarse_weight <= 1):
                raise ValueError(f"coarse_weight is < 0 (added) or in [0, 1] (blended), got {params.coarse_weight}")
            self.coarse = aggregate(A, factory)
            if self.coarse.pgm is not None:
                self.coarse.pgm.restrict_op  # R = P^T made now, not inside a captured iteration
            self.coarse_solver = generate_preconditioner(
                Multigrid.build() if params.coarse_solver is None else params.coarse_solver, self.coarse.coarse, exec,
                "coarse solver")
        self._vectors: dict = {}

    @property
    def global_shape(self) -> tuple[int, int]:
        n = self.partition.global_size
        return n, n

    @property
    def inverse_diagonal(self) -> Dense | None:
        """D^-1 of this rank's rows (n_local x 1) when the local solver is scalar Jacobi and
        there is no coarse level (the solvers apply it inside their kernels), else None."""
        return None if self.coarse is not None else getattr(self.local_solver, "inverse_diagonal", None)

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
        if self.coarse is not None:
            raise TypeError("Schwarz with a coarse level has no transpose: use it with Cg, Fcg, Gmres or Bicgstab")
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
        if self.coarse is not None:
            self._add_coarse(b, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x_r = alpha S_r b_r + beta x_r
        if self.coarse is None:
            self.local_solver.apply(alpha, _local(b), beta, _local(x))
            return
        # x = alpha M b + beta x through M b
        y = self._vectors_for(b.shape[1])[2]
        self._apply_impl(b, y)
        x.scale(beta)
        x.add_scaled(alpha, y)

    def _add_coarse(self, b: Dense, x: Dense) -> None:
        """x = x + P C P^T b (or the blend of coarse_weight w: x = (1 - w) x + w P C P^T b)."""
        exec, coarse = self.executor, self.coarse
        coarse_b, coarse_x, _ = self._vectors_for(b.shape[1])
        w = self.parameters.coarse_weight
        if coarse.pgm is not None:
            # b_c = P^T b (this rank's aggregates: no communication)
            coarse.pgm.restrict_op.apply(_local(b), _local(coarse_b))
        self.coarse_solver.apply(coarse_b, coarse_x)
        if 0 <= w <= 1:
            x.scale(1 - w)
            coarse_x.scale(w)
        if coarse.pgm is not None:
            # x = x + P e
            exec.run("solver.multigrid.prolong", coarse.agg, coarse_x, _local(x))

    def _vectors_for(self, k: int) -> tuple:
        """b_c and x_c (distributed, of the coarse rows) and an n_local x k spare, per column count."""
        vectors = self._vectors.get(k)
        if vectors is None:
            exec, part = self.executor, self.coarse.coarse.partition
            vectors = self._vectors[k] = (Vector.zeros(exec, self.comm, part, k, self.dtype),
                                          Vector.zeros(exec, self.comm, part, k, self.dtype),
                                          Vector.zeros(exec, self.comm, self.partition, k, self.dtype))
        return vectors


def _local(v: Dense) -> Dense:
    """This rank's rows of ``v`` as a plain Dense sharing its values."""
    return Dense(v.executor, v.values)
