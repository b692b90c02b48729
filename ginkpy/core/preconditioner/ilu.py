"""Ilu: the incomplete-LU preconditioner M = L U, applied as x = U^-1 (L^-1 b) (Ginkgo's
preconditioner::Ilu).

``generate(A)`` factorizes A with the ``factorization`` factory, or takes an already generated
factorization as A, and generates the ``l_solver`` on L and the ``u_solver`` on U; each apply is
the two solvers on the executor.

Unset parameters (None) choose, so that the default never raises where an incomplete
factorization exists and needs at most about the iterations of exact ILU(0) with exact
triangular solves (docs/preconditioners.md, benchmarks/bench_ilu.py):

- the factorization: exact ILU(0) on the host (level-scheduled; see gk.factorization.Ilu) for
  matrices of at most :data:`EXACT_ENTRIES` entries and where a sweep would cost more than
  :data:`SWEEP_WORK` operations per entry (long rows: a sweep costs sum_i n_i^2 for rows of
  n_i entries, 1.8e9 on a power-law matrix of 6.7e5 entries, where ParILU took 160 s on PoCL
  and exact ILU(0) 2.5 s); else ParILU on the executor (5x faster than the host's exact one at
  2.5e5 rows on PoCL), whose sweeps run until they settle (gk.factorization.ParIlu's default),
  replaced by the exact one where they do not (olm1000: its sweeps stall at a relative change
  of 1e-2 on factors that are useless);
- the triangular solves: on a CPU device exact substitution, which runs through a triangle in
  row order on one core about as fast as an SpMV runs on all (ISAI, the cheapest
  approximation, costs about as much per apply and more to set up, and solves within 2% on
  few matrices). On a GPU, where each level of a substitution costs a barrier and each launch
  microseconds: where the factors are dominant, Jacobi sweeps decided without a trial
  (:func:`decided_sweeps`: the fewest s <= :data:`MAX_DECIDED_SWEEPS` with q^s <=
  :data:`SWEEP_BOUND` for q the larger of the factors' contraction bounds, one launch each,
  read by ParILU with its last check (else in one small read for both), kept for the solvers
  made on the factors (which then read nothing: a GPU's generate with ParILU waits for the
  device twice, issue 31); 2D
  convection-diffusion: q = 0.65 (L) and 0.52 (U), 3 sweeps of each, 1 launch per factor,
  1.34x exact ILU(0)'s BiCGStab iterations at 500^2; 3 sweeps of L and 2 of U, which each
  one's bound would allow, needed 1.76x: the same count for both). Else the
  first of the :func:`candidates` that solves both factors well enough, ||v - T y|| <=
  :data:`SOLVE_QUALITY` ||v|| for y its solve of T y = v on a random v (ISAI with sparsity
  power 1, 2, 3, then 2, 4, 8 or 16 Jacobi sweeps), else exact level-scheduled
  substitution. On the test matrices a solve error of 5% kept GMRES's iterations within 1.35x
  of exact ILU(0)'s, 2% within 1.05x and BiCGStab's within 1.05x but on watt_2 (ISAI's errors
  are 0.05-0.6 on 2D convection-diffusion, where exact ILU(0) needs 2.8x fewer iterations than
  ISAI); a candidate that cannot be built (ISAI beyond its row limit, a singular small system)
  is passed over. A fallback from the first candidate says so in one ``logging`` line.

Set the parameters to choose, e.g. exact ILU(0) with level-scheduled substitution
(``M="ilu0_exact"`` in gk.linalg and the command line):
``Ilu.build().with_factorization(gk.factorization.Ilu.build())
.with_l_solver(gk.solver.LowerTrs.build()).with_u_solver(gk.solver.UpperTrs.build())``.
"""
from __future__ import annotations

import copy
import logging
from typing import Any

import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, as_factory, boolean, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.factorization.factorization import EliminationTooCostly, Factorization
from ginkpy.core.factorization.ilu import Ilu as ExactIlu
from ginkpy.core.factorization.par_ilu import ParIlu
from ginkpy.core.matrix.checks import system_csr
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.preconditioner.isai import LowerIsai, UpperIsai
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.triangular import ilu_triangles, jacobi_facts
from ginkpy.core.solver.upper_trs import UpperTrs

SOLVE_QUALITY = 0.02  # a triangular solve is kept while ||v - T y|| / ||v|| is at most this
EXACT_ENTRIES = 100_000  # up to this many entries the default factorization is exact on every device
SWEEP_BOUND = 0.3  # a GPU's default takes Jacobi sweeps without trying where the factors' q^s is at most this ...
MAX_DECIDED_SWEEPS = 4  # ... for some s up to this many
SWEEP_WORK = 64  # above this many operations per entry in a sweep (long rows) the factorization is exact
_log = logging.getLogger("ginkpy")


def solve_error(solver: LinOp, factor: Csr) -> float:
    """||v - T (solver v)|| / ||v|| for a fixed random v: how well ``solver`` solves with T."""
    exec = factor.executor
    v = Dense.from_numpy(exec, np.random.default_rng(0).standard_normal(factor.shape[0]), factor.dtype)
    y, r = v.empty_like(), v.clone()
    solver.apply(v, y)
    # r = v - T y
    factor.apply(-1.0, y, 1.0, r)
    norms = [v.compute_norm2(), r.compute_norm2()]
    v_norm, r_norm = (float(np.asarray(n)[0, 0]) for n in exec.to_host(*(n.values for n in norms)))
    error = r_norm / v_norm if v_norm else 0.0
    return error if np.isfinite(error) else np.inf


def tries_approximate_solves(exec) -> bool:
    """Whether the default tries approximate triangular solves on ``exec`` (its device's choice:
    a GPU, where launches and substitution levels cost most)."""
    return exec.device_choices().approximate_triangular_solves


def candidates(exec) -> list[tuple[str, Any, Any]]:
    """The default's approximate triangular solves for ``exec``, cheapest first, as (name,
    lower solver parameters, upper solver parameters); exact substitution comes after them
    (alone on a CPU device)."""
    if not tries_approximate_solves(exec):
        return []
    return ([(f"ISAI (sparsity power {p})", LowerIsai.build().with_sparsity_power(p),
              UpperIsai.build().with_sparsity_power(p)) for p in (1, 2, 3)]
            + [(f"{s} Jacobi sweeps", *_jacobi_sweeps(s)) for s in (2, 4, 8, 16)])


def _jacobi_sweeps(sweeps: int) -> tuple[Any, Any]:
    return (LowerTrs.build().with_algorithm("jacobi").with_num_jacobi_sweeps(sweeps),
            UpperTrs.build().with_algorithm("jacobi").with_num_jacobi_sweeps(sweeps))


def decided_sweeps(first: Csr, second: Csr) -> int | None:
    """The fewest Jacobi sweeps s <= :data:`MAX_DECIDED_SWEEPS` (at least 2) with q^s <=
    :data:`SWEEP_BOUND` for q the larger contraction bound of the two factors (the max-norm of
    D^-1 N, gk.core.solver.triangular.contraction_bound: a solve error of at most q^s); None where
    none is (factors not dominant enough to decide without trying). Both bounds in one read,
    kept with the factors' values for the Jacobi solvers made on them (:func:`jacobi_facts`)."""
    q = max(facts.bound for facts in jacobi_facts(*ilu_triangles(first, second)))
    for sweeps in range(2, MAX_DECIDED_SWEEPS + 1):
        if q ** sweeps <= SWEEP_BOUND:
            return sweeps
    return None


def _sweep_work(A: Csr) -> float:
    """sum_i n_i^2 for rows of n_i entries, what a ParILU sweep costs: from the row pointers
    (kept: the SpMV strategy reads them too), once per pattern (kept in A.cache)."""
    work = A.cache.get("pattern.ilu_sweep_work")
    if work is None:
        lengths = np.diff(A.host_row_ptrs()).astype(np.float64)
        work = A.cache["pattern.ilu_sweep_work"] = float(lengths @ lengths)
    return work


class Ilu(EnableBuild, LinOp):
    """The incomplete-LU preconditioner M = L U, applied as x = U^-1 (L^-1 b) (Ginkgo's
    ``preconditioner::Ilu``; SciPy's ``spilu`` as a LinearOperator).

    Use it with Gmres, Bicgstab or another solver for nonsymmetric systems (``M="ilu"`` in
    ``gk.linalg``); for a symmetric positive definite one :class:`Ic` keeps M symmetric for Cg.
    The defaults never raise where an incomplete factorization exists (the module docstring
    says how they choose).

    Parameters
    ----------
    factorization : factorization factory, default None (chosen)
        ``gk.factorization.Ilu`` (exact ILU(0)), ``ParIlu``, ``ParIlut``, ``Ilut``; None picks
        exact ILU(0) or ParILU by the matrix's size and row lengths.
    l_solver : solver factory, default None (chosen)
        The solver of L: ``gk.solver.LowerTrs`` (exact), its "jacobi" algorithm or
        ``gk.preconditioner.LowerIsai``; None picks by the device and the factors.
    u_solver : solver factory, default None (chosen)
        The solver of U, likewise (UpperTrs, UpperIsai).
    reverse_apply : bool, default False
        Ginkgo's ``reverse_apply``: solve with U first and then with L (M^-1 = L^-1 U^-1
        instead of U^-1 L^-1).

    Examples
    --------
    >>> M = gk.preconditioner.Ilu.build().with_factorization(gk.factorization.ParIlu.build())
    >>> solver = gk.solver.Gmres.build().with_preconditioner(M).on(exec).generate(A)
    >>> x, info = gk.linalg.gmres(A, b, M="ilu")                 # the same from SciPy's door
    """

    exact_factorization: type = ExactIlu  # Ic: the exact IC(0) and ParIc
    _decided: int | None = None  # the Jacobi sweeps decided by the factors' contraction bound, if so
    parallel_factorization: type = ParIlu

    @parameters
    class Parameters(Parameters):
        l_solver: Any = None
        u_solver: Any = None
        factorization: Any = None
        reverse_apply: bool = boolean()

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        fact = system_matrix
        if not isinstance(fact, Factorization):
            fact = self._factorize(system_matrix, exec)
        LinOp.__init__(self, exec, fact.shape, fact.dtype)
        self.factorization = fact
        first, second = (f.to_executor(exec) for f in fact.factors)
        # R and C^T of a permuting factorization (A[R][:, C] ~ L U): x = C^T U^-1 L^-1 R b
        self.permutations = None if fact.row_permutation is None else \
            (fact.row_permutation.to_executor(exec), fact.column_permutation.compute_inverse().to_executor(exec))
        self.l_solver, self.u_solver = self._solvers(first, second)
        self._tmp: list[Dense] | None = None
        self._generated_on_matrix = fact is not system_matrix  # (factorized here: update() may follow A)

    def update(self) -> bool:
        """Follow new values of the matrix it was generated on, written in place on its pattern
        (``A.update_values``): factorized again into the factors' own arrays (their patterns
        kept: ILU(0)/IC(0), exact or ParILU/ParIC as chosen at generation) and the triangular
        solves prepared again on them with the method chosen then (their level sets, ISAI
        patterns kept). Returns whether launches recorded with this preconditioner stay valid.
        NotImplementedError where that cannot be (generated on a factorization, a threshold
        or pivoting factorization, a solver without an update): generate it anew."""
        name = type(self).__name__
        if not self._generated_on_matrix:
            raise NotImplementedError(f"{name} was generated on a factorization, not on the matrix")
        self.factorization.update()
        if self._decided is not None:
            # sweeps decided by the factors' contraction bound: decided again on the new values,
            # so that an update applies what a fresh generate would (the solvers made anew where
            # the count changed: launches recorded with the old ones are then invalid)
            first, second = self.l_solver.system_matrix, self.u_solver.system_matrix
            if decided_sweeps(first, second) != self._decided:
                self.l_solver, self.u_solver = self._solvers(first, second)
                return False
        valid = True
        for solver in (self.l_solver, self.u_solver):  # (the L^H solve of Ic after the L solve it transposes)
            update = getattr(solver, "update", None)
            if update is None:
                raise NotImplementedError(f"{name}: its triangular solver {type(solver).__name__} has no values "
                                          f"update")
            valid &= bool(update())
        return valid

    def _factorize(self, system_matrix: LinOp, exec) -> Factorization:
        """The factorization parameter's, else the default's (see the module), on ``exec``."""
        name = type(self).__name__
        if self.parameters.factorization is not None:
            factory = as_factory(self.parameters.factorization, exec)
            if not issubclass(factory.parameters.product, Factorization):
                raise TypeError(f"the factorization parameter must build a factorization "
                                f"(gk.factorization.ParIlu.build(), ...), not {factory.parameters.product.__name__}")
            try:
                return factory.generate(system_matrix)
            except ValueError as err:
                A = system_csr(system_matrix, exec, name)  # bad input raises here, as it did above
                _log.warning("%s: the %s factorization failed (%s); the default factorization is used instead",
                             name, factory.parameters.product.__name__, err)
        # (its values' finiteness: checked by the factorization it is handed to)
        A = system_csr(system_matrix, exec, name, finite=False)
        exact = self.exact_factorization.build().on(exec)
        if A.nnz <= EXACT_ENTRIES or _sweep_work(A) > SWEEP_WORK * A.nnz:
            try:
                return exact.generate(A)
            except EliminationTooCostly as err:  # a pattern too costly to eliminate exactly: the sweeps then
                _log.info("%s: the exact factorization was refused (%s): %s's sweeps are used", name, err,
                          self.parallel_factorization.__name__)
        fact = self.parallel_factorization.build().on(exec).generate(A)
        if fact.converged:
            return fact
        try:
            result = exact.generate(A)
        except EliminationTooCostly as err:  # a pattern too costly to eliminate exactly: the sweeps' factors
            _log.info("%s: the %s sweeps did not settle (last relative change %.1e), and the exact factorization "
                      "was refused (%s): the sweeps' factors are used", name, self.parallel_factorization.__name__,
                      fact.change, err)
            return fact
        _log.info("%s: the %s sweeps did not settle (last relative change %.1e after %d sweeps): factorized "
                  "exactly (%s) instead", name, self.parallel_factorization.__name__, fact.change, fact.sweeps,
                  self.exact_factorization.__name__)
        return result

    def _solvers(self, first: Csr, second: Csr) -> tuple[LinOp, LinOp]:
        """The solvers of the two factors: those set, else the first of :func:`candidates` that
        solves both well enough, else the exact substitution."""
        exec, params = self.executor, self.parameters
        if params.l_solver is not None and params.u_solver is not None:
            return (as_factory(params.l_solver, exec).generate(first),
                    as_factory(params.u_solver, exec).generate(second))
        sweeps = decided_sweeps(first, second) if tries_approximate_solves(exec) else None
        self._decided = sweeps  # (update() decides again on the new factors)
        if sweeps is not None:  # dominant factors: Jacobi sweeps, no trial solves
            _log.debug("%s: the factors are applied by %d Jacobi sweeps (decided by their contraction bound)",
                       type(self).__name__, sweeps)
            return self._pair(*_jacobi_sweeps(sweeps), first, second)
        rejected = []
        for name, l_params, u_params in candidates(exec):
            try:
                solvers = self._pair(l_params, u_params, first, second)
            except ValueError as err:  # ISAI beyond its row limit, a singular small system
                rejected.append(f"{name} cannot be built ({str(err).split(': ', 1)[-1].split(' (')[0]})")
                continue
            error = max(solve_error(solvers[0], first), solve_error(solvers[1], second))
            if error <= SOLVE_QUALITY:
                self._report(name, rejected)
                return solvers
            rejected.append(f"{name} solves with an error of {error:.2g}")
        self._report("exact substitution (level-scheduled)", rejected)
        return self._pair(LowerTrs.build(), UpperTrs.build(), first, second)

    def _report(self, chosen: str, rejected: list[str]) -> None:
        """The one logging line of the default's choice of triangular solves."""
        if rejected:
            _log.info("%s: the factors are applied by %s: %s (more than %g is too inexact)", type(self).__name__,
                      chosen, "; ".join(rejected), SOLVE_QUALITY)
        else:
            _log.debug("%s: the factors are applied by %s", type(self).__name__, chosen)

    def _pair(self, l_params, u_params, first: Csr, second: Csr) -> tuple[LinOp, LinOp]:
        """The solvers of both factors from the parameters given, where set, else these."""
        p, exec = self.parameters, self.executor
        return (as_factory(p.l_solver or l_params, exec).generate(first),
                as_factory(p.u_solver or u_params, exec).generate(second))

    def transpose(self) -> "Ilu":
        """M^T = L^-T U^-T (Ginkgo's Transposable): the solvers transposed, in the other order."""
        return self._transposed("transpose")

    def conj_transpose(self) -> "Ilu":
        """M^H = L^-H U^-H (M^T for real values): the solvers conjugate-transposed, in the other
        order. Bicg uses it for its shadow system."""
        return self._transposed("conj_transpose")

    def _transposed(self, method: str) -> "Ilu":
        for solver in (self.l_solver, self.u_solver):
            if not hasattr(solver, method):
                raise TypeError(f"{type(self).__name__}.{method}() needs the {method}() of its solvers, "
                                f"which a {type(solver).__name__} does not have")
        out = copy.copy(self)
        out._loggers = []
        # x = L^-H (U^-H b): U's solver first (with permutations: R^T L^-H U^-H C b)
        out.l_solver, out.u_solver = getattr(self.u_solver, method)(), getattr(self.l_solver, method)()
        if self.permutations is not None:
            out.permutations = tuple(getattr(p, method)() for p in reversed(self.permutations))
        out._tmp = None
        out._generated_on_matrix = False  # (a transposed copy: no values update)
        return out

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if self._tmp is None or self._tmp[0].shape != b.shape:
            self._tmp = [b.empty_like() for _ in range(1 if self.permutations is None else 2)]
        # (reverse_apply, Ginkgo's: the U solve first, then the L solve)
        first, second = (self.u_solver, self.l_solver) if self.parameters.reverse_apply else \
            (self.l_solver, self.u_solver)
        if self.permutations is None:
            # y = L^-1 b;  x = U^-1 y
            first.apply(b, self._tmp[0])
            second.apply(self._tmp[0], x)
            return
        row, inverse_column = self.permutations
        t, y = self._tmp
        # t = R b;  y = L^-1 t;  t = U^-1 y;  x = C^T t
        row.apply(b, t)
        first.apply(t, y)
        second.apply(y, t)
        inverse_column.apply(t, x)
