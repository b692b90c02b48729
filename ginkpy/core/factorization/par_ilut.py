"""ParIlut: the threshold ILU with fill-in, computed by fixed-point sweeps on a changing pattern
(Ginkgo's factorization::ParIlut; H. Anzt, E. Chow, J. Dongarra, SIAM J. Sci. Comput. 40,
C503-C519, 2018).

Starting from ParIlu's initial guess on A's pattern, each of ``iterations`` steps grows the
pattern of L and U by the entries of A - L U outside it (the candidates), sweeps once, keeps
the diagonal and the largest entries up to ``fill_in_limit`` times the entries of A's
triangles, and sweeps again. ``approximate_select`` takes the threshold from a sample of the
magnitudes instead of selecting it exactly (never more entries than the limit either way).

The steps change the pattern, which ginkpy does on the host (vectorized with SciPy, through
``exec.host``), not on the device as Ginkgo does; the factors then move to the executor. As
ParIlu, a diagonal entry A lacks is added as a zero and a zero or tiny pivot is replaced by its
floor, with one ``logging`` line.
"""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import integer, number, parameters
from ginkpy.core.factorization.factorization import (Factorization, check_pivots, pivot_floors,
                                                     report_floored_pivots, with_diagonal)
from ginkpy.core.matrix.csr import Csr

AUTO_ITERATIONS = 5  # Ginkgo's default number of steps
DIVERGED = 1.0  # ||A - L U|| / ||A|| on A's pattern above this: the sweeps have diverged


def diverged(name: str, residual: float) -> str:
    return (f"{name} diverges: ||A - L U|| is {residual:.1e} times ||A|| on A's pattern (tiny pivots make "
            f"the threshold steps blow up); scale the matrix (e.g. to a unit diagonal), or give it more "
            f"iterations (with_iterations)")


def _check_bool(instance, attribute, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{attribute.name} must be True or False, not {value!r}")


class ParIlut(Factorization):
    """The threshold incomplete LU factorization A ~ L U by Ginkgo's ParILUT: L and U grow by
    the largest entries of A - L U and are cut back to a fill-in limit, step by step
    (``factorization::ParIlut``); ``l_factor`` L (unit lower) and ``u_factor`` U.

    Use it for a nonsymmetric system where ILU(0) (:class:`Ilu`) preconditions too weakly:
    more fill, fewer Krylov iterations; :class:`Ilut` (SciPy spilu's) pivots as well.

    Parameters
    ----------
    iterations : int, default 5
        Steps of growing, refining and filtering the factors.
    fill_in_limit : float, default 2.0
        Each factor keeps at most this many times the entries of A's triangle.
    approximate_select : bool, default True
        Filter by an approximate threshold (sampled, as Ginkgo's) instead of an exact selection.
    deterministic_sample : bool, default False
        Ginkgo's: sample the threshold deterministically; accepted (ginkpy's is deterministic
        either way).
    skip_sorting, l_strategy, u_strategy
        Ginkgo's: accepted, they change nothing (see Factorization).

    Examples
    --------
    >>> ilut = gk.factorization.ParIlut.build().with_fill_in_limit(3.0).on(exec).generate(A)
    >>> L, U = ilut.l_factor, ilut.u_factor
    >>> M = gk.preconditioner.Ilu.build().with_factorization(gk.factorization.ParIlut.build())
    """

    @parameters
    class Parameters(Factorization.Parameters):
        iterations: int = attrs.field(default=AUTO_ITERATIONS, validator=integer(min=1))
        fill_in_limit: float = attrs.field(default=2.0, validator=number(min=0, min_open=True))
        approximate_select: bool = attrs.field(default=True, validator=_check_bool)
        # Ginkgo's: sample the threshold deterministically (ginkpy's pattern is chosen on the host,
        # deterministic either way): accepted for its configurations
        deterministic_sample: bool = attrs.field(default=False, validator=_check_bool)

    name = "ParILUT"

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        exec, host = self.executor, self.executor.host
        p = self.parameters
        a = with_diagonal(A.to_executor(host))
        l_arrays, u_arrays, _ = host.run("factorization.factorization.initialize_l_u", a)
        L, U = Csr(host, A.shape, *l_arrays), Csr(host, A.shape, *u_arrays)
        floors = pivot_floors(a)
        # the fill-in limits: fill_in_limit times the entries of A's triangles (diagonal included)
        l_limit, u_limit = int(p.fill_in_limit * L.nnz), int(p.fill_in_limit * U.nnz)
        for _ in range(p.iterations):
            # L and U grow by the entries of A - L U outside their pattern
            arrays = host.run("factorization.par_ilut.add_candidates", a, L, U)
            L, U = Csr(host, A.shape, *arrays[:3]), Csr(host, A.shape, *arrays[3:])
            host.run("factorization.par_ilut.compute_l_u_factors", a, L, U, floors)
            # the diagonal and the largest entries up to the limits
            L = Csr(host, A.shape, *host.run("factorization.par_ilut.threshold_filter", L, l_limit,
                                             p.approximate_select))
            U = Csr(host, A.shape, *host.run("factorization.par_ilut.threshold_filter", U, u_limit,
                                             p.approximate_select))
            host.run("factorization.par_ilut.compute_l_u_factors", a, L, U, floors)
        check_pivots(U, False, self.name)
        check_pivots(L, True, self.name)
        report_floored_pivots(self.name, *host.run("factorization.factorization.floored_pivots", U, False, floors),
                              A.dtype)
        residual = host.run("factorization.par_ilut.residual_norm", a, L, U)
        if not residual <= DIVERGED:
            raise ValueError(diverged(self.name, residual))
        return L.to_executor(exec), U.to_executor(exec)
