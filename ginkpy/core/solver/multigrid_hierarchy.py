"""How Multigrid builds its hierarchy (Ginkgo's ``Multigrid::generate``): what the parameters
leave open chosen for the kind of executor, the levels coarsened by the ``mg_level`` factories
(Ginkgo's level selector), each level's smoothers (the built-in Jacobi sweeps' D^-1 and
relaxation, read for all levels at once), the coarsest solver (a dense inverse up to
COARSEST_DENSE_ROWS rows, else Jacobi-CG) and the coarse levels cycled through in one launch.
:class:`MultigridHierarchy` is the base that :class:`~ginkpy.core.solver.multigrid.Multigrid`
takes these steps from; ``multigrid_update.py`` redoes them on new values."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ginkpy.core.base.device_choices import CycleChoice
from ginkpy.core.base.factory import as_factory
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.multigrid.pgm import Pgm, default_levels
from ginkpy.core.preconditioner.jacobi import Jacobi
from ginkpy.core.solver.cg import Cg
from ginkpy.core.solver.coarse_levels import CoarseLevels
from ginkpy.core.solver.solver_base import IterativeSolver, generate_preconditioner
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm

COARSEST_DENSE_ROWS = 1024  # the default coarsest solver inverts systems up to this size
COARSEST_CG_REDUCTION = 1e-12


class MultigridHierarchy(IterativeSolver):
    """The generation steps of Multigrid (the module docstring): each sets attributes of the
    solver that its cycle reads (``levels``, ``matrices``, the smoothers, ``omegas``,
    ``coarsest_solver``, ``coarse`` and the schedules of the merged levels)."""

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
