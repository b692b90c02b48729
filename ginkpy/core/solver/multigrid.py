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
executor from measurements (``exec.device_choices().multigrid``, the backends' tables;
``python benchmarks/bench_amg.py --tune`` makes them), and printed with the hierarchy.
Ginkgo's defaults are the V-cycle, one sweep, 64 rows.

The default smoother is Ginkgo's, Ir with scalar Jacobi: ``smoother_iters`` sweeps
x = x + omega D^-1 (b - A x), omega = ``smoother_relax``, before and after; omega is scaled by
2 / rho where Gershgorin's bound rho on the eigenvalues of D^-1 A is above 2 (a fixed 0.9
amplifies the top modes there, as on the FEM matrix ani4; diagonally dominant matrices, every
Laplacian among them, keep omega); D^-1 and rho of every level are computed on the device and
read at once. The sweeps run as fused kernels with no host round trip: from x = 0 the first
sweep is x = omega D^-1 b, computed with the restriction of the residual after it in one
kernel (per aggregate), and the prolongation is read on the fly by the first sweep after it,
so that a V-cycle takes two launches a level (``launches_per_cycle`` counts them). A level
of smoothed aggregation (Pgm's ``prolongation_relax``) applies R and P as sparse products
instead (core/solver/multigrid_steps.py) and is not merged into the one launch below. ``pre_smoother`` and ``post_smoother``
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

Ginkgo's lists (``level_selector``, smoother lists, ``post_uses_pre``, ``mid_case``,
``solver_selector``): see the Multigrid class's parameters.

Generated from a ``gk.distributed.Matrix`` it builds its hierarchy over the MPI ranks (each
rank aggregating its own rows, the coarse matrices global) down to ``gather_rows`` rows (all
ranks together, default 50000), from where the levels are gathered onto every rank and run
alike there: see ``core/distributed/multigrid.py``.

``repr()`` prints the hierarchy as PyAMG does: levels, rows and nonzeros, operator complexity
(the nonzeros of all levels over those of the finest) and grid complexity (rows likewise),
with the cycle, the smoother, the levels cycled through in one launch, the launches of a cycle
and the kind of executor the choice was made for.
"""
from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from ginkpy.core.base.device_choices import CycleChoice
from ginkpy.core.base.factory import Factory, as_factory, integer, number, one_of, parameters, variadic
from ginkpy.core.base.lin_op import LinOp, improve
from ginkpy.core.base.precision import apply_in
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.multigrid.pgm import Pgm, as_csr, default_levels
from ginkpy.core.preconditioner.jacobi import Jacobi
from ginkpy.core.solver.cg import Cg
from ginkpy.core.solver.coarse_levels import CoarseLevels
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.multigrid_report import describe, launches_per_cycle
from ginkpy.core.solver.multigrid_steps import prolong, restrict, sweeps
from ginkpy.core.solver.solver_base import IterativeSolver, generate_preconditioner
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm

COARSEST_DENSE_ROWS = 1024  # the default coarsest solver inverts systems up to this size
# Ginkgo's mid_smooth_type: what runs on a level between the two visits of a W- or F-cycle
MID_CASES = ("both", "post_smoother", "pre_smoother", "standalone")
COARSEST_CG_REDUCTION = 1e-12


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
        How each level is coarsened (several: level by level, the last for the rest). A level
        runs in its factory's ``value_type`` (a float32 level of a float64 solve).
    level_selector : callable, default None (the l-th factory, the last beyond)
        ``level_selector(l, A_l)`` gives the index of the ``mg_level`` factory of level l.
    pre_smoother, post_smoother : factory or list, default None (Jacobi sweeps; post as pre)
        Any solver that improves the x it is given (``gk.solver.Chebyshev``, ``Ir``,
        ``gk.preconditioner.GaussSeidel``); a list: one factory per level (the level's index
        into it, as Ginkgo's lists).
    mid_smoother : factory or list, default None
        The smoother between the two visits of a W- or F-cycle's level (``mid_case``
        "standalone").
    post_uses_pre : bool, default None
        True: the post-smoother is the pre-smoother; None: a given post-smoother, else the
        pre-smoother (or its backward sweep, which keeps the cycle symmetric).
    mid_case : {"both", "post_smoother", "pre_smoother", "standalone"}, default None ("both")
        Ginkgo's mid_smooth_type: what runs on a level between the two visits of a W- or
        F-cycle (post- and pre-smoother, one of them, or the mid-smoother).
    coarsest_solver : factory or list, default None
        The coarsest level's solver; None: its inverse, dense, when small, else Jacobi-CG.
    solver_selector : callable, default None (the first)
        ``solver_selector(level, A)`` gives the index of the ``coarsest_solver`` used.
    kcycle_base, kcycle_rel_tol
        Ginkgo's K-cycle parameters (defaults 1 and 0.25): accepted for its configurations,
        they change nothing.
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
    split_restrict_rows : int, default None (chosen per device: 0 on every device until measured)
        Levels of piecewise constant aggregation with at least this many rows restrict the
        residual in two launches (the residual row by row, then its sums per aggregate) rather
        than in one (a work-item per aggregate, which reads its rows' entries scattered); 0:
        always in one. The same result either way.
    gather_rows : int, default None (50 000)
        Of a ``gk.distributed.Matrix`` only: levels of at most this many rows are gathered onto
        every rank and cycled there alike (the coarsest level is gathered whatever its size).
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
        level_selector: Callable | None = None
        pre_smoother: tuple = variadic()
        post_smoother: tuple = variadic()
        mid_smoother: tuple = variadic()
        post_uses_pre: bool | None = attrs.field(default=None, validator=one_of(True, False, None))
        mid_case: str | None = attrs.field(default=None, validator=one_of(*MID_CASES, None))
        coarsest_solver: tuple = variadic()
        solver_selector: Callable | None = None
        cycle: str | None = attrs.field(default=None, validator=one_of("v", "w", "f", None))
        kcycle_base: int = attrs.field(default=1, validator=integer(min=1))
        kcycle_rel_tol: float = attrs.field(default=0.25, validator=number())
        max_levels: int = attrs.field(default=10, validator=integer(min=1))
        min_coarse_rows: int | None = attrs.field(default=None, validator=integer(min=1, optional=True))
        smoother_relax: float = attrs.field(default=0.9, validator=number(min=0, min_open=True))
        smoother_iters: int | None = attrs.field(default=None, validator=integer(min=1, optional=True))
        merged_rows: int | None = attrs.field(default=None, validator=integer(min=0, optional=True))
        split_restrict_rows: int | None = attrs.field(default=None, validator=integer(min=0, optional=True))
        gather_rows: int | None = attrs.field(default=None, validator=integer(min=0, optional=True))

    # the variant a distributed system matrix gets: core/distributed/multigrid.py declares itself
    # with ``class Multigrid(SerialMultigrid, variant="distributed")`` (it builds on this module)
    _variants: dict[str, type] = {}

    def __init_subclass__(cls, variant: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if variant is not None:
            Multigrid._variants[variant] = cls

    def __new__(cls, factory: Factory, system_matrix: LinOp) -> "Multigrid":
        # a gk.distributed.Matrix: the hierarchy over the ranks
        if cls is Multigrid and getattr(system_matrix, "distributed", False):
            if "distributed" not in Multigrid._variants:
                raise RuntimeError("Multigrid on a distributed matrix needs gk.distributed loaded: import "
                                   "ginkpy.distributed (gk.distributed) before generating it")
            cls = Multigrid._variants["distributed"]
        return super().__new__(cls)

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
        self._build()

    def _build(self) -> None:
        """The hierarchy, its smoothers, coarsest solver and merged levels from the system matrix."""
        params = self.parameters
        choice = self._choose()
        self.mid_case = params.mid_case or "both"
        self.levels = self._coarsen(self.system_matrix)
        self.matrices = [level.fine_op for level in self.levels] + [self._coarsest_matrix()]
        self._make_smoothers()
        self.coarsest_solver = self._make_coarsest_solver(self.matrices[-1])
        self._merge(choice.merged_rows if params.merged_rows is None else params.merged_rows)
        self._work: dict[int, list] = {}

    # -- generation -----------------------------------------------------------------------------
    def _choose(self) -> CycleChoice:
        """One cycle per apply without criteria (the preconditioner's form), and what the
        parameters leave open as chosen for this kind of executor (returned)."""
        params = self.parameters
        if not params.criteria:
            self.criteria = [Iteration.build().with_max_iters(1).on(self.executor)]
        choices = self.executor.device_choices()
        self.device_kind = choices.kind
        choice = self._device_choice = choices.multigrid
        self.cycle = params.cycle or choice.cycle
        self.smoother_iters = params.smoother_iters or choice.smoother_iters
        self.min_coarse_rows = params.min_coarse_rows or choice.min_coarse_rows
        self.split_restrict_rows = choice.split_restrict_rows if params.split_restrict_rows is None \
            else params.split_restrict_rows
        return choice

    def _level_factories(self, A: Csr | None = None) -> list:
        """The mg_level factories (default: Pgm, smoothed where the device chose so), checked to be
        aggregations."""
        exec = self.executor
        factories = [as_factory(f, exec) for f in self.parameters.mg_level] or default_levels(
            self._device_choice, exec, self.system_matrix if A is None else A)
        for f in factories:
            if not issubclass(f.parameters.product, Pgm):
                raise TypeError(f"with_mg_level takes aggregation levels (gk.multigrid.Pgm.build()), "
                                f"not {f.parameters.product.__name__}")
        return factories

    def _coarsen(self, A: Csr) -> list:
        params, factories = self.parameters, self._level_factories(A)
        levels, self.level_indices = [], []
        while len(levels) + 1 < params.max_levels and A.shape[0] > self.min_coarse_rows:
            # Ginkgo's level selector (default: the l-th factory on level l, the last one beyond);
            # A is checked: the system matrix by the base class, the others made from it
            index = self._selected(params.level_selector, len(levels), A, len(factories), "level_selector")
            level = factories[index].generate(A, checked=True)
            if level.coarse_op.shape[0] >= A.shape[0]:
                break  # no coarsening (no couplings left): A is the coarsest level
            levels.append(level)
            self.level_indices.append(index)
            A = level.coarse_op
        return levels

    @staticmethod
    def _selected(selector: Callable | None, level: int, A: LinOp, count: int, what: str) -> int:
        """The checked index a selector gives (default: the level, at most count - 1)."""
        index = min(level, count - 1) if selector is None else selector(level, A)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < count:
            raise ValueError(f"Multigrid's {what} gave {index!r} for level {level}: it must give an index of the "
                             f"{count} factories given (0 to {count - 1})")
        return int(index)

    def _factory_of(self, factories: tuple, l: int, what: str) -> Any:
        """Level l's factory of a list: none, the one given, or the one at its mg_level index."""
        if not factories:
            return None
        if len(factories) == 1:
            return factories[0]
        index = self.level_indices[l]
        if index >= len(factories):
            raise ValueError(f"Multigrid's {what} has {len(factories)} factories but level {l} uses mg_level "
                             f"{index}: give one {what} or one per mg_level")
        return factories[index]

    def _coarsest_matrix(self) -> Csr:
        return self.levels[-1].coarse_op if self.levels else self.system_matrix

    def _make_smoothers(self) -> None:
        params, exec = self.parameters, self.executor
        self.inv_diags, self.omegas, self.pre_smoothers, self.post_smoothers = [], [], [], []
        checks = []
        # post_uses_pre unset: a given post-smoother, else the pre-smoother (or its backward sweep)
        uses_pre = params.post_uses_pre if params.post_uses_pre is not None else not params.post_smoother
        self.mid_smoothers = []
        for l, A in enumerate(self.matrices[:-1]):
            pre = self._smoother(self._factory_of(params.pre_smoother, l, "pre_smoother"), A, "pre_smoother")
            if not uses_pre:
                post = self._smoother(self._factory_of(params.post_smoother, l, "post_smoother"), A, "post_smoother")
            else:
                post = pre.backward() if params.post_uses_pre is None and hasattr(pre, "backward") else pre
            self.mid_smoothers.append(self._smoother(self._factory_of(params.mid_smoother, l, "mid_smoother"), A,
                                                     "mid_smoother") if self.mid_case == "standalone" else None)
            # the built-in weighted Jacobi sweeps (None) need D^-1 and Gershgorin's bound rho on
            # the eigenvalues of D^-1 A, computed on the device and read for all levels at once
            inv_diag = None
            if pre is None or post is None or (self.mid_case == "standalone" and self.mid_smoothers[l] is None):
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
        exec, params = self.executor, self.parameters
        value = None
        if params.coarsest_solver:
            # Ginkgo's solver selector (default: the first)
            index = self._selected(params.solver_selector or (lambda level, A: 0), len(self.levels), A,
                                   len(params.coarsest_solver), "solver_selector")
            value = params.coarsest_solver[index]
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
        # (the visits within the merged levels smooth before and after: mid_case "both")
        mid = self.mid_case != "both" and self.cycle in ("w", "f")
        if not (builtin and isinstance(self.coarsest_solver, Dense)) or last == 0 or mid:
            return
        # the finest level is launched as such: it has the most work, for the whole device, and
        # the cycle's own kind (a W-cycle's two visits of the level below)
        first = last
        # (one value type in the launch: the merged levels' and that of the level above them)
        dtype = self.matrices[last].dtype
        # (the levels of one launch have piecewise constant transfers: not a smoothed aggregation)
        while first > 1 and self.matrices[first - 1].shape[0] <= merged_rows and not self.levels[first - 1].smoothed \
                and self.matrices[first - 2].dtype == self.matrices[first - 1].dtype == dtype:
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
        place: ``A.update_values``), AmgX's structure reuse: aggregates and transfer operators
        kept, the Galerkin products, smoothers and coarsest inverse recomputed into the arrays
        the cycle reads (:func:`~ginkpy.core.solver.multigrid_update.update_hierarchy`).
        Returns whether the launches recorded with this solver stay valid. Smoothed
        aggregation (Pgm's ``prolongation_relax``) makes its P, R and R A P again into their
        arrays too (their patterns are structural, the same for any values)."""
        from ginkpy.core.solver.multigrid_update import update_hierarchy
        valid = update_hierarchy(self)
        if not valid:
            self._forget_captures()
        return valid

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
        return launches_per_cycle(self)

    def __repr__(self) -> str:
        return describe(self)

    # -- apply ------------------------------------------------------------------------------------
    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if b.global_shape[0] == 0 or b.shape[1] == 0:  # (a rank without rows still takes part)
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
        their vectors lie in one work vector, the last item). b and x of a level are in the value
        type of the level above, whose kernels write and read them; the spare in its own."""
        work = self._work.get(k)
        if work is None:
            work = []
            exec = self.executor
            for l, A in enumerate(self.matrices):
                n = A.shape[0]
                if l == 0:
                    work.append((None, None, Dense.empty(exec, (n, k), A.dtype)))
                elif self.merged_from is None or l <= self.merged_from:
                    above = self.matrices[l - 1].dtype
                    work.append((Dense.empty(exec, (n, k), above), Dense.empty(exec, (n, k), above),
                                 Dense.empty(exec, (n, k), A.dtype)))
            work.append(None if self.coarse is None else
                        Dense.empty(exec, (self.coarse.work_rows, k), self.coarse.matrices[0].dtype))
            self._work[k] = work
        return work

    def _in_level_type(self, l: int, b: Dense, x: Dense, zero_guess: bool, kind: str, first: str,
                       last: bool) -> None:
        """A cycle on level l for b and x of another value type than the level's: b converted into
        it, the cycle run there, x converted back (on vectors kept per column count)."""
        key, (n, dtype) = ("converted", l, b.shape[1]), (self.matrices[l].shape[0], self.matrices[l].dtype)
        vectors = self._work.get(key) or self._work.setdefault(
            key, tuple(Dense.zeros(self.executor, (n, b.shape[1]), dtype) for _ in range(2)))
        apply_in(vectors, b, x, not zero_guess, lambda b_l, x_l: self._cycle(l, b_l, x_l, zero_guess, kind, first, last))

    def _cycle(self, l: int, b: Dense, x: Dense, zero_guess: bool, kind: str, first: str = "pre",
               last: bool = True) -> None:
        """One cycle of ``kind`` on level l for A_l x = b, from x (or from 0 where ``zero_guess``:
        x is then not read), the result in x. ``first``: the pre-smoother ("pre"), none ("skip")
        or the mid-smoother ("mid"); ``last``: whether to post-smooth (the visits of a W- or
        F-cycle as ``mid_case`` says)."""
        exec = self.executor
        if b.dtype != self.matrices[l].dtype:
            self._in_level_type(l, b, x, zero_guess, kind, first, last)
            return
        work = self._buffers(b.shape[1])
        if l == len(self.levels):
            # the coarsest level: x = A^-1 b (the guess does not matter to a direct solve)
            self.coarsest_solver.apply(b, x)
            return
        level, A, inv_diag = self.levels[l], self.matrices[l], self.inv_diags[l]
        coarse_b, coarse_x = work[l + 1][0], work[l + 1][1]
        pre = self.mid_smoothers[l] if first == "mid" else self.pre_smoothers[l]
        post = self.post_smoothers[l]
        iters, omega = self.smoother_iters, self.omegas[l]
        # each built-in sweep writes a new vector, but a first one from 0: start in the vector
        # from which the cycle's last write lands in x
        pre_sweeps = 0 if pre is not None or first == "skip" else iters - 1 if zero_guess else iters
        writes = pre_sweeps + (iters if post is None and last else 0)
        current, other = (x, work[l][2]) if writes % 2 == 0 else (work[l][2], x)
        # pre-smoothing, then b_c = P^T (b - A x); from 0 with one sweep of an aggregation's
        # level both in one pass (x = omega D^-1 b and the restriction of its residual)
        fused = (pre is None or first == "skip") and zero_guess and pre_sweeps == 0 and not level.smoothed
        if pre is not None and first != "skip":
            if not zero_guess and current is not x:  # (a built-in post-smoother's writes land x here)
                current.copy_from(x)
            improve(pre, b, current, zero_guess)
        elif fused:
            exec.run("solver.multigrid.relax_first_restrict", omega, A, inv_diag, level.agg_ptrs, level.agg_rows, b,
                     current, coarse_b)
        else:
            if zero_guess:
                # x = omega D^-1 b
                exec.run("components.relaxation.relax_first", omega, inv_diag, b, current, None)
            elif current is not x:
                current.copy_from(x)
            current, other = sweeps(self, l, pre_sweeps, b, current, other)
        if not fused:
            restrict(self, l, b, current, coarse_b)
        # coarse correction: a cycle on A_c e = b_c from 0 (twice for W and F, the second from
        # the first's result); the levels cycled through in one launch take both in it
        second = kind in ("w", "f") and l + 1 < len(self.levels)
        after = "w" if kind == "w" else "v"
        if l + 1 == self.merged_from:
            exec.run("solver.multigrid.coarse_cycle", self.coarse, self._schedules[(True, False) if second else (True,)],
                     work[-1], coarse_b, coarse_x)
        elif second:
            # between the two visits (mid_case): the post- and pre-smoother ("both"), one of them,
            # or the mid-smoother ("standalone")
            mid = self.mid_case
            self._cycle(l + 1, coarse_b, coarse_x, True, kind, last=mid in ("both", "post_smoother"))
            self._cycle(l + 1, coarse_b, coarse_x, False, after,
                        first={"both": "pre", "pre_smoother": "pre", "post_smoother": "skip", "standalone": "mid"}[mid])
        else:
            self._cycle(l + 1, coarse_b, coarse_x, True, kind)
        # post-smoothing
        if not last or post is not None or level.smoothed:
            # x = x + P e
            prolong(self, level, coarse_x, current)
            if post is not None and last:
                improve(post, b, current, False)
            elif last:
                current, other = sweeps(self, l, iters, b, current, other)
        else:
            # y = x + P e;  x_new = y + omega D^-1 (b - A y)
            exec.run("solver.multigrid.prolong_relax", omega, A, inv_diag, level.agg, coarse_x, b, current, other)
            current, other = sweeps(self, l, iters - 1, b, other, current)
        if current is not x:
            x.copy_from(current)
