"""Lgmres: loose GMRES, LGMRES(m, k) (Baker, Jessup, Manteuffel), GMRES(m) whose restart cycles
also search along the corrections of the last k cycles, as SciPy's ``lgmres``.

A cycle is flexible GMRES (Gmres with ``flexible``): m Krylov steps z_j = M v_j, w_j = A z_j, then
one step per kept correction dx_i of an earlier cycle, z = dx_i and w = A dx_i (its product
kept beside it, so that an augmentation step costs no product), orthogonalized against the
basis V as any w. Since A Z = V H holds for the whole cycle, the least-squares problem
min ||beta e_1 - H y|| on the device (Gmres's Givens rotations) gives x = x + Z y, and
dx = Z y is kept with A dx as the next augmentation vector (both scaled by 1 / ||A dx||), the
oldest dropped after k. The
corrections of successive cycles tend to alternate in direction, which plain restarting
forgets; keeping them damps that and often saves many cycles.

Every launch of a step is Gmres's (``solver.gmres.*``; a cycle's end adds Gcrotmk's
``solver.gcrotmk.recycle``, which keeps a correction): the augmentation steps pass the kept vectors in
place of the product, so that the device orthogonalizes, rotates and checks as in Gmres, and the
cycle's length (m plus the corrections kept so far) is known to the host. The kept vectors are a
ring of k slots, the correction of cycle t in slot t mod k.

Right-preconditioned by default: the estimates are those of the system's own residual. With
``preconditioner_side="left"`` it is SciPy's lgmres: the cycle on M A from z = M r (a Krylov step
z = v, w = M A v; a kept correction's product M A dx), to SciPy's inner tolerance as Gmres's left
mode keeps it (the scale of g, ``solver.gmres.restart_left``), the true residual deciding at
each restart; right preconditioning can stall where it converges (nos6 with Gauss-Seidel).
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import integer, one_of, parameters
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.gmres import Gmres
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.restarted_cycle import RestartedCycle, ring_order, seed_pair


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
    prepend_augmentation : bool, default False
        SciPy's ``prepend_outer_v``: the augmentation steps first in each cycle (the first
        Krylov step then starts from v_0), else after the Krylov steps.
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        Iterations count the steps of the cycles (Krylov and augmentation steps).
    preconditioner : factory or LinOp, default None (none)
        M, applied from the right (it may change between applications: the cycle keeps M v).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts.
    preconditioner_side : {"right", "left"}, default "right"
        M from the right, or from the left as SciPy's lgmres (each cycle minimizes
        ||M (b - A x)|| to SciPy's inner tolerance; the true residual decides at each restart).
        ``gk.linalg.lgmres`` with M uses "left".
    flexible, ortho_method
        Gmres's, accepted for its configurations: the cycles are always flexible, and
        orthogonalize as Gmres's.

    Examples
    --------
    >>> solver = gk.solver.Lgmres.build().with_krylov_dim(20).with_augmentation_dim(3).with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """


    @parameters
    class Parameters(Gmres.Parameters):
        augmentation_dim: int = attrs.field(default=3, validator=integer(min=0))
        prepend_augmentation: bool = attrs.field(default=False, validator=one_of(True, False))

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        self.augmentation_dim = int(self.parameters.augmentation_dim)

    def cycle_lengths(self, cycles: int) -> list[int]:
        """The steps of the first ``cycles`` restart cycles: m, m + 1, ..., m + k, m + k, ...
        (SciPy's ``maxiter`` counts cycles: ``gk.linalg.lgmres`` limits the steps to their sum)."""
        m, k = self.krylov_dim, self.augmentation_dim
        return [m + min(c, k) for c in range(cycles)]

    def _solve(self, monitor: IterationMonitor) -> None:
        x = monitor.x
        m, slots = self.krylov_dim, self.augmentation_dim
        left = self.parameters.preconditioner_side == "left" and not isinstance(self.preconditioner, Identity)
        cycle = RestartedCycle(self, monitor, m + slots, flexible=True, left=left)
        ws = monitor.ws
        # the kept corrections dz_i and their products A dz_i, a ring: cycle t's in slot t mod k
        kept = [ws.vectors(f"aug_z{i}", f"aug_w{i}") for i in range(slots)]
        prepend = self.parameters.prepend_augmentation
        v0 = ws.vector("v0") if prepend else None
        cc = ws.scalars("cc")[0]
        monitor.start(cycle.r)
        seeded = self._take_seed(kept, cycle)  # (left: the products M A dz)
        # cycle: the cycle running (from 0, given corrections counting as cycles before); active:
        # the corrections its augmentation steps take
        state = {"cycle": seeded - 1, "active": 0}

        def length() -> int:
            state["cycle"] += 1
            state["active"] = min(state["cycle"], slots)
            return m + state["active"]

        def step(j: int, givens_first: bool) -> None:
            i = self._slot(j, state)
            if i is None:
                # z = M v (v_0 after prepended augmentation steps);  w = A z (left: z = v, w = M A v)
                v = v0 if self._first_after(j, state) else cycle.v
                z = v if left else self._precondition(v, cycle.z)
                cycle.product(z, cycle.w)
                cycle.arnoldi(j, givens_first, z, cycle.w)
            else:
                # z = dx_i, w = A dx_i (kept)
                cycle.arnoldi(j, givens_first, *kept[i])

        def end_cycle(j: int) -> None:
            # the Givens step of H[:, j];  y = R^-1 g;  dx = Z y into this cycle's slot;  x = x + dx;
            # its product A dx kept;  r = b - A x and the next cycle's start
            cycle.rotate(j)
            if slots:
                # (with cr = cc: dz = dx / ||A dx||, dw = A dz, x = x + dx, where the column took a
                # step: a cycle enqueued after the column stopped leaves its slot as it was)
                dz, dw = kept[state["cycle"] % slots]
                cycle.keep(cc, cc, cycle.w, cycle.correction(cycle.w, cc), x, dw, dz)
            else:
                cycle.update_into(cycle.u)
                x.add_scaled(1.0, cycle.u)
            monitor.residual(cycle.r)
            restart()

        def restart() -> None:
            cycle.restart()
            if prepend:
                v0.copy_from(cycle.v)

        restart()
        monitor.run_restarted(length, step, cycle.rotate, end_cycle,
                              step_key=lambda j: (j == 0, j % 2, self._slot(j, state), self._first_after(j, state)),
                              end_key=lambda j: (j, state["cycle"] % slots if slots else None))
        self._kept = [kept[i] for i in ring_order(state["cycle"], slots)] if slots else []  # (oldest first)

    def _slot(self, j: int, state: dict) -> int | None:
        """The ring slot of augmentation step j (the oldest correction first), None for a Krylov step."""
        i = j if self.parameters.prepend_augmentation else j - self.krylov_dim
        if not 0 <= i < state["active"]:
            return None
        return (state["cycle"] - state["active"] + i) % self.augmentation_dim

    def _first_after(self, j: int, state: dict) -> bool:
        """Whether step j is the first Krylov step after prepended augmentation steps (it starts from v_0)."""
        return self.parameters.prepend_augmentation and j == state["active"] > 0

    def set_augmentation(self, Z, W=None) -> None:
        """Start the next apply with the corrections of an earlier solve with the same matrix
        (SciPy's ``outer_v``): the columns of Z (n x s, oldest first, the same for every
        right-hand side) and of W = A Z where given (else computed on the device); the newest k
        are kept, as cycles before the first."""
        self._seed = seed_pair("set_augmentation", ("Z", "W"), Z, W, self.system_matrix.global_shape[0])

    def augmentation(self) -> tuple[np.ndarray, np.ndarray]:
        """(Z, W): the corrections kept after the last apply, oldest first, and their products
        W = A Z, as the columns of two n x s arrays (those of the first right-hand side; a zero
        correction, of a cycle enqueued after the column converged, left out)."""
        n = self.system_matrix.global_shape[0]
        pairs = [(z.to_numpy()[:, 0], w.to_numpy()[:, 0]) for z, w in getattr(self, "_kept", [])]
        pairs = [(z, w) for z, w in pairs if np.any(z != 0)]
        if not pairs:
            return np.zeros((n, 0), self.dtype), np.zeros((n, 0), self.dtype)
        return np.stack([z for z, _ in pairs], axis=1), np.stack([w for _, w in pairs], axis=1)

    def _take_seed(self, kept, cycle) -> int:
        """The corrections of set_augmentation (the newest k) into slots 0, 1, ... with their
        products (computed on the device where not given); how many."""
        seed, self._seed = getattr(self, "_seed", None), None
        if seed is None or not kept or seed[0].shape[1] == 0:
            return 0
        Z, W = seed
        Z, W = Z[:, -len(kept):], None if W is None else W[:, -len(kept):]
        exec, k = self.executor, cycle.r.shape[1]
        for i in range(Z.shape[1]):
            z, w = kept[i]
            exec.write(z.values, np.repeat(Z[:, i:i + 1].astype(self.dtype), k, axis=1))
            if W is None:
                cycle.product(z, w)
            else:
                exec.write(w.values, np.repeat(W[:, i:i + 1].astype(self.dtype), k, axis=1))
        return Z.shape[1]
