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
                                                     relative_change, report_floored_pivots, row_indices,
                                                     with_diagonal, with_pattern_power)
from ginkpy.core.matrix.csr import Csr

AUTO_ITERATIONS = 5  # with iterations 0 ("auto", Ginkgo's default): sweeps between two checks ...
MAX_AUTO_SWEEPS = 20  # ... at most this many in all ...
SETTLED = 1e-3  # ... until a sweep changes the factor by at most this, relative


def sweep(factorization, sweep_once, change) -> None:
    """Run ``sweep_once()`` the ``iterations`` parameter's number of times, or with 0 (auto)
    AUTO_ITERATIONS at a time until ``change()`` (the last sweep's relative change of a factor)
    is at most SETTLED, at most MAX_AUTO_SWEEPS in all; sets the factorization's ``sweeps``,
    ``change`` (None for a fixed number) and ``converged`` (True for a fixed number)."""
    iterations = factorization.parameters.iterations
    count, last = 0, None
    while count < (iterations or MAX_AUTO_SWEEPS):
        sweep_once()
        count += 1
        if not iterations and count % AUTO_ITERATIONS == 0:
            last = change()
            if last <= SETTLED:
                break
    factorization.sweeps, factorization.change = count, last
    factorization.converged = bool(iterations) or last <= SETTLED


class ParIlu(Factorization):
    """ILU(0), A ~ L U, computed in parallel on the executor by fixed-point sweeps (Chow and
    Patel; Ginkgo's ``factorization::ParIlu``): ``l_factor`` L (unit lower) and ``u_factor`` U.

    Use it where :class:`Ilu`'s host factorization is the bottleneck (large matrices on a GPU,
    repeated setups); its factors approach ILU(0)'s as the sweeps settle. After generate(),
    ``sweeps`` is the number run, ``change`` the last relative change measured (None for a
    fixed number) and ``converged`` whether the sweeps settled.

    Parameters
    ----------
    iterations : int, default 0
        Sweeps over the factors; 0 sweeps 5 at a time until one changes U by at most 1e-3
        relative, at most 20 (5 settle on most matrices, within 1.5x of exact ILU(0)'s Krylov
        iterations on every test matrix).
    sparsity_power : int, default 1
        The factors' pattern is that of |A|^sparsity_power (1: A's, ILU(0)).
    skip_sorting, l_strategy, u_strategy
        Ginkgo's: accepted, they change nothing (see Factorization).

    Examples
    --------
    >>> ilu = gk.factorization.ParIlu.build().with_iterations(5).on(exec).generate(A)
    >>> ilu.sweeps, ilu.converged
    >>> M = gk.preconditioner.Ilu.build().with_factorization(gk.factorization.ParIlu.build())
    """

    pattern_from_matrix = True

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
        factors = {"L": L, "U": U, "L_next": like(L), "U_next": like(U)}

        def sweep_once():
            f = factors
            # u_ij = a_ij - sum_{k<i} l_ik u_kj;  |u_ii| >= floor_i
            exec.run("factorization.par_ilu.sweep_u", A, f["L"], f["U"], u_rows, floors, f["U_next"])
            f["U"], f["U_next"] = f["U_next"], f["U"]
            # l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj
            exec.run("factorization.par_ilu.sweep_l", A, f["L"], l_rows, f["U"], f["L_next"])
            f["L"], f["L_next"] = f["L_next"], f["L"]
        sweep(self, sweep_once, lambda: relative_change(factors["U"], factors["U_next"]))
        L, U = factors["L"], factors["U"]
        check_pivots(U, False, "ParILU")
        check_pivots(L, True, "ParILU")
        report_floored_pivots("ParILU", *exec.run("factorization.factorization.floored_pivots", U, False, floors),
                              A.dtype)
        return L, U
