"""Reference kernels of Gmres and CbGmres.

The Krylov basis is a raw array of (m + 1) n rows and k columns whose rows i n .. (i + 1) n hold
basis vector i, normalized, in its storage type: the value type (Gmres), or a lower precision
(CbGmres: float32 / complex64, or float16, with a trailing axis of 2 for complex values:
real and imaginary parts). Arithmetic is in the value type; a stored entry is the value rounded
to the nearest storage value (numpy's astype). The Hessenberg matrix is (m + 1) x (m k) with
h_{i,j} of column c at (i, j k + c).

Inner iteration j (read from the device: ``step[parity]``, iteration j having parity j % 2; the
restart sets step[0] = 0 and each multi_dot step[1 - parity] = j + 1, so that the launches of an
iteration do not depend on j), after w = A v: ``multi_dot`` stores v_j = v / ||v|| (||v|| from the partial
sums ww of the last orthogonalization; v_0 = v is normalized already) and forms the dot products
V^H w and w^H w (with the Givens rotation of Hessenberg column j - 1 first; partial sums in rows
of (m + 2) k, h2 in rows of (m + 1) k, whatever j is); ``orthogonalize``
makes w' = w / ||v|| - V h into v (the next product's input) with the DGKS test for a second
pass; ``reorthogonalize`` makes that pass where the test asks, or (with ``raw``)
the next ``multi_dot`` or ``givens`` does (the lagged pass of "mgs": with the unrotated H kept,
``raw`` and ``final``, it corrects w = A M v through the Arnoldi relation). ``inner`` (int32, one per column)
counts the Givens steps each column took in the cycle: its update uses that many basis vectors.
Dot products conjugate the basis vectors (h = V^H w); the Givens rotations are complex ones for
complex values (see ``_givens``).
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.reduction_kernels import _column_sums, _set
from ginkpy.reference.components.stopping import stop_check, stop_confirm

SINGULAR = 100  # a rotated diagonal below SINGULAR eps times its column's norm: rank-deficient H


def _stored(basis, n):
    """The basis as a (m + 1, n, k) view of the stored values (a trailing axis of 2 for complex
    values in float16)."""
    return basis.reshape(-1, n, *basis.shape[1:])


def _load(basis, n, count, dtype):
    """The first ``count`` basis vectors in the value type ``dtype``, (count, n, k)."""
    stored = _stored(basis, n)[:count]
    if np.dtype(dtype).kind == "c" and basis.dtype == np.float16:
        return (stored[..., 0].astype(dtype) + 1j * stored[..., 1].astype(dtype)).astype(dtype)
    return stored.astype(dtype)


def _store(basis, n, i, values):
    """Basis vector i = values (n x k, value type), rounded to the storage type."""
    stored = _stored(basis, n)
    if values.dtype.kind == "c" and basis.dtype == np.float16:
        stored[i, ..., 0] = values.real
        stored[i, ..., 1] = values.imag
    else:
        stored[i] = values


def _norms(ww):
    return np.sqrt(ww.values.sum(axis=0).real)


def restart(exec, r, rr, v, g, inner, step, stop):
    # ||r|| of the true residual: the first check (no check yet), or the confirmation of columns
    # converged on an estimate;  then in running columns v = r / ||r||, g_0 = ||r||;  inner = 0;
    # the cycle's inner iteration step[0] = 0
    norms = _norms(rr)
    stop_check(stop, norms, only=stop.checks == 0)
    stop_confirm(stop, norms)
    go = stop.status == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        v.values[:, go] = np.where(norms[go] != 0, r.values[:, go] / norms[go], 0)
    g.values[0, go] = norms[go]
    inner[...] = 0
    step[0] = 0


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


def _lagged_pass(j, ww, h2, reorth):
    """The lagged second pass of step j (``multi_dot``'s and ``givens``' with h2 and reorth): its
    coefficients h2 = V_{0..j}^H w' ((j + 1, k), 0 where reorth is clear) and ||w''|| =
    sqrt(||w'||^2 - ||h2||^2) (Pythagoras: w' = w'' + V h2, w'' orthogonal to V), ||w'|| elsewhere."""
    k = ww.shape[1]
    coef = h2.values.sum(axis=0)[:(j + 1) * k].reshape(j + 1, k) * (reorth != 0)
    norms2 = ww.values.sum(axis=0).real - (np.abs(coef) ** 2).sum(axis=0)
    return np.sqrt(np.maximum(norms2, 0)), coef


def givens(exec, j, ww, hessenberg, g, cos, sin, inner, stop, h2=None, reorth=None):
    # the Givens step of Hessenberg column j in running columns, h_{j+1,j} = ||w'||;  with h2
    # and reorth (the lagged second pass) first H[0:j+1, j] += h2 and h_{j+1,j} = ||w''|| where
    # reorth is set
    norms = _norms(ww)
    if h2 is not None:
        norms, coef = _lagged_pass(j, ww, h2, reorth)
        go = (stop.status == 0) & (reorth != 0)
        hessenberg.values[: j + 1, j * g.shape[1]:(j + 1) * g.shape[1]][:, go] += coef[:, go]
    for c in np.flatnonzero(stop.status == 0):
        _givens(j, c, norms[c], hessenberg, g, cos, sin, inner, stop)


def multi_dot(exec, step, parity, rotate, v, basis, z, zbasis, w, ww, nrm, h, hessenberg, g, cos, sin, inner, stop,
              raw=None, final=None, h2=None, reorth=None):
    # inner iteration j = step[parity]: with rotate (and j > 0) the Givens step of column j - 1
    # first;  nrm = ||v|| (for j = 0: 1, 0 in stopped columns);  v_j = v / nrm into the basis (and z_j = z / nrm into
    # zbasis unless z is None: flexible GMRES);  h = [V_{0..j}^H w, w^H w] (partial sums);
    # step[1 - parity] = j + 1.  With raw (the lagged second pass of step j - 1, j > 0; raw:
    # orthogonalize's first-pass columns of H, final: the Arnoldi relation's A M V = V H), where
    # reorth is set first v'' = v - V h2, z'' = z - Z h2 (flexible), nrm = sqrt(||v||^2 - ||h2||^2),
    # and w = A M v'' = w - A M V h2 = w - V c - h2_{j-1} v'' with c = H h2 (A M v_{j-1} =
    # V (raw + h2) + v'', A M v_l = V final[:, l] for l < j - 1);  final[:, j - 1] = (raw +
    # h2, nrm) in every column
    j = int(step[parity])
    step[1 - parity] = j + 1
    lagged = raw is not None
    if rotate and j > 0:
        givens(exec, j - 1, ww, hessenberg, g, cos, sin, inner, stop, *((h2, reorth) if lagged else ()))
    n, k = w.shape
    # (j = 0: v_0 normalized by the restart in running columns; a stopped column's v is its last
    # w', which it would otherwise carry on as v_0, growing by ||A|| each cycle: 0 there)
    norms = _norms(ww) if j > 0 else np.where(stop.status == 0, 1.0, 0.0)
    # (v and z themselves are left as they are; w takes the correction: orthogonalize reads it)
    vvalues, zvalues = v.values.copy(), None if z is None else z.values.copy()
    if lagged and j > 0:
        norms, coef = _lagged_pass(j - 1, ww, h2, reorth)
        last = raw.values[:j, (j - 1) * k:j * k] + coef  # H[0:j, j - 1] after both passes
        again = reorth != 0
        if again.any():
            # c = H[0:j, 0:j] h2 (columns l < j - 1 from final, up to their subdiagonal)
            arnoldi = np.zeros((j, j, k), w.dtype)
            for col in range(j - 1):
                arnoldi[:col + 2, col] = final.values[:col + 2, col * k:(col + 1) * k]
            arnoldi[:, j - 1] = last
            c = np.einsum("ilc,lc->ic", arnoldi, coef)
            vectors = _load(basis, n, j, w.dtype)
            vvalues[:, again] -= np.einsum("ic,inc->nc", coef[:, again], vectors[:, :, again])
            w.values[:, again] -= (np.einsum("ic,inc->nc", c[:, again], vectors[:, :, again])
                                   + coef[j - 1, again] * vvalues[:, again])
            if z is not None:
                zvalues[:, again] -= np.einsum("ic,inc->nc", coef[:, again], _load(zbasis, n, j, w.dtype)[:, :, again])
        final.values[:j, (j - 1) * k:j * k] = last
        final.values[j, (j - 1) * k:j * k] = norms
    nrm.values[0] = norms
    with np.errstate(divide="ignore"):
        inv = np.where(norms > 0, 1 / np.where(norms > 0, norms, 1), 0)
    _store(basis, n, j, vvalues * inv)
    if z is not None:
        _store(zbasis, n, j, zvalues * inv)
    dots = np.einsum("inc,nc->ic", _load(basis, n, j + 1, w.dtype).conj(), w.values)
    _set(h, _row(np.concatenate([dots.ravel(), _column_sums(w.values.conj() * w.values)]), hessenberg.shape[1] + 2 * k))


def _row(sums, length):
    """Partial sums at a fixed row length (the kernels' for every j: (m + 2) k or (m + 1) k), the
    entries past the sums unused (0)."""
    row = np.zeros(length, sums.dtype)
    row[:sums.size] = sums
    return row


def _second_pass(sums, j, k, eta2):
    """The DGKS test per column from multi_dot's sums: ||w||^2 - ||h||^2 <= eta2 ||w||^2 (eta2 =
    -inf: never, classical Gram-Schmidt; +inf: always, CGS2)."""
    before = sums[(j + 1) * k:(j + 2) * k].real
    h_sq = (np.abs(sums[: (j + 1) * k].reshape(j + 1, k)) ** 2).sum(axis=0)
    with np.errstate(invalid="ignore", over="ignore"):
        return ~(before - h_sq > eta2 * before)


def orthogonalize(exec, step, parity, basis, w, nrm, h, hessenberg, v, ww, h2, reorth, eta2, stop, raw=None):
    # inner iteration j = step[parity]:  h = (V^H w) / nrm;  w' = w / nrm - V h into v;
    # H[0:j+1, j] = h in running columns (and in raw unless None);  ww: ||w'||^2;  reorth: the
    # DGKS test with eta2;  h2 = V^H w' (partial sums, used where reorth is set)
    j = int(step[parity])
    n, k = w.shape
    norms = nrm.values[0].real
    with np.errstate(divide="ignore"):
        inv = np.where(norms > 0, 1 / np.where(norms > 0, norms, 1), 0)
    sums = h.values.sum(axis=0)
    dots = sums[: (j + 1) * k].reshape(j + 1, k)
    reorth[...] = _second_pass(sums, j, k, eta2)
    vectors = _load(basis, n, j + 1, w.dtype)
    v.values[...] = (w.values - np.einsum("ic,inc->nc", dots, vectors)) * inv
    go = stop.status == 0
    for target in (hessenberg, raw) if raw is not None else (hessenberg,):
        target.values[: j + 1, j * k:(j + 1) * k][:, go] = (dots * inv)[:, go]
    _set(ww, _column_sums(v.values.conj() * v.values))
    _set(h2, _row(np.einsum("inc,nc->ic", vectors.conj(), v.values).ravel(), hessenberg.shape[1] + k))


def reorthogonalize(exec, step, parity, basis, v, h2, hessenberg, reorth, ww, stop):
    # inner iteration j = step[parity], where reorth is set: v = v - V h2 (h2 = V^H v, the second
    # pass), H[0:j+1, j] += h2 in running columns, ww: ||v||^2 (the other columns keep
    # orthogonalize's)
    j = int(step[parity])
    n, k = v.shape
    again = reorth != 0
    if not again.any():
        return
    coef = h2.values.sum(axis=0)[:(j + 1) * k].reshape(j + 1, k)
    vectors = _load(basis, n, j + 1, v.dtype)
    v.values[:, again] -= np.einsum("ic,inc->nc", coef[:, again], vectors[:, :, again])
    go = (stop.status == 0) & again
    hessenberg.values[: j + 1, j * k:(j + 1) * k][:, go] += coef[:, go]
    norms = ww.values.sum(axis=0)
    norms[again] = _column_sums(v.values.conj() * v.values)[again]
    _set(ww, norms)


def update(exec, basis, hessenberg, g, inner, diag, x):
    # y = R^-1 g (R the leading inner x inner triangle of H, per column);  x += D^-1 V y with
    # diag, x += V y without;  every column (nothing where inner = 0)
    n, k = x.shape
    for c in np.flatnonzero(inner > 0):
        m = int(inner[c])
        R = hessenberg.values[:m, c::k][:, :m]
        y = np.zeros(m, dtype=g.dtype)
        for i in range(m - 1, -1, -1):
            y[i] = (g.values[i, c] - R[i, i + 1:m] @ y[i + 1:m]) / R[i, i]
        step = _load(basis, n, m, x.dtype)[:, :, c].T @ y
        x.values[:, c] += step if diag is None else diag.values[:, 0] * step


def restart_left(exec, z, rr, zz, v, g, unscale, factor, inner, step, stop):
    # left preconditioning (SciPy's gmres), z = M r:  ||r|| (sum of rr) of the true residual: the
    # first check, the confirmation of columns converged on their estimate, and the check of
    # those whose cycle ran its length (converged if ||r|| meets the threshold);  then SciPy's inner
    # tolerance ptol = ||M r|| min(f, thr / ||r||), f per column: 1 at the first check, x0.25
    # (at least eps) after a cycle whose estimate met ptol but whose true residual did not, else
    # x1.5 (at most 1);  the cycle runs on g scaled by s = thr / ptol, so that the estimate
    # |g_{j+1}| <= thr is SciPy's presid <= ptol and reads as the true residual:
    # g_0 = ||M r|| s = max(thr / f, ||r||);  unscale = 1 / s = ||M r|| / g_0 (the update's);
    # v = z / ||z||;  inner = 0;  step[0] = 0.  ||M r|| = 0 (or not finite) where ||r|| > 0: breakdown
    norms, znorms = _norms(rr), _norms(zz)
    first = stop.checks == 0
    before = stop.status.copy()
    stop_check(stop, norms, only=first)
    stop_confirm(stop, norms)
    # a cycle that ran its length: the true residual may meet the criterion where the estimate
    # of ||M r|| did not (SciPy checks it at every restart): converged, in place of the estimate
    with np.errstate(invalid="ignore"):
        met = (before == 0) & ~first & (norms <= stop.threshold.values[0])
    stop.history.values[(stop.checks[met] - 1) % stop.history.shape[0], np.flatnonzero(met)] = norms[met]
    stop.status[met] = StopReason.CONVERGED
    go = stop.status == 0
    eps = np.finfo(factor.dtype).eps
    factor[...] = np.where(first, 1.0, np.where(before == StopReason.PENDING, np.maximum(eps, 0.25 * factor),
                                                np.minimum(1.0, 1.5 * factor)))
    bad = go & (norms > 0) & ~(np.isfinite(znorms) & (znorms > 0))
    stop.status[bad] = StopReason.BREAKDOWN
    go &= ~bad
    threshold = stop.threshold.values[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        g0 = np.maximum(np.where(threshold > 0, threshold / factor, 0), norms)
        unscale.values[0, go] = np.where(g0[go] > 0, znorms[go] / g0[go], 0)
        v.values[:, go] = np.where(znorms[go] > 0, z.values[:, go] / znorms[go], 0)
    g.values[0, go] = g0[go]
    inner[...] = 0
    step[0] = 0
