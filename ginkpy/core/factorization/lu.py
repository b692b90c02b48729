"""Lu: the sparse LU factorization A = P^T L U Q with a fill-reducing ordering and threshold
partial pivoting (Ginkgo's experimental::factorization::Lu).

``generate(A)`` orders A and factorizes it on the host; the factors and permutations are then
copied to the executor, where ``gk.solver.Direct`` solves with them (LowerTrs / UpperTrs). The
numeric factorization is SuperLU's (SciPy's ``splu``, partial pivoting by ``pivot_threshold``).
The fill-reducing ordering is by default SuperLU's own, chosen from the pattern (minimum degree
on A + A^T for a nearly symmetric pattern, COLAMD otherwise); a ginkpy reordering
(``gk.reorder.Amd``, ``Rcm``) can be given instead, and SuperLU then keeps its order.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import Parameters, as_factory, boolean, number, one_of, parameters
from ginkpy.core.factorization.factorization import Factorization, moved_factors
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.reorder.reordering import Reordering


# SuperLU's own orderings by name ("auto": chosen from the pattern; the host kernels run them)
SUPERLU_ORDERINGS = ("auto", "mmd_at_plus_a", "colamd")


def ordering_of(value: Any, A: Csr, who: str) -> np.ndarray | str:
    """The fill-reducing ordering of A: the name of SuperLU's own (``"auto"`` for None), or a
    host index array (none for "natural", else the permutation a reorder factory generates)."""
    if value is None:
        return "auto"
    if isinstance(value, str):
        if value in SUPERLU_ORDERINGS:
            return value
        if value != "natural":
            raise ValueError(f"{who}: ordering {value!r} is not known: give one of 'natural', "
                             f"{', '.join(map(repr, SUPERLU_ORDERINGS))} or a reorder factory "
                             f"(gk.reorder.Amd.build(), gk.reorder.Rcm.build())")
        return np.arange(A.shape[0], dtype=np.int32)
    factory = as_factory(value, A.executor.host)
    if not issubclass(factory.parameters.product, Reordering) or factory.parameters.product.mode != "symmetric":
        raise TypeError(f"{who}: the ordering must be a symmetric reordering (gk.reorder.Amd.build(), "
                        f"gk.reorder.Rcm.build()) or 'natural', not {factory.parameters.product.__name__}")
    return factory.generate(A.to_executor(A.executor.host)).to_numpy()


class Lu(Factorization):
    """Sparse LU: A[R][:, C] = L U, L lower and U unit upper triangular (Csr), R and C the
    row and column permutations (fill-reducing ordering and pivoting).

    Use it through ``gk.solver.Direct`` (its default factorization) to solve a system exactly;
    on its own it gives the factors (``l_factor``, ``u_factor``, ``row_permutation``,
    ``column_permutation``). A singular matrix is a ValueError that names a column where
    the structure shows one.

    Parameters
    ----------
    ordering : reorder factory or str, optional
        The fill-reducing ordering. Default (None, or ``"auto"``): SuperLU's own, minimum
        degree on the pattern of A + A^T (``"mmd_at_plus_a"``, diagonal pivots preferred) where
        at least half of A's pattern is symmetric, else column approximate minimum degree
        (``"colamd"``); either by name; ``"natural"`` for none; or a symmetric reorder factory
        (``gk.reorder.Amd.build()``, ``gk.reorder.Rcm.build()``), which SuperLU then keeps.
    pivot_threshold : float, default 0.1
        Threshold partial pivoting: the diagonal entry is kept as pivot while its magnitude is
        at least this fraction of the column's largest; 1.0 is partial pivoting, 0 never
        pivots away from a nonzero diagonal. Zero diagonals are always pivoted away.
    skip_sorting, symbolic_algorithm, symbolic_factorization
        Ginkgo's (``symbolic_algorithm`` one of "general", "near_symmetric", "symmetric"):
        accepted for its configurations; ginkpy's Csr is always sorted and SuperLU computes its
        own symbolic factorization, so they change nothing.

    Examples
    --------
    >>> lu = gk.factorization.Lu.build().on(exec).generate(A)
    >>> L, U = lu.l_factor, lu.u_factor
    >>> solver = gk.solver.Direct.build().with_factorization(gk.factorization.Lu.build()).on(exec).generate(A)
    """

    factorizes_on_host = True

    @parameters
    class Parameters(Parameters):
        ordering: Any = None
        pivot_threshold: float = attrs.field(default=0.1, validator=number(min=0.0, max=1.0))
        skip_sorting: bool = boolean()
        symbolic_algorithm: str = attrs.field(default="general",
                                              validator=one_of("general", "near_symmetric", "symmetric"))
        symbolic_factorization: Any = None

    def _factorize(self, A: Csr) -> tuple[Csr, Csr] | None:
        host = self.executor.host
        ordering = ordering_of(self.parameters.ordering, A, type(self).__name__)
        # the numbers on the host (SuperLU), in its ordering or ginkpy's
        plan, rows, cols = host.run("factorization.lu.factorize", A.to_executor(host), ordering,
                                    self.parameters.pivot_threshold)
        self._set_permutations(rows, cols)
        return self._kept(plan)

    def _kept(self, plan: Any, factors: tuple[Csr, Csr] | None = None) -> tuple[Csr, Csr] | None:
        """Keep SuperLU's factorization ``plan`` as ``host_plan`` where the executor is the host
        (gk.solver.Direct then solves with SuperLU's own triangular solves, and the explicit
        factors are made only when asked); elsewhere the factors, made now."""
        on_host = self.executor.same_memory(self.executor.host)
        self.host_plan = plan if on_host else None
        if factors is None and not on_host:
            factors = self._factors_of(plan)
        return factors

    def _factors_of(self, plan: Any) -> tuple[Csr, Csr]:
        return moved_factors(self.executor, self.shape, self.executor.host.run("factorization.lu.factors", plan))

    def _deferred_factors(self) -> tuple[Csr, Csr]:
        return self._factors_of(self.host_plan)
