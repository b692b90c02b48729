"""Multigrid: algebraic multigrid as a solver or a preconditioner (Ginkgo's ``solver::Multigrid``).

Generation builds the hierarchy: level l's matrix is coarsened by an ``mg_level`` factory
(default ``gk.multigrid.Pgm``; several are used level by level, the last for the rest) into the
next, while a level has more than ``min_coarse_rows`` rows, fewer than ``max_levels`` levels
exist and the coarsening still reduces the rows. The coarsest system is solved by
``coarsest_solver``; by default with its inverse, computed once on the host (LU, or the
pseudo-inverse where the matrix is singular) and applied as a dense product on the device,
when it has at most COARSEST_DENSE_ROWS rows, else by Jacobi-CG to a relative residual of 1e-12.

A cycle on level l: pre-smoothing, the residual restricted (R = P^T), cycles on level l + 1
for the correction (``cycle``: "v" one, "w" two, "f" an F-cycle then a V-cycle), the
correction prolongated and added, post-smoothing. The default cycle is "w" where Ginkgo's is
"v": with aggregation the V-cycle's iterations grow with the grid (CG on 2D Poisson: 38 at
250^2, 48 at 700^2), the W-cycle's do not (18 and 18), for about twice the work per cycle.

The default smoother is Ginkgo's, Ir with scalar Jacobi: ``smoother_iters`` sweeps
x = x + omega D^-1 (b - A x), omega = ``smoother_relax``, before and after; omega is scaled by
2 / rho where Gershgorin's bound rho on the eigenvalues of D^-1 A is above 2 (a fixed 0.9
amplifies the top modes there, as on the FEM matrix ani4; diagonally dominant matrices, every
Laplacian among them, keep omega). The sweeps run as fused kernels with no host round trip:
from x = 0 the first sweep is x = omega D^-1 b, computed with the residual after it in one
kernel, and the prolongation is read on the fly by the first sweep after it, so that a V-cycle
takes three launches a level (restriction the third). ``pre_smoother`` and ``post_smoother``
(default: the pre-smoother) take any solver that improves the x it is given instead
(``gk.solver.Chebyshev``, ``gk.solver.Ir``); Chebyshev with only Iteration criteria also runs
without host round trips. ``gk.preconditioner.GaussSeidel`` and ``Sor`` smooth too (one sweep
x = x + M^-1 (b - A x) per application); after a forward sweep the default post-smoother is
the backward sweep, so that the cycle stays symmetric (SSOR, ``with_symmetric(True)``, is
both).

Without criteria an apply is one cycle: from x = 0 as a preconditioner (``M="amg"``,
``with_preconditioner(gk.solver.Multigrid.build())``), a fixed linear operator, symmetric for
"v" and "w" with the same pre- and post-smoother, which is what CG needs ("f" is not symmetric:
use it with Fcg, Gmres or as a solver). With criteria it iterates cycles as a solver, each
column stopping on its own; with only Iteration criteria and no logger it runs them without
reading anything back.

``repr()`` prints the hierarchy as PyAMG does: levels, rows and nonzeros, operator complexity
(the nonzeros of all levels over those of the finest) and grid complexity (rows likewise).
"""
from __future__ import annotations

from typing import Any

import attrs

from ginkpy.core.base.factory import Factory, as_factory, integer, number, one_of, parameters, variadic
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.multigrid.pgm import Pgm, as_csr
from ginkpy.core.preconditioner.jacobi import Jacobi
from ginkpy.core.solver.cg import Cg
from ginkpy.core.solver.chebyshev import inverse_diagonal
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver, generate_preconditioner
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm

COARSEST_DENSE_ROWS = 1024  # the default coarsest solver inverts systems up to this size
COARSEST_CG_REDUCTION = 1e-12


class Multigrid(IterativeSolver):
    @parameters
    class Parameters(IterativeSolver.Parameters):
        mg_level: tuple = variadic()
        pre_smoother: Any = None
        post_smoother: Any = None
        coarsest_solver: Any = None
        cycle: str = attrs.field(default="w", validator=one_of("v", "w", "f"))
        max_levels: int = attrs.field(default=10, validator=integer(min=1))
        min_coarse_rows: int = attrs.field(default=64, validator=integer(min=1))
        smoother_relax: float = attrs.field(default=0.9, validator=number(min=0, min_open=True))
        smoother_iters: int = attrs.field(default=1, validator=integer(min=1))

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        params = factory.parameters
        if params.preconditioner is not None:
            raise ValueError("Multigrid has no preconditioner: its smoothers play that part "
                             "(with_pre_smoother, with_post_smoother)")
        super().__init__(factory, as_csr(system_matrix))
        if not isinstance(self.system_matrix, Csr):
            raise TypeError(f"Multigrid needs a matrix (gk.matrix.Csr or a format with to_csr()), "
                            f"not {type(self.system_matrix).__name__}")
        if self.system_matrix.shape[0] == 0:
            raise ValueError("Multigrid: the system matrix is empty (0 x 0)")
        if not params.criteria:
            # one cycle per apply: the preconditioner's form
            self.criteria = [Iteration.build().with_max_iters(1).on(self.executor)]
        self.levels = self._coarsen(self.system_matrix)
        self.matrices = [level.fine_op for level in self.levels] + [self._coarsest_matrix()]
        self._make_smoothers()
        self.coarsest_solver = self._make_coarsest_solver(self.matrices[-1])
        self._work: dict[int, list] = {}

    # -- generation -----------------------------------------------------------------------------
    def _coarsen(self, A: Csr) -> list:
        exec, params = self.executor, self.parameters
        factories = [as_factory(f, exec) for f in params.mg_level] or [Pgm.build().on(exec)]
        for f in factories:
            if not issubclass(f.parameters.product, Pgm):
                raise TypeError(f"with_mg_level takes aggregation levels (gk.multigrid.Pgm.build()), "
                                f"not {f.parameters.product.__name__}")
        levels = []
        while len(levels) + 1 < params.max_levels and A.shape[0] > params.min_coarse_rows:
            # Ginkgo's level selector: the l-th factory on level l, the last one beyond;
            # A is checked: the system matrix by the base class, the others made from it
            level = factories[min(len(levels), len(factories) - 1)].generate(A, checked=True)
            if level.coarse_op.shape[0] >= A.shape[0]:
                break  # no coarsening (no couplings left): A is the coarsest level
            levels.append(level)
            A = level.coarse_op
        return levels

    def _coarsest_matrix(self) -> Csr:
        return self.levels[-1].coarse_op if self.levels else self.system_matrix

    def _make_smoothers(self) -> None:
        params, exec = self.parameters, self.executor
        self.inv_diags, self.omegas, self.pre_smoothers, self.post_smoothers = [], [], [], []
        for l, A in enumerate(self.matrices[:-1]):
            pre = self._smoother(params.pre_smoother, A, "pre_smoother")
            post = self._smoother(params.post_smoother, A, "post_smoother") if params.post_smoother is not None \
                else pre.backward() if hasattr(pre, "backward") else pre
            # the built-in weighted Jacobi sweeps (None) need D^-1
            builtin = pre is None or post is None
            inv_diag = inverse_diagonal(A, f"Multigrid's Jacobi smoother on level {l}") if builtin else None
            self.inv_diags.append(inv_diag)
            # omega, scaled down where Gershgorin's bound rho on the eigenvalues of D^-1 A exceeds 2
            rho = exec.run("components.relaxation.gershgorin_bound", A, inv_diag) if builtin else 0.0
            self.omegas.append(params.smoother_relax * min(1.0, 2 / rho) if rho > 0 else params.smoother_relax)
            self.pre_smoothers.append(pre)
            self.post_smoothers.append(post)

    def _smoother(self, value: Any, A: Csr, what: str) -> LinOp | None:
        """The smoother generated on A, None for the built-in Jacobi sweeps."""
        if value is None:
            return None
        smoother = generate_preconditioner(value, A, self.executor, what, initial_guess="provided")
        if not isinstance(smoother, IterativeSolver) and not hasattr(smoother, "apply_with_initial_guess"):
            raise TypeError(f"Multigrid's {what} must be a solver that improves the x it is given "
                            f"(gk.solver.Ir.build().with_solver(...), gk.solver.Chebyshev.build(), "
                            f"gk.preconditioner.GaussSeidel.build()...), not {type(smoother).__name__}, "
                            f"which overwrites x")
        return smoother

    def _make_coarsest_solver(self, A: Csr) -> LinOp:
        exec, value = self.executor, self.parameters.coarsest_solver
        if value is not None:
            return generate_preconditioner(value, A, exec, "coarsest_solver", initial_guess="zero")
        if A.shape[0] <= COARSEST_DENSE_ROWS:
            # A^-1 on the host, applied as a dense product on the device
            host = exec.host
            inverse = host.run("solver.multigrid.dense_inverse", A.clone(host))
            return Dense.from_numpy(exec, inverse, A.dtype)
        cg = Cg.build().with_preconditioner(Jacobi.build().with_max_block_size(1)).with_criteria(
            ResidualNorm.build().with_reduction_factor(COARSEST_CG_REDUCTION),
            Iteration.build().with_max_iters(max(1000, A.shape[0])))
        return generate_preconditioner(cg, A, exec, "coarsest_solver", initial_guess="zero")

    # -- the hierarchy ----------------------------------------------------------------------------
    @property
    def num_levels(self) -> int:
        """Levels including the finest and the coarsest."""
        return len(self.matrices)

    @property
    def operator_complexity(self) -> float:
        """Nonzeros of all levels over the nonzeros of the finest."""
        return sum(m.nnz for m in self.matrices) / max(self.matrices[0].nnz, 1)

    @property
    def grid_complexity(self) -> float:
        """Rows of all levels over the rows of the finest."""
        return sum(m.shape[0] for m in self.matrices) / max(self.matrices[0].shape[0], 1)

    def __repr__(self) -> str:
        total = sum(m.nnz for m in self.matrices) or 1
        coarsest = self.coarsest_solver
        coarse_name = "dense inverse" if isinstance(coarsest, Dense) else type(coarsest).__name__
        smoother = (f"Jacobi ({self.parameters.smoother_iters} sweep(s), relaxation "
                    f"{self.parameters.smoother_relax:g})" if self.pre_smoothers and self.pre_smoothers[0] is None
                    else type(self.pre_smoothers[0]).__name__ if self.pre_smoothers else "none")
        lines = [f"Multigrid ({self.parameters.cycle.upper()}-cycle, smoother {smoother}) on {self.executor!r}",
                 f"Number of Levels:     {self.num_levels}",
                 f"Operator Complexity: {self.operator_complexity:6.3f}",
                 f"Grid Complexity:     {self.grid_complexity:6.3f}",
                 f"Coarse Solver:        '{coarse_name}'",
                 "  level   unknowns     nonzeros"]
        for l, m in enumerate(self.matrices):
            lines.append(f"  {l:>4d} {m.shape[0]:>10d} {m.nnz:>12d} [{100 * m.nnz / total:5.2f}%]")
        return "\n".join(lines)

    # -- apply ------------------------------------------------------------------------------------
    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if b.shape[0] == 0 or b.shape[1] == 0:
            return
        cycles = self.fixed_iterations
        guess = self.parameters.default_initial_guess
        if cycles is None:
            super()._apply_impl(b, x)
            return
        if guess == "rhs":
            x.copy_from(b)
        if cycles == 0 and guess == "zero":
            x.fill(0.0)
        for i in range(cycles):
            self._cycle(0, b, x, zero_guess=i == 0 and guess == "zero", kind=self.parameters.cycle)

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, x = self.executor, monitor.x
        r, e = monitor.ws.vectors("r", "e")
        # r = b - A x
        monitor.start(r)
        status = monitor.stop.status
        monitor.check(r)

        def iteration():
            # e = cycle applied to r from 0;  x = x + e in the running columns;  r = b - A x
            self._cycle(0, r, e, zero_guess=True, kind=self.parameters.cycle)
            exec.run("components.relaxation.add_running", e, x, status)
            monitor.residual(r)
            monitor.check(r)

        monitor.run(iteration)

    def _buffers(self, k: int) -> list:
        """Per level: (b, x, spare) n_l x k vectors, made once per column count (level 0 has only
        its spare: b and x are the caller's)."""
        work = self._work.get(k)
        if work is None:
            work = []
            for l, A in enumerate(self.matrices):
                n = A.shape[0]
                fresh = (Dense.empty(self.executor, (n, k), A.dtype) for _ in range(3))
                work.append(tuple(fresh) if l else (None, None, Dense.empty(self.executor, (n, k), A.dtype)))
            self._work[k] = work
        return work

    def _cycle(self, l: int, b: Dense, x: Dense, zero_guess: bool, kind: str) -> None:
        """One cycle of ``kind`` on level l for A_l x = b, from x (or from 0 where ``zero_guess``:
        x is then not read), the result in x."""
        if l == len(self.levels):
            # the coarsest level: x = A^-1 b (the guess does not matter to a direct solve)
            self.coarsest_solver.apply(b, x)
            return
        exec, params = self.executor, self.parameters
        level, A, inv_diag = self.levels[l], self.matrices[l], self.inv_diags[l]
        work = self._buffers(b.shape[1])
        coarse_b, coarse_x = work[l + 1][0], work[l + 1][1]
        pre, post = self.pre_smoothers[l], self.post_smoothers[l]
        iters, omega = params.smoother_iters, self.omegas[l]
        # each built-in sweep writes a new vector, but a first one from 0: start in the vector
        # from which the cycle's last write lands in x
        pre_sweeps = 0 if pre is not None else iters - 1 if zero_guess else iters
        writes = pre_sweeps + (iters if post is None else 0)
        current, other = (x, work[l][2]) if writes % 2 == 0 else (work[l][2], x)
        # pre-smoothing, then r = b - A x (in the vector that post-smoothing writes later)
        if pre is not None:
            _smooth(pre, b, current, zero_guess)
            exec.run("components.relaxation.residual", A, b, current, other)
        elif zero_guess and pre_sweeps == 0:
            # x = omega D^-1 b and its residual in one pass
            exec.run("components.relaxation.relax_first_residual", omega, A, inv_diag, b, current, other)
        else:
            if zero_guess:
                # x = omega D^-1 b
                exec.run("components.relaxation.relax_first", omega, inv_diag, b, current, None)
            elif current is not x:
                current.copy_from(x)
            for _ in range(pre_sweeps):
                # x_new = x + omega D^-1 (b - A x)
                exec.run("components.relaxation.relax", 0.0, omega, A, inv_diag, b, current, None, other)
                current, other = other, current
            exec.run("components.relaxation.residual", A, b, current, other)
        # coarse correction: b_c = P^T r, a cycle on A_c e = b_c from 0
        exec.run("solver.multigrid.restrict", level.agg_ptrs, level.agg_rows, other, coarse_b)
        coarsest_next = l + 1 == len(self.levels)
        self._cycle(l + 1, coarse_b, coarse_x, True, kind)
        if kind in ("w", "f") and not coarsest_next:
            self._cycle(l + 1, coarse_b, coarse_x, False, "w" if kind == "w" else "v")
        # post-smoothing
        if post is not None:
            # x = x + P e
            exec.run("solver.multigrid.prolong", level.agg, coarse_x, current)
            _smooth(post, b, current, False)
        else:
            # y = x + P e;  x_new = y + omega D^-1 (b - A y)
            exec.run("solver.multigrid.prolong_relax", omega, A, inv_diag, level.agg, coarse_x, b, current, other)
            current, other = other, current
            for _ in range(iters - 1):
                exec.run("components.relaxation.relax", 0.0, omega, A, inv_diag, b, current, None, other)
                current, other = other, current
        if current is not x:
            x.copy_from(current)


def _smooth(smoother: LinOp, b: Dense, x: Dense, zero_guess: bool) -> None:
    """Apply a smoother to improve x (from 0 where ``zero_guess``)."""
    if hasattr(smoother, "apply_with_initial_guess"):
        smoother.apply_with_initial_guess(b, x, zero_guess)
        return
    if zero_guess:
        x.fill(0.0)
    smoother.apply(b, x)
