"""ParIct: the threshold incomplete Cholesky with fill-in (Ginkgo's factorization::ParIct), for
symmetric (complex: Hermitian) positive definite A: ParIlut's steps on L with A - L L^H and
ParIc's sweeps. The
pattern changes on the host (vectorized, through ``exec.host``); the factors then move to the
executor. The upper triangle of A is not read.
"""
from __future__ import annotations

from ginkpy.core.base.factory import parameters
from ginkpy.core.factorization.factorization import Factorization, check_pivots
from ginkpy.core.factorization.par_ilut import DIVERGED, ParIlut, diverged
from ginkpy.core.matrix.csr import Csr


class ParIct(Factorization):
    """``gk.factorization.ParIct.build().with_fill_in_limit(2.0).on(exec).generate(A)``; the
    factors are ``l_factor``, ``lt_factor``. Parameters as :class:`ParIlut`'s."""

    @parameters
    class Parameters(ParIlut.Parameters):
        """iterations, fill_in_limit, approximate_select: as ParIlut's."""

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        exec, host = self.executor, self.executor.host
        p = self.parameters
        a = A.to_executor(host)
        l_arrays, bad = host.run("factorization.factorization.initialize_l", a)
        if bad >= 0:
            raise ValueError(f"ParICT breaks down: the diagonal entry of row {bad} is not stored or not positive; "
                             f"the matrix is not symmetric positive definite: use ParIlut")
        L = Csr(host, A.shape, *l_arrays)
        limit = int(p.fill_in_limit * L.nnz)
        for _ in range(p.iterations):
            # L grows by the lower entries of A - L L^H outside its pattern
            L = Csr(host, A.shape, *host.run("factorization.par_ict.add_candidates", a, L))
            host.run("factorization.par_ict.compute_factor", a, L)
            # the diagonal and the largest entries up to the limit
            L = Csr(host, A.shape, *host.run("factorization.par_ilut.threshold_filter", L, limit,
                                             p.approximate_select))
            host.run("factorization.par_ict.compute_factor", a, L)
        check_pivots(L, True, "ParICT", "the matrix is not symmetric positive definite (or has no incomplete "
                                        "Cholesky factorization): use ParIlut")
        residual = host.run("factorization.par_ict.residual_norm", a, L)
        if not residual <= DIVERGED:
            raise ValueError(diverged("ParICT", residual, "ParIc"))
        L = L.to_executor(exec)
        return L, L.conj_transpose()

    @property
    def l_factor(self) -> Csr:
        return self.factors[0]

    @property
    def lt_factor(self) -> Csr:
        return self.factors[1]
