"""Host kernel of the reverse Cuthill-McKee ordering (run through ``exec.host``).

Breadth-first search from a pseudo-peripheral node of each connected component, all
components at once, one vectorized step per level: a level's new nodes are ordered by the rank
of the node that reached them first, then by degree (Cuthill and McKee), and the whole ordering
is reversed (George).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.csgraph as csgraph

from ginkpy.reference.reorder.graph import first_per_group, adjacency, neighbours, pseudo_peripheral


def compute(exec, a):
    """The RCM ordering of the graph of A + A^T: ``perm[i]`` is the old index of new index i.

    Two searches, one from pseudo-peripheral nodes and one from the nodes of least degree (as
    SciPy starts), and the ordering of smaller bandwidth is kept: each is a few milliseconds."""
    n = a.shape[0]
    g = adjacency(a.row_ptrs, a.col_idxs, n)
    degree = np.diff(g.indptr)
    _, component = csgraph.connected_components(g, directed=False)
    best, best_bandwidth = None, None
    for start in (pseudo_peripheral(g, component, degree), first_per_group(component, degree)):
        order = _cuthill_mckee(g, component, degree, start)
        bandwidth = _bandwidth(g, order)
        if best is None or bandwidth < best_bandwidth:
            best, best_bandwidth = order, bandwidth
    return best.astype(np.int32)


def _bandwidth(g, order) -> int:
    """max |i - j| over the entries of P G P^T for the ordering ``order``."""
    position = np.empty(order.size, np.int64)
    position[order] = np.arange(order.size)
    rows = np.repeat(position, np.diff(g.indptr))
    return int(np.abs(rows - position[g.indices]).max()) if g.nnz else 0


def _cuthill_mckee(g, component, degree, start):
    """The reversed Cuthill-McKee ordering from one start node per component."""
    n = g.shape[0]
    visited = np.zeros(n, bool)
    # rank of each node: components in order of their start, then levels, then position in level
    level_of, rank_of = np.zeros(n, np.int64), np.zeros(n, np.int64)
    frontier = start[np.argsort(component[start])]
    depth = 0
    while frontier.size:
        visited[frontier] = True
        level_of[frontier] = depth
        rank_of[frontier] = np.arange(frontier.size)
        nbrs, owner = neighbours(g, frontier)
        fresh = ~visited[nbrs]
        nbrs, owner = nbrs[fresh], owner[fresh]
        # the first parent (lowest rank) that reaches each new node; then order by it and degree
        nodes, first = np.unique(nbrs, return_index=True)
        parent = owner[first]
        frontier = nodes[np.lexsort((nodes, degree[nodes], parent))]
        depth += 1
    return np.lexsort((rank_of, level_of, component))[::-1]
