"""What the reference kernels of the padded formats (Ell, Sellp) share."""
from __future__ import annotations

import numpy as np

from ginkpy.core.matrix.sparse_format import PADDING


def padded_product(col_idxs, values, b):
    """(A b) of ``width x rows`` slot-major padded storage: sum over the slots of
    values * b[col], padding selected away."""
    with np.errstate(invalid="ignore"):  # padding's 0 * Inf, selected away below
        products = values[:, :, None] * b[np.maximum(col_idxs, 0)]
    return np.where(col_idxs[:, :, None] != PADDING, products, 0).sum(axis=0)
