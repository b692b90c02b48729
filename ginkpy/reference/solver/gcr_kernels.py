"""Reference kernels of Gcr. The directions p_i and their products q_i = A p_i (i < m) are raw
arrays of m n rows and k columns whose rows i n .. (i + 1) n hold vector i; nq (m x k) holds
||q_i||^2 per column. Partial sums of the dot products are rows of m k (the first kk k used).
Iteration kk of a cycle is 0 where ``first``, else read from the device, ``step[parity]``
(iteration kk having parity kk % 2; each ``step_1`` sets step[1 - parity] = kk + 1), so that the
launches of the iterations after the first depend on kk % 2 alone."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.reduction_kernels import _column_sums, _set


def _vectors(basis, n):
    return basis.reshape(-1, n, basis.shape[1])


def _kk(step, parity, first) -> int:
    """Iteration kk of the cycle: 0 where ``first``, else step[parity]."""
    return 0 if first else int(step[parity])


def multi_dot(exec, step, parity, first, qbasis, t, h):
    # (iteration kk)  h = [conj(q_i) . t for i < kk] (rows of m k)
    kk = _kk(step, parity, first)
    n, k = t.shape
    q = _vectors(qbasis, n)
    row = np.zeros(q.shape[0] * k, t.dtype)
    row[:kk * k] = np.einsum("inc,nc->ic", q[:kk].conj(), t.values).ravel()
    _set(h, row)


def orthogonalize(exec, step, parity, first, pbasis, qbasis, z, t, r, nq, h, qr):
    # (iteration kk)  beta_i = h_i / ||q_i||^2 (0 where q_i = 0);  q_kk = t - sum beta_i q_i;  p_kk = z - sum beta_i p_i;
    # qr = [||q_kk||^2, conj(q_kk) . r, ||r||^2]
    kk = _kk(step, parity, first)
    n, k = t.shape
    p, q = _vectors(pbasis, n), _vectors(qbasis, n)
    norms = nq.values[:kk].real
    with np.errstate(divide="ignore", invalid="ignore"):
        beta = np.where(norms > 0, h.values.sum(axis=0)[:kk * k].reshape(kk, k) / np.where(norms > 0, norms, 1), 0)
    q[kk] = t.values - np.einsum("ic,inc->nc", beta, q[:kk])
    p[kk] = z.values - np.einsum("ic,inc->nc", beta, p[:kk])
    _set(qr, np.concatenate([_column_sums(q[kk].conj() * q[kk]), _column_sums(q[kk].conj() * r.values),
                             _column_sums(r.values.conj() * r.values)]))


def step_1(exec, step, parity, first, pbasis, qbasis, x, r, qr, nq, rr, stop):
    # (iteration kk) in running columns with q_kk != 0: alpha = conj(q_kk) . r / ||q_kk||^2;
    # x += alpha p_kk;  r -= alpha q_kk;  nq[kk] = ||q_kk||^2;  rr = ||r||^2;  q_kk = 0 with r != 0: a
    # breakdown;  step[1 - parity] = kk + 1
    kk = _kk(step, parity, first)
    step[1 - parity] = kk + 1
    n, k = x.shape
    sums = qr.values.sum(axis=0)
    norm2, dots, r_norm2 = sums[:k].real, sums[k:2 * k], sums[2 * k:].real
    nq.values[kk] = norm2
    usable = (norm2 > 0) & np.isfinite(norm2)
    running = stop.status == StopReason.RUNNING
    stop.status[running & ~usable & (r_norm2 != 0)] = StopReason.BREAKDOWN
    go = running & usable
    alpha = np.where(go, dots / np.where(go, norm2, 1), 0)
    x.values[:, go] += alpha[go] * _vectors(pbasis, n)[kk][:, go]
    r.values[:, go] -= alpha[go] * _vectors(qbasis, n)[kk][:, go]
    _set(rr, _column_sums(r.values.conj() * r.values))
