"""Lsmr: Fong and Saunders' LSMR for least-squares problems, as SciPy's ``lsmr``.

LSMR applies MINRES to the normal equations A^H A x = A^H b in a stable form: the
Golub-Kahan bidiagonalization of A (one product by A and one by A^H per iteration, see
:mod:`~ginkpy.core.solver.least_squares`) and two QR factorizations by plane rotations, so
that ||A^H r|| decreases monotonically (Fong and Saunders, SIAM J. Sci. Comput. 33, 2011).
One iteration is nine launches: the two products, the two bidiagonalization kernels, two
norms (u, v), ``step_1`` (one work-item per column: the rotations, the coefficients of the
updates, the estimates of ||r||, ||A^H r||, ||A|| and cond(A)), ``update`` (v = v / alpha,
hbar = h + c hbar, x = x + c' hbar, h = v + c'' h), ||x|| and ``step_2`` (SciPy's stopping
tests, istop 1 to 7).
"""
from __future__ import annotations

from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.least_squares import ALPHA, ISTOP, ITN, LeastSquaresSolver
from ginkpy.core.solver.workspace import Workspace

# the rows of Lsmr's state: ALPHA, ISTOP, ITN (0-2) and the scalars of SciPy's lsmr, then the
# coefficients of the update (HBAR_SCALE, X_COEF, H_SCALE, VSCALE: 1 / alpha or 1)
LSMR_ROWS = ("alpha", "istop", "itn", "alphabar", "rho", "rhobar", "cbar", "sbar", "betadd", "betad", "rhodold",
             "tautildeold", "thetatilde", "zeta", "zetabar", "d", "norma2", "maxrbar", "minrbar", "norma", "conda",
             "normx", "normr", "normar", "normb", "hbar_scale", "x_coef", "h_scale", "vscale")
assert LSMR_ROWS[ALPHA] == "alpha" and LSMR_ROWS[ISTOP] == "istop" and LSMR_ROWS[ITN] == "itn"


class Lsmr(LeastSquaresSolver):
    """LSMR (Fong and Saunders) for sparse least-squares problems: SciPy's ``lsmr``.

    Minimizes ||b - A x||^2 + damp^2 ||x - x0||^2 for a rectangular (or square) m x n A, as
    :class:`~ginkpy.core.solver.lsqr.Lsqr` does, but with ||A^H r|| decreasing monotonically:
    it can be stopped earlier than LSQR on the test of istop 2 (the least-squares solution is
    good enough). Each iteration costs one product by A and one by A^H (formed once at
    generate) and nine launches, the scalar recurrences and SciPy's stopping tests on the
    device. Generated as a LinOp of shape n x m: ``apply(b, x)`` writes the solution into x
    (x is the initial guess), ``result()`` gives SciPy's diagnostics (istop, itn, normr,
    normar, norma, conda, normx). The CLI's ``--solver`` and ``gk.linalg.Solver`` do not offer
    it (their systems are square; the JSON configuration can name it, ``solver::Lsmr``);
    loggers get no events from it.

    Parameters
    ----------
    (each set with ``with_<name>`` on ``Lsmr.build()``)
    max_iters : int, default None
        The iteration limit (istop 7); None: SciPy's default (min(m, n)).
    damp, atol, btol, conlim, criteria, default_initial_guess
        As on :class:`~ginkpy.core.solver.least_squares.LeastSquaresSolver` (the damping,
        SciPy's stopping tolerances, another iteration limit, where each apply starts).

    Examples
    --------
    >>> solver = gk.solver.Lsmr.build().with_atol(1e-10).with_btol(1e-10).with_max_iters(500) \\
    ...     .on(exec).generate(A)                     # A: m x n Csr
    >>> solver.apply(b, x)
    >>> solver.result()["normar"]
    """

    ROWS = len(LSMR_ROWS)
    RESULTS = {name: LSMR_ROWS.index(name) for name in ("normr", "normar", "norma", "conda", "normx")}

    def default_max_iters(self) -> int:
        return min(self.system_matrix.shape)

    def _solve(self, ws: Workspace, b: Dense, x: Dense, zero_guess: bool) -> None:
        exec, params = self.executor, self.parameters
        n = self.shape[0]
        b_ws, x_ws, u, v, Av, Atu, bb, uu, vv, state, status = self._start(ws, b, x, zero_guess)
        h, hbar = ws.vector("h", rows=n), ws.vector("hbar", rows=n)
        xx = ws.scalars("xx")[0]
        # alpha = ||v||;  v = v / alpha;  h = v;  hbar = 0;  the scalars' start;  where
        # alpha beta = 0: istop 0, the column stops (x kept); where ||b|| = 0: x = 0, istop 0
        exec.run("solver.lsmr.initialize", v, h, hbar, x_ws, bb, uu, vv, state, status)
        limits = (params.atol, params.btol, 1 / params.conlim if params.conlim > 0 else 0.0, self.max_iters)

        def iteration():
            # beta u = A v - alpha u;  (alpha v = A^H u - beta v, v unscaled)
            self._bidiagonalize(u, v, Av, Atu, uu, vv, state, status)
            # the rotations (damping, beta, theta);  the coefficients of the updates;  the
            # estimates of ||r||, ||A^H r||, ||A||, cond(A)
            exec.run("solver.lsmr.step_1", uu, vv, state, status, params.damp)
            # v = v / alpha;  hbar = h + hbar_scale hbar;  x = x + x_coef hbar;  h = v + h_scale h
            exec.run("solver.lsmr.update", v, h, hbar, x_ws, state, status)
            # xx = x . x;  SciPy's tests: istop, the column stops where it is nonzero
            x_ws.compute_conj_dot(x_ws, xx)
            exec.run("solver.lsmr.step_2", xx, state, status, *limits)

        self._loop(ws, iteration, status)
        self._finish(x_ws, x)
