"""Reference kernels of Dense: numpy on the host, the definition of every dense operation.

Scalars are 1 x 1 or 1 x k Dense: a 1 x 1 scalar applies to every column.
"""
from __future__ import annotations

import numpy as np


def _col(alpha):
    """A scalar Dense as a row that broadcasts over the columns."""
    return alpha.values[0]


def fill(exec, x, value):
    x.values[...] = value


def copy(exec, src, dst):
    dst.values[...] = src.values


def convert_precision(exec, src, dst):
    # values beyond float32's range become +-inf, as on a device (no warning)
    with np.errstate(over="ignore"):
        dst.values[...] = src.values.astype(dst.dtype)


def scale(exec, alpha, x):
    x.values *= _col(alpha)


def add_scaled(exec, alpha, b, x):
    x.values += _col(alpha) * b.values


def sub_scaled(exec, alpha, b, x):
    x.values -= _col(alpha) * b.values


def _column_sums(v):
    """Per-column sums with numpy's pairwise summation, which only a sum along contiguous
    memory gets (einsum or sum down the rows of a row-major array add sequentially, with
    errors growing like n eps)."""
    return np.ascontiguousarray(v.T).sum(axis=1)


def compute_dot(exec, a, b, result):
    # a^T b per column
    result.values[0] = _column_sums(a.values * b.values)


def compute_conj_dot(exec, a, b, result):
    # a^H b per column
    result.values[0] = _column_sums(a.values.conj() * b.values)


def compute_gram(exec, a, b, result):
    """result (k x m) = a^H b for a (n x k) and b (n x m)."""
    result.values[...] = a.values.conj().T @ b.values


def compute_norm2(exec, a, result):
    # ||a|| = s sqrt(sum (|a| / s)^2), s = max |a|: no underflow or overflow where the norm is
    # representable; real for complex a
    magnitude = np.abs(a.values)
    scale = magnitude.max(axis=0, initial=0)
    safe = np.where(scale > 0, scale, 1)
    result.values[0] = scale * np.sqrt(_column_sums((magnitude / safe) ** 2))


def copy_columns(exec, src, dst, mask):
    # dst[:, j] = src[:, j] where mask[j]
    use = mask != 0
    dst.values[:, use] = src.values[:, use]


def transpose(exec, a, out):
    out.values[...] = a.values.T


def conj_transpose(exec, a, out):
    out.values[...] = a.values.T.conj()


def is_finite(exec, a):
    return bool(np.isfinite(a.values).all())


def simple_apply(exec, a, b, x):
    x.values[...] = a.values @ b.values


def apply(exec, alpha, a, b, beta, x):
    x.values[...] = _col(alpha) * (a.values @ b.values) + _col(beta) * x.values


def convert_to_csr(exec, a):
    """Row pointers, column indices and values of the nonzeros of ``a`` (row-major order)."""
    rows, cols = np.nonzero(a.values)
    row_ptrs = np.zeros(a.shape[0] + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=a.shape[0]), out=row_ptrs[1:])
    return row_ptrs, cols.astype(np.int32), a.values[rows, cols].copy()


def permute(exec, a, rows, cols, out):
    # out[i, j] = a[rows[i], cols[j]] (rows or cols None: that index unchanged)
    v = a.values if rows is None else a.values[rows]
    out.values[...] = v if cols is None else v[:, cols]


def scale_rows(exec, diag, b, x):
    # x = D b, D = diag(diag)
    x.values[...] = diag.values * b.values
