"""Gmres: the restarted generalized minimal residual method, GMRES(m), for general systems.

Right-preconditioned as in Ginkgo: the Krylov space is built from A M, and x = x0 + M V y at
the end of each cycle. The Arnoldi step orthogonalises with classical Gram-Schmidt applied
twice (CGS2: as stable as modified Gram-Schmidt, but each pass is one kernel launch for all
basis vectors), and Givens rotations keep the Hessenberg matrix triangular, so |g_{j+1}| is
the residual norm estimate that the criteria check each iteration. Columns that meet a
criterion on that estimate are confirmed with the true residual b - A x after x is updated.

Each right-hand-side column counts its own inner iterations, from which it takes its update.
A column whose estimate is exactly 0 (happy breakdown, h_{j+1,j} = 0: x0 + M V y solves
the system) idles until the cycle ends; a singular Hessenberg matrix (A or M singular) stops
the column with a breakdown, keeping the iterations before it.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import parameters
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import IterationMonitor, IterativeSolver


class Gmres(IterativeSolver):
    @parameters
    class Parameters(IterativeSolver.Parameters):
        krylov_dim: int = attrs.field(default=30)

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        m = self.parameters.krylov_dim
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"Gmres needs with_krylov_dim(m) with an integer m >= 1 (the restart length), got {m!r}")

    def _solve(self, b: Dense, x: Dense) -> None:
        exec, A = self.executor, self.system_matrix
        (n, k), m = b.shape, int(self.parameters.krylov_dim)
        r, w = b.empty_like(), b.empty_like()
        z = Dense.zeros(exec, b.shape, b.dtype)  # the initial guess of an iterative preconditioner
        # Krylov basis V: basis vector i in rows i n .. (i + 1) n;  Hessenberg H: h_{i,j} at (i, j k + column).
        # V and v = v_j start at 0, so that the columns that never take a step hold no garbage.
        basis = Dense.zeros(exec, ((m + 1) * n, k), b.dtype)
        v = Dense.zeros(exec, (n, k), b.dtype)
        hessenberg = b.empty_like((m + 1, m * k))
        h, g = b.empty_like((m + 1, k)), b.empty_like((m + 1, k))
        cos, sin, y = (b.empty_like((m, k)) for _ in range(3))
        r_norm, w_norm, estimate = (b.empty_like((1, k)) for _ in range(3))
        inner = exec.alloc((k,), np.int32)
        one = Dense.full(exec, (1, 1), 1.0, b.dtype)
        # r = b - A x
        self._residual(b, x, r)
        monitor = IterationMonitor(self, b, x, r)
        iteration = 0
        done = monitor.check(iteration, residual=r)
        while not done:
            # v_0 = r / ||r||;  g = ||r|| e_1;  no inner iterations yet
            r.compute_norm2(r_norm)
            exec.run("solver.gmres.restart", r, r_norm, basis, v, g, estimate, inner, monitor.status)
            for j in range(m):
                # z = M v_j;  w = A z
                z = self._precondition(v, z)
                A.apply(z, w)
                # h_{0:j+1,j} = V_{0:j+1}^T w;  w = w - V_{0:j+1} h, twice (CGS2)
                for accumulate in (False, True):
                    exec.run("solver.gmres.multi_dot", basis, w, j + 1, h)
                    exec.run("solver.gmres.orthogonalize", basis, h, j, accumulate, w, hessenberg, estimate,
                             monitor.status)
                # h_{j+1,j} = ||w||;  v_{j+1} = w / h_{j+1,j}
                w.compute_norm2(w_norm)
                exec.run("solver.gmres.next_basis", w, w_norm, j, basis, v, estimate, monitor.status)
                # rotate H[:, j] by the previous Givens rotations, eliminate h_{j+1,j} with a new one;
                # g_{j+1} = -sin_j g_j, g_j = cos_j g_j, estimate = |g_{j+1}|
                exec.run("solver.gmres.givens", w_norm, j, hessenberg, g, cos, sin, estimate, inner, monitor.status)
                iteration += 1
                done = monitor.check(iteration, residual_norm=estimate, provisional=True)
                if done:
                    break
            # y = R^-1 g (each column with its own inner iterations);  x = x + M V y
            exec.run("solver.gmres.solve_krylov", hessenberg, g, inner, y)
            exec.run("solver.gmres.multi_axpy", basis, y, inner, w)
            x.add_scaled(one, self._precondition(w, z))
            # r = b - A x confirms (or reopens) the columns that stopped on the estimate
            self._residual(b, x, r)
            done = monitor.confirm(iteration, r)
        monitor.finish()
