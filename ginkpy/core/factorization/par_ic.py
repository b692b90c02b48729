"""ParIc: IC(0) computed in parallel by fixed-point sweeps (Ginkgo's factorization::ParIc).

For symmetric (complex: Hermitian) positive definite A: L (lower, its diagonal real and
positive) keeps the pattern of A's lower triangle (or of |A|^sparsity_power's), A ~ L L^H; the
upper triangle of A is not read. The IC equations restricted to the pattern,

    l_ii = sqrt(a_ii - sum_{k<i} |l_ik|^2)
    l_ij = (a_ij - sum_{k<j} l_ik conj(l_jk)) / l_jj      (i > j),

are swept as ParIlu's: the diagonal from the current L, then the entries below it from the new
diagonal, one work-item per row or entry on the executor; deterministic on every device. The
initial guess is l_ij = a_ij / sqrt(a_jj), l_ii = sqrt(a_ii). L^H is formed once at the end.
Where a pivot is not positive it is retried on A + alpha diag(A) with growing alpha
(Manteuffel; see gk.core.factorization.factorization), with one ``logging`` line.
"""
from __future__ import annotations

from ginkpy.core.base.factory import boolean, parameters
from ginkpy.core.factorization.factorization import (Factorization, change_norms, like, row_indices,
                                                     shifted_cholesky, with_pattern_power)
from ginkpy.core.factorization.par_ilu import ParIlu, sweep
from ginkpy.core.matrix.csr import Csr


class ParIc(Factorization):
    """IC(0), A ~ L L^H, computed in parallel on the executor by fixed-point sweeps (Ginkgo's
    ``factorization::ParIc``): ``l_factor`` L and ``lt_factor`` L^H.

    Use it where :class:`Ic`'s host factorization is the bottleneck (large matrices on a GPU,
    repeated setups); its factors approach IC(0)'s as the sweeps settle.

    Parameters
    ----------
    iterations : int, default 0
        Sweeps over the factor; 0 sweeps 5 at a time until one changes L by at most 1e-3
        relative (at most 20).
    sparsity_power : int, default 1
        The factor's pattern is that of |A|^sparsity_power's lower triangle (1: A's, IC(0)).
    both_factors : bool, default True
        Ginkgo's: accepted; ginkpy always keeps L^H beside L.
    skip_sorting, l_strategy, u_strategy
        Ginkgo's: accepted, they change nothing (see Factorization).

    Examples
    --------
    >>> ic = gk.factorization.ParIc.build().with_iterations(5).on(exec).generate(A)
    >>> L = ic.l_factor
    >>> M = gk.preconditioner.Ic.build().with_factorization(gk.factorization.ParIc.build())
    """

    symmetric = True
    pattern_from_matrix = True

    @parameters
    class Parameters(ParIlu.Parameters):
        """iterations, sparsity_power: as ParIlu's; Ginkgo's ``both_factors`` (ginkpy always
        keeps L^H beside L) accepted for its configurations."""

        both_factors: bool = boolean(True)

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        A = with_pattern_power(A, self.parameters.sparsity_power)
        return shifted_cholesky("ParIC", A, lambda shift: self._attempt(A, shift))

    def _attempt(self, A: Csr, shift: float) -> tuple:
        """The sweeps on A + shift diag(A): ((L, L^H), -1), or (None, the first row whose pivot
        is not positive)."""
        exec = self.executor
        l_arrays, bad = exec.run("factorization.factorization.initialize_l", A, shift)
        if bad >= 0:  # a diagonal entry is not stored or not positive
            return None, bad
        L = Csr(exec, A.shape, *l_arrays)
        l_rows = row_indices(L)
        factors = {"L": L, "L_next": like(L)}

        def sweep_once():
            f = factors
            # l_ii = sqrt((1 + shift) a_ii - sum_{k<i} |l_ik|^2)
            exec.run("factorization.par_ic.sweep_diagonal", A, f["L"], l_rows, shift)
            # l_ij = (a_ij - sum_{k<j} l_ik conj(l_jk)) / l_jj
            exec.run("factorization.par_ic.sweep_off_diagonal", A, f["L"], l_rows, f["L_next"])
            f["L"], f["L_next"] = f["L_next"], f["L"]
        checked, = sweep(self, sweep_once, lambda: change_norms(factors["L"], factors["L_next"]),
                         lambda: (exec.run("factorization.factorization.check_factor", factors["L"], True, None),))
        L, n = factors["L"], A.shape[0]
        # the first row whose pivot is invalid, else 0 where a value is not finite
        row = int(checked[0]) if checked[0] < n else 0 if checked[1] < n else -1
        return ((L, L.conj_transpose()), -1) if row < 0 else (None, row)
