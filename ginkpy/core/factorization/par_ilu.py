"""ParIlu: ILU(0) computed in parallel by fixed-point sweeps (Ginkgo's factorization::ParIlu;
E. Chow and A. Patel, Fine-grained parallel incomplete LU factorization, SIAM J. Sci. Comput.
37, C169-C193, 2015).

L (unit lower) and U (upper) keep the pattern of A (or of |A|^sparsity_power, for more fill).
Every entry satisfies the ILU equations restricted to the pattern,

    u_ij = a_ij - sum_{k<i} l_ik u_kj               (i <= j)
    l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj      (i > j),

whose solution is exact ILU(0): a sweep recomputes all entries of U from the current L and U,
then all entries of L from the new U, one work-item per entry on the executor. Sweeping U and
L in turn (not all entries at once, as Ginkgo's asynchronous updates do) keeps the result
deterministic and the same on every device, and converges about twice as fast as sweeping all
at once. After as many sweeps as the factorization's dependency depth the factors are exact;
a few sweeps give most of a preconditioner's benefit. The initial guess is l_ij = a_ij / a_jj,
u_ij = a_ij. A diagonal entry A lacks is added as a zero, and a pivot u_ii that a sweep makes
zero or tiny is replaced by its floor (see gk.core.factorization.factorization), with one
``logging`` line.
"""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import integer, parameters
from ginkpy.core.factorization.factorization import (Factorization, check_pivots, like, pivot_floors,
                                                     report_floored_pivots, row_indices, with_diagonal,
                                                     with_pattern_power)
from ginkpy.core.matrix.csr import Csr

AUTO_ITERATIONS = 5  # sweeps when iterations is 0 ("auto", Ginkgo's default)


def sweeps(iterations: int) -> int:
    """The number of sweeps for the ``iterations`` parameter (0: :data:`AUTO_ITERATIONS`)."""
    return iterations or AUTO_ITERATIONS


class ParIlu(Factorization):
    """``gk.factorization.ParIlu.build().with_iterations(5).on(exec).generate(A)``; the factors are
    ``l_factor``, ``u_factor``.

    ``iterations``: sweeps over the factors (0, the default: 5, which was within 1.5x of exact
    ILU(0)'s Krylov iterations on every test matrix); ``sparsity_power``: the factors' pattern
    is that of |A|^sparsity_power (1: A's, ILU(0)).
    """

    @parameters
    class Parameters(Factorization.Parameters):
        iterations: int = attrs.field(default=0, validator=integer(min=0))
        sparsity_power: int = attrs.field(default=1, validator=integer(min=1))

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        exec = self.executor
        A = with_pattern_power(A, self.parameters.sparsity_power)
        l_arrays, u_arrays, missing = exec.run("factorization.factorization.initialize_l_u", A)
        if missing >= 0:  # a diagonal entry is not stored: add it as a zero
            A = with_diagonal(A)
            l_arrays, u_arrays, missing = exec.run("factorization.factorization.initialize_l_u", A)
        L, U = Csr(exec, A.shape, *l_arrays), Csr(exec, A.shape, *u_arrays)
        l_rows, u_rows = row_indices(L), row_indices(U)
        floors = pivot_floors(A)
        L_next, U_next = like(L), like(U)
        for _ in range(sweeps(self.parameters.iterations)):
            # u_ij = a_ij - sum_{k<i} l_ik u_kj;  |u_ii| >= floor_i
            exec.run("factorization.par_ilu.sweep_u", A, L, U, u_rows, floors, U_next)
            U, U_next = U_next, U
            # l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj
            exec.run("factorization.par_ilu.sweep_l", A, L, l_rows, U, L_next)
            L, L_next = L_next, L
        check_pivots(U, False, "ParILU")
        check_pivots(L, True, "ParILU")
        report_floored_pivots("ParILU", *exec.run("factorization.factorization.floored_pivots", U, False, floors),
                              A.dtype)
        return L, U

    @property
    def l_factor(self) -> Csr:
        return self.factors[0]

    @property
    def u_factor(self) -> Csr:
        return self.factors[1]
