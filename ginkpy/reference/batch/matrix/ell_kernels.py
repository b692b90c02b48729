"""Reference kernels of the batch Ell."""
from __future__ import annotations

import numpy as np

from ginkpy.core.matrix.sparse_format import PADDING


def spmv(exec, a, b, x):
    # x_i = A_i b_i: x_i[r] = sum_k values_i[r + n k] b_i[col[r + n k]] over the stored (non-padding) entries
    n = a.common_size[0]
    stored = np.flatnonzero(a.col_idxs != PADDING)
    rows, cols = stored % max(n, 1), a.col_idxs[stored]
    for i in range(a.num_batch_items):
        products = a.values[i, stored, None] * b.values[i, cols]
        x.values[i] = 0
        np.add.at(x.values[i], rows, products)
