"""Mc64: a row permutation that puts large entries on the diagonal (Ginkgo's
experimental::reorder::Mc64, after Duff and Koster's MC64)."""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import Parameters, one_of, parameters
from ginkpy.core.reorder.reordering import Reordering

STRATEGIES = ("max_diagonal_product", "max_diagonal_sum")


class Mc64(Reordering):
    """Maximum weighted matching: a row permutation P such that P A has no zero on its diagonal
    and the product (or sum) of the diagonal magnitudes is as large as possible.

    For matrices with zero or small diagonal entries (circuits, saddle points, some reservoir
    models), where Jacobi, ILU(0) and LU without pivoting break down: apply it to the rows
    (``A.permute(P, "rows")``, or through ``gk.solver.ScaledReordered``). It is a
    nonsymmetric permutation and destroys symmetry. Computed on the host as a minimum-weight
    perfect bipartite matching (SciPy's LAPJVsp) with MC64's weights; a structurally singular
    matrix (no perfect matching) is an error naming a column that cannot be matched.

    Parameters
    ----------
    strategy : {"max_diagonal_product", "max_diagonal_sum"}, default "max_diagonal_product"
        Maximize the product of |diagonal| (MC64 job 5) or their sum (job 4).

    Examples
    --------
    >>> P = gk.reorder.Mc64.build().on(exec).generate(A)
    >>> B = A.permute(P, "rows")                           # P A: a nonzero diagonal
    >>> x = P.apply(b, b.empty_like())                     # solve B x = P b: the same x
    """

    mode = "rows"

    @parameters
    class Parameters(Parameters):
        strategy: str = attrs.field(default="max_diagonal_product", validator=one_of(*STRATEGIES))

    @classmethod
    def _compute(cls, host, A, parameters):
        return host.run("reorder.mc64.compute", A, parameters.strategy)
