"""Reference kernels of Gmres.

The Krylov basis is a ((m + 1) n) x k Dense whose rows i n .. (i + 1) n hold basis vector i;
the Hessenberg matrix is (m + 1) x (m k) with h_{i,j} of column c at (i, j k + c). Basis
vector j + 1 is stored as w (not yet divided by its norm) by ``reorthogonalize`` and
normalized by the next ``orthogonalize``, which knows the norm from its partial sums; the
Givens rotation of Hessenberg column j runs in the next ``multi_dot`` (or ``givens`` at the end
of a cycle). ``inner`` (int32, one per column) counts the Givens steps each column took in
the cycle: its update uses that many basis vectors. Dot products conjugate the basis vectors
(h = V^H w); the Givens rotations are complex ones for complex values (see ``_givens``).
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.reduction_kernels import _column_sums, _set
from ginkpy.reference.components.stopping import stop_check, stop_confirm

SINGULAR = 100  # a rotated diagonal below SINGULAR eps times its column's norm: rank-deficient H


def _vectors(basis, n):
    """The basis as a (m + 1, n, k) view."""
    return basis.values.reshape(-1, n, basis.shape[1])


def _norms(ww):
    return np.sqrt(ww.values.sum(axis=0).real)


def restart(exec, r, rr, basis, v, g, inner, stop):
    # ||r|| of the true residual: the first check (no check yet), or the confirmation of columns
    # converged on an estimate;  then in running columns v_0 = v = r / ||r||, g_0 = ||r||;  inner = 0
    norms = _norms(rr)
    stop_check(stop, norms, only=stop.checks == 0)
    stop_confirm(stop, norms)
    go = stop.status == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        v.values[:, go] = np.where(norms[go] != 0, r.values[:, go] / norms[go], 0)
    _vectors(basis, r.shape[0])[0][:, go] = v.values[:, go]
    g.values[0, go] = norms[go]
    inner[...] = 0


def _givens(j, c, nrm, hessenberg, g, cos, sin, inner, stop):
    """Givens step of Hessenberg column j of column c (running): h_{j+1,j} = nrm; rotations
    0..j-1 applied; rotation j zeroes h_{j+1,j}; g_{j+1} = -conj(sin_j) g_j, g_j = cos_j g_j; the
    estimate |g_{j+1}| checked (PENDING on convergence). Rotation i is [cos_i sin_i;
    -conj(sin_i) conj(cos_i)] with cos_i = conj(a) / d, sin_i = conj(b) / d, d = sqrt(|a|^2 +
    |b|^2): it takes (a, b) to (d, 0) (for real values the usual [c s; -s c]). A column whose residual is 0 already
    (g_j = 0) idles: its estimate 0 is checked, nothing rotated. A rotated diagonal below SINGULAR eps
    times the column's norm (a rank-deficient H: A or M singular) is a breakdown, the column's
    update keeping the steps before."""
    k = g.shape[1]
    only = np.arange(k) == c
    if g.values[j, c] == 0:  # the residual is 0 already: nothing to rotate, the column idles
        stop_check(stop, np.zeros(k), int(StopReason.PENDING), only=only)
        return
    hcol = hessenberg.values[:, j * k + c]
    hcol[j + 1] = nrm
    column_norm = np.sqrt(np.sum(np.abs(hcol[: j + 2].astype(np.complex128)) ** 2))
    for i in range(j):
        ci, si = cos.values[i, c], sin.values[i, c]
        hcol[i], hcol[i + 1] = ci * hcol[i] + si * hcol[i + 1], np.conj(ci) * hcol[i + 1] - np.conj(si) * hcol[i]
    diag = np.hypot(abs(hcol[j]), abs(hcol[j + 1]))
    if not diag > SINGULAR * np.finfo(g.dtype).eps * column_norm:
        stop.status[c] = StopReason.BREAKDOWN
        return
    cos.values[j, c], sin.values[j, c] = np.conj(hcol[j]) / diag, np.conj(hcol[j + 1]) / diag
    hcol[j], hcol[j + 1] = diag, 0
    g.values[j + 1, c] = -np.conj(sin.values[j, c]) * g.values[j, c]
    g.values[j, c] = cos.values[j, c] * g.values[j, c]
    inner[c] = j + 1
    estimate = np.zeros(k)
    estimate[c] = abs(g.values[j + 1, c])
    stop_check(stop, estimate, int(StopReason.PENDING), only=only)


def givens(exec, j, ww, hessenberg, g, cos, sin, inner, stop):
    # the Givens step of Hessenberg column j in running columns, h_{j+1,j} = ||w||
    norms = _norms(ww)
    for c in np.flatnonzero(stop.status == 0):
        _givens(j, c, norms[c], hessenberg, g, cos, sin, inner, stop)


def multi_dot(exec, j, rotate, basis, w, ww, h, hessenberg, g, cos, sin, inner, stop):
    # h = [V_{0..j}^H w, w^H w] (partial sums);  with rotate (and j > 0) the Givens step of column j - 1 first
    if rotate and j > 0:
        givens(exec, j - 1, ww, hessenberg, g, cos, sin, inner, stop)
    dots = np.einsum("inc,nc->ic", _vectors(basis, w.shape[0])[: j + 1].conj(), w.values)
    _set(h, np.concatenate([dots.ravel(), _column_sums(w.values.conj() * w.values)]))


def orthogonalize(exec, j, basis, w, ww, h, hessenberg, h2, reorth, stop):
    # nrm = ||w_j|| (1 for j = 0): v_j = v_j / nrm;  w = w / nrm;  h = (V^H w) scaled the same;
    # w = w - V h;  H[0:j+1, j] = h in running columns;  reorth where ||w||^2 - ||h||^2 <= ||w||^2 / 2
    # (DGKS: the second pass runs there);  h2 = V^H w (partial sums: the second pass's dots)
    k = w.shape[1]
    nrm = _norms(ww) if j > 0 else np.ones(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(nrm > 0, 1 / nrm, 0)
    vectors = _vectors(basis, w.shape[0])
    sums = h.values.sum(axis=0)
    coef = sums[: (j + 1) * k].reshape(j + 1, k) * inv
    coef[j] *= inv
    before = sums[(j + 1) * k:].real * inv * inv
    reorth[...] = ~(before - (np.abs(coef) ** 2).sum(axis=0) > before / 2)
    vectors[j] *= inv
    w.values *= inv
    w.values -= np.einsum("ic,inc->nc", coef, vectors[: j + 1])
    go = stop.status == 0
    hessenberg.values[: j + 1, j * k:(j + 1) * k][:, go] = coef[:, go]
    _set(h2, np.einsum("inc,nc->ic", vectors[: j + 1].conj(), w.values).ravel())


def reorthogonalize(exec, j, basis, w, h, hessenberg, v, reorth, ww, stop):
    # where reorth is set: w = w - V h (h = V^H w, the second pass), H[0:j+1, j] += h in running
    # columns;  v_{j+1} = v = w (normalized by the next orthogonalize);  partial sums of ||w||^2
    k = w.shape[1]
    vectors = _vectors(basis, w.shape[0])
    again = reorth != 0
    coef = h.values.sum(axis=0).reshape(j + 1, k)
    w.values[:, again] -= np.einsum("ic,inc->nc", coef[:, again], vectors[: j + 1][:, :, again])
    go = (stop.status == 0) & again
    hessenberg.values[: j + 1, j * k:(j + 1) * k][:, go] += coef[:, go]
    vectors[j + 1] = w.values
    v.values[...] = w.values
    _set(ww, _column_sums(w.values.conj() * w.values))


def update(exec, basis, hessenberg, g, inner, diag, x):
    # y = R^-1 g (R the leading inner x inner triangle of H, per column);  x += D^-1 V y with
    # diag, x += V y without;  every column (nothing where inner = 0)
    k = g.shape[1]
    vectors = _vectors(basis, x.shape[0])
    for c in np.flatnonzero(inner > 0):
        m = int(inner[c])
        R = hessenberg.values[:m, c::k][:, :m]
        y = np.zeros(m, dtype=g.dtype)
        for i in range(m - 1, -1, -1):
            y[i] = (g.values[i, c] - R[i, i + 1:m] @ y[i + 1:m]) / R[i, i]
        step = vectors[:m, :, c].T @ y
        x.values[:, c] += step if diag is None else diag.values[:, 0] * step
