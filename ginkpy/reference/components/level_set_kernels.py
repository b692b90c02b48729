"""Host kernel of the level analysis of a sparse triangle (run through ``exec.host``).

Row i depends on the rows named by its column indices (the strict triangle of a triangular
solve, or of an incomplete factorization). A row's level is 0 when it depends on no row, else
one more than the deepest row it depends on: the rows of one level can be processed in
parallel once the levels before are done. Computed by Kahn's topological sort, one vectorized
round per level (no loop over rows).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _ranges(begins: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The concatenation of the index ranges begins[r]:ends[r]."""
    lengths = ends - begins
    offsets = np.repeat(begins - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + offsets


def compute_levels(exec, row_ptrs, col_idxs) -> np.ndarray:
    """The level of every row (int64) of the dependency pattern (row_ptrs, col_idxs)."""
    n = row_ptrs.shape[0] - 1
    remaining = np.diff(row_ptrs).astype(np.int64)  # dependencies not yet done
    # who depends on row k: the transposed pattern
    dependents = sp.csr_matrix((np.ones(col_idxs.shape[0], np.int8), col_idxs, row_ptrs), shape=(n, n)).tocsc()
    ptrs, rows = dependents.indptr, dependents.indices
    level = np.zeros(n, dtype=np.int64)
    ready = np.flatnonzero(remaining == 0)
    done, depth = 0, 0
    while ready.size:
        level[ready] = depth
        done += ready.size
        # the rows waiting on this level lose one dependency per row of it they need
        waiting = rows[_ranges(ptrs[ready], ptrs[ready + 1])]
        np.subtract.at(remaining, waiting, 1)
        ready = np.sort(waiting[remaining[waiting] == 0])
        ready = ready[np.diff(ready, prepend=-1) != 0]  # once each
        depth += 1
    if done != n:
        raise ValueError("the dependency pattern has a cycle: it is not a triangle")
    return level
