"""Host kernel of the MC64 row permutation (run through ``exec.host``): a minimum-weight
perfect matching of rows to columns (SciPy's LAPJVsp), with MC64's weights
c_ij = log max_k |a_kj| - log |a_ij| (maximum product of the diagonal) or
c_ij = max_k |a_kj| - |a_ij| (maximum sum), each shifted by 1 so that none is a structural zero."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph


def compute(exec, a, strategy):
    """The row permutation: row i of P A is row perm[i] of A, matched to column i."""
    n = a.shape[0]
    m = sp.csr_matrix((np.abs(a.values), a.col_idxs, a.row_ptrs), shape=a.shape)
    m.eliminate_zeros()
    m = m.tocsc()
    col_of = np.repeat(np.arange(n), np.diff(m.indptr))
    column_max = np.zeros(n)
    np.maximum.at(column_max, col_of, m.data)
    if strategy == "max_diagonal_product":
        cost = np.log(column_max[col_of]) - np.log(m.data)
    else:
        cost = column_max[col_of] - m.data
    weights = sp.csc_matrix((cost + 1.0, m.indices, m.indptr), shape=a.shape)
    try:
        rows, cols = csgraph.min_weight_full_bipartite_matching(weights.tocsr())
    except ValueError:
        free = np.flatnonzero(csgraph.maximum_bipartite_matching(weights.tocsr(), perm_type="row") < 0)
        raise ValueError(f"Mc64: the matrix is structurally singular: column {int(free[0])} cannot be matched to "
                         f"a row (no permutation gives it a nonzero diagonal); check the matrix for empty or "
                         f"dependent rows and columns") from None
    perm = np.empty(n, np.int64)
    perm[cols] = rows  # new row j: the row matched to column j
    return perm.astype(np.int32)
