"""Host helpers of the orderings: the adjacency graph of a matrix and breadth-first levels,
vectorized (one numpy step per level of a search, never a loop over nodes)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.components.level_set_kernels import _ranges


def adjacency(row_ptrs: np.ndarray, col_idxs: np.ndarray, n: int) -> sp.csr_matrix:
    """The pattern of A + A^T without the diagonal (int8 ones, sorted indices): the graph whose
    symmetric orderings the reorderings compute."""
    a = sp.csr_matrix((np.ones(col_idxs.shape[0], np.int8), col_idxs, row_ptrs), shape=(n, n))
    g = (a + a.T).tocsr()
    g.setdiag(0)
    g.eliminate_zeros()
    g.data[:] = 1
    g.sort_indices()
    return g


def neighbours(g: sp.csr_matrix, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The neighbours of ``nodes`` in order (those of nodes[0] first) and, for each, the position
    in ``nodes`` of the node it neighbours."""
    begins, ends = g.indptr[nodes], g.indptr[nodes + 1]
    owner = np.repeat(np.arange(nodes.size), ends - begins)
    return g.indices[_ranges(begins, ends)], owner


def bfs_levels(g: sp.csr_matrix, starts: np.ndarray) -> np.ndarray:
    """The breadth-first level of every node from all ``starts`` at once (-1: not reached)."""
    level = np.full(g.shape[0], -1, np.int64)
    frontier, depth = np.unique(starts), 0
    while frontier.size:
        level[frontier] = depth
        nbrs, _ = neighbours(g, frontier)
        frontier = np.unique(nbrs[level[nbrs] < 0])
        depth += 1
    return level


def pseudo_peripheral(g: sp.csr_matrix, component: np.ndarray, degree: np.ndarray) -> np.ndarray:
    """One pseudo-peripheral start node per connected component (George and Liu): from the node
    of least degree, move to a node of least degree in the last breadth-first level while that
    lengthens the level structure; all components at once."""
    num = int(component.max()) + 1 if component.size else 0
    # the node of least degree of each component
    start = first_per_group(component, degree)
    eccentricity = np.full(num, -1)
    for _ in range(16):  # a handful of steps suffice in practice
        level = bfs_levels(g, start)
        depth = np.zeros(num, np.int64)
        np.maximum.at(depth, component, level)
        grown = depth > eccentricity
        if not grown.any():
            break
        eccentricity = np.where(grown, depth, eccentricity)
        last = level == depth[component]
        candidate = np.full(num, -1)
        nodes = np.flatnonzero(last)
        candidate[component[nodes]] = nodes[_first_index(component[nodes], degree[nodes])]
        start = np.where(grown, candidate, start)
    return start


def _first_index(group: np.ndarray, key: np.ndarray) -> np.ndarray:
    """For each position, the position (in the same arrays) of its group's member of least key
    (ties: the lower position)."""
    order = np.lexsort((np.arange(group.size), key, group))
    first = np.empty(group.size, np.int64)
    g_sorted = group[order]
    starts = np.flatnonzero(np.diff(g_sorted, prepend=-1) != 0)
    counts = np.diff(np.append(starts, group.size))
    first[order] = np.repeat(order[starts], counts)
    return first


def first_per_group(group: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The node of least key (ties: the lowest index) of each group 0..max."""
    order = np.lexsort((np.arange(group.size), key, group))
    g_sorted = group[order]
    return order[np.flatnonzero(np.diff(g_sorted, prepend=-1) != 0)]
