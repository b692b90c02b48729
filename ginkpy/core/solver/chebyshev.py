"""Chebyshev: the Chebyshev iteration (Ginkgo's ``solver::Chebyshev``), a polynomial in M^-1 A
that needs no dot products: a smoother for Multigrid and a solver where the spectrum is known.

Each step is x_{k+1} = x_k + d_{k+1} with d_{k+1} = alpha_k d_k + beta_k M^-1 (b - A x_k),
alpha_k and beta_k fixed by ``foci`` (lower, upper), an interval holding the eigenvalues of
M^-1 A that the polynomial damps (Templates for the Solution of Linear Systems, 2nd ed.).
Modes below ``lower`` are damped less, modes up to lower + upper still converge. Without
``foci`` the interval is (rho / 30, rho) with rho Gershgorin's bound on the eigenvalues of
M^-1 A (max_i sum_j |a_ij| / |a_ii|): the interval a smoother damps (as PyAMG's Chebyshev
relaxation), where Ginkgo's default is (0, 1).

M is scalar Jacobi (``with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))``,
D = diag(A)) or none: a step is then one fused kernel that reads the row of A, the update and
the iterate together, no host round trip. With only Iteration criteria and no logger, a solve
runs its steps without reading anything back (the smoother's case); otherwise each step is
followed by the usual convergence check.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Iterator

import attrs
import numpy as np

from ginkpy.core.base.factory import Factory, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense, overwrite
from ginkpy.core.multigrid.pgm import as_csr
from ginkpy.core.preconditioner.jacobi import Jacobi
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver, check_values

LOWER_FRACTION = 1 / 30  # lower focus of the estimated interval, relative to the upper


def _check_foci(instance: Any, attribute: Any, value: Any) -> None:
    if value is None:
        return
    ok = isinstance(value, (tuple, list)) and len(value) == 2 and all(
        isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool) and math.isfinite(v)
        for v in value)
    if not ok or not 0 <= value[0] < value[1]:
        raise ValueError(f"Chebyshev.with_foci({value!r}): foci must be (lower, upper) with 0 <= lower < upper, "
                         f"an interval holding the eigenvalues of M^-1 A to damp, or None to estimate it")


def scalar_jacobi(value: Any) -> bool:
    """Whether a preconditioner parameter is scalar Jacobi (parameters or a factory)."""
    params = value.parameters if isinstance(value, Factory) else value
    return isinstance(params, Jacobi.Parameters) and params.max_block_size == 1 and params.block_pointers is None


def inverse_diagonal(A: LinOp, what: str) -> Dense:
    """1 / a_ii of a Csr on its executor as an n x 1 Dense; ValueError naming the first row whose
    diagonal entry is zero or missing (``what`` names the user of the inverse)."""
    inv_diag = Dense.empty(A.executor, (A.shape[0], 1), A.dtype)
    row = A.executor.run("components.relaxation.invert_diagonal", A, inv_diag)
    if row >= 0:
        raise ValueError(f"{what}: the diagonal entry of row {row} is zero or not stored, so D^-1 does not exist; "
                         f"use another smoother or preconditioner, or reorder the matrix")
    return inv_diag


class Chebyshev(IterativeSolver):
    """The Chebyshev iteration (Ginkgo's ``solver::Chebyshev``): a polynomial in M^-1 A that
    needs no dot products.

    Use it as a Multigrid smoother (``with_pre_smoother``) or as a solver where an interval
    holding the eigenvalues of M^-1 A is known; each step is one fused launch with scalar
    Jacobi or no preconditioner, with no host round trip.

    Parameters
    ----------
    foci : tuple of float, default None
        (lower, upper): the interval of eigenvalues the polynomial damps; None takes
        (rho / 30, rho) with rho Gershgorin's bound on the eigenvalues of M^-1 A (a smoother's
        interval).
    preconditioner : Jacobi parameters, default None (none)
        Scalar Jacobi (``gk.preconditioner.Jacobi.build().with_max_block_size(1)``) or none.
    criteria, default_initial_guess
        As every iterative solver's: the stopping criteria (only Iteration criteria and no
        logger: the steps read nothing back) and the initial guess.

    Examples
    --------
    >>> smoother = gk.solver.Chebyshev.build().with_criteria(gk.stop.Iteration.build().with_max_iters(2))
    >>> amg = gk.solver.Multigrid.build().with_pre_smoother(smoother)
    >>> solver = gk.solver.Cg.build().with_preconditioner(amg).on(exec).generate(A)
    """
    @parameters
    class Parameters(IterativeSolver.Parameters):
        foci: Any = attrs.field(default=None, validator=_check_foci)

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        params = factory.parameters
        jacobi = scalar_jacobi(params.preconditioner)
        if params.preconditioner is not None and not jacobi:
            raise ValueError("Chebyshev takes scalar Jacobi (gk.preconditioner.Jacobi.build().with_max_block_size(1)) "
                             "or no preconditioner, which it fuses into its step")
        # the preconditioner is D^-1, computed here on the device: the base class makes none
        super().__init__(Factory(factory.executor, attrs.evolve(params, preconditioner=None)), as_csr(system_matrix))
        self.factory, self.parameters = factory, params
        A = self.system_matrix
        if not isinstance(A, Csr):
            raise TypeError(f"Chebyshev needs a matrix (gk.matrix.Csr or a format with to_csr()), "
                            f"not {type(A).__name__}")
        exec = self.executor
        self._work: dict[int, tuple] = {}
        if jacobi:
            self.inv_diag = inverse_diagonal(A, "Chebyshev's Jacobi preconditioner")
        else:
            self.inv_diag = Dense.full(exec, (A.shape[0], 1), 1.0, A.dtype)
        if params.foci is None:
            upper = exec.run("components.relaxation.gershgorin_bound", A, self.inv_diag)
            self.foci = (upper * LOWER_FRACTION, upper)
        else:
            self.foci = (float(params.foci[0]), float(params.foci[1]))

    def update(self) -> bool:
        """Follow new values of the system matrix (written in place on its pattern): D^-1 into
        its own array and, unless ``foci`` were given, the foci from Gershgorin's bound again.
        Returns whether launches recorded with it stay valid: False where the foci changed (the
        step coefficients are arguments of its launches)."""
        A, exec = self.system_matrix, self.executor
        check_values(A)
        if scalar_jacobi(self.parameters.preconditioner):
            overwrite(exec, self.inv_diag.values, inverse_diagonal(A, "Chebyshev's Jacobi preconditioner").values)
        if self.parameters.foci is not None:
            return True
        upper = exec.run("components.relaxation.gershgorin_bound", A, self.inv_diag)
        foci, self.foci = self.foci, (upper * LOWER_FRACTION, upper)
        return foci == self.foci

    def coefficients(self, steps: int) -> list[tuple[float, float]]:
        """(alpha_k, beta_k) of the first ``steps`` steps: d = alpha_k d + beta_k M^-1 (b - A x)."""
        return list(itertools.islice(self._steps(), steps))

    def _steps(self) -> Iterator[tuple[float, float]]:
        """(alpha_k, beta_k) of one step after the other, k = 0, 1, ..."""
        lower, upper = self.foci
        theta, delta = (upper + lower) / 2, (upper - lower) / 2
        if theta == 0:  # a zero matrix: there is nothing to damp
            yield from itertools.repeat((0.0, 0.0))
        sigma = theta / delta
        yield 0.0, 1 / theta
        rho_prev = 1 / sigma
        while True:
            rho = 1 / (2 * sigma - rho_prev)
            yield rho * rho_prev, 2 * rho / delta
            rho_prev = rho

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if b.shape[0] == 0 or b.shape[1] == 0:
            return
        steps = self.fixed_iterations
        guess = self.parameters.default_initial_guess
        if steps is None:
            super()._apply_impl(b, x)
        elif guess == "zero":
            self.smooth(b, x, steps, zero_guess=True)
        else:
            if guess == "rhs":
                x.copy_from(b)
            self.smooth(b, x, steps, zero_guess=False)

    def apply_with_initial_guess(self, b: Dense, x: Dense, zero_guess: bool) -> Dense:
        """Apply with x as the initial guess, or as zero where ``zero_guess`` (x is then not
        read), whatever the default initial guess: how Multigrid applies a smoother."""
        steps = self.fixed_iterations
        if steps is None:
            self._monitored_solve(b, x, "zero" if zero_guess else "provided")
        else:
            self.smooth(b, x, steps, zero_guess)
        return x

    def smooth(self, b: Dense, x: Dense, steps: int, zero_guess: bool) -> None:
        """``steps`` steps from x (or from 0), all on the device, the result in x."""
        if steps == 0:
            if zero_guess:
                x.fill(0.0)
            return
        exec, A, inv_diag = self.executor, self.system_matrix, self.inv_diag
        coefficients = self.coefficients(steps)
        # the update d and a second iterate, made once per column count
        work = self._work.get(b.shape[1])
        if work is None:
            work = self._work[b.shape[1]] = (b.empty_like(), b.empty_like())
        d = work[0] if steps > 1 else None
        # each step but a first from 0 writes a new iterate: start so that the last lands in x
        writes = steps - 1 if zero_guess else steps
        current, spare = (x, work[1]) if writes % 2 == 0 else (work[1], x)
        first = 0
        if zero_guess:
            # x_1 = beta_0 D^-1 b, d_1 = x_1
            exec.run("components.relaxation.relax_first", coefficients[0][1], inv_diag, b, current, d)
            first = 1
        elif current is not x:
            current.copy_from(x)
        for alpha, beta in coefficients[first:]:
            # d = alpha d + beta D^-1 (b - A x);  x_new = x + d
            exec.run("components.relaxation.relax", alpha, beta, A, inv_diag, b, current, d, spare)
            current, spare = spare, current

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, inv_diag, x = self.executor, self.system_matrix, self.inv_diag, monitor.x
        r, d, scratch = monitor.ws.vectors("r", "d", "scratch")
        # r = b - A x
        monitor.start(r)
        status = monitor.stop.status
        monitor.check(r)

        def iteration(step):
            # d = alpha d + beta D^-1 (b - A x);  x = x + d in the running columns;  r = b - A x
            exec.run("components.relaxation.relax", step[0], step[1], A, inv_diag, monitor.b, x, d, scratch)
            exec.run("components.relaxation.add_running", d, x, status)
            monitor.residual(r)
            monitor.check(r)

        # each step has its own coefficients (alpha_k, beta_k)
        monitor.run(iteration, steps=self._steps())
