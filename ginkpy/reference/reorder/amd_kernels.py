"""Host kernel of the approximate minimum degree ordering (run through ``exec.host``).

Minimum degree eliminates, one after another, a node of least degree in the elimination graph
(the graph of the remaining nodes, where eliminating a node joins its neighbours into a clique:
the fill of a Cholesky or symmetric LU factorization). Done node by node in Python it would
take seconds for 1e5 nodes, so it runs in rounds, each a few sparse matrix operations on the
whole elimination graph (multiple minimum degree, Liu 1985):

1. indistinguishable nodes (equal closed neighbourhoods, found by hashing) merge into one
   supervariable: they are eliminated together, their degree counts their weight;
2. the candidates are the supervariables whose external degree is within ``RATIO`` times (plus
   ``SLACK``) of the least one; of those, a node is eliminated in this round if no candidate
   neighbour has a smaller degree (ties broken at random): an independent set, whose
   eliminations do not interact;
3. the graph becomes G[R, R] + B^T B (B: the rows of the eliminated nodes, R the rest).

The degrees are exact external degrees of the elimination graph (the approximation is the
relaxed choice of step 2). The fill is close to SuperLU's MMD orderings and below COLAMD's on
PDE and circuit matrices.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.components.level_set_kernels import _ranges

RATIO, SLACK = 1.5, 2  # candidates: degree <= max(RATIO * least degree, least degree + SLACK)
DENSE = 10.0  # rows of degree above DENSE sqrt(n) are ordered last


def _pattern(rows: int, cols: int, indptr: np.ndarray, indices: np.ndarray) -> sp.csr_matrix:
    return sp.csr_matrix((np.ones(indices.size, np.int64), indices, indptr), shape=(rows, cols))


def _submatrix(g: sp.csr_matrix, rows: np.ndarray, cols: np.ndarray) -> sp.csr_matrix:
    """The pattern of g[rows][:, cols] (cols sorted): SciPy's row gather, then the columns
    renumbered and the others dropped in one pass."""
    renumber = np.full(g.shape[1], -1, np.int32)
    renumber[cols] = np.arange(cols.size, dtype=np.int32)
    sub = g[rows]
    new = renumber[sub.indices]
    kept = np.flatnonzero(new >= 0)
    return _pattern(rows.size, cols.size, np.searchsorted(kept, sub.indptr), new[kept])


def compute(exec, a):
    """The minimum degree ordering of the graph of A + A^T: ``perm[i]`` is the old index of new
    index i. Dense rows (degree above 10 sqrt(n), as AMD's default) are left out of the
    elimination and ordered last: they would make every elimination graph dense."""
    n = a.shape[0]
    m = sp.csr_matrix((np.ones(a.col_idxs.shape[0], np.int64), a.col_idxs, a.row_ptrs), shape=(n, n))
    g = (m + m.T + sp.eye(n, dtype=np.int64, format="csr")).tocsr()  # closed neighbourhoods
    g.data[:] = 1
    degree = np.diff(g.indptr) - 1
    dense = degree > max(16.0, DENSE * np.sqrt(n))
    if not dense.any():
        return _minimum_degree(g).astype(np.int32)
    sparse, dense = np.flatnonzero(~dense), np.flatnonzero(dense)
    order = sparse[_minimum_degree(_submatrix(g, sparse, sparse))]
    return np.concatenate([order, dense[np.argsort(degree[dense], kind="stable")]]).astype(np.int32)


def _minimum_degree(g: sp.csr_matrix) -> np.ndarray:
    """The ordering of the nodes of g (a pattern with its diagonal) by multiple minimum degree."""
    n = g.shape[0]
    label = np.arange(n)  # the supervariable of each node of A (-1: eliminated)
    weight = np.ones(n, np.int64)
    rng = np.random.default_rng(0)
    order = []
    while g.shape[0]:
        size = g.shape[0]
        alive = label >= 0
        # 1. supervariables: nodes with equal closed neighbourhoods (equal hashes) merge
        hashes = g @ rng.integers(0, 1 << 40, size)
        _, first, group = np.unique(hashes, return_index=True, return_inverse=True)
        if first.size < size:
            # the representatives in increasing order: renumber the groups accordingly
            representatives = np.sort(first)
            g = _submatrix(g, representatives, representatives)
            rank = np.empty(first.size, np.int64)
            rank[np.argsort(first)] = np.arange(first.size)
            group = rank[group]
            weight = np.bincount(group, weights=weight, minlength=first.size).astype(np.int64)
            label[alive] = group[label[alive]]
            size = first.size
        # 2. an independent set of supervariables of (nearly) least external degree
        degree = g @ weight - weight
        least = degree.min()
        candidate = degree <= max(RATIO * least, least + SLACK)
        key = degree + 0.5 * rng.random(size)
        rows = np.flatnonzero(candidate)
        nbrs = g.indices[_ranges(g.indptr[rows], g.indptr[rows + 1])]
        owner = np.repeat(rows, np.diff(g.indptr)[rows])
        beaten = candidate[nbrs] & (key[nbrs] < key[owner])
        chosen = candidate.copy()
        chosen[owner[beaten]] = False
        nodes = np.flatnonzero(alive & chosen[np.where(alive, label, 0)])
        order.append(nodes[np.argsort(degree[label[nodes]], kind="stable")])
        # 3. eliminate them: their neighbours become cliques
        keep, gone = np.flatnonzero(~chosen), np.flatnonzero(chosen)
        b = _submatrix(g, gone, keep)
        g = (_submatrix(g, keep, keep) + b.T.tocsr() @ b).tocsr()
        g.data[:] = 1
        renumber = np.full(size, -1, np.int64)
        renumber[keep] = np.arange(keep.size)
        label[alive] = renumber[label[alive]]
        weight = weight[keep]
    return np.concatenate(order) if order else np.zeros(0, np.int64)
