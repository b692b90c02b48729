"""Ilu: the exact ILU(0) factorization A ~ L U (Ginkgo's factorization::Ilu).

L is unit lower triangular (its diagonal of ones is stored), U upper triangular, both with the
sparsity pattern of A's triangles (and the diagonal, added where A lacks it), as Csr. The
factorization runs on the host at generate(), level-scheduled and vectorized (rows that do not
depend on each other are eliminated in one numpy step), on every executor; the factors are then
copied to the executor, where the preconditioner applies them. A zero or tiny pivot is replaced
by a small multiple of its row's norm (see gk.core.factorization.factorization), with one
``logging`` line. Its memory is proportional to the factors' entries; a pattern whose
elimination would take far more work than that (dense blocks) is refused at once.
"""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import one_of, parameters
from ginkpy.core.factorization.factorization import (FACTORIZE_ALGORITHMS, Factorization, moved_factors,
                                                     report_floored_pivots)
from ginkpy.core.matrix.csr import Csr


class Ilu(Factorization):
    """The exact ILU(0) factorization A ~ L U on A's sparsity pattern (Ginkgo's
    ``factorization::Ilu``): L unit lower, U upper triangular, ``l_factor`` and ``u_factor``.

    Use it for a nonsymmetric system's preconditioner (``gk.preconditioner.Ilu``, which takes
    it by default, or ``M="ilu"`` in ``gk.linalg``); for a symmetric positive definite one
    :class:`Ic` does half the work. Computed on the host, then copied to the executor; for a
    factorization computed on the device see :class:`ParIlu`.

    Parameters
    ----------
    algorithm : {"sparselib", "syncfree"}, default "sparselib"
        Ginkgo's choice of whose kernel computes the factors: accepted for its configurations;
        ginkpy computes the same exact ILU(0) on the host either way.
    skip_sorting, l_strategy, u_strategy
        Ginkgo's: accepted, they change nothing (see Factorization).

    Examples
    --------
    >>> ilu = gk.factorization.Ilu.build().on(exec).generate(A)
    >>> L, U = ilu.l_factor, ilu.u_factor
    >>> M = gk.preconditioner.Ilu.build().with_factorization(gk.factorization.Ilu.build())
    """

    pattern_from_matrix = True

    @parameters
    class Parameters(Factorization.Parameters):
        algorithm: str = attrs.field(default="sparselib", validator=one_of(*FACTORIZE_ALGORITHMS))

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        # sequential by nature: on the host, level-scheduled and vectorized
        host = self.executor.host
        *arrays, floored = host.run("factorization.ilu.factorize", A.to_executor(host))
        report_floored_pivots("ILU(0)", len(floored), int(floored[0]) if len(floored) else -1, A.dtype)
        return moved_factors(self.executor, A.shape, arrays)
