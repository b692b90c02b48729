"""Amd: an approximate minimum degree ordering (Ginkgo's experimental::reorder::Amd)."""
from __future__ import annotations

from ginkpy.core.reorder.reordering import Reordering


class Amd(Reordering):
    """Approximate minimum degree: a symmetric permutation P that keeps the fill of the
    Cholesky or LU factors of P A P^T small.

    Minimum degree on the graph of A + A^T, computed in rounds of multiple elimination (an
    independent set of supervariables of nearly least degree per round; see
    ``ginkpy/reference/reorder/amd_kernels.py``), on the host. Its fill is close to SuperLU's
    MMD orderings and below COLAMD's (benchmarks/bench_reorder.py); ``gk.solver.Direct``'s
    default is SuperLU's own ordering, faster and with some 20% less fill on 2D grids.

    Examples
    --------
    >>> P = gk.reorder.Amd.build().on(exec).generate(A)
    >>> B = A.permute(P)                                   # P A P^T: little fill in LU(B)
    >>> lu = gk.factorization.Lu.build().with_ordering(gk.reorder.Amd.build()).on(exec).generate(A)
    """

    @classmethod
    def _compute(cls, host, A, parameters):
        return host.run("reorder.amd.compute", A)
