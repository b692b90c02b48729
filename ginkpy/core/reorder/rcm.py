"""Rcm: the reverse Cuthill-McKee ordering (Ginkgo's experimental::reorder::Rcm)."""
from __future__ import annotations

from ginkpy.core.reorder.reordering import Reordering


class Rcm(Reordering):
    """Reverse Cuthill-McKee: a symmetric permutation P that makes P A P^T banded.

    A breadth-first search of the graph of A + A^T from a pseudo-peripheral node of each
    connected component (George and Liu), new nodes ordered by the node that reached them and by
    degree, the result reversed. Use it to cut the bandwidth and profile of a matrix (better
    cache use of SpMV, cheaper banded or skyline factorizations, ILU(0) closer to LU). Computed
    on the host; its bandwidth is at most that of ``scipy.sparse.csgraph.reverse_cuthill_mckee``
    on the test matrices (benchmarks/bench_reorder.py).

    Examples
    --------
    >>> P = gk.reorder.Rcm.build().on(exec).generate(A)   # a gk.matrix.Permutation
    >>> perm = P.to_numpy()                                # new index i was old index perm[i]
    >>> B = A.permute(P)                                   # P A P^T
    """

    @classmethod
    def _compute(cls, host, A, parameters):
        return host.run("reorder.rcm.compute", A)
