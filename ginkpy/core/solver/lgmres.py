"""Lgmres: loose GMRES, LGMRES(m, k) (Baker, Jessup, Manteuffel), GMRES(m) whose restart cycles
also search along the corrections of the last k cycles, as SciPy's ``lgmres``.

A cycle is flexible GMRES (Gmres with ``flexible``): m Krylov steps z_j = M v_j, w_j = A z_j, then
one step per kept correction dx_i of an earlier cycle, z = dx_i and w = A dx_i (its product
kept beside it, so that an augmentation step costs no product), orthogonalized against the
basis V as any w. Since A Z = V H holds for the whole cycle, the least-squares problem
min ||beta e_1 - H y|| on the device (Gmres's Givens rotations) gives x = x + Z y, and
dx = Z y is kept with A dx as the next augmentation vector, the oldest dropped after k. The
corrections of successive cycles tend to alternate in direction, which plain restarting
forgets; keeping them damps that and often saves many cycles.

Every launch is Gmres's (``solver.gmres.*``): the augmentation steps pass the kept vectors in
place of the product, so that the device orthogonalizes, rotates and checks as in Gmres, and the
cycle's length (m plus the corrections kept so far) is known to the host. The kept vectors are a
ring of k slots, the correction of cycle t in slot t mod k.

Right-preconditioned (SciPy's lgmres preconditions from the left, minimizing ||M (b - A x)||
within a cycle): the estimates are those of the system's own residual.
"""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import integer, parameters
from ginkpy.core.solver.gmres import Gmres
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.restarted_cycle import RestartedCycle


class Lgmres(Gmres):
    """Loose GMRES, LGMRES(m, k), for general (nonsymmetric, indefinite) systems: SciPy's
    ``lgmres``, restarted GMRES augmented with the corrections of earlier cycles.

    Use it where GMRES(m) needs many restart cycles (its residual stalls after each restart):
    the last k corrections enter each cycle's search space at the cost of k more basis vectors
    and their orthogonalization (their products are kept: 2 k vectors more than Gmres, besides
    flexible GMRES's m vectors of M v).

    Parameters
    ----------
    (set with ``with_<name>`` on ``Lgmres.build()``)
    krylov_dim : int, default 30
        m (SciPy's ``inner_m``), the Krylov steps of a cycle (at most n).
    augmentation_dim : int, default 3
        k (SciPy's ``outer_k``), the corrections of earlier cycles kept and searched along;
        0 makes it flexible GMRES(m).
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        Iterations count the steps of the cycles (Krylov and augmentation steps).
    preconditioner : factory or LinOp, default None (none)
        M, applied from the right (it may change between applications: the cycle keeps M v).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts.

    Examples
    --------
    >>> solver = gk.solver.Lgmres.build().with_krylov_dim(20).with_augmentation_dim(3).with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    @parameters
    class Parameters(Gmres.Parameters):
        augmentation_dim: int = attrs.field(default=3, validator=integer(min=0))

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        self.augmentation_dim = int(self.parameters.augmentation_dim)

    def cycle_lengths(self, cycles: int) -> list[int]:
        """The steps of the first ``cycles`` restart cycles: m, m + 1, ..., m + k, m + k, ...
        (SciPy's ``maxiter`` counts cycles: ``gk.linalg.lgmres`` limits the steps to their sum)."""
        m, k = self.krylov_dim, self.augmentation_dim
        return [m + min(c, k) for c in range(cycles)]

    def _solve(self, monitor: IterationMonitor) -> None:
        A, x = self.system_matrix, monitor.x
        m, slots = self.krylov_dim, self.augmentation_dim
        cycle = RestartedCycle(self, monitor, m + slots, flexible=True)
        ws = monitor.ws
        # the kept corrections dz_i and their products A dz_i, a ring: cycle t's in slot t mod k
        kept = [ws.vectors(f"aug_z{i}", f"aug_w{i}") for i in range(slots)]
        monitor.start(cycle.r)
        # cycle: the cycle running (from 0); active: the corrections its augmentation steps take
        state = {"cycle": -1, "active": 0}

        def length() -> int:
            state["cycle"] += 1
            state["active"] = min(state["cycle"], slots)
            return m + state["active"]

        def slot(j: int) -> int | None:
            # the ring slot of augmentation step j (the oldest correction first), None for a Krylov step
            if j < m:
                return None
            return (state["cycle"] - state["active"] + j - m) % slots

        def step(j: int, givens_first: bool) -> None:
            i = slot(j)
            if i is None:
                # z = M v;  w = A z
                z = self._precondition(cycle.v, cycle.z)
                A.apply(z, cycle.w)
                cycle.arnoldi(j, givens_first, z, cycle.w)
            else:
                # z = dx_i, w = A dx_i (kept)
                cycle.arnoldi(j, givens_first, *kept[i])

        def end_cycle(j: int) -> None:
            # the Givens step of H[:, j];  y = R^-1 g;  dx = Z y into this cycle's slot;  x = x + dx;
            # its product A dx kept;  r = b - A x and the next cycle's start
            cycle.rotate(j)
            if slots:
                dz, dw = kept[state["cycle"] % slots]
                cycle.update_into(dz)
                x.add_scaled(1.0, dz)
                A.apply(dz, dw)
            else:
                cycle.update_into(cycle.u)
                x.add_scaled(1.0, cycle.u)
            monitor.residual(cycle.r)
            cycle.restart()

        cycle.restart()
        monitor.run_restarted(length, step, cycle.rotate, end_cycle,
                              step_key=lambda j: (j == 0, j % 2, slot(j)),
                              end_key=lambda j: (j, state["cycle"] % slots if slots else None))
