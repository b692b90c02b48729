"""Gmres: the restarted generalized minimal residual method, GMRES(m), for general systems.

Right-preconditioned as in Ginkgo: the Krylov space is built from A M, and x = x0 + M V y at
the end of each cycle (with scalar Jacobi, A M is the system matrix with scaled columns, made
once). The Arnoldi step orthogonalises with classical Gram-Schmidt applied twice (CGS2: as
stable as modified Gram-Schmidt, but each pass is one reduction for all basis vectors), and
Givens rotations keep the Hessenberg matrix triangular, so |g_{j+1}| is the residual norm
estimate that the device checks every inner iteration. An inner iteration is four launches:
the product, the first pass's dot products and ||w|| (with the Givens step of the previous
Hessenberg column), its update (with the second pass's dot products where needed), and the
second pass where needed with ||w||^2; the new basis vector is normalized by the next
iteration, which knows its norm from those sums.

A column whose estimate meets the criterion stops its inner iterations (status PENDING); at
the end of the cycle x is updated and the true residual b - A x decides: converged, or on with
the next cycle. Each column counts its own inner iterations, from which it takes its update.
A rank-deficient Hessenberg matrix (A or M singular: a rotated diagonal below 100 eps of its
column's norm) stops the column with a breakdown, its update keeping the steps before, so its
x is never worse than at the start of the cycle.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import integer, one_of, parameters
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver, PreconditionedParameters


class Gmres(IterativeSolver):
    """The restarted generalized minimal residual method GMRES(m) for general (nonsymmetric,
    indefinite) systems: Ginkgo's ``solver::Gmres``, SciPy's ``gmres``.

    Use it for nonsymmetric systems where Bicgstab is erratic or breaks down; each inner
    iteration costs a product by A, an application of M and an orthogonalization against the
    basis, so a cycle of m iterations costs O(m^2 n) besides. The residual never grows, and a
    solve that does not converge keeps the best x of its cycles.

    Parameters
    ----------
    (set with ``with_<name>`` on ``Gmres.build()``)
    krylov_dim : int, default 30
        m, the iterations of a restart cycle (at most n).
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        Iterations count inner iterations.
    preconditioner : factory or LinOp, default None (none)
        M, applied from the right (the criteria see the residual of A x = b itself).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts.
    ortho_method : {"mgs", "cgs", "cgs2"}, default "mgs"
        Ginkgo's choice of Gram-Schmidt: accepted for its configurations; ginkpy orthogonalizes
        by classical Gram-Schmidt applied twice where needed (CGS2) whatever is given (as
        stable as modified Gram-Schmidt, with fewer reductions).

    Examples
    --------
    >>> solver = gk.solver.Gmres.build().with_krylov_dim(50).with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    confirms_on_device = True  # the end of a cycle confirms with the true residual on the device
    keeps_best_iterate = False  # a cycle never raises the residual

    @parameters
    class Parameters(PreconditionedParameters):
        krylov_dim: int = attrs.field(default=30, validator=integer(min=1))
        ortho_method: str = attrs.field(default="mgs", validator=one_of("mgs", "cgs", "cgs2"))

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        # a Krylov space cannot grow beyond n dimensions
        self.krylov_dim = max(1, min(int(self.parameters.krylov_dim), self.system_matrix.global_shape[0]))

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x = self.executor, self.system_matrix, monitor.x
        AM, diag, M = self._right_preconditioned()
        (n, k), m = x.shape, self.krylov_dim
        ws = monitor.ws
        # v: the input of the next product, v_j as stored (v_0 normalized, later ones not yet)
        r, v, w = ws.vectors("r", "v", "w")
        z, u = ws.vectors("z", "u") if M is not None else (None, None)
        # Krylov basis V: basis vector i in rows i n .. (i + 1) n;  Hessenberg H: h_{i,j} at (i, j k + column)
        basis = ws.vector("basis", rows=(m + 1) * n)
        hessenberg = ws.vector("hessenberg", rows=m + 1, cols=m * k)
        g = ws.vector("g", rows=m + 1)
        cos, sin = ws.vector("cos", rows=m), ws.vector("sin", rows=m)
        inner = ws.array("inner", (k,), np.int32)
        # partial sums of ||r||^2, ||w||^2 and of the dot products with the basis
        rr, ww, h, h2 = ws.partials("rr"), ws.partials("ww"), ws.partials("h", m + 2), ws.partials("h2", m + 1)
        # per column: whether the Gram-Schmidt step needs its second pass
        reorth = ws.array("reorth", (k,), np.uint8)
        # r = b - A x
        monitor.start(r)
        if monitor.solve_small("gmres", krylov_dim=m):
            return
        stop = monitor.stop

        def restart():
            # partial sums of ||r||^2: the check of the true residual;  v_0 = r / ||r||;  g = ||r|| e_1
            exec.run("components.reduction.dots", r, r, None, rr)
            A.reduce_sums(rr)
            exec.run("solver.gmres.restart", r, rr, basis, v, g, inner, stop)

        def rotate(j: int) -> None:
            # the Givens step of H[:, j] (and the check of its residual estimate |g_{j+1}|)
            exec.run("solver.gmres.givens", j, ww, hessenberg, g, cos, sin, inner, stop)

        def step(j: int, givens_first: bool) -> None:
            # w = A M v_j
            if M is None:
                AM.apply(v, w)
            else:
                A.apply(self._precondition(v, z, M), w)
            # h = V^T w and ||w|| (with givens_first, the Givens step of H[:, j - 1] first);  w = w - V h;
            # where w lost most of its norm, a second pass w = w - V h2 with h2 = V^T w (DGKS);
            # v_{j+1} = v = w, ||w||^2 for its norm
            exec.run("solver.gmres.multi_dot", j, givens_first, basis, w, ww, h, hessenberg, g, cos, sin, inner, stop)
            A.reduce_sums(h)
            exec.run("solver.gmres.orthogonalize", j, basis, w, ww, h, hessenberg, h2, reorth, stop)
            A.reduce_sums(h2)
            exec.run("solver.gmres.reorthogonalize", j, basis, w, h2, hessenberg, v, reorth, ww, stop)
            A.reduce_sums(ww)

        def end_cycle(j: int) -> None:
            # the Givens step of H[:, j];  y = R^-1 g;  x = x + M V y;  r = b - A x
            rotate(j)
            if M is None:
                exec.run("solver.gmres.update", basis, hessenberg, g, inner, diag, x)
            else:
                u.fill(0.0)
                exec.run("solver.gmres.update", basis, hessenberg, g, inner, None, u)
                x.add_scaled(1.0, self._precondition(u, z, M))
            monitor.residual(r)
            restart()

        restart()
        monitor.run_restarted(m, step, rotate, end_cycle)
