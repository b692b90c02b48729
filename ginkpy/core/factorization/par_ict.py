"""ParIct: the threshold incomplete Cholesky with fill-in (Ginkgo's factorization::ParIct), for
symmetric (complex: Hermitian) positive definite A: ParIlut's steps on L with A - L L^H and
ParIc's sweeps. The
pattern changes on the host (vectorized, through ``exec.host``); the factors then move to the
executor. The upper triangle of A is not read. Where a pivot is not positive it is retried on
A + alpha diag(A) with growing alpha (Manteuffel), with one ``logging`` line.
"""
from __future__ import annotations

from ginkpy.core.base.factory import csr_strategy, parameters
from ginkpy.core.factorization.factorization import Factorization, shifted_cholesky
from ginkpy.core.factorization.par_ilut import DIVERGED, ParIlut, diverged
from ginkpy.core.matrix.csr import Csr


class ParIct(Factorization):
    """The threshold incomplete Cholesky factorization A ~ L L^H by Ginkgo's ParICT: L grows by
    the largest entries of A - L L^H and is cut back to a fill-in limit, step by step
    (``factorization::ParIct``); ``l_factor`` L and ``lt_factor`` L^H.

    Use it for a symmetric positive definite system where IC(0) (:class:`Ic`) preconditions
    too weakly: more fill, fewer Krylov iterations.

    Parameters
    ----------
    iterations : int, default 5
        Steps of growing, refining and filtering L.
    fill_in_limit : float, default 2.0
        L keeps at most this many times the entries of A's lower triangle.
    approximate_select : bool, default True
        Filter by an approximate threshold (sampled, as Ginkgo's) instead of an exact selection.
    deterministic_sample, skip_sorting, l_strategy, u_strategy, lt_strategy
        Ginkgo's: accepted, they change nothing (see ParIlut and Factorization; ``lt_strategy``
        is the SpMV strategy of L^H).

    Examples
    --------
    >>> ict = gk.factorization.ParIct.build().with_fill_in_limit(3.0).on(exec).generate(A)
    >>> L = ict.l_factor
    >>> M = gk.preconditioner.Ic.build().with_factorization(gk.factorization.ParIct.build())
    """

    symmetric = True

    @parameters
    class Parameters(ParIlut.Parameters):
        """iterations, fill_in_limit, approximate_select: as ParIlut's; Ginkgo's ``lt_strategy``
        (the SpMV strategy of L^H) accepted for its configurations."""

        lt_strategy: str | None = csr_strategy()

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        return shifted_cholesky("ParICT", A, lambda shift: self._attempt(A.to_executor(self.executor.host), shift))

    def _attempt(self, a: Csr, shift: float) -> tuple:
        """The steps on a + shift diag(a) (a on the host): ((L, L^H), -1) on the executor, or
        (None, the first row whose pivot is not positive)."""
        exec, host = self.executor, self.executor.host
        p = self.parameters
        l_arrays, bad = host.run("factorization.factorization.initialize_l", a, shift)
        if bad >= 0:  # a diagonal entry is not stored or not positive
            return None, bad
        L = Csr(host, a.shape, *l_arrays)
        limit = int(p.fill_in_limit * L.nnz)
        for _ in range(p.iterations):
            # L grows by the lower entries of A - L L^H outside its pattern
            L = Csr(host, a.shape, *host.run("factorization.par_ict.add_candidates", a, L))
            host.run("factorization.par_ict.compute_factor", a, L, shift)
            # the diagonal and the largest entries up to the limit
            L = Csr(host, a.shape, *host.run("factorization.par_ilut.threshold_filter", L, limit,
                                             p.approximate_select))
            host.run("factorization.par_ict.compute_factor", a, L, shift)
        row = host.run("factorization.factorization.find_invalid_pivot", L, True)
        if row >= 0 or not L.is_finite():
            return None, max(row, 0)
        residual = host.run("factorization.par_ict.residual_norm", a, L, shift)
        if not residual <= DIVERGED:
            raise ValueError(diverged("ParICT", residual))
        L = L.to_executor(exec)
        return (L, L.conj_transpose()), -1
