"""Gcr: the generalized conjugate residual method (Eisenstat, Elman, Schultz), GCR(m), restarted
after m directions, as Ginkgo's solver::Gcr.

Each iteration takes the preconditioned residual z = M r as a new direction, makes its product
t = A z orthogonal to the products q_i = A p_i of the earlier directions of the cycle (classical
Gram-Schmidt, the dot products with all of them in one pass: q = t - sum beta_i q_i, p = z -
sum beta_i p_i with the same beta_i, so that A p = q), and steps x and r along p and q by the
alpha that minimizes ||r - alpha q||: the residual never grows. Since every direction is kept
as it was made (P beside Q), a preconditioner that changes between applications is allowed:
an inner iterative solver, a multigrid cycle. An iteration is a preconditioner application, a
product and four launches: the dot products, the new direction, the step, the stopping check.
The kernels read the direction's index from the device, so that the launches of an iteration
depend on its parity alone (and whether it is the first of its cycle): a solve captures three.

A column whose new q is 0 though its residual is not (A z in the span of the earlier products:
A or M singular) stops with a breakdown.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import integer, parameters
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver, PreconditionedParameters


class Gcr(IterativeSolver):
    """The generalized conjugate residual method GCR(m) for general systems, restarted after m
    directions (Ginkgo's ``solver::Gcr``).

    Use it where the preconditioner is not one fixed linear operator (an iterative solver with few
    iterations or a tolerance, a multigrid cycle with such parts): as flexible GMRES
    (``Gmres.with_flexible(True)``), it keeps every preconditioned direction. It keeps two vectors
    per direction (p and A p), where GMRES keeps one per iteration (two when flexible), and its
    residual is computed, not estimated.

    Parameters
    ----------
    (set with ``with_<name>`` on ``Gcr.build()``)
    krylov_dim : int, default 30
        m, the directions kept before a restart (at most n).
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
    preconditioner : factory or LinOp, default None (none)
        M: each iteration's direction is M r.
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts.

    Examples
    --------
    >>> inner = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(3))
    >>> solver = gk.solver.Gcr.build().with_preconditioner(inner).with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    keeps_best_iterate = False  # the residual never grows

    @parameters
    class Parameters(PreconditionedParameters):
        krylov_dim: int = attrs.field(default=30, validator=integer(min=1))

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        self.krylov_dim = max(1, min(int(self.parameters.krylov_dim), self.system_matrix.global_shape[0]))

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x = self.executor, self.system_matrix, monitor.x
        (n, k), m = x.shape, self.krylov_dim
        ws = monitor.ws
        r, z, t = ws.vectors("r", "z", "t")
        # the directions P and their products Q = A P: vector i in rows i n .. (i + 1) n;
        # nq: ||q_i||^2 per column
        pbasis, qbasis = ws.array("pbasis", (m * n, k), self.dtype), ws.array("qbasis", (m * n, k), self.dtype)
        nq = ws.vector("nq", rows=m)
        # the direction kk of the cycle at step[kk % 2] (after the first: the kernels read it, so
        # that the launches of an iteration depend on kk % 2 alone)
        js = ws.array("step", (2,), np.int32)
        # partial sums of the dot products with Q, of ||q||^2, q . r, ||r||^2, and of ||r||^2
        h, qr, rr = ws.partials("h", m), ws.partials("qr", 3), ws.partials("rr")
        # r = b - A x
        monitor.start(r)
        stop = monitor.stop
        monitor.check(r)

        def step(kk: int, _) -> None:
            # direction kk of the cycle (at js[kk % 2] on the device, unless the first):  z = M r;
            # t = A z;  h = Q^H t
            at = (js, kk % 2, int(kk == 0))
            mr = self._precondition(r, z)
            A.apply(mr, t)
            exec.run("solver.gcr.multi_dot", *at, qbasis, t, h)
            A.reduce_sums(h)
            # q_kk = t - Q beta, p_kk = z - P beta (beta_i = h_i / ||q_i||^2);  ||q_kk||^2, q_kk . r, ||r||^2
            exec.run("solver.gcr.orthogonalize", *at, pbasis, qbasis, mr, t, r, nq, h, qr)
            A.reduce_sums(qr)
            # alpha = q_kk . r / ||q_kk||^2;  x = x + alpha p_kk;  r = r - alpha q_kk;  the check of
            # ||r||;  js[1 - kk % 2] = kk + 1
            exec.run("solver.gcr.step_1", *at, pbasis, qbasis, x, r, qr, nq, rr, stop)
            if not monitor.blind:
                A.reduce_sums(rr)
                exec.run("components.stop.check", rr, stop)

        # a cycle ends by forgetting its directions: the next starts over at direction 0
        monitor.run_restarted(m, step, lambda j: None, lambda j: None, step_key=lambda j: (j == 0, j % 2))
