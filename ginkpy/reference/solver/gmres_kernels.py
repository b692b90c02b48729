"""Reference kernels of Gmres.

The Krylov basis is a ((m + 1) n) x k Dense whose rows i n .. (i + 1) n hold basis vector i;
the Hessenberg matrix is (m + 1) x (m k) with h_{i,j} of column c at (i, j k + c). A column
takes part in a cycle's steps while its stop status is 0 and its residual estimate is
nonzero (a zero estimate means the Krylov space already holds the solution); the others are
left untouched. ``inner`` (int32, one per column) counts the steps each column took.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason


def _vectors(basis, n):
    """The basis as a (m + 1, n, k) view."""
    return basis.values.reshape(-1, n, basis.shape[1])


def _active(estimate, status):
    return (status == 0) & (estimate.values[0] != 0)


def restart(exec, r, r_norm, basis, v, g, estimate, inner, status):
    # v_0 = v = r / ||r|| (0 where ||r|| = 0);  g_0 = estimate = ||r||;  inner = 0 in every column
    go = status == 0
    norm = r_norm.values[0, go]
    with np.errstate(divide="ignore", invalid="ignore"):
        v.values[:, go] = np.where(norm != 0, r.values[:, go] / norm, 0)
    _vectors(basis, r.shape[0])[0][:, go] = v.values[:, go]
    g.values[0, go] = norm
    estimate.values[0, go] = norm
    inner[...] = 0


def multi_dot(exec, basis, w, num, h):
    # h_i = v_i . w for i < num, every column
    h.values[:num] = np.einsum("inc,nc->ic", _vectors(basis, w.shape[0])[:num], w.values)


def orthogonalize(exec, basis, h, j, accumulate, w, hessenberg, estimate, status):
    # w = w - sum_{i <= j} h_i v_i;  H[0:j+1, j] = h (accumulate: += h)
    go = _active(estimate, status)
    k = w.shape[1]
    vectors = _vectors(basis, w.shape[0])
    for i in range(j + 1):
        w.values[:, go] -= h.values[i, go] * vectors[i][:, go]
    column = hessenberg.values[: j + 1, j * k:(j + 1) * k]
    column[:, go] = (column[:, go] if accumulate else 0) + h.values[: j + 1, go]


def next_basis(exec, w, w_norm, j, basis, v, estimate, status):
    # v_{j+1} = v = w / ||w|| (0 where ||w|| = 0: happy breakdown)
    go = _active(estimate, status)
    norm = w_norm.values[0, go]
    with np.errstate(divide="ignore", invalid="ignore"):
        v.values[:, go] = np.where(norm != 0, w.values[:, go] / norm, 0)
    _vectors(basis, w.shape[0])[j + 1][:, go] = v.values[:, go]


def givens(exec, w_norm, j, hessenberg, g, cos, sin, estimate, inner, status):
    # per column: h_{j+1,j} = ||w||; apply rotations 0..j-1 to H[:, j]; a new rotation j zeroes
    # h_{j+1,j}; g_{j+1} = -sin_j g_j, g_j = cos_j g_j; estimate = |g_{j+1}|; inner += 1.
    # A zero diagonal after rotation (singular Hessenberg) is a breakdown.
    k = g.shape[1]
    for c in np.flatnonzero(_active(estimate, status)):
        hcol = hessenberg.values[:, j * k + c]
        hcol[j + 1] = w_norm.values[0, c]
        for i in range(j):
            hcol[i], hcol[i + 1] = (cos.values[i, c] * hcol[i] + sin.values[i, c] * hcol[i + 1],
                                    -sin.values[i, c] * hcol[i] + cos.values[i, c] * hcol[i + 1])
        diag = np.hypot(hcol[j], hcol[j + 1])
        if diag == 0:
            status[c] = StopReason.BREAKDOWN
            continue
        cos.values[j, c], sin.values[j, c] = hcol[j] / diag, hcol[j + 1] / diag
        hcol[j], hcol[j + 1] = diag, 0
        g.values[j + 1, c] = -sin.values[j, c] * g.values[j, c]
        g.values[j, c] = cos.values[j, c] * g.values[j, c]
        estimate.values[0, c] = abs(g.values[j + 1, c])
        inner[c] += 1


def solve_krylov(exec, hessenberg, g, inner, y):
    # y = R^-1 g by back substitution, R the leading inner[c] x inner[c] triangle of H
    k = g.shape[1]
    for c in range(k):
        for i in range(inner[c] - 1, -1, -1):
            value = g.values[i, c]
            for l in range(i + 1, inner[c]):
                value -= hessenberg.values[i, l * k + c] * y.values[l, c]
            y.values[i, c] = value / hessenberg.values[i, i * k + c]


def multi_axpy(exec, basis, y, inner, out):
    # out = sum_{i < inner} y_i v_i, every column (0 where inner = 0)
    vectors = _vectors(basis, out.shape[0])
    out.values[...] = 0
    for i in range(int(inner.max(initial=0))):
        use = inner > i
        out.values[:, use] += y.values[i, use] * vectors[i][:, use]
