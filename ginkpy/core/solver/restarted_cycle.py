"""RestartedCycle: the restart cycle of flexible GMRES on the device, as Gmres runs it, for the
solvers that build on it with other search directions (Lgmres's augmentation vectors,
Gcrotmk's recycled space).

A cycle keeps the orthonormal basis V and the vectors Z with A Z = V H (H upper Hessenberg, kept
triangular by Givens rotations, so that |g_{j+1}| is the residual estimate the device checks
each step). Step j takes any z_j and w_j = A z_j (for GMRES z_j = M v_j; a caller may pass
other vectors, with w_j their product or its projection), which Gmres's kernels normalize by
||v_j||, orthogonalize against V (classical Gram-Schmidt with the DGKS second pass) and rotate.
At the end y = R^-1 g gives the correction Z y. All launches are Gmres's (``solver.gmres.*``).
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.gmres import ORTHO_ETA2
from ginkpy.core.solver.loop.monitor import IterationMonitor


class RestartedCycle:
    """The work vectors and launches of a flexible GMRES cycle of at most ``steps`` steps.

    Attributes: ``r`` (the residual b - A x), ``v`` (the next basis vector, unnormalized),
    ``w`` and ``z`` (a Krylov step's product and preconditioned vector), ``u`` (a spare vector).

    Examples
    --------
    >>> cycle = RestartedCycle(solver, monitor, m)
    >>> monitor.start(cycle.r); cycle.restart()
    >>> z = solver._precondition(cycle.v, cycle.z); A.apply(z, cycle.w); cycle.arnoldi(0, True, z, cycle.w)
    """

    def __init__(self, solver, monitor: IterationMonitor, steps: int, flexible: bool = True,
                 left: bool = False) -> None:
        self.exec, self.A, self.monitor = solver.executor, solver.system_matrix, monitor
        # left preconditioning (SciPy's lgmres): the cycle on M A from z = M r, with Gmres's
        # scale of g (SciPy's inner tolerance) and its per-column factor
        self.left, self.M = left, solver.preconditioner
        ws = monitor.ws
        n, k = monitor.x.shape
        self.r, self.v, self.w, self.z, self.u = ws.vectors("r", "v", "w", "z", "u")
        # Z: z_j in rows j n .. (j + 1) n;  V: v_j likewise (one more);  H: h_{i,j} at (i, j k + column)
        self.zbasis = ws.array("cycle_zbasis", (steps * n, k), solver.dtype)
        self.basis = ws.array("cycle_basis", ((steps + 1) * n, k), solver.dtype)
        self.hessenberg = ws.vector("cycle_hessenberg", rows=steps + 1, cols=steps * k)
        self.g, self.nrm = ws.vector("cycle_g", rows=steps + 1), ws.vector("cycle_nrm", rows=1)
        self.cos, self.sin = ws.vector("cycle_cos", rows=steps), ws.vector("cycle_sin", rows=steps)
        self.inner = ws.array("cycle_inner", (k,), np.int32)
        self.js = ws.array("cycle_step", (2,), np.int32)
        self.rr, self.ww = ws.partials("rr"), ws.partials("ww")
        self.h, self.h2 = ws.partials("h", steps + 2), ws.partials("h2", steps + 1)
        self.reorth = ws.array("reorth", (k,), np.uint8)
        self.eta2 = ORTHO_ETA2[solver.parameters.ortho_method]
        if left:
            self.unscale = ws.vector("cycle_unscale", rows=1)
            self.factor = ws.array("cycle_ptol_factor", (k,), real_dtype(solver.dtype))
            self.zz = ws.partials("zz")

    def restart(self) -> None:
        """||r|| (the check of the true residual);  v = r / ||r||;  g = ||r|| e_1;  j = 0 (left:
        z = M r, v = z / ||z||, g = ||z|| s e_1, s from SciPy's inner tolerance)."""
        exec, stop = self.exec, self.monitor.stop
        exec.run("components.reduction.dots", self.r, self.r, None, self.rr)
        self.A.reduce_sums(self.rr)
        if not self.left:
            exec.run("solver.gmres.restart", self.r, self.rr, self.v, self.g, self.inner, self.js, stop)
            return
        self.M.apply(self.r, self.z)
        exec.run("components.reduction.dots", self.z, self.z, None, self.zz)
        self.A.reduce_sums(self.zz)
        exec.run("solver.gmres.restart_left", self.z, self.rr, self.zz, self.v, self.g, self.unscale, self.factor,
                 self.inner, self.js, stop)

    def product(self, z: Dense, w: Dense) -> Dense:
        """w = A z (left: w = M A z, through the spare vector u)."""
        if self.left:
            self.A.apply(z, self.u)
            return self.M.apply(self.u, w)
        return self.A.apply(z, w)

    def rotate(self, j: int) -> None:
        """The Givens step of H[:, j] and the check of its estimate |g_{j+1}|."""
        self.exec.run("solver.gmres.givens", j, self.ww, self.hessenberg, self.g, self.cos, self.sin, self.inner,
                      self.monitor.stop)

    def arnoldi(self, j: int, givens_first: bool, z: Dense, w: Dense) -> None:
        """Step j (at js[j % 2] on the device) with w = A z: (the Givens step of H[:, j - 1]
        first where ``givens_first``) v_j = v / ||v||, z_j = z / ||v||;  h = V^H w / ||v||;
        v = w / ||v|| - V h (twice where the first pass left little), H[0:j+1, j] = h."""
        exec, A, stop, parity = self.exec, self.A, self.monitor.stop, j % 2
        exec.run("solver.gmres.multi_dot", self.js, parity, givens_first, self.v, self.basis, z, self.zbasis, w,
                 self.ww, self.nrm, self.h, self.hessenberg, self.g, self.cos, self.sin, self.inner, stop)
        A.reduce_sums(self.h)
        exec.run("solver.gmres.orthogonalize", self.js, parity, self.basis, w, self.nrm, self.h, self.hessenberg,
                 self.v, self.ww, self.h2, self.reorth, self.eta2, stop)
        if self.eta2 != -np.inf:
            A.reduce_sums(self.h2)
            exec.run("solver.gmres.reorthogonalize", self.js, parity, self.basis, self.v, self.h2,
                     self.hessenberg, self.reorth, self.ww, stop)
        A.reduce_sums(self.ww)

    def update_into(self, target: Dense) -> Dense:
        """target = Z y, y = R^-1 g (per column over the steps it took; 0 where none; left: g's
        scale undone)."""
        target.fill(0.0)
        self.exec.run("solver.gmres.update", self.zbasis, self.hessenberg, self.g, self.inner, None, target)
        if self.left:
            target.scale(self.unscale)
        return target

    def correction(self, cx: Dense, cc: Dense, cr: Dense | None = None) -> Dense:
        """The cycle's correction u = Z y (returned, in ``u``), its product cx = A u (left: M A u),
        cc = cx^H cx and (unless ``cr`` is None) cr = cx^H r."""
        u = self.update_into(self.u)
        if self.left:
            self.A.apply(u, self.z)
            self.M.apply(self.z, cx)
        else:
            self.A.apply(u, cx)
        cx.compute_conj_dot(cx, cc)
        if cr is not None:
            cx.compute_conj_dot(self.r, cr)
        return u

    def keep(self, cc: Dense, cr: Dense, cx: Dense, u: Dense, x: Dense, c_slot: Dense, u_slot: Dense) -> None:
        """Where a column took a step (cc > 0): c_slot = cx / sqrt(cc), u_slot = u / sqrt(cc),
        x = x + (cr / cc) u; a correction that overflowed stops its column as diverged
        (``solver.gcrotmk.recycle``)."""
        self.exec.run("solver.gcrotmk.recycle", cc, cr, cx, u, x, c_slot, u_slot, self.monitor.stop.status)


def ring_order(last: int, slots: int) -> list[int]:
    """The slots of a ring of ``slots`` vectors written by cycles 0 .. last (cycle t's in slot
    t mod slots), oldest first."""
    count = min(last + 1, slots)
    return [t % slots for t in range(last + 1 - count, last + 1)]


def seed_pair(method: str, names: tuple[str, str], Y, AY, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The vectors a caller seeds the next apply with (Lgmres's Z and W = A Z, Gcrotmk's U and
    C = A U): the columns of ``Y`` (n x s) and of ``AY`` (the same shape, or None: computed
    later). A ValueError of ``method`` names both (``names``) where the shapes are off."""
    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[0] != n or (AY is not None and np.shape(AY) != Y.shape):
        y, ay = names
        raise ValueError(f"{method}: {y} (and {ay}) must be n x s arrays with n = {n}, got {y} {Y.shape}"
                         f"{'' if AY is None else f' and {ay} {np.shape(AY)}'}")
    return Y, None if AY is None else np.asarray(AY)
