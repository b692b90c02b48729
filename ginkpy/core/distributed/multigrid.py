"""Multigrid of a distributed matrix: algebraic multigrid whose hierarchy spans the ranks, what
``gk.solver.Multigrid`` generates from a ``gk.distributed.Matrix`` (``M="amg"``).

Levels (Ginkgo's distributed Pgm): each rank aggregates its own rows (``gk.multigrid.Pgm`` on
its local block, on the device, so no aggregate crosses a rank boundary), and the coarse matrix
is the global Galerkin product R A P: its local block is the local Pgm's coarse matrix, its
non-local block the non-local entries of A summed by (aggregate of the row, aggregate of the
column at its owner), the latter learnt in one exchange of aggregate numbers. The coarse rows
stay with the rank whose rows they aggregate, so restriction and prolongation need no
communication; a level costs the halo exchanges of its smoothing sweeps and residual.

Once a level has at most ``gather_rows`` rows (all ranks together) it is gathered onto every
rank and the rest of the hierarchy is a ``gk.solver.Multigrid`` of that matrix on each rank's
device, which every rank runs alike (redundantly): one gather of the coarse right-hand side
per cycle (a non-blocking allgather) instead of exchanges on levels of a few thousand rows.

The cycle on a distributed level is the single-device one with the built-in weighted Jacobi
smoother: x = omega D^-1 b from 0, then b_c = P^T (b - A x) (the local product while x's ghost
rows travel, then the non-local part, P^T A_non_local, added on the coarse rows that have one),
the coarse correction, x = x + P e, and sweeps x = x + omega D^-1 (b - A x) (the local sweep
while the ghost rows travel, then -omega D^-1 A_non_local x_ghost on the boundary rows). omega
is scaled by 2 / rho where Gershgorin's bound rho (of all ranks' rows, non-local entries
included) exceeds 2, as on one device.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.factory import Factory
from ginkpy.core.base.types import real_dtype
from ginkpy.core.distributed.collective import raise_together
from ginkpy.core.distributed.gather import Gather
from ginkpy.core.distributed.matrix import Matrix
from ginkpy.core.distributed.partition import Partition
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense, as_scalar
from ginkpy.core.multigrid.pgm import Pgm
from ginkpy.core.solver.multigrid import Multigrid as SerialMultigrid
from ginkpy.core.solver.solver_base import IterativeSolver

GATHER_ROWS = 50_000  # default gather_rows: coarse levels gathered onto every rank at this size


@attrs.define(eq=False)
class Coarsening:
    """A distributed matrix's rows aggregated on each rank: the local Pgm level (None on a rank
    without rows), the aggregate of each row and the rows of each aggregate (device arrays),
    P^T A_non_local on the coarse rows that have non-local entries (and those rows), the coarse
    matrix R A P over the ranks, and the nonzeros of all ranks' rows of the fine matrix."""

    matrix: Matrix
    pgm: Pgm | None
    agg: Any
    agg_ptrs: Any
    agg_rows: Any
    restricted: Csr
    restricted_rows: Any
    coarse: Matrix
    nnz: int


def aggregate(A: Matrix, factory: Factory) -> Coarsening:
    """A's rows aggregated on each rank by the Pgm ``factory``, and the coarse matrix R A P over
    the ranks (see the module). Collective."""
    exec, comm = A.executor, A.comm
    if factory.parameters.prolongation_relax > 0:
        raise ValueError("Pgm's prolongation_relax (smoothed aggregation) is not available on a gk.distributed "
                         "Matrix: leave it at 0 there (the gathered levels take any mg_level)")
    n = A.shape[0]
    pgm = None
    if n:
        pgm = factory.generate(A.local_matrix, checked=True)
        agg, agg_ptrs, agg_rows, local_coarse = pgm.agg, pgm.agg_ptrs, pgm.agg_rows, pgm.coarse_op
    else:  # a rank without rows has no aggregates
        agg = agg_rows = exec.alloc((0,), INDEX_DTYPE)
        agg_ptrs = exec.from_host(np.zeros(1, INDEX_DTYPE))
        local_coarse = Csr.from_scipy(exec, sp.csr_matrix((0, 0)), A.dtype)
    m = local_coarse.shape[0]
    coarse_partition = Partition.from_local_sizes(comm, m)
    first = int(coarse_partition.offsets[comm.rank])
    # the aggregate (global coarse row) of each ghost row, from its owner
    agg_host = exec.to_host(agg).astype(np.int64) if n else np.zeros(0, np.int64)
    ghost_agg = A.halo.exchange_host(agg_host + first)
    # the non-local entries (i, g, a_ig) on the coarse rows: P^T A_non_local (for the residual's
    # restriction) and, by the columns' aggregates, the coarse non-local block
    nl = A.non_local.to_scipy().tocoo()
    coarse_rows = agg_host[A.non_local_rows[nl.row]]
    restricted, restricted_rows = _compressed(
        exec, sp.csr_matrix((nl.data, (coarse_rows, nl.col)), shape=(m, A.ghost_columns.size)), A.dtype)
    scale = 1 / factory.parameters.over_interp  # as Pgm's coarse matrix: every correction scaled by alpha
    non_local = sp.csr_matrix((scale * nl.data, (coarse_rows, ghost_agg[nl.col])),
                              shape=(m, coarse_partition.global_size))
    host = exec.host
    _, non_local_arrays, ghost_columns, requested, receive_counts = host.run(
        "distributed.matrix.separate_local_nonlocal", Csr.from_scipy(host, non_local, A.dtype),
        coarse_partition.offsets, comm.rank)
    coarse = Matrix._from_blocks(exec, comm, coarse_partition, local_coarse, non_local_arrays, ghost_columns,
                                 requested, receive_counts)
    nnz = comm.allreduce(A.local_matrix.nnz + A.non_local.nnz)
    return Coarsening(A, pgm, agg, agg_ptrs, agg_rows, restricted, restricted_rows, coarse, nnz)


@attrs.define(eq=False)
class Level:
    """A distributed level of the hierarchy: its aggregation and the smoother's D^-1 and omega."""

    aggregation: Coarsening
    inv_diag: Dense
    omega: float

    @property
    def matrix(self) -> Matrix:
        return self.aggregation.matrix

    @property
    def coarse(self) -> Matrix:
        return self.aggregation.coarse


class Multigrid(SerialMultigrid, variant="distributed"):
    """``gk.solver.Multigrid`` of a ``gk.distributed.Matrix`` (see the module): generated by
    ``gk.solver.Multigrid.build()...generate(A)`` when A is distributed. Takes Multigrid's
    parameters (the built-in Jacobi smoother on the distributed levels: ``smoother_iters``,
    ``smoother_relax``; ``mg_level`` Pgm factories; ``cycle``; ``max_levels``) and
    ``gather_rows`` (default 50000): the levels from that size down run on every rank alike."""

    def __init__(self, factory: Factory, system_matrix: Matrix) -> None:
        params = factory.parameters
        if params.preconditioner is not None:
            raise ValueError("Multigrid has no preconditioner: its smoothers play that part "
                             "(with_pre_smoother, with_post_smoother)")
        if params.pre_smoother or params.post_smoother or params.mid_smoother:
            raise ValueError("Multigrid of a distributed matrix smooths with its built-in Jacobi sweeps "
                             "(with_smoother_iters, with_smoother_relax): leave out with_pre_smoother, "
                             "with_post_smoother and with_mid_smoother")
        IterativeSolver.__init__(self, factory, system_matrix)
        self._choose()
        self.gather_rows = GATHER_ROWS if params.gather_rows is None else params.gather_rows
        if system_matrix.comm.size == 1:  # one rank: the single-device hierarchy on its block
            self.gather_rows = system_matrix.global_shape[0]
        self.dlevels = self._coarsen_distributed(system_matrix)
        self._gather(self.dlevels[-1].coarse if self.dlevels else system_matrix, factory)
        self._dwork: dict[int, list] = {}

    # -- generation -----------------------------------------------------------------------------
    def _coarsen_distributed(self, A: Matrix) -> list[Level]:
        params = self.parameters
        # (a device's default of smoothed aggregation stays on the gathered levels: the ranks
        # aggregate with piecewise constant transfers)
        factories = self._level_factories() if params.mg_level else [Pgm.build().on(self.executor)]
        levels: list[Level] = []
        while len(levels) + 1 < params.max_levels and A.global_shape[0] > self.gather_rows:
            level = self._level(A, factories[min(len(levels), len(factories) - 1)])
            if level.coarse.global_shape[0] >= A.global_shape[0]:
                break  # no coarsening (no couplings left): gathered from here
            levels.append(level)
            A = level.coarse
        return levels

    def _level(self, A: Matrix, factory: Factory) -> Level:
        """A's level: its rows aggregated on each rank, the coarse matrix over the ranks, D^-1."""
        return Level(aggregate(A, factory), *self._jacobi(A))

    def _jacobi(self, A: Matrix) -> tuple[Dense, float]:
        """D^-1 of A's rows and omega: the relaxation scaled down where Gershgorin's bound rho
        on the eigenvalues of D^-1 A (over every rank's rows, non-local entries included)
        exceeds 2. A zero diagonal entry on any rank raises on every rank."""
        exec, n = self.executor, A.shape[0]
        inv_diag = Dense.empty(exec, (n, 1), A.dtype)
        rho, error = 0.0, None
        if n:
            first_zero, bounds = exec.run("components.relaxation.jacobi_setup", A.local_matrix, inv_diag)
            boundary = exec.alloc((max(A.non_local.shape[0], 1),), real_dtype(A.dtype))
            exec.run("distributed.matrix.row_bounds", A.local_matrix, A.non_local, A._non_local_rows, inv_diag,
                     boundary)
            first_zero, bounds, boundary = exec.to_host(first_zero, bounds, boundary)
            row = int(first_zero[0])
            if row < n:
                error = (f"Multigrid's Jacobi smoother: the diagonal entry of row "
                         f"{A.partition.range(A.comm.rank)[0] + row} of a level (of {A.global_shape[0]} rows) is "
                         f"zero or not stored, so D^-1 does not exist; reorder the matrix")
            rho = max(float(np.max(bounds, initial=0.0)), float(np.max(boundary[:A.non_local.shape[0]], initial=0.0)))
        raise_together(A.comm, error)
        rho = float(A.reduce_max(np.array([rho]))[0])
        omega = self.parameters.smoother_relax * (min(1.0, 2 / rho) if rho > 0 else 1.0)
        return inv_diag, omega

    def _gather(self, A: Matrix, factory: Factory) -> None:
        """The rest of the hierarchy from A on: A gathered onto every rank, a Multigrid of it there."""
        exec, comm = self.executor, A.comm
        if comm.size == 1:  # nothing to gather: the local block is the whole matrix
            whole = A.local_matrix
        else:
            first = A.partition.range(comm.rank)[0]
            local, nl = A.local_matrix.to_scipy().tocoo(), A.non_local.to_scipy().tocoo()
            mine = (np.concatenate([local.row, A.non_local_rows[nl.row]]) + first,
                    np.concatenate([local.col + first, A.ghost_columns[nl.col]]), np.concatenate([local.data, nl.data]))
            parts = comm.allgather(mine)
            n = A.global_shape[0]
            rows, cols, values = (np.concatenate([p[i] for p in parts]) for i in range(3))
            whole = Csr.from_scipy(exec, sp.csr_matrix((values, (rows, cols)), shape=(n, n)), A.dtype)
        params = attrs.evolve(factory.parameters, criteria=(), default_initial_guess="zero",
                              max_levels=max(1, self.parameters.max_levels - len(self.dlevels)))
        serial = params.on(exec).generate(whole)
        serial.inner = True
        self.gathered, self.gathered_matrix = serial, A
        self.gather = Gather(exec, comm, A.partition) if comm.size > 1 else None

    # -- the hierarchy ----------------------------------------------------------------------------
    @property
    def num_levels(self) -> int:
        """Levels including the finest and the coarsest (the gathered ones included)."""
        return len(self.dlevels) + self.gathered.num_levels

    def __repr__(self) -> str:
        lines = [f"Multigrid of a distributed matrix over {self.system_matrix.comm.size} ranks "
                 f"({self.cycle.upper()}-cycle, Jacobi {self.smoother_iters} sweep(s) on the distributed levels)",
                 "  level   unknowns     nonzeros  (all ranks)"]
        for l, level in enumerate(self.dlevels):
            lines.append(f"  {l:>4d} {level.matrix.global_shape[0]:>10d} {level.aggregation.nnz:>12d}")
        lines.append(f"Gathered onto every rank from level {len(self.dlevels)} "
                     f"({self.gathered_matrix.global_shape[0]} rows):")
        lines.append(repr(self.gathered))
        return "\n".join(lines)

    # -- apply ------------------------------------------------------------------------------------
    def _work(self, k: int) -> list:
        """Per distributed level: a spare n_l x k vector, and the b and x of the level below
        (the last: the gathered level's, N x k whole vectors beside them)."""
        work = self._dwork.get(k)
        if work is None:
            exec, dtype = self.executor, self.dtype
            work = []
            for level in self.dlevels:
                m = level.coarse.shape[0]
                work.append((Dense.empty(exec, (level.matrix.shape[0], k), dtype), Dense.zeros(exec, (m, k), dtype),
                             Dense.zeros(exec, (m, k), dtype)))
            n = self.gathered_matrix.global_shape[0]
            work.append(None if self.gather is None else (Dense.zeros(exec, (n, k), dtype),
                                                          Dense.zeros(exec, (n, k), dtype)))
            self._dwork[k] = work
        return work

    def _cycle(self, l: int, b: Dense, x: Dense, zero_guess: bool, kind: str) -> None:
        """One cycle of ``kind`` on level l for A_l x = b (this rank's rows), from x (or from 0)."""
        work = self._work(b.shape[1])
        if l == len(self.dlevels):
            self._gathered_cycle(b, x, work[-1])
            return
        exec, level = self.executor, self.dlevels[l]
        spare, coarse_b, coarse_x = work[l]
        iters, omega, n = self.smoother_iters, level.omega, level.matrix.shape[0]
        pre = iters - 1 if zero_guess else iters
        current, other = (x, spare) if (pre + iters) % 2 == 0 else (spare, x)
        # pre-smoothing: x = omega D^-1 b from 0, sweeps x = x + omega D^-1 (b - A x)
        if zero_guess:
            if n:
                exec.run("components.relaxation.relax_first", omega, level.inv_diag, b, current, None)
        elif current is not x:
            current.copy_from(x)
        for _ in range(pre):
            self._sweep(level, b, current, other)
            current, other = other, current
        # b_c = P^T (b - A x)
        self._restrict(level, b, current, coarse_b)
        # the coarse correction (twice for W and F, the second from the first's result)
        self._cycle(l + 1, coarse_b, coarse_x, True, kind)
        if kind in ("w", "f") and l + 1 < len(self.dlevels):
            self._cycle(l + 1, coarse_b, coarse_x, False, "w" if kind == "w" else "v")
        # x = x + P e, post-smoothing
        if n:
            exec.run("solver.multigrid.prolong", level.aggregation.agg, coarse_x, current)
        for _ in range(iters):
            self._sweep(level, b, current, other)
            current, other = other, current
        if current is not x:
            x.copy_from(current)

    def _sweep(self, level: Level, b: Dense, x: Dense, x_new: Dense) -> None:
        """x_new = x + omega D^-1 (b - A x): the local sweep while x's ghost rows travel, then
        -omega D^-1 A_non_local x_ghost on the rows that have non-local entries."""
        exec, A = self.executor, level.matrix
        transfer = A.halo.start(x) if A.halo.active else None
        if A.shape[0]:
            exec.run("components.relaxation.relax", 0.0, level.omega, A.local_matrix, level.inv_diag, b, x, None,
                     x_new)
        if transfer is not None:
            ghost = A.halo.finish(transfer)
            if A.non_local.shape[0]:
                exec.run("distributed.matrix.add_non_local", as_scalar(exec, -level.omega, self.dtype), A.non_local,
                         A._non_local_rows, ghost, level.inv_diag, x_new, None, None, None)

    def _restrict(self, level: Level, b: Dense, x: Dense, coarse_b: Dense) -> None:
        """coarse_b = P^T (b - A x): the local part while x's ghost rows travel, then
        -P^T A_non_local x_ghost on the coarse rows that have it."""
        exec, A = self.executor, level.matrix
        transfer = A.halo.start(x) if A.halo.active else None
        if A.shape[0]:
            exec.run("solver.multigrid.restrict_residual", A.local_matrix, level.aggregation.agg_ptrs,
                     level.aggregation.agg_rows, b, x, coarse_b)
        restricted = level.aggregation.restricted
        if transfer is not None:
            ghost = A.halo.finish(transfer)
            if restricted.shape[0]:
                exec.run("distributed.matrix.add_non_local", as_scalar(exec, -1.0, self.dtype), restricted,
                         level.aggregation.restricted_rows, ghost, None, coarse_b, None, None, None)

    def _gathered_cycle(self, b: Dense, x: Dense, whole: tuple) -> None:
        """x = one cycle of the gathered levels on b: b gathered onto every rank, the cycle
        there (every rank alike), this rank's rows of the result."""
        if self.gather is None:  # one rank: the cycle on its rows
            self.gathered.apply(Dense(self.executor, b.values), Dense(self.executor, x.values))
            return
        whole_b, whole_x = whole
        self.gather.start(b)
        self.gather.finish(b, whole_b)
        self.gathered.apply(whole_b, whole_x)
        self.gather.take(whole_x, x)


def _compressed(exec, matrix: sp.csr_matrix, dtype: Any) -> tuple[Csr, Any]:
    """A Csr of ``matrix``'s rows that have entries, and those rows (int32, on ``exec``)."""
    matrix.sum_duplicates()
    rows = np.flatnonzero(np.diff(matrix.indptr))
    compressed = sp.csr_matrix(matrix[rows])
    return Csr.from_scipy(exec, compressed, dtype), exec.from_host(rows.astype(INDEX_DTYPE))
