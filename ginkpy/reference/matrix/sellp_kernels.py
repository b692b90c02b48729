"""Reference kernels of Sellp: the padded arithmetic of Ell, one slice after the other."""
from __future__ import annotations

import numpy as np

from ginkpy.reference.matrix.padded import padded_product


def _product(a, b):
    size = a.slice_size
    out = np.zeros((a.num_slices * size, b.shape[1]), dtype=a.dtype)
    for s in range(a.num_slices):
        # slice s: slice_lengths[s] slots of slice_size entries from slice_sets[s] * slice_size
        start, stop = a.slice_sets[s] * size, a.slice_sets[s + 1] * size
        shape = (a.slice_lengths[s], size)
        out[s * size:(s + 1) * size] = padded_product(a.col_idxs[start:stop].reshape(shape),
                                                       a.values[start:stop].reshape(shape), b.values)
    return out[:a.shape[0]]


def spmv(exec, a, b, x):
    # x = A b
    x.values[...] = _product(a, b)


def advanced_spmv(exec, alpha, a, b, beta, x):
    # x = alpha A b + beta x
    x.values[...] = alpha.values[0] * _product(a, b) + beta.values[0] * x.values
