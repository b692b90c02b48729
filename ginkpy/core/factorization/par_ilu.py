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

The host waits for the device twice (issue 31): for the factors' sizes, and after the sweeps,
enqueued back to back (5 at a time until they settle), for the settle test together with the
factors' checks (pivots, values finite, pivots on their floors: ``check_factor``, one launch per
factor), all in one read. Where the executor's device applies an ILU's factors by Jacobi
sweeps (its choice ``approximate_triangular_solves``: a GPU) the same read brings the factors'
contraction bounds too (``jacobi_bound``, one launch per factor), kept with the factors for
Ilu's choice of sweeps, which then reads nothing. A's values are checked only where the
factors' check finds them spoilt (a value of A that is not finite makes its factor entry so).
"""
from __future__ import annotations

import attrs

from ginkpy.core.base.checks import check_finite
from ginkpy.core.base.factory import integer, parameters
from ginkpy.core.factorization.factorization import (Factorization, change_norms, like, pivot_floors,
                                                     refuse_invalid, relative_of, report_floored_pivots,
                                                     row_indices, with_diagonal, with_pattern_power)
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.solver.triangular import enqueue_jacobi_facts, ilu_triangles, keep_jacobi_facts

AUTO_ITERATIONS = 5  # with iterations 0 ("auto", Ginkgo's default): sweeps between two checks ...
MAX_AUTO_SWEEPS = 20  # ... at most this many in all ...
SETTLED = 1e-3  # ... until a sweep changes the factor by at most this, relative


def sweep(factorization, sweep_once, change, checks) -> tuple:
    """Run ``sweep_once()`` the ``iterations`` parameter's number of times, or with 0 (auto)
    AUTO_ITERATIONS at a time until the last sweep's relative change of a factor is at most
    SETTLED, at most MAX_AUTO_SWEEPS in all; sets the factorization's ``sweeps``, ``change``
    (None for a fixed number) and ``converged`` (True for a fixed number). ``change()``
    enqueues that change (the two arrays of gk.core.factorization.factorization.change_norms) and ``checks()`` the factors' checks
    (arrays of the ``check_factor`` kernel), both read together in one read after each
    AUTO_ITERATIONS sweeps, enqueued back to back (auto), or once after the fixed number:
    returns the host copies of the last checks."""
    exec, iterations = factorization.executor, factorization.parameters.iterations
    limit = iterations or MAX_AUTO_SWEEPS
    count, last = 0, None
    while True:
        sweep_once()
        count += 1
        if count < limit and (iterations or count % AUTO_ITERATIONS):
            continue
        measured = () if iterations else tuple(change())
        checked = tuple(checks())
        read = exec.to_host(*measured, *checked)
        read = read if isinstance(read, tuple) else (read,)
        if not iterations:
            last = relative_of(*read[:2])
        if count >= limit or last <= SETTLED:
            break
    factorization.sweeps, factorization.change = count, last
    factorization.converged = bool(iterations) or last <= SETTLED
    return read[len(measured):]


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
    checks_finite_itself = True

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
        # a GPU's Ilu applies the factors by Jacobi sweeps, chosen by their contraction bounds
        carries_bounds = exec.device_choices().approximate_triangular_solves

        def checks():
            # U's pivots (and how many sit on their floors), L's, both factors' values finite;
            # where they serve, the factors' contraction bounds
            return (exec.run("factorization.factorization.check_factor", factors["U"], False, floors),
                    exec.run("factorization.factorization.check_factor", factors["L"], True, None),
                    *(enqueue_jacobi_facts(*ilu_triangles(factors["L"], factors["U"])) if carries_bounds else ()))
        u_checks, l_checks, *bounds = sweep(self, sweep_once, lambda: change_norms(factors["U"], factors["U_next"]),
                                            checks)
        L, U = factors["L"], factors["U"]
        for triangle, maxima in zip(ilu_triangles(L, U), bounds):
            keep_jacobi_facts(triangle, maxima)
        n = A.shape[0]
        if min(u_checks[0], u_checks[1], l_checks[0], l_checks[1]) < n:  # (n: none)
            check_finite(A)  # a value of A not finite: named as such (it spoils the factors)
        refuse_invalid(U, "ParILU", u_checks)
        refuse_invalid(L, "ParILU", l_checks)
        report_floored_pivots("ParILU", int(u_checks[2]), int(u_checks[3]) if u_checks[3] < n else -1, A.dtype)
        return L, U
