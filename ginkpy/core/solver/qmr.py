"""Qmr: the quasi-minimal residual method (Freund and Nachtigal) for general systems, as
SciPy's ``qmr``.

The two-sided Lanczos process of A and A^H without look-ahead, with SciPy's split preconditioner:
M1 (``left_preconditioner``) and M2 (``preconditioner``), each with its adjoint (M1^H, M2^H:
``conj_transpose()``, ``transpose()`` for real values; Csr, Dense, Jacobi and the identity have
them), so an iteration applies A, A^H, M1, M1^H, M2 and M2^H once each. The residual r is the
original system's, updated by its recurrence (r -= s) and checked each iteration, as SciPy's.

Breakdowns as SciPy's, with its thresholds: a column stops with a breakdown where |rho| or |xi|
(the norms of the new Lanczos vectors), |delta| = |z^H y|, |epsilon| = |q^H A p|, |beta| or
|gamma| falls below the machine epsilon of the value type: the breakdown status, and which one
in SciPy's numbers (``breakdown_info()``: -10 to -15, the info ``gk.linalg.qmr`` returns). The
columns start scaled so that ||b|| is near 1 (see the monitor), where SciPy's thresholds apply
to the system as given.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.factory import Factory, Parameters, parameters
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.bicg import _transpose
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver, generate_preconditioner, updated_part
from ginkpy.core.stop.stopping_status import STATUS_DTYPE


class Qmr(IterativeSolver):
    """The quasi-minimal residual method (QMR, Freund and Nachtigal) for general square
    systems: SciPy's ``qmr``.

    Use it for nonsymmetric systems where A^H is at hand and BiCG's residual oscillates: QMR
    quasi-minimizes it over BiCG's Krylov space, with a product by A and one by A^H per
    iteration. Bicgstab, Tfqmr or Gmres need no transpose.

    Parameters
    ----------
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        ``gk.stop.ResidualNorm``, ``Iteration``, ``Time``; each column stops at the first met.
    preconditioner : factory or LinOp, default None (none)
        M2, applied on the right (SciPy's ``M2``); it needs M2^H too (Jacobi, Csr and Dense have it).
    left_preconditioner : factory or LinOp, default None (none)
        M1, applied on the left of the Lanczos process (SciPy's ``M1``); it needs M1^H too. The
        residual the criteria see is the original system's either way.
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        What each apply starts from.

    Examples
    --------
    >>> solver = gk.solver.Qmr.build().with_preconditioner(gk.preconditioner.Jacobi.build()).with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    @parameters
    class Parameters(IterativeSolver.Parameters):
        left_preconditioner: Any = None

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        A = self.system_matrix
        self.left_preconditioner = generate_preconditioner(self.parameters.left_preconditioner, A, self.executor,
                                                           "left_preconditioner")
        self.system_matrix_transpose = _transpose(A, "system matrix")
        self.preconditioner_transpose = _transpose(self.preconditioner, "preconditioner")
        self.left_preconditioner_transpose = _transpose(self.left_preconditioner, "left preconditioner")

    def update(self) -> bool:
        """As :meth:`IterativeSolver.update`, and the left preconditioner M1 (generated from a
        factory) too, A^H's values again (into its own arrays) and M1^H, M2^H formed again from
        the updated preconditioners."""
        valid = super().update()
        A = self.system_matrix
        value = self.parameters.left_preconditioner
        if isinstance(value, (Parameters, Factory)):
            self.left_preconditioner, ok = updated_part(self.left_preconditioner, lambda: generate_preconditioner(
                value, A, self.executor, "left_preconditioner"), self, "left preconditioner")
            valid = valid and ok
        At = self.system_matrix_transpose
        if hasattr(At, "update_values"):
            At.update_values(_transpose(A, "system matrix").values)
        for name, op, what in (("preconditioner_transpose", self.preconditioner, "preconditioner"),
                               ("left_preconditioner_transpose", self.left_preconditioner, "left preconditioner")):
            if getattr(self, name) is not op:
                transposed = _transpose(op, what)
                setattr(self, name, transposed)
                valid = valid and transposed is op
        if not valid:
            self._forget_captures()
        return valid

    def breakdown_info(self) -> np.ndarray:
        """SciPy's qmr info of each column's breakdown in the last apply: -10 (rho), -11 (beta),
        -12 (gamma), -13 (delta), -14 (epsilon) or -15 (xi), 0 where the column did not break
        down (or no apply ran yet). It takes no parameters.

        Examples
        --------
        >>> solver.apply(b, x)
        >>> solver.breakdown_info()        # array([-14]) where epsilon = q^H A p vanished
        """
        ws = self._workspace
        kind = ws.items.get("breakdown") if ws is not None else None
        if kind is None:
            return np.zeros(0, np.int64)
        return -np.asarray(self.executor.to_host(kind), np.int64)

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x, k = self.executor, self.system_matrix, monitor.x, monitor.k
        At, M1, M2 = self.system_matrix_transpose, self.left_preconditioner, self.preconditioner
        M1t, M2t = self.left_preconditioner_transpose, self.preconditioner_transpose
        ws = monitor.ws
        r, v_tld, w_tld, v, w, y, z, p, q, d, s, p_tld = ws.vectors(
            "r", "v_tld", "w_tld", "v", "w", "y", "z", "p", "q", "d", "s", "p_tld")
        y_src, z_src, y_tld, z_tld = ws.vectors("y_src", "z_src", "y_tld", "z_tld")
        yy, zz, delta, eps_new, beta, coef = ws.scalars("yy", "zz", "delta", "eps_new", "beta", "coef")
        rho, xi, gamma, eta, theta, epsilon = ws.scalars("rho", "xi", "gamma", "eta", "theta", "epsilon")
        # which breakdown stopped each column (SciPy's qmr numbers, 10 to 15; 0: none)
        kind = ws.array("breakdown", (k,), np.uint8)
        # r = b - A x
        monitor.start(r)
        status = monitor.stop.status

        # M1 v_tld and M2^H w_tld, as lanczos_norms leaves them
        y_in = v_tld if isinstance(M1, Identity) else y_src
        z_in = w_tld if isinstance(M2t, Identity) else z_src

        def lanczos_norms():
            # y = M1 v_tld;  z = M2^H w_tld;  yy = y . y;  zz = z . z
            y_ = self._precondition(v_tld, y_src, M1)
            z_ = self._precondition(w_tld, z_src, M2t)
            y_.compute_conj_dot(y_, yy)
            z_.compute_conj_dot(z_, zz)

        def restart(columns):
            # in these columns: v_tld = w_tld = r;  p = q = d = s = 0;  rho = ||M1 r||;  xi = ||M2^H r||;
            # gamma = 1, eta = -1, theta = 0, epsilon = 1
            for vector in (v_tld, w_tld):
                exec.run("matrix.dense.copy_columns", r, vector, columns)
            lanczos_norms()
            exec.run("solver.qmr.initialize", p, q, d, s, yy, zz, rho, xi, gamma, eta, theta, epsilon, kind,
                     columns)

        def iteration():
            # v = v_tld / rho;  y = y / rho;  w = w_tld / xi;  z = z / xi (|rho| or |xi| < eps: breakdown)
            exec.run("solver.qmr.step_1", v_tld, y_in, w_tld, z_in, v, y, w, z, rho, xi, status, kind)
            # delta = z . y
            z.compute_conj_dot(y, delta)
            # p = M2 y - (xi delta / epsilon) p;  q = M1^H z - (rho conj(delta / epsilon)) q
            exec.run("solver.qmr.step_2", self._precondition(y, y_tld, M2), self._precondition(z, z_tld, M1t),
                     p, q, delta, epsilon, rho, xi, status, kind)
            # p_tld = A p;  eps_new = q . p_tld
            A.apply(p, p_tld)
            q.compute_conj_dot(p_tld, eps_new)
            # beta = eps_new / delta;  v_tld = p_tld - beta v;  w_tld = A^H q - conj(beta) w
            exec.run("solver.qmr.step_3", p_tld, v, w, v_tld, w_tld, eps_new, delta, beta, status, kind)
            At.apply(1.0, q, 1.0, w_tld)
            lanczos_norms()
            # rho = ||y||, xi = ||z||;  theta = rho / (gamma |beta|);  gamma = 1 / sqrt(1 + theta^2);
            # eta = -eta (rho_prev / beta) (gamma / gamma_prev)^2;  coef = (theta_prev gamma)^2
            exec.run("solver.qmr.step_4", yy, zz, beta, eps_new, rho, xi, gamma, eta, theta, epsilon, coef, status,
                     kind)
            # d = coef d + eta p;  s = coef s + eta p_tld;  x = x + d;  r = r - s
            exec.run("solver.qmr.step_5", p, p_tld, d, s, x, r, coef, eta, status)
            monitor.check(r)

        every = ws.get("all_columns", lambda: exec.from_host(np.ones(k, STATUS_DTYPE)))
        restart(every)
        monitor.check(r)
        monitor.run(iteration, resume=restart)
