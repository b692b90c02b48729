"""Pgm: parallel graph match aggregation, Ginkgo's ``multigrid::Pgm`` (from AmgX's size-2 selector).

One pass pairs rows: each unaggregated row picks its strongest unaggregated neighbour by the
weight (|a_ij| + |a_ji|) / 2 / max(|a_ii|, |a_jj|) (a product with 1 / |a_ii| of each row),
rows that pick each other form an aggregate, and a row whose neighbours are all aggregated
joins its strongest neighbour's aggregate; this repeats up to ``max_iterations`` times, until fewer than ``max_unassigned_ratio`` of the rows
are left or a sweep matches none, and the rows left over join their strongest aggregated
neighbour (or stay alone). ``aggregation_passes`` passes, each on the coarse matrix of the one
before (AmgX's multi-pairwise selector), give aggregates of up to 2^passes rows (about 4.7 rows
in 2D and 3D with the default 2, so that a level has about a fifth of the rows of the one above).

The prolongation P is piecewise constant (P_iI = 1 where row i is in aggregate I), the
restriction R = P^T, and the coarse matrix the Galerkin product R A P (coarse entry (I, J) is
the sum of a_ij over i in I and j in J) divided by ``over_interp`` (alpha, amgcl's
over-interpolation: every coarse correction is scaled by alpha, which makes up for the energy
a piecewise constant P misses; 1.5 takes W-cycle CG on 2D Poisson from 30 to 18 iterations).
Ginkgo's pgm is ``aggregation_passes`` 1 and ``over_interp`` 1.

Where it runs: every step is a kernel on the executor. A pass is the weights (with the first
sweep's choices), the matching sweeps, the numbering of the aggregates with their rows (one
prefix sum of per-aggregate counts) and the Galerkin product (one work-item per aggregate
gathers the entries of its rows by coarse column), then the coarse matrix packed. The host
reads once per pass: the whole pass is enqueued as if FIRST_SWEEPS matching sweeps finished
the matching (each sweep stops itself on the device once the matching is done, so some may do
nothing), and one read brings the matching's state (was the guess right? if not, rare, the
pass runs again with all sweeps), the sizes to allocate (aggregates, coarse entries) and the
flags of the rare cases that use the host instead, where a device version would not pay: a matrix whose pattern
is not symmetric is matched on the pattern of (|A| + |A^T|) / 2, made with SciPy; and the rows
of an aggregate of more than a few hundred rows (a star graph) are ordered with NumPy.

The phases stay apart for what builds on them: the aggregation (symbolic: ``agg``,
``agg_ptrs``, ``agg_rows``) and the product (``multigrid.pgm.compute_coarse`` and ``pack``, a
function of A and the aggregation only), so that new values on the same pattern need only the
products again.

Differences from Ginkgo: ties between equal weights are broken by a hash of the edge, the same
from both of its rows, where Ginkgo takes the larger column (which, on a uniform grid, points
every row at its next one, so that one pair matches per sweep); entries of weight 0 (stored
zeros) are not neighbours; ``with_deterministic(True)`` gives the same aggregates and coarse
matrix on every device and run (every kernel then reads only values from before it ran, and
coarse entries are summed in a fixed order); without it, the rows left over after the sweeps
are assigned in place on the device, where one may join an aggregate that another joined in
the same step.
"""
from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.checks import check_system_matrix
from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, boolean, integer, number, one_of, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense, overwrite
from ginkpy.core.multigrid.smoothed_aggregation import SmoothedProducts, piecewise_constant


FIRST_SWEEPS = 4  # matching sweeps a pass enqueues before its one read (3-4 usually do; else all of them)


def matching_stopped(state: Any, sweep: int) -> bool:
    """Whether the matching stopped before sweep ``sweep`` (Ginkgo's rule, and no progress):
    after the sweep before it no row, fewer than the threshold state[0], or as many as before
    that sweep were left unaggregated. The matching state is [threshold, n, rows aggregated by
    sweep 0, by sweep 1, ...]; the device's sweeps read it to stop themselves."""
    if sweep == 0:
        return False
    n = int(state[1])
    left = n - int(np.sum(state[2:2 + sweep]))
    before = n - int(np.sum(state[2:1 + sweep]))
    return left == 0 or left == before or left < int(state[0])


class Pgm(EnableBuild):
    """One multigrid level made by parallel graph match aggregation of ``fine_op`` (Ginkgo's
    ``multigrid::Pgm``; the module docstring has the algorithm).

    The default coarsening of ``gk.solver.Multigrid`` (``with_mg_level``); generated on its own
    it gives one level: ``coarse_op`` is the Galerkin product R A P (a Csr on the same
    executor), ``agg`` the aggregate of each fine row (a device array; :meth:`aggregates`
    gives a host copy), ``restrict_op`` and ``prolong_op`` R and P as Csr matrices (made when
    first asked for).

    Parameters
    ----------
    max_iterations : int, default 15
        Matching sweeps per pass at most.
    max_unassigned_ratio : float, default 0.05
        The sweeps stop once fewer than this fraction of the rows is left unmatched.
    deterministic : bool, default False
        True: the same aggregates and coarse matrix on every device and run (the rows left
        over are assigned from a copy, coarse entries summed in a fixed order); False assigns
        them in place, a little faster.
    aggregation_passes : int, default 2
        Pairwise passes, each on the coarse matrix of the one before: aggregates of up to
        2^passes rows (Ginkgo's pgm: 1).
    over_interp : float, default 1.5
        The coarse matrix is divided by it (over-interpolation; Ginkgo's pgm: 1); not used
        with ``prolongation_relax``.
    prolongation_relax : float, default 0 (piecewise constant P)
        w > 0: smoothed aggregation, P = (I - w / rho D^-1 A) P_t (PyAMG's SA: 4/3), R = P^H
        and the coarse matrix R A P made on the executor by sparse products (see ``smoothed``
        and core/multigrid/smoothed_aggregation.py).
    skip_sorting : bool, default False
        Ginkgo's (ginkpy's Csr is always sorted): accepted, it changes nothing.

    Examples
    --------
    >>> level = gk.multigrid.Pgm.build().with_aggregation_passes(1).on(exec).generate(A)
    >>> level.coarse_op.shape, level.aggregates()[:10]
    >>> amg = gk.solver.Multigrid.build().with_mg_level(gk.multigrid.Pgm.build().with_over_interp(1.0))
    """

    @parameters
    class Parameters(Parameters):
        max_iterations: int = attrs.field(default=15, validator=integer(min=0))
        max_unassigned_ratio: float = attrs.field(default=0.05, validator=number(min=0, max=1))
        deterministic: bool = attrs.field(default=False, validator=one_of(True, False))
        aggregation_passes: int = attrs.field(default=2, validator=integer(min=1, max=4))
        over_interp: float = attrs.field(default=1.5, validator=number(min=0, max=2, min_open=True))
        prolongation_relax: float = attrs.field(default=0.0, validator=number(min=0, max=2))
        skip_sorting: bool = boolean()

    def __init__(self, factory: Factory, system_matrix: LinOp, checked: bool = False) -> None:
        """``checked``: A is a Csr on the executor already known to be square and finite (as
        Multigrid's levels are), so that the finiteness check, a pass over A, is skipped."""
        super().__init__(factory)
        exec = factory.executor
        A = system_matrix if checked else check_system_matrix(as_csr(system_matrix), exec,
                                                               "matrix of the multigrid level")
        if A.shape[0] == 0:
            raise ValueError("Pgm: the matrix is empty (0 x 0), there is nothing to coarsen")
        self.executor = exec
        self.fine_op = A
        passes = self.parameters.aggregation_passes
        relax = self.parameters.prolongation_relax
        aggregation, coarse = None, A
        for p in range(passes):
            # (smoothed aggregation makes its own R A P: the last pass's would be dropped)
            aggregation, coarse = self._pass(coarse, aggregation, last=p == passes - 1,
                                             galerkin=not (relax > 0 and p == passes - 1))
            if coarse is None or coarse.shape[0] <= 1:
                break
        self.agg, self.agg_ptrs, self.agg_rows = aggregation
        self.num_aggregates = self.agg_ptrs.shape[0] - 1
        self.coarse_op = coarse
        self._restrict_op = self._prolong_op = None
        #: whether P is smoothed (prolong_op and restrict_op general sparse matrices, which the
        #: multigrid cycle applies as such) rather than piecewise constant
        self.smoothed = relax > 0 and (coarse is None or self.num_aggregates > 1)
        if self.smoothed:
            self._smooth()
        self._product_plan = None  # where R A P writes each aggregate's row, for update()

    def _smooth(self) -> None:
        """Smoothed aggregation: P = (I - w / rho D^-1 A) P_t, R = P^T and R A P, made on the
        executor with sparse products (core/multigrid/smoothed_aggregation.py), replacing the
        piecewise constant coarse matrix of the passes."""
        self._sa_products = SmoothedProducts(self.fine_op, self.agg, self.num_aggregates,
                                          self.parameters.prolongation_relax)
        self._prolong_op, self._restrict_op = self._sa_products.prolong, self._sa_products.restrict
        self.coarse_op = self._sa_products.coarse

    def update(self) -> None:
        """The coarse matrix R A P again from new values of the fine matrix on the same
        sparsity pattern (written in place: ``A.update_values``), the aggregation kept (AmgX's
        structure reuse): only the Galerkin product runs (``multigrid.pgm.compute_coarse`` and
        ``pack``, for all passes at once), and its values go into ``coarse_op``'s own array.
        The first update finds where each aggregate's coarse row is made (one read of the
        aggregates; later ones read nothing). A smoothed aggregation computes its P, R and
        R A P again into their arrays (their patterns are structural: kept), reading nothing."""
        exec, A, m = self.executor, self.fine_op, self.num_aggregates
        if self.smoothed:
            # P, R and R A P: the products' numeric halves into their arrays
            self._sa_products.update()
            return
        if self._product_plan is None:
            # the entries of A in the rows of the aggregates before each (the product's slots)
            agg, row_ptrs = exec.to_host(self.agg, A.row_ptrs)
            bounds = np.zeros(m + 1, dtype=np.int32)
            np.cumsum(np.bincount(agg, weights=np.diff(row_ptrs), minlength=m).astype(np.int64), out=bounds[1:])
            self._product_plan = (exec.from_host(bounds), exec.from_host(np.array([m, A.nnz, 0], dtype=np.int32)))
        bounds, sizes = self._product_plan
        # R A P: coarse entry (I, J) sums a_ij over i in I, j in J; divided by alpha
        product = exec.run("multigrid.pgm.compute_coarse", A, self.agg, self.agg_ptrs, self.agg_rows, bounds, sizes)
        _, _, values = exec.run("multigrid.pgm.pack", *product[:-1], m, self.coarse_op.nnz,
                                1 / self.parameters.over_interp)
        overwrite(exec, self.coarse_op.values, values)

    def _pass(self, A: Csr, before: tuple | None, last: bool, galerkin: bool = True) -> tuple[tuple, Csr | None]:
        """One aggregation pass on A (the fine matrix, or the coarse matrix of the passes
        ``before``: their aggregates, pointers and rows): the aggregates of the fine rows (all
        passes so far as one) and the coarse matrix (None without ``galerkin``: the aggregates
        only). One blocking read (``_speculate``): the matching's state, the flags and the sizes
        of the aggregates and of the coarse matrix together."""
        exec, params = self.executor, self.parameters
        graph, sweeps = A, FIRST_SWEEPS
        while True:
            agg, state, flags, fine, product, bounds, sizes, counts = self._speculate(A, graph, before, sweeps,
                                                                                      galerkin)
            host_state, host_flags = counts[0], counts[1]
            if host_flags[0] and graph is A:
                # a pattern that is not symmetric: match on that of (|A| + |A^T|) / 2, made on the host
                arrays = exec.host.run("multigrid.pgm.symmetrize", A.clone(exec.host))
                graph = Csr(exec, A.shape, *(exec.from_host(v) for v in arrays))
                continue
            if sweeps < params.max_iterations and not matching_stopped(host_state, sweeps):
                sweeps = params.max_iterations  # (rare) all sweeps: each stops itself once the matching is done
                continue
            break
        m, too_large = int(counts[2][0]), int(host_flags[1])
        nnz = None if product is None else int(counts[3][0])
        if too_large:
            # an aggregate too large for a device to sort its rows: they are ordered on the host,
            # and the product made again from them (its sums in their order)
            host, composed = exec.host, fine[0]
            agg_ptrs, agg_rows = (exec.from_host(v) for v in host.run("multigrid.pgm.sort_aggregates",
                                                                      exec.to_host(agg), m))
            if product is not None:
                product = exec.run("multigrid.pgm.compute_coarse", A, agg, agg_ptrs, agg_rows, bounds, sizes)
                nnz = int(exec.to_host(product[-1])[0])
            fine = (agg, agg_ptrs, agg_rows)
            if before is not None:
                fine = (composed, *(exec.from_host(v) for v in host.run("multigrid.pgm.sort_aggregates",
                                                              exec.to_host(composed), m)))
        if product is None:
            return (fine[0], fine[1][:m + 1], fine[2]), None
        # A_c / alpha on the last pass: every correction from this level scaled by alpha
        scale = 1 / self.parameters.over_interp if last or m <= 1 else 1.0
        coarse = Csr(exec, (m, m), *exec.run("multigrid.pgm.pack", *product[:-1], m, nnz, scale))
        return (fine[0], fine[1][:m + 1], fine[2]), coarse

    def _speculate(self, A: Csr, graph: Csr, before: tuple | None, sweeps: int, galerkin: bool) -> tuple:
        """A pass enqueued whole, as if ``sweeps`` matching sweeps of ``graph`` finished the
        matching (FIRST_SWEEPS usually do: each stops itself on the device once the matching is
        done), then read once: (agg, state, flags, fine, product, bounds, sizes, host counts:
        state, flags, sizes and the coarse entries). The caller checks the guess (the state: the
        matching stopped; the flags: the pattern symmetric) and runs the pass again otherwise.
        The rows left over join their strongest aggregated neighbour (nothing where none is left)."""
        exec, params = self.executor, self.parameters
        n = A.shape[0]
        weights, agg, state, flags = self._match(A, graph, sweeps)
        intermediate = exec.alloc((n,), INDEX_DTYPE) if params.deterministic else None
        exec.run("multigrid.pgm.assign_to_exist_agg", graph, weights, agg, intermediate)
        # the aggregates numbered, their rows, and (symbolic and numeric at once) R A P
        member_ptrs = None if before is None else before[1]
        agg_ptrs, agg_rows, bounds, fine_ptrs, sizes = exec.run("multigrid.pgm.find_aggregates", A, agg, member_ptrs,
                                                                flags)
        product = exec.run("multigrid.pgm.compute_coarse", A, agg, agg_ptrs, agg_rows, bounds, sizes) \
            if galerkin else None
        fine = (agg, agg_ptrs, agg_rows)
        if before is not None:
            # the fine rows' aggregates after the passes so far and this one (a new array: a pass
            # run again composes from the aggregates before it again)
            fine_agg, rows = exec.run("multigrid.pgm.compose", *before, agg, agg_ptrs, agg_rows, fine_ptrs, sizes,
                                      flags)
            fine = (fine_agg, fine_ptrs, rows)
        counts = exec.to_host(state, flags, sizes, *(() if product is None else (product[-1],)))
        return agg, state, flags, fine, product, bounds, sizes, counts

    def _match(self, A: Csr, graph: Csr, sweeps: int) -> tuple[Any, Any, Any, Any]:
        """``sweeps`` matching sweeps of ``graph`` (A, or the symmetric pattern made from it),
        enqueued without a read (each stops itself on the device once the matching is done: see
        matching_stopped): its weights, the aggregates (-1: not aggregated), the matching state
        and the pass's flags (not symmetric, an aggregate too large to sort)."""
        exec, params = self.executor, self.parameters
        n = A.shape[0]
        threshold = math.ceil(params.max_unassigned_ratio * n)
        agg, state, flags = exec.run("multigrid.pgm.start_pass", n, threshold, params.max_iterations)
        scale = exec.run("multigrid.pgm.diagonal_scale", A)
        # the edge weights are real, also for complex values; the first sweep's choices with them
        strongest_neighbor = exec.alloc((n,), INDEX_DTYPE)
        weights = exec.alloc((graph.nnz,), real_dtype(A.dtype))
        exec.run("multigrid.pgm.compute_weights", graph, scale, weights, flags, strongest_neighbor)
        for s in range(min(sweeps, params.max_iterations)):
            if s > 0:
                exec.run("multigrid.pgm.find_strongest_neighbor", graph, weights, agg, strongest_neighbor, state, s)
            exec.run("multigrid.pgm.match_edge", strongest_neighbor, agg, state, s)
        return weights, agg, state, flags

    def aggregates(self) -> np.ndarray:
        """The aggregate of each fine row, a host copy."""
        return self.executor.to_host(self.agg)

    @property
    def prolong_op(self) -> Csr:
        """P: n x m, P_iI = 1 where fine row i is in aggregate I."""
        if self._prolong_op is None:
            self._prolong_op = piecewise_constant(self.fine_op, self.agg, self.num_aggregates)
        return self._prolong_op

    @property
    def restrict_op(self) -> Csr:
        """R = P^T: m x n."""
        if self._restrict_op is None:
            self._restrict_op = self.prolong_op.transpose()
        return self._restrict_op

    def __repr__(self) -> str:
        return (f"Pgm({self.fine_op.shape[0]} rows -> {self.num_aggregates} aggregates, "
                f"{self.executor!r})")


def default_levels(choice: Any, exec: Any, A: Any) -> list:
    """Multigrid's default mg_level factories for the device's ``choice`` (a CycleChoice) and
    the system matrix A: Pgm, smoothed (``choice.prolongation_relax`` > 0) on the
    ``choice.smoothed_levels`` finest levels (None: every level) where the device chose so,
    piecewise constant below. Smoothed levels aggregate with round(log2(mean row length of A))
    pairwise passes, 1 to 4 (aggregates about a row's neighbourhood, as PyAMG's: 2 passes for
    a 2D 5-point stencil, 3 for a 3D 7-point one; 2 passes in 3D give an operator complexity
    near 6)."""
    plain = Pgm.build().on(exec)
    if choice.prolongation_relax <= 0 or choice.smoothed_levels == 0:
        return [plain]
    passes = min(4, max(1, round(math.log2(max(A.nnz / max(A.shape[0], 1), 1.0)))))
    smoothed = Pgm.build().with_prolongation_relax(choice.prolongation_relax).with_aggregation_passes(passes).on(exec)
    return [smoothed] if choice.smoothed_levels is None else [smoothed] * choice.smoothed_levels + [plain]


def as_csr(A: Any) -> Any:
    """A as a Csr where it is another matrix format (Dense, Ell, ...); anything else as it is,
    for check_system_matrix to judge."""
    if isinstance(A, Dense):
        return Csr.from_dense(A)
    if isinstance(A, LinOp) and not isinstance(A, Csr) and hasattr(A, "to_csr"):
        return A.to_csr()
    return A
