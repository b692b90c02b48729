"""Reference kernels of the reductions into partial sums. On the host one partial sum per
column is the whole sum: partials are 1 x k, or 1 x 2k for two reductions side by side."""
from __future__ import annotations

import numpy as np

from ginkpy.reference.components.scratch import BLAS_SERIAL_SIZE


def _column_dots(u: np.ndarray, x: np.ndarray) -> np.ndarray:
    """u^H x per column; one column without a temporary array."""
    if x.shape[1] == 1:
        return np.array([_dot(u, x)])
    return _column_sums(u.conj() * x)


def _dot(u: np.ndarray, x: np.ndarray):
    """u^H x of two one-column arrays, a number: BLAS for small vectors (one thread), numpy's
    own loop for larger ones (see scratch.BLAS_SERIAL_SIZE)."""
    if x.size <= BLAS_SERIAL_SIZE:
        return np.vdot(u, x)
    return np.einsum("ij,ij->", u.conj(), x)


def _set_dots(partials, u: np.ndarray, x: np.ndarray) -> None:
    """partials = u^H x per column (a number written in place for one column)."""
    if x.shape[1] == 1 and partials.values.shape == (1, 1):
        partials.values[0, 0] = _dot(u, x)
    else:
        _set(partials, _column_dots(u, x))


def _total(partials):
    """The sum of one column's partial sums, a plain number (a 1 x 1 partial on the host)."""
    v = partials.values
    return v.item(0) if v.size == 1 else v.sum().item()


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
    if w is None:
        _set_dots(partials, u.values, x.values)
        return
    _set(partials, np.concatenate([_column_dots(u.values, x.values), _column_dots(w.values, x.values)]))


def multi_dot(exec, basis, w, num, h):
    # h[i] = v_i^H w per column for the first num blocks v_i (n x k) of the basis
    n, k = w.shape
    h.values[:num] = np.einsum("inc,nc->ic", basis.values.reshape(-1, n, k)[:num].conj(), w.values)
