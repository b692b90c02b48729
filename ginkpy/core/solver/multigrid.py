"""Multigrid: algebraic multigrid as a solver or a preconditioner (Ginkgo's ``solver::Multigrid``).

Generation builds the hierarchy (multigrid_hierarchy.py): level l's matrix is coarsened by an
``mg_level`` factory (default ``gk.multigrid.Pgm``; several are used level by level, the last for
the rest) into the next, while a level has more than ``min_coarse_rows`` rows, fewer than ``max_levels`` levels
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

from ginkpy.core.base.factory import Factory, integer, number, one_of, parameters, variadic
from ginkpy.core.base.lin_op import LinOp, improve
from ginkpy.core.base.precision import apply_in
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.multigrid.pgm import as_csr
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.multigrid_hierarchy import MultigridHierarchy
from ginkpy.core.solver.multigrid_report import describe, launches_per_cycle
from ginkpy.core.solver.multigrid_steps import prolong, restrict, sweeps
from ginkpy.core.solver.solver_base import IterativeSolver

# Ginkgo's mid_smooth_type: what runs on a level between the two visits of a W- or F-cycle
MID_CASES = ("both", "post_smoother", "pre_smoother", "standalone")


class Multigrid(MultigridHierarchy):
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
        if b.dtype != self.matrices[l].dtype:
            self._in_level_type(l, b, x, zero_guess, kind, first, last)
            return
        work = self._buffers(b.shape[1])
        if l == len(self.levels):
            # the coarsest level: x = A^-1 b (the guess does not matter to a direct solve)
            self.coarsest_solver.apply(b, x)
            return
        pre = None if first == "skip" else self.mid_smoothers[l] if first == "mid" else self.pre_smoothers[l]
        post, iters = self.post_smoothers[l], self.smoother_iters
        # each built-in sweep writes a new vector, but a first one from 0: start in the vector
        # from which the cycle's last write lands in x
        pre_sweeps = 0 if pre is not None or first == "skip" else iters - 1 if zero_guess else iters
        writes = pre_sweeps + (iters if post is None and last else 0)
        current, other = (x, work[l][2]) if writes % 2 == 0 else (work[l][2], x)
        current, other = self._pre_smooth_restrict(l, b, x, current, other, zero_guess, pre, pre_sweeps, work[l + 1][0])
        self._coarse_correction(l, kind, work)
        current = self._post_smooth(l, b, current, other, post, last, work[l + 1][1])
        if current is not x:
            x.copy_from(current)

    def _pre_smooth_restrict(self, l: int, b: Dense, x: Dense, current: Dense, other: Dense, zero_guess: bool,
                             pre: LinOp | None, pre_sweeps: int, coarse_b: Dense) -> tuple:
        """Pre-smoothing on level l into ``current`` (``pre``: a smoother given, None:
        ``pre_sweeps`` built-in sweeps, 0 where the visit skips pre-smoothing), then b_c =
        P^T (b - A x) into ``coarse_b``; from 0 with one sweep of an aggregation's level both in
        one pass (x = omega D^-1 b and the restriction of its residual). Returns (current, other)
        after the sweeps."""
        exec, level, A, inv_diag, omega = self.executor, self.levels[l], self.matrices[l], self.inv_diags[l], \
            self.omegas[l]
        fused = pre is None and zero_guess and pre_sweeps == 0 and not level.smoothed
        if pre is not None:
            if not zero_guess and current is not x:  # (a built-in post-smoother's writes land x here)
                current.copy_from(x)
            improve(pre, b, current, zero_guess)
        elif fused:
            exec.run("solver.multigrid.relax_first_restrict", omega, A, inv_diag, level.agg_ptrs, level.agg_rows, b,
                     current, coarse_b)
            return current, other
        else:
            if zero_guess:
                # x = omega D^-1 b
                exec.run("components.relaxation.relax_first", omega, inv_diag, b, current, None)
            elif current is not x:
                current.copy_from(x)
            current, other = sweeps(self, l, pre_sweeps, b, current, other)
        restrict(self, l, b, current, coarse_b)
        return current, other

    def _coarse_correction(self, l: int, kind: str, work: list) -> None:
        """A cycle on A_c e = b_c from 0 on level l + 1 (twice for W and F, the second from the
        first's result); the levels cycled through in one launch take both in it."""
        coarse_b, coarse_x = work[l + 1][0], work[l + 1][1]
        second = kind in ("w", "f") and l + 1 < len(self.levels)
        after = "w" if kind == "w" else "v"
        if l + 1 == self.merged_from:
            self.executor.run("solver.multigrid.coarse_cycle", self.coarse,
                              self._schedules[(True, False) if second else (True,)], work[-1], coarse_b, coarse_x)
        elif second:
            # between the two visits (mid_case): the post- and pre-smoother ("both"), one of them,
            # or the mid-smoother ("standalone")
            mid = self.mid_case
            self._cycle(l + 1, coarse_b, coarse_x, True, kind, last=mid in ("both", "post_smoother"))
            self._cycle(l + 1, coarse_b, coarse_x, False, after,
                        first={"both": "pre", "pre_smoother": "pre", "post_smoother": "skip", "standalone": "mid"}[mid])
        else:
            self._cycle(l + 1, coarse_b, coarse_x, True, kind)

    def _post_smooth(self, l: int, b: Dense, current: Dense, other: Dense, post: LinOp | None, last: bool,
                     coarse_x: Dense) -> Dense:
        """x = x + P e on level l, then post-smoothing where ``last`` (``post``: a smoother given,
        None: the built-in sweeps, the first of them fused with the prolongation); returns the
        vector that holds x."""
        level, iters = self.levels[l], self.smoother_iters
        if not last or post is not None or level.smoothed:
            # x = x + P e
            prolong(self, level, coarse_x, current)
            if post is not None and last:
                improve(post, b, current, False)
            elif last:
                current, other = sweeps(self, l, iters, b, current, other)
            return current
        # y = x + P e;  x_new = y + omega D^-1 (b - A y)
        self.executor.run("solver.multigrid.prolong_relax", self.omegas[l], self.matrices[l], self.inv_diags[l], level.agg,
                          coarse_x, b, current, other)
        current, other = sweeps(self, l, iters - 1, b, other, current)
        return current
