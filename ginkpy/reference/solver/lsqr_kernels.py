"""Reference kernels of Lsqr (core/solver/lsqr.py): the per-column scalars in the real state
(rows named by LSQR_ROWS) computed one column at a time, as SciPy's lsqr does; the vector
updates of the columns that ran the iteration."""
from __future__ import annotations

import numpy as np

from ginkpy.core.solver.lsqr import LSQR_ROWS
from ginkpy.reference.components.least_squares import column_state, istop_of, sym_ortho

R = {name: i for i, name in enumerate(LSQR_ROWS)}


def initialize(exec, v, w, bb, uu, vv, state, status):
    # beta = ||u||;  alpha = ||v|| (0 where beta = 0);  v = v / alpha;  w = v;  rhobar = alpha;
    # phibar = r1norm = r2norm = beta;  bnorm = ||b||;  arnorm = alpha beta;  cs2 = -1;
    # where arnorm = 0: istop 0, the column stops
    s = state.values
    beta = np.sqrt(np.abs(uu.values[0].real))
    alpha = np.where(beta > 0, np.sqrt(np.abs(vv.values[0].real)), 0)
    scale = np.where(alpha > 0, 1 / np.where(alpha > 0, alpha, 1), 1)
    v.values[...] = v.values * scale
    w.values[...] = v.values
    s[...] = 0
    s[R["alpha"]] = s[R["rhobar"]] = alpha
    s[R["phibar"]] = s[R["r1norm"]] = s[R["r2norm"]] = beta
    s[R["bnorm"]] = np.sqrt(np.abs(bb.values[0].real))
    s[R["arnorm"]] = alpha * beta
    s[R["cs2"]] = -1
    status[...] = np.where(alpha * beta == 0, 1, 0)


def step(exec, uu, vv, ww, state, status, damp, atol, btol, ctol, iter_lim):
    # one column at a time: SciPy's lsqr iteration after the bidiagonalization (see _column)
    for c in range(state.shape[1]):
        state.values[R["active"], c] = status[c] == 0
        if status[c] != 0:
            continue
        s = column_state(state, c, R)
        real = s.dtype.type
        with np.errstate(all="ignore"):
            _column(s, real(abs(uu.values[0, c].real)), real(abs(vv.values[0, c].real)),
                    real(abs(ww.values[0, c].real)), real(damp), real(atol), real(btol), real(ctol), int(iter_lim))
        if s["istop"] != 0:
            status[c] = 1
        s.store()


def _column(s, uu, vv, ww, damp, atol, btol, ctol, iter_lim):
    eps = np.finfo(s.dtype).eps
    dampsq = damp * damp
    s["itn"] += 1
    # beta, alpha of the bidiagonalization;  anorm = sqrt(anorm^2 + alpha_old^2 + beta^2 + damp^2)
    beta, alpha_old = np.sqrt(uu), s["alpha"]
    alpha, s["vscale"] = alpha_old, 1.0
    if beta > 0:
        s["anorm"] = np.sqrt(s["anorm"] ** 2 + alpha_old ** 2 + beta ** 2 + dampsq)
        alpha = np.sqrt(vv)
        if alpha > 0:
            s["vscale"] = 1 / alpha
    s["alpha"] = alpha
    # a rotation eliminates the damping: rhobar1 = sqrt(rhobar^2 + damp^2), psi = sn1 phibar
    rhobar, phibar = s["rhobar"], s["phibar"]
    psi = 0.0
    if damp > 0:
        rhobar1 = np.sqrt(rhobar ** 2 + dampsq)
        psi = damp / rhobar1 * phibar
        phibar = rhobar / rhobar1 * phibar
        rhobar = rhobar1
    # a rotation eliminates beta:  theta = sn alpha;  rhobar = -cs alpha;  phi = cs phibar
    cs, sn, rho = sym_ortho(rhobar, beta)
    theta = sn * alpha
    s["rhobar"] = -cs * alpha
    phi = cs * phibar
    s["phibar"] = sn * phibar
    tau = sn * phi
    # x = x + (phi / rho) w;  w = v - (theta / rho) w;  ddnorm = ddnorm + ||w / rho||^2
    s["t1"], s["t2"], s["inv_rho"] = phi / rho, -theta / rho, 1 / rho
    s["ddnorm"] += ww / (rho * rho)
    # a rotation on the right eliminates theta: the estimate of ||x||
    delta, gambar = s["sn2"] * rho, -s["cs2"] * rho
    rhs = phi - delta * s["z"]
    zbar = rhs / gambar
    s["xnorm"] = np.sqrt(s["xxnorm"] + zbar ** 2)
    gamma = np.sqrt(gambar ** 2 + theta ** 2)
    s["cs2"], s["sn2"], s["z"] = gambar / gamma, theta / gamma, rhs / gamma
    s["xxnorm"] += s["z"] ** 2
    # cond(Abar), ||rbar||, ||Abar^H rbar||
    s["acond"] = s["anorm"] * np.sqrt(s["ddnorm"])
    s["res2"] += psi ** 2
    rnorm = np.sqrt(s["phibar"] ** 2 + s["res2"])
    s["arnorm"] = alpha * abs(tau)
    r1sq = rnorm ** 2 - dampsq * s["xxnorm"]
    s["r1norm"] = np.copysign(np.sqrt(abs(r1sq)), r1sq) if damp > 0 else rnorm
    s["r2norm"] = rnorm
    _tests(s, rnorm, eps, atol, btol, ctol, iter_lim)


def _tests(s, rnorm, eps, atol, btol, ctol, iter_lim):
    # SciPy's tests: istop
    anorm, xnorm, bnorm = s["anorm"], s["xnorm"], s["bnorm"]
    test1 = rnorm / bnorm
    test2 = s["arnorm"] / (anorm * rnorm + eps)
    test3 = 1 / (s["acond"] + eps)
    s["istop"] = istop_of(s["itn"], iter_lim, test1, test2, test3, anorm, xnorm, bnorm, atol,
                          btol, ctol)


def update(exec, v, w, x, var, state):
    # in the columns that ran the iteration: v = vscale v;  x = x + t1 w;
    # var = var + |inv_rho w|^2;  w = v + t2 w
    s = state.values
    go = s[R["active"]] != 0
    v.values[:, go] *= s[R["vscale"], go]
    w_old = w.values[:, go]
    x.values[:, go] += s[R["t1"], go] * w_old
    if var is not None:
        var.values[:, go] += np.abs(s[R["inv_rho"], go] * w_old) ** 2
    w.values[:, go] = v.values[:, go] + s[R["t2"], go] * w_old
