"""Idr: the induced dimension reduction method IDR(s) for general systems.

Ginkgo's variant (van Gijzen and Sonneveld, ACM TOMS 38(1), Algorithm 913: IDR(s) with
bi-orthogonalization). Each iteration makes s steps that keep the residual orthogonal to a
growing part of the shadow space P (s orthonormal vectors), then one minimal-residual step
with omega = (t^H r) / (t^H t), t = A M r, enlarged to kappa |r| / |t| when the angle between
t and r is too wide (|cos| < kappa: "maintaining the convergence"). One iteration costs
s + 1 products by A and M; the criteria are checked once per iteration, as in Ginkgo.

``with_subspace_dim(s)`` (default 2; at most n, larger values are reduced to n) and
``with_kappa`` (default 0.7, between 0 and 1). P is random but deterministic: the same seeded
normal samples, orthonormalized on the host at generate time, on every executor (Ginkgo's
``deterministic``, accepted, is always so here). ``with_complex_subspace(True)`` (Ginkgo's) draws
a complex P for a complex system; a real system would need complex arithmetic, which is refused
(give the system in complex128).

The new g_j is made orthogonal to p_0 .. p_{j-1} with all its projections P g_j computed in
one reduction (Gmres's multi-dot kernel) and a triangular solve with m = P^H G: Ginkgo's
modified Gram-Schmidt in exact arithmetic, with one reduction instead of j. A division by 0 whose numerator is not
0 (a singular m, or t = A M r = 0 while r is not) stops the column with a breakdown; one
whose numerator is 0 too means that component of r is already 0 and contributes nothing.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import boolean, integer, number, parameters
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver

SHADOW_SPACE_SEED = 15  # Ginkgo's seed for its deterministic shadow space


def shadow_space(n: int, s: int, complex_: bool = False) -> np.ndarray:
    """s x n array of orthonormal rows (float64, complex128 where ``complex_``): seeded normal
    samples, orthonormalized by QR."""
    rng = np.random.default_rng(SHADOW_SPACE_SEED)
    samples = rng.standard_normal((n, s))
    if complex_:
        samples = samples + 1j * rng.standard_normal((n, s))
    return np.linalg.qr(samples)[0].conj().T


class Idr(IterativeSolver):
    """The induced dimension reduction method IDR(s) for general square systems: Ginkgo's
    ``solver::Idr`` (van Gijzen and Sonneveld's bi-orthogonal variant).

    Use it for nonsymmetric systems where Bicgstab stagnates: a larger shadow space
    (``subspace_dim``) converges in fewer iterations at s + 1 products by A and M each.

    Parameters
    ----------
    subspace_dim : int, default 2
        s, the dimension of the shadow space (at most n; larger values are reduced to n).
    kappa : float, default 0.7
        Between 0 and 1: the smallest |cos| between t = A M r and r at which omega is taken
        as computed (else it is enlarged, "maintaining the convergence").
    deterministic : bool, default False
        Ginkgo's: accepted; P is always the same seeded samples here, on every executor.
    complex_subspace : bool, default False
        Draw a complex shadow space for a complex system (a real system raises a ValueError).
    criteria, preconditioner, default_initial_guess
        As for every iterative solver (:class:`~ginkpy.core.solver.solver_base.IterativeSolver`):
        when to stop, M, the initial guess.

    Examples
    --------
    >>> solver = gk.solver.Idr.build().with_subspace_dim(4).with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """
    @parameters
    class Parameters(IterativeSolver.Parameters):
        subspace_dim: int = attrs.field(default=2, validator=integer(min=1))
        kappa: float = attrs.field(default=0.7, validator=number(min=0, max=1))
        deterministic: bool = boolean()
        complex_subspace: bool = boolean()

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        s, kappa = self.parameters.subspace_dim, self.parameters.kappa
        self.subspace_dim = min(int(s), self.shape[0])
        self.kappa = float(kappa)
        if self.parameters.complex_subspace and self.dtype.kind != "c":
            raise ValueError("Idr.with_complex_subspace(True) on a real system would need complex arithmetic, "
                             "which ginkpy's Idr does not do: give the system in complex128 (or complex64)")
        self.subspace_vectors = shadow_space(self.shape[0], self.subspace_dim, self.parameters.complex_subspace)
        self._shadow: dict[int, Dense] = {}

    def _shadow_blocks(self, k: int) -> Dense:
        """P as s blocks of n x k (block i: p_i in every column) on the executor, made once per k."""
        if k not in self._shadow:
            blocks = np.repeat(self.subspace_vectors.reshape(-1, 1), k, axis=1)
            self._shadow[k] = Dense.from_numpy(self.executor, blocks, self.dtype)
        return self._shadow[k]

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x = self.executor, self.system_matrix, monitor.x
        (n, k), s = x.shape, self.subspace_dim
        P = self._shadow_blocks(k)
        ws = monitor.ws
        r, v, t, u_j, g_j, z = ws.vectors("r", "v", "t", "u_j", "g_j", "z")
        # G = [g_0 ... g_{s-1}] and U = [u_0 ... u_{s-1}]: block i in rows i n .. (i + 1) n
        g, u = ws.vector("g", rows=s * n), ws.vector("u", rows=s * n)
        # m = P^T G, lower triangular, s x s per column: m_{i,l} at (i, l k + column)
        m = ws.vector("m", rows=s, cols=s * k)
        f, c, h, alpha = ws.scalars("f", "c", "h", "alpha", rows=s)
        omega, tr, tt = ws.scalars("omega", "tr", "tt")
        r_norm = ws.norms("r_norm")
        # r = b - A x
        monitor.start(r)
        status = monitor.stop.status
        # G = U = 0, m = I, omega = 1
        for vector in (g, u):
            vector.fill(0.0)
        m.copy_from(self._identity(k))
        omega.fill(1.0)
        monitor.check(r)

        def iteration():
            # f = P r
            exec.run("components.reduction.multi_dot", P, r, s, f)
            for j in range(s):
                # c = m \ f (rows j .. s-1);  v = r - sum_{i >= j} c_i g_i
                exec.run("solver.idr.step_1", j, m, f, r, g, c, v, status)
                # u_j = omega z + sum_{i >= j} c_i u_i, z = M v
                exec.run("solver.idr.step_2", j, omega, self._precondition(v, z), c, u, u_j, status)
                # g_j = A u_j;  h = P g_j
                A.apply(u_j, g_j)
                exec.run("components.reduction.multi_dot", P, g_j, s, h)
                # (g_j, u_j) -= sum_{i < j} alpha_i (g_i, u_i) with alpha = m \ h, so p_i . g_j = 0 (i < j);
                # m_{i,j} = p_i . g_j (i >= j);  beta = f_j / m_{j,j};  f_i -= beta m_{i,j} (i > j);
                # r -= beta g_j;  x += beta u_j
                exec.run("solver.idr.step_3", j, h, m, f, alpha, g_j, u_j, g, u, r, x, status)
            # z = M r;  t = A z
            z_ = self._precondition(r, z)
            A.apply(z_, t)
            # omega = (t^H r) / (t^H t), enlarged when |t^H r| < kappa |t| |r|;  r -= omega t;  x += omega z
            t.compute_conj_dot(r, tr)
            t.compute_conj_dot(t, tt)
            r.compute_norm2(r_norm)
            exec.run("solver.idr.step_4", self.kappa, tr, tt, r_norm, omega, z_, t, r, x, status)
            monitor.check(r)

        monitor.run(iteration)

    def _identity(self, k: int) -> Dense:
        """The s x s identity for every column (m_{i,l} at (i, l k + column)), made once per k."""
        key = ("identity", k)
        if key not in self._shadow:
            self._shadow[key] = Dense.from_numpy(self.executor, np.repeat(np.eye(self.subspace_dim), k, axis=1),
                                                 self.dtype)
        return self._shadow[key]
