"""Reference kernels of Ell: the padded arithmetic the device does, slot by slot.

Padding (column -1) reads b[0] and contributes exactly zero, as on the device.
"""
from __future__ import annotations

from ginkpy.reference.matrix.padded import padded_product


def _product(a, b):
    shape = (a.num_stored_elements_per_row, a.stride)
    return padded_product(a.col_idxs.reshape(shape), a.values.reshape(shape), b.values)


def spmv(exec, a, b, x):
    # x = A b
    x.values[...] = _product(a, b)


def advanced_spmv(exec, alpha, a, b, beta, x):
    # x = alpha A b + beta x
    x.values[...] = alpha.values[0] * _product(a, b) + beta.values[0] * x.values
