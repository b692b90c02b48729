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
correction prolongated and added, post-smoothing. With aggregation the V-cycle's iterations
grow with the grid (CG on 2D Poisson: 38 at 250^2, 56 at 1000^2), the W-cycle's do not (18),
for more work and, level by level, twice the launches of the level above.

The levels of at most ``merged_rows`` rows, down to the coarsest, are cycled through in one
launch (one work-group, ``solver.multigrid.coarse_cycle``), following a schedule of their steps
made once on the host: V-cycles, visited once or (below a W- or F-cycle's level) twice per
launch. The cycle is the one of the levels above; within the merged levels, deep in the
hierarchy, a W-cycle's visits would be exponentially many steps run one after another in the
one work-group, and save no iterations there (2D Poisson 400^2: 19 either way). What the parameters leave
open (``cycle``, ``smoother_iters``, ``min_coarse_rows``, ``merged_rows``) is chosen per kind of
executor from measurements (DEVICE_CHOICES; ``python benchmarks/bench_amg.py --tune`` makes
them), and printed with the hierarchy. Ginkgo's defaults are the V-cycle, one sweep, 64 rows.

The default smoother is Ginkgo's, Ir with scalar Jacobi: ``smoother_iters`` sweeps
x = x + omega D^-1 (b - A x), omega = ``smoother_relax``, before and after; omega is scaled by
2 / rho where Gershgorin's bound rho on the eigenvalues of D^-1 A is above 2 (a fixed 0.9
amplifies the top modes there, as on the FEM matrix ani4; diagonally dominant matrices, every
Laplacian among them, keep omega); D^-1 and rho of every level are computed on the device and
read at once. The sweeps run as fused kernels with no host round trip: from x = 0 the first
sweep is x = omega D^-1 b, computed with the restriction of the residual after it in one
kernel (per aggregate), and the prolongation is read on the fly by the first sweep after it,
so that a V-cycle takes two launches a level (``launches_per_cycle`` counts them). ``pre_smoother`` and ``post_smoother``
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
(the nonzeros of all levels over those of the finest) and grid complexity (rows likewise),
with the cycle, the smoother, the levels cycled through in one launch, the launches of a cycle
and the kind of executor the choice was made for.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import Factory, as_factory, integer, number, one_of, parameters, variadic
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.multigrid.coarse_levels import CoarseLevels
from ginkpy.core.multigrid.pgm import Pgm, as_csr
from ginkpy.core.preconditioner.jacobi import Jacobi
from ginkpy.core.solver.cg import Cg
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver, check_values, generate_preconditioner, updated_part
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm

COARSEST_DENSE_ROWS = 1024  # the default coarsest solver inverts systems up to this size
COARSEST_CG_REDUCTION = 1e-12


@attrs.frozen
class CycleChoice:
    """What Multigrid does where its parameters leave it open, per kind of executor."""

    cycle: str           # "v", "w" or "f"
    smoother_iters: int  # Jacobi sweeps before and after the coarse correction
    min_coarse_rows: int
    merged_rows: int     # levels of at most this many rows cycled through in one launch (0: none)
    why: str


# Chosen from measurements (python benchmarks/bench_amg.py --tune: AMG-CG whole solves of 2D and
# 3D Poisson for each cycle, sweep count and merge size; see the README's multigrid section).
DEVICE_CHOICES = {
    "reference": CycleChoice("w", 1, 64, 0, "no launches to save on the host: the W-cycle, which needs the fewest "
                                            "iterations"),
    "cpu": CycleChoice("w", 1, 64, 4096, "the W-cycle needs the fewest iterations; levels of up to 4096 rows cost "
                                         "more in launches than in work and run in one launch"),
    "gpu": CycleChoice("v", 1, 64, 8192, "launches bind the coarse levels: the V-cycle (a W-cycle multiplies "
                                          "their launches, or in one launch their serialized steps), levels of up to "
                                          "8192 rows in one launch (one work-group)"),
}


def device_kind(exec) -> str:
    """The kind of executor a CycleChoice is made for: "reference", "cpu" or "gpu"."""
    if not exec.asynchronous:
        return "reference"
    return "cpu" if exec.info.is_cpu else "gpu"


class Multigrid(IterativeSolver):
    """Algebraic multigrid (AMG) as a solver or a preconditioner: Ginkgo's ``solver::Multigrid``
    (PyAMG's ``smoothed_aggregation_solver`` / ``aspreconditioner`` for SciPy users).

    Use it as the preconditioner of Cg for large elliptic problems (Poisson, diffusion,
    elasticity), whose iteration counts it keeps nearly independent of the grid; as a solver
    with criteria it iterates cycles. Without criteria an apply is one cycle from x = 0. The
    module docstring explains the cycle, the default smoother and the per-device choices;
    ``repr()`` prints the hierarchy.

    Parameters
    ----------
    mg_level : coarsening factories, default ``gk.multigrid.Pgm``
        How each level is coarsened (several: level by level, the last for the rest).
    pre_smoother, post_smoother : factory, default None (Jacobi sweeps; post as pre)
        Any solver that improves the x it is given (``gk.solver.Chebyshev``, ``Ir``,
        ``gk.preconditioner.GaussSeidel``).
    coarsest_solver : factory, default None
        The coarsest level's solver; None: its inverse, dense, when small, else Jacobi-CG.
    cycle : {"v", "w", "f"}, default None (chosen per device)
        V-cycle, W-cycle or F-cycle (F is not symmetric: not with Cg).
    max_levels : int, default 10
        The most levels, the finest included.
    min_coarse_rows : int, default None (chosen per device)
        Coarsening stops at this many rows.
    smoother_relax : float, default 0.9
        omega of the default Jacobi smoother (scaled down where Gershgorin's bound exceeds 2).
    smoother_iters : int, default None (chosen per device)
        Sweeps of the default smoother before and after the correction.
    merged_rows : int, default None (chosen per device)
        Levels of at most this many rows are cycled through in one launch (0: none).
    criteria, default_initial_guess
        As for every iterative solver; no criteria: one cycle per apply (a preconditioner).
    preconditioner : None
        Multigrid takes none: its smoothers play that part.

    Examples
    --------
    >>> amg = gk.solver.Multigrid.build().with_cycle("w")
    >>> solver = gk.solver.Cg.build().with_preconditioner(amg).on(exec).generate(A)
    >>> print(solver.preconditioner)            # the hierarchy, as PyAMG prints it
    """
    @parameters
    class Parameters(IterativeSolver.Parameters):
        mg_level: tuple = variadic()
        pre_smoother: Any = None
        post_smoother: Any = None
        coarsest_solver: Any = None
        cycle: str | None = attrs.field(default=None, validator=one_of("v", "w", "f", None))
        max_levels: int = attrs.field(default=10, validator=integer(min=1))
        min_coarse_rows: int | None = attrs.field(default=None, validator=integer(min=1, optional=True))
        smoother_relax: float = attrs.field(default=0.9, validator=number(min=0, min_open=True))
        smoother_iters: int | None = attrs.field(default=None, validator=integer(min=1, optional=True))
        merged_rows: int | None = attrs.field(default=None, validator=integer(min=0, optional=True))

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
        # what the parameters leave open, as chosen for this kind of executor
        self.device_kind = device_kind(self.executor)
        choice = DEVICE_CHOICES[self.device_kind]
        self.cycle = params.cycle or choice.cycle
        self.smoother_iters = params.smoother_iters or choice.smoother_iters
        self.min_coarse_rows = params.min_coarse_rows or choice.min_coarse_rows
        self.levels = self._coarsen(self.system_matrix)
        self.matrices = [level.fine_op for level in self.levels] + [self._coarsest_matrix()]
        self._make_smoothers()
        self.coarsest_solver = self._make_coarsest_solver(self.matrices[-1])
        self._merge(choice.merged_rows if params.merged_rows is None else params.merged_rows)
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
        while len(levels) + 1 < params.max_levels and A.shape[0] > self.min_coarse_rows:
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
        checks = []
        for l, A in enumerate(self.matrices[:-1]):
            pre = self._smoother(params.pre_smoother, A, "pre_smoother")
            post = self._smoother(params.post_smoother, A, "post_smoother") if params.post_smoother is not None \
                else pre.backward() if hasattr(pre, "backward") else pre
            # the built-in weighted Jacobi sweeps (None) need D^-1 and Gershgorin's bound rho on
            # the eigenvalues of D^-1 A, computed on the device and read for all levels at once
            inv_diag = None
            if pre is None or post is None:
                inv_diag = Dense.empty(exec, (A.shape[0], 1), A.dtype)
                checks.append((l, *exec.run("components.relaxation.jacobi_setup", A, inv_diag)))
            self.inv_diags.append(inv_diag)
            self.pre_smoothers.append(pre)
            self.post_smoothers.append(post)
        self.omegas = self._omegas(checks)

    def _omegas(self, checks: list) -> list:
        """The relaxation of the built-in Jacobi sweeps of every level from their setup's
        ``checks`` (level, first zero diagonal, Gershgorin bounds: device arrays, read at once);
        a zero diagonal is a ValueError."""
        params = self.parameters
        omegas = [params.smoother_relax] * len(self.inv_diags)
        if not checks:
            return omegas
        host = self.executor.to_host(*[array for _, first_zero, bounds in checks for array in (first_zero, bounds)])
        for (l, _, _), first_zero, bounds in zip(checks, host[0::2], host[1::2]):
            row = int(first_zero[0])
            if row < self.matrices[l].shape[0]:
                raise ValueError(f"Multigrid's Jacobi smoother on level {l}: the diagonal entry of row {row} is zero "
                                 f"or not stored, so D^-1 does not exist; use another smoother "
                                 f"(with_pre_smoother) or reorder the matrix")
            # omega scaled down where rho exceeds 2 (a fixed 0.9 would amplify the top modes)
            rho = float(np.max(bounds, initial=0.0))
            if rho > 0:
                omegas[l] = params.smoother_relax * min(1.0, 2 / rho)
        return omegas

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

    def _merge(self, merged_rows: int) -> None:
        """Levels of at most ``merged_rows`` rows below the finest, down to the coarsest, are
        cycled through in one launch (coarse_cycle), where the built-in Jacobi smoother and the
        dense coarsest inverse are used; ``merged_from`` is the first of them (None: no such
        levels)."""
        self.merged_rows, self.merged_from, self.coarse = merged_rows, None, None
        self._schedules: dict = {}
        last = len(self.levels)
        builtin = all(s is None for s in self.pre_smoothers + self.post_smoothers)
        if not (builtin and isinstance(self.coarsest_solver, Dense)) or last == 0:
            return
        # the finest level is launched as such: it has the most work, for the whole device, and
        # the cycle's own kind (a W-cycle's two visits of the level below)
        first = last
        while first > 1 and self.matrices[first - 1].shape[0] <= merged_rows:
            first -= 1
        if first == last:
            return  # only the coarsest level: its dense product is one launch already
        self.merged_from = first
        self.coarse = CoarseLevels(self.matrices[first:], self.inv_diags[first:], self.omegas[first:],
                                   self.levels[first:], self.coarsest_solver)
        self.executor.run("solver.multigrid.pack_coarse_levels", self.coarse)
        # the schedules of the ways the cycle enters these levels (from 0; from 0 and again from
        # that result: the two visits of a W- or F-cycle above), on the device
        for guesses in ((True,), (True, False)):
            self._schedules[guesses] = self.executor.from_host(self.coarse.schedule(guesses, self.smoother_iters))

    # -- new values of the system matrix ----------------------------------------------------------
    def update(self) -> bool:
        """Follow new values of the system matrix on the same sparsity pattern (written in
        place: ``A.update_values``), AmgX's structure reuse: the aggregates and transfer
        operators of every level are kept and only the numeric parts recomputed, from the
        finest level down: the Galerkin products R A P (``Pgm.update``), the Jacobi smoothers'
        D^-1 and relaxation, the coarsest level's inverse, the arrays of the levels cycled
        through in one launch, all into the arrays the cycle reads (so its captured launches
        stay valid). A smoother or coarsest solver without an update of its own is generated
        anew. Returns whether the launches recorded with this solver stay valid (False where a
        smoother's relaxation or a part's arrays changed: captured again at the next apply)."""
        exec, params = self.executor, self.parameters
        check_values(self.system_matrix)
        for level in self.levels:
            level.update()  # (level l's fine matrix is level l - 1's coarse one, updated just before)
        valid, checks = True, []
        for l, A in enumerate(self.matrices[:-1]):
            pre, post = self.pre_smoothers[l], self.post_smoothers[l]
            if pre is not None:
                new_pre, ok = self._updated(pre, params.pre_smoother, A, "pre_smoother")
                valid &= ok
                if post is pre:
                    new_post = new_pre
                elif params.post_smoother is not None or post is None:
                    new_post, ok = self._updated(post, params.post_smoother, A, "post_smoother")
                    valid &= ok
                else:  # (pre's backward sweep)
                    new_post, valid = new_pre.backward(), False
                self.pre_smoothers[l], self.post_smoothers[l] = new_pre, new_post
            elif post is not None:
                self.post_smoothers[l], ok = self._updated(post, params.post_smoother, A, "post_smoother")
                valid &= ok
            if self.inv_diags[l] is not None:
                checks.append((l, *exec.run("components.relaxation.jacobi_setup", A, self.inv_diags[l])))
        omegas = self._omegas(checks)
        merged = len(self.levels) if self.merged_from is None else self.merged_from
        # (the relaxation of a level launched on its own is an argument of its recorded launches)
        valid &= omegas[:merged] == self.omegas[:merged]
        self.omegas = omegas
        coarsest = self.coarsest_solver
        if isinstance(coarsest, Dense) and self.parameters.coarsest_solver is None:
            host = exec.host
            exec.write(coarsest.values, host.run("solver.multigrid.dense_inverse", self.matrices[-1].clone(host)))
        else:
            self.coarsest_solver, ok = self._updated(coarsest, params.coarsest_solver, self.matrices[-1],
                                                     "coarsest_solver")
            valid &= ok
        if self.coarse is not None:
            # the levels cycled through in one launch: their packed values, D^-1 and omegas in place
            self.coarse.omegas = self.omegas[self.merged_from:]
            exec.run("solver.multigrid.pack_coarse_levels", self.coarse)
        if not valid:
            self._forget_captures()
        return valid

    def _updated(self, part: LinOp, value: Any, A: Csr, what: str) -> tuple[LinOp, bool]:
        """A smoother or coarsest solver after new values of its level's matrix (see updated_part)."""
        if what == "coarsest_solver":
            return updated_part(part, lambda: generate_preconditioner(value, A, self.executor, what,
                                                                      initial_guess="zero"), self, what)
        return updated_part(part, lambda: self._smoother(value, A, what), self, what)

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

    @property
    def launches_per_cycle(self) -> int:
        """Kernel launches of one cycle from x = 0 (the preconditioner's apply), one column."""
        def visit(l: int, zero: bool, kind: str) -> int:
            if l == len(self.levels):
                return 1 if isinstance(self.coarsest_solver, Dense) else 0
            if self.pre_smoothers[l] is not None or self.post_smoothers[l] is not None:
                return 0  # not counted: the smoothers' own launches
            own = 2 * self.smoother_iters + (0 if zero and self.smoother_iters == 1 else 1)
            second = kind in ("w", "f") and l + 1 < len(self.levels)
            if l + 1 == self.merged_from:
                return own + 1
            return own + visit(l + 1, True, kind) + (visit(l + 1, False, "w" if kind == "w" else "v") if second else 0)
        return visit(0, True, self.cycle)

    def __repr__(self) -> str:
        total = sum(m.nnz for m in self.matrices) or 1
        coarsest = self.coarsest_solver
        coarse_name = "dense inverse" if isinstance(coarsest, Dense) else type(coarsest).__name__
        smoother = (f"Jacobi ({self.smoother_iters} sweep(s), relaxation {self.parameters.smoother_relax:g})"
                    if self.pre_smoothers and self.pre_smoothers[0] is None
                    else type(self.pre_smoothers[0]).__name__ if self.pre_smoothers else "none")
        choice = DEVICE_CHOICES[self.device_kind]
        merged = (f"levels {self.merged_from}-{self.num_levels - 1} (<= {self.merged_rows} rows) in one launch "
                  f"(V-cycles)" if self.merged_from is not None else "one launch per step")
        lines = [f"Multigrid ({self.cycle.upper()}-cycle, smoother {smoother}) on {self.executor!r}",
                 f"Chosen for a {self.device_kind} executor: {choice.why}" if self.device_kind != "reference"
                 else f"Chosen for the reference executor: {choice.why}",
                 f"Cycle:                {self.cycle.upper()}, {merged}, {self.launches_per_cycle} launches",
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
            self._cycle(0, b, x, zero_guess=i == 0 and guess == "zero", kind=self.cycle)

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, x = self.executor, monitor.x
        r, e = monitor.ws.vectors("r", "e")
        # r = b - A x
        monitor.start(r)
        status = monitor.stop.status
        monitor.check(r)

        def iteration():
            # e = cycle applied to r from 0;  x = x + e in the running columns;  r = b - A x
            self._cycle(0, r, e, zero_guess=True, kind=self.cycle)
            exec.run("components.relaxation.add_running", e, x, status)
            monitor.residual(r)
            monitor.check(r)

        monitor.run(iteration)

    def _buffers(self, k: int) -> list:
        """Per level: (b, x, spare) n_l x k vectors, made once per column count (level 0 has only
        its spare: b and x are the caller's; the levels cycled through in one launch have none:
        their vectors lie in one work vector, the last item)."""
        work = self._work.get(k)
        if work is None:
            work = []
            exec = self.executor
            for l, A in enumerate(self.matrices):
                n = A.shape[0]
                if l == 0:
                    work.append((None, None, Dense.empty(exec, (n, k), A.dtype)))
                elif self.merged_from is None or l <= self.merged_from:
                    work.append(tuple(Dense.empty(exec, (n, k), A.dtype) for _ in range(3)))
            work.append(None if self.coarse is None else Dense.empty(exec, (self.coarse.work_rows, k), self.dtype))
            self._work[k] = work
        return work

    def _cycle(self, l: int, b: Dense, x: Dense, zero_guess: bool, kind: str) -> None:
        """One cycle of ``kind`` on level l for A_l x = b, from x (or from 0 where ``zero_guess``:
        x is then not read), the result in x."""
        exec = self.executor
        work = self._buffers(b.shape[1])
        if l == len(self.levels):
            # the coarsest level: x = A^-1 b (the guess does not matter to a direct solve)
            self.coarsest_solver.apply(b, x)
            return
        level, A, inv_diag = self.levels[l], self.matrices[l], self.inv_diags[l]
        coarse_b, coarse_x = work[l + 1][0], work[l + 1][1]
        pre, post = self.pre_smoothers[l], self.post_smoothers[l]
        iters, omega = self.smoother_iters, self.omegas[l]
        # each built-in sweep writes a new vector, but a first one from 0: start in the vector
        # from which the cycle's last write lands in x
        pre_sweeps = 0 if pre is not None else iters - 1 if zero_guess else iters
        writes = pre_sweeps + (iters if post is None else 0)
        current, other = (x, work[l][2]) if writes % 2 == 0 else (work[l][2], x)
        # pre-smoothing, then b_c = P^T (b - A x)
        if pre is not None:
            _smooth(pre, b, current, zero_guess)
        elif zero_guess and pre_sweeps == 0:
            # x = omega D^-1 b and the restriction of its residual in one pass
            exec.run("solver.multigrid.relax_first_restrict", omega, A, inv_diag, level.agg_ptrs, level.agg_rows, b,
                     current, coarse_b)
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
        if pre is not None or not (zero_guess and pre_sweeps == 0):
            exec.run("solver.multigrid.restrict_residual", A, level.agg_ptrs, level.agg_rows, b, current, coarse_b)
        # coarse correction: a cycle on A_c e = b_c from 0 (twice for W and F, the second from
        # the first's result); the levels cycled through in one launch take both in it
        second = kind in ("w", "f") and l + 1 < len(self.levels)
        after = "w" if kind == "w" else "v"
        if l + 1 == self.merged_from:
            exec.run("solver.multigrid.coarse_cycle", self.coarse, self._schedules[(True, False) if second else (True,)],
                     work[-1], coarse_b, coarse_x)
        else:
            self._cycle(l + 1, coarse_b, coarse_x, True, kind)
            if second:
                self._cycle(l + 1, coarse_b, coarse_x, False, after)
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
