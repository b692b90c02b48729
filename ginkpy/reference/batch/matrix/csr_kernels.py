"""Reference kernels of the batch Csr."""
from __future__ import annotations

import scipy.sparse as sp


def spmv(exec, a, b, x):
    # x_i = A_i b_i, item by item
    for i in range(a.num_batch_items):
        item = sp.csr_matrix((a.values[i], a.col_idxs, a.row_ptrs), shape=a.common_size)
        x.values[i] = item @ b.values[i]
