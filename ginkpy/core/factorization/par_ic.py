"""ParIc: IC(0) computed in parallel by fixed-point sweeps (Ginkgo's factorization::ParIc).

For symmetric (complex: Hermitian) positive definite A: L (lower, its diagonal real and
positive) keeps the pattern of A's lower triangle (or of |A|^sparsity_power's), A ~ L L^H; the
upper triangle of A is not read. The IC equations restricted to the pattern,

    l_ii = sqrt(a_ii - sum_{k<i} |l_ik|^2)
    l_ij = (a_ij - sum_{k<j} l_ik conj(l_jk)) / l_jj      (i > j),

are swept as ParIlu's: the diagonal from the current L, then the entries below it from the new
diagonal, one work-item per row or entry on the executor; deterministic on every device. The
initial guess is l_ij = a_ij / sqrt(a_jj), l_ii = sqrt(a_ii). L^H is formed once at the end.
"""
from __future__ import annotations

from ginkpy.core.base.factory import parameters
from ginkpy.core.factorization.factorization import (Factorization, check_pivots, like, row_indices,
                                                     with_pattern_power)
from ginkpy.core.factorization.par_ilu import ParIlu, sweeps
from ginkpy.core.matrix.csr import Csr


class ParIc(Factorization):
    """``gk.factorization.ParIc.build().with_iterations(5).on(exec).generate(A)``; the factors are
    ``l_factor``, ``lt_factor``. Parameters as :class:`ParIlu`'s."""

    @parameters
    class Parameters(ParIlu.Parameters):
        """iterations, sparsity_power: as ParIlu's."""

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        exec = self.executor
        A = with_pattern_power(A, self.parameters.sparsity_power)
        l_arrays, bad = exec.run("factorization.factorization.initialize_l", A)
        if bad >= 0:
            raise ValueError(f"ParIC breaks down: the diagonal entry of row {bad} is not stored or not positive; "
                             f"the matrix is not symmetric positive definite: use ParIlu")
        L = Csr(exec, A.shape, *l_arrays)
        l_rows = row_indices(L)
        L_next = like(L)
        for _ in range(sweeps(self.parameters.iterations)):
            # l_ii = sqrt(a_ii - sum_{k<i} |l_ik|^2)
            exec.run("factorization.par_ic.sweep_diagonal", A, L, l_rows)
            # l_ij = (a_ij - sum_{k<j} l_ik conj(l_jk)) / l_jj
            exec.run("factorization.par_ic.sweep_off_diagonal", A, L, l_rows, L_next)
            L, L_next = L_next, L
        check_pivots(L, True, "ParIC", "the matrix is not symmetric positive definite (or has no IC "
                                       "factorization): use ParIlu")
        return L, L.conj_transpose()

    @property
    def l_factor(self) -> Csr:
        return self.factors[0]

    @property
    def lt_factor(self) -> Csr:
        return self.factors[1]
