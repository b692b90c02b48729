"""Reference kernels of the reductions into partial sums. On the host one partial sum per
column is the whole sum: partials are 1 x k, or 1 x 2k for two reductions side by side."""
from __future__ import annotations

import numpy as np


def _column_sums(v: np.ndarray) -> np.ndarray:
    """Per-column sums with numpy's pairwise summation, which only a sum along contiguous
    memory gets (a sum down the rows of a row-major array adds sequentially)."""
    if v.shape[1] == 1:
        return v.sum(axis=0)
    return np.ascontiguousarray(v.T).sum(axis=1)


def _set(partials, sums) -> None:
    """partials (1 x count) = sums."""
    if partials.values.shape != (1, sums.size):
        partials.values = np.empty((1, sums.size), partials.dtype)
        partials.shape = partials.values.shape
    partials.values[0] = sums


def dots(exec, x, u, w, partials):
    # partials = [u^H x, w^H x] per column (w^H x only when w is given)
    sums = _column_sums(u.values.conj() * x.values)
    if w is not None:
        sums = np.concatenate([sums, _column_sums(w.values.conj() * x.values)])
    _set(partials, sums)


def multi_dot(exec, basis, w, num, h):
    # h[i] = v_i^H w per column for the first num blocks v_i (n x k) of the basis
    n, k = w.shape
    h.values[:num] = np.einsum("inc,nc->ic", basis.values.reshape(-1, n, k)[:num].conj(), w.values)
