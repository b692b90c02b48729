"""Reference kernels of Lsmr (core/solver/lsmr.py): the per-column scalars in the real state
(rows named by LSMR_ROWS) computed one column at a time, as SciPy's lsmr does; the vector
updates of the running columns."""
from __future__ import annotations

import numpy as np

from ginkpy.core.solver.lsmr import LSMR_ROWS
from ginkpy.reference.components.least_squares import column_state, istop_of, sym_ortho

R = {name: i for i, name in enumerate(LSMR_ROWS)}


def initialize(exec, v, h, hbar, x, bb, uu, vv, state, status):
    # beta = ||u||;  alpha = ||v|| (0 where beta = 0);  v = v / alpha;  h = v;  hbar = 0;  the
    # scalars' start;  where alpha beta = 0: the column stops;  else where ||b|| = 0: x = 0, stops
    s = state.values
    beta = np.sqrt(np.abs(uu.values[0].real))
    alpha = np.where(beta > 0, np.sqrt(np.abs(vv.values[0].real)), 0)
    normb = np.sqrt(np.abs(bb.values[0].real))
    v.values[...] = v.values * np.where(alpha > 0, 1 / np.where(alpha > 0, alpha, 1), 1)
    h.values[...] = v.values
    hbar.values[...] = 0
    s[...] = 0
    s[R["alpha"]] = s[R["alphabar"]] = alpha
    for name in ("rho", "rhobar", "cbar", "rhodold", "conda"):
        s[R[name]] = 1
    s[R["zetabar"]] = s[R["normar"]] = alpha * beta
    s[R["betadd"]] = s[R["normr"]] = beta
    s[R["norma2"]] = alpha * alpha
    s[R["norma"]] = alpha
    s[R["minrbar"]] = 1e100 if s.dtype == np.float64 else np.finfo(s.dtype).max  # (SciPy: 1e100)
    s[R["normb"]] = normb
    exact = alpha * beta == 0
    zero_b = ~exact & (normb == 0)
    x.values[:, zero_b] = 0
    status[...] = np.where(exact | zero_b, 1, 0)


def step_1(exec, uu, vv, state, status, damp):
    # one column at a time: SciPy's lsmr iteration after the bidiagonalization up to its tests
    for c in np.flatnonzero(status == 0):
        s = column_state(state, c, R)
        real = s.dtype.type
        with np.errstate(all="ignore"):
            _rotations(s, real(abs(uu.values[0, c].real)), real(abs(vv.values[0, c].real)), real(damp))
        s.store()


def _rotations(s, uu, vv, damp):
    s["itn"] += 1
    # beta, alpha of the bidiagonalization
    beta, alpha, s["vscale"] = np.sqrt(uu), s["alpha"], 1
    if beta > 0:
        alpha = np.sqrt(vv)
        if alpha > 0:
            s["vscale"] = 1 / alpha
    s["alpha"] = alpha
    # rotations: the damping, then beta, then thetanew
    chat, shat, alphahat = sym_ortho(s["alphabar"], damp)
    rhoold = s["rho"]
    c, sn, rho = sym_ortho(alphahat, beta)
    thetanew = sn * alpha
    s["alphabar"] = c * alpha
    rhobarold, zetaold = s["rhobar"], s["zeta"]
    thetabar = s["sbar"] * rho
    rhotemp = s["cbar"] * rho
    s["cbar"], s["sbar"], rhobar = sym_ortho(s["cbar"] * rho, thetanew)
    s["zeta"] = zeta = s["cbar"] * s["zetabar"]
    s["zetabar"] = -s["sbar"] * s["zetabar"]
    # hbar = h - (thetabar rho / (rhoold rhobarold)) hbar;  x = x + (zeta / (rho rhobar)) hbar;
    # h = v - (thetanew / rho) h
    s["hbar_scale"] = -(thetabar * rho / (rhoold * rhobarold))
    s["x_coef"] = zeta / (rho * rhobar)
    s["h_scale"] = -(thetanew / rho)
    s["rho"], s["rhobar"] = rho, rhobar
    # the estimate of ||r||
    betaacute, betacheck = chat * s["betadd"], -shat * s["betadd"]
    betahat = c * betaacute
    s["betadd"] = -sn * betaacute
    thetatildeold = s["thetatilde"]
    ctildeold, stildeold, rhotildeold = sym_ortho(s["rhodold"], thetabar)
    s["thetatilde"] = stildeold * rhobar
    s["rhodold"] = ctildeold * rhobar
    s["betad"] = -stildeold * s["betad"] + ctildeold * betahat
    s["tautildeold"] = (zetaold - thetatildeold * s["tautildeold"]) / rhotildeold
    taud = (zeta - s["thetatilde"] * s["tautildeold"]) / s["rhodold"]
    s["d"] += betacheck * betacheck
    s["normr"] = np.sqrt(s["d"] + (s["betad"] - taud) ** 2 + s["betadd"] ** 2)
    # the estimates of ||A||, cond(A), ||A^H r||
    s["norma2"] += beta * beta
    s["norma"] = np.sqrt(s["norma2"])
    s["norma2"] += alpha * alpha
    s["maxrbar"] = max(s["maxrbar"], rhobarold)
    if s["itn"] > 1:
        s["minrbar"] = min(s["minrbar"], rhobarold)
    s["conda"] = max(s["maxrbar"], rhotemp) / min(s["minrbar"], rhotemp)
    s["normar"] = abs(s["zetabar"])


def update(exec, v, h, hbar, x, state, status):
    # in the running columns: v = vscale v;  hbar = h + hbar_scale hbar;  x = x + x_coef hbar;
    # h = v + h_scale h
    s = state.values
    go = status == 0
    v.values[:, go] *= s[R["vscale"], go]
    hbar.values[:, go] = h.values[:, go] + s[R["hbar_scale"], go] * hbar.values[:, go]
    x.values[:, go] += s[R["x_coef"], go] * hbar.values[:, go]
    h.values[:, go] = v.values[:, go] + s[R["h_scale"], go] * h.values[:, go]


def step_2(exec, xx, state, status, atol, btol, ctol, iter_lim):
    # in the running columns: normx = sqrt(x . x);  SciPy's tests, the later ones taking
    # precedence;  where istop != 0 the column stops
    for c in np.flatnonzero(status == 0):
        s = column_state(state, c, R)
        real = s.dtype.type
        with np.errstate(all="ignore"):
            s["normx"] = np.sqrt(real(abs(xx.values[0, c].real)))
            s["istop"] = _istop(s, real(atol), real(btol), real(ctol), int(iter_lim))
        s.store()
        if s["istop"] != 0:
            status[c] = 1


def _istop(s, atol, btol, ctol, iter_lim):
    normr, normA, normx, normb = s["normr"], s["norma"], s["normx"], s["normb"]
    test1 = normr / normb
    test2 = s["normar"] / (normA * normr) if normA * normr != 0 else np.inf
    test3 = 1 / s["conda"]
    return istop_of(s["itn"], iter_lim, test1, test2, test3, normA, normx, normb, atol,
                    btol, ctol)
