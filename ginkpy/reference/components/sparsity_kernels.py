"""Host kernel of sparsity patterns (run through ``exec.host``): the pattern of a power of a
matrix, for incomplete factorizations and approximate inverses with more fill."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def power_pattern(exec, a, power):
    """CSR arrays (row_ptrs, col_idxs, values) of A's values on the pattern of |A|^power
    (zeros where A stores nothing); power 1 is A's own pattern, explicit zeros kept."""
    m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)
    pattern = sp.csr_matrix((np.ones(m.nnz), m.indices, m.indptr), shape=m.shape)
    grown = pattern
    for _ in range(power - 1):
        grown = grown @ pattern  # entries are positive sums: none cancel, none are dropped
    grown = (grown + pattern).tocsr()  # keeps A's explicitly stored zeros in the pattern
    grown.sort_indices()
    # A's values at their positions in the grown pattern, zeros elsewhere
    n = a.shape[0]
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(grown.indptr))
    keys = rows * max(a.shape[1], 1) + grown.indices
    a_rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(m.indptr))
    positions = np.searchsorted(keys, a_rows * max(a.shape[1], 1) + m.indices)
    values = np.zeros(grown.nnz, a.values.dtype)
    values[positions] = m.data
    return grown.indptr.astype(np.int32), grown.indices.astype(np.int32), values
