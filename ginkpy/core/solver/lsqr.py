"""Lsqr: Paige and Saunders' LSQR for least-squares problems, as SciPy's ``lsqr``.

LSQR applies the conjugate gradient method to the normal equations A^H A x = A^H b in a
numerically stable form: the Golub-Kahan bidiagonalization of A (one product by A and one by
A^H per iteration, see :mod:`~ginkpy.core.solver.least_squares`), the lower bidiagonal
matrix reduced by plane rotations (the damping eliminated by one more), and x updated along
w (Paige and Saunders, ACM TOMS 8, 1982). One iteration is eight launches: the two products,
the two bidiagonalization kernels, three norms (u, v and w) and one work-item per column
(``step``: the rotations, SciPy's norm and condition estimates and its stopping tests, istop 1
to 7), then ``update`` (v = v / alpha, x = x + t1 w, w = v + t2 w, and var with calc_var).
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.factory import boolean, parameters
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.least_squares import ALPHA, ISTOP, ITN, LeastSquaresSolver
from ginkpy.core.solver.workspace import Workspace

# the rows of Lsqr's state: ALPHA, ISTOP, ITN (0-2) and the scalars of SciPy's lsqr, then the
# coefficients of the update (T1, T2, VSCALE: 1 / alpha or 1, ACTIVE: the column ran this
# iteration, INV_RHO: 1 / rho for var)
LSQR_ROWS = ("alpha", "istop", "itn", "rhobar", "phibar", "anorm", "acond", "ddnorm", "res2", "xnorm", "xxnorm",
             "z", "cs2", "sn2", "bnorm", "r1norm", "r2norm", "arnorm", "t1", "t2", "vscale", "active", "inv_rho")
assert LSQR_ROWS[ALPHA] == "alpha" and LSQR_ROWS[ISTOP] == "istop" and LSQR_ROWS[ITN] == "itn"


class Lsqr(LeastSquaresSolver):
    """LSQR (Paige and Saunders) for sparse least-squares problems: SciPy's ``lsqr``.

    Minimizes ||b - A x||^2 + damp^2 ||x - x0||^2 for a rectangular (or square) m x n A:
    overdetermined (m > n: the least-squares solution), underdetermined (m < n: the
    minimum-norm solution from x0 = 0) and damped problems, real and complex. Each
    iteration costs one product by A and one by A^H (formed once at generate: a Csr's
    ``conj_transpose()``) and eight launches; the scalar recurrences and SciPy's stopping
    tests run on the device. Generated as a LinOp of shape n x m: ``apply(b, x)`` writes the
    solution into x (x is the initial guess), ``result()`` gives SciPy's diagnostics (istop,
    itn, r1norm, r2norm, anorm, acond, arnorm, xnorm, var). The CLI's ``--solver`` and
    ``gk.linalg.Solver`` do not offer it (their systems are square; the JSON configuration
    can name it, ``solver::Lsqr``); loggers get no events from it.

    Parameters
    ----------
    (each set with ``with_<name>`` on ``Lsqr.build()``)
    max_iters : int, default None
        The iteration limit (istop 7); None: SciPy's default (2 n).
    damp, atol, btol, conlim, criteria, default_initial_guess
        As on :class:`~ginkpy.core.solver.least_squares.LeastSquaresSolver` (the damping,
        SciPy's stopping tolerances, another iteration limit, where each apply starts).
    calc_var : bool, default False
        Estimate the diagonal of (A^H A + damp^2 I)^-1 (SciPy's ``var``; for complex values
        the sum of |d_k|^2, where SciPy's sums d_k^2).

    Examples
    --------
    >>> solver = gk.solver.Lsqr.build().with_damp(0.1).with_atol(1e-10).with_btol(1e-10) \\
    ...     .on(exec).generate(A)                     # A: m x n Csr
    >>> x = gk.matrix.Dense.zeros(exec, (n, 1))
    >>> solver.apply(b, x)
    >>> solver.result()["istop"]
    """

    @parameters
    class Parameters(LeastSquaresSolver.Parameters):
        calc_var: bool = boolean(False)

    ROWS = len(LSQR_ROWS)
    RESULTS = {name: LSQR_ROWS.index(name) for name in
               ("r1norm", "r2norm", "anorm", "acond", "arnorm", "xnorm")}

    def default_max_iters(self) -> int:
        return 2 * self.system_matrix.shape[1]

    def _solve(self, ws: Workspace, b: Dense, x: Dense, zero_guess: bool) -> None:
        exec, params = self.executor, self.parameters
        n = self.shape[0]
        b_ws, x_ws, u, v, Av, Atu, bb, uu, vv, state, status = self._start(ws, b, x, zero_guess)
        w = ws.vector("w", rows=n)
        ww = ws.scalars("ww")[0]
        var = ws.vector("var", rows=n).fill(0.0) if params.calc_var else None
        # alpha = ||v||;  v = v / alpha;  w = v;  rhobar = alpha;  phibar = beta;  bnorm = ||b||;
        # where alpha beta = 0: istop 0, the column stops
        exec.run("solver.lsqr.initialize", v, w, bb, uu, vv, state, status)
        limits = (params.damp, params.atol, params.btol, 1 / params.conlim if params.conlim > 0 else 0.0,
                  self.max_iters)

        def iteration():
            # beta u = A v - alpha u;  (alpha v = A^H u - beta v, v unscaled);  ww = w . w
            self._bidiagonalize(u, v, Av, Atu, uu, vv, state, status)
            w.compute_conj_dot(w, ww)
            # the rotations; phi, rho, theta;  t1 = phi / rho, t2 = -theta / rho;  the norm and
            # condition estimates;  istop (SciPy's tests), the column stops where it is nonzero
            exec.run("solver.lsqr.step", uu, vv, ww, state, status, *limits)
            # v = v / alpha;  x = x + t1 w;  var = var + |w / rho|^2;  w = v + t2 w
            exec.run("solver.lsqr.update", v, w, x_ws, var, state)

        self._loop(ws, iteration, status)
        self._var = var
        self._finish(x_ws, x)

    def result(self) -> dict:
        """As :meth:`LeastSquaresSolver.result`, with ``var`` (n x k, real; zeros unless
        calc_var) too."""
        out = super().result()
        if out:
            var = getattr(self, "_var", None)
            k = len(out["istop"])
            out["var"] = var.to_numpy().real.copy() if var is not None else np.zeros((self.shape[0], k))
        return out

