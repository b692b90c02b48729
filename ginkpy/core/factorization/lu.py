"""Lu: the sparse LU factorization A = P^T L U Q with a fill-reducing ordering and threshold
partial pivoting (Ginkgo's experimental::factorization::Lu).

``generate(A)`` orders A (``ordering``: gk.reorder.Amd by default) and factorizes it on the host;
the factors and permutations are then copied to the executor, where ``gk.solver.Direct`` solves
with them (LowerTrs / UpperTrs). The numeric factorization is SuperLU's (SciPy's ``splu``,
partial pivoting by ``pivot_threshold``) on the matrix ginkpy has ordered, with SuperLU's own
column ordering turned off; ginkpy computes the ordering, SuperLU the numbers.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import Parameters, as_factory, boolean, number, one_of, parameters
from ginkpy.core.factorization.factorization import Factorization
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.reorder.amd import Amd
from ginkpy.core.reorder.reordering import Reordering


def ordering_of(value: Any, A: Csr, who: str) -> np.ndarray:
    """The fill-reducing ordering of A (a host index array): Amd for None, none for "natural",
    else the permutation a reorder factory generates."""
    if isinstance(value, str):
        if value != "natural":
            raise ValueError(f"{who}: ordering {value!r} is not known: give 'natural' or a reorder factory "
                             f"(gk.reorder.Amd.build(), gk.reorder.Rcm.build())")
        return np.arange(A.shape[0], dtype=np.int32)
    factory = as_factory(Amd.build() if value is None else value, A.executor.host)
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
    ordering : reorder factory or "natural", optional
        The fill-reducing symmetric ordering; default (None): ``gk.reorder.Amd``.
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

    @parameters
    class Parameters(Parameters):
        ordering: Any = None
        pivot_threshold: float = attrs.field(default=0.1, validator=number(min=0.0, max=1.0))
        skip_sorting: bool = boolean()
        symbolic_algorithm: str = attrs.field(default="general",
                                              validator=one_of("general", "near_symmetric", "symmetric"))
        symbolic_factorization: Any = None

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        host = self.executor.host
        perm = ordering_of(self.parameters.ordering, A, type(self).__name__)
        # the numbers on the host (SuperLU), in ginkpy's ordering
        *arrays, rows, cols = host.run("factorization.lu.factorize", A.to_executor(host), perm,
                                       self.parameters.pivot_threshold)
        return self._permuted(arrays, rows, cols)
