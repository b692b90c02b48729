"""The cases of tests/distributed/test_distributed.py, run under mpiexec:

    mpiexec -n 2 python tests/distributed/distributed_cases.py reference [case,case,...]

Each case runs on every rank; rank 0 prints one line ``RESULT <json>`` per case with what every
rank saw (iteration counts, stop reasons, errors) and, where there is one, the serial solve of
the same system on rank 0 to compare with. The pytest side judges.
"""
from __future__ import annotations

import json
import sys
import traceback
import warnings

import numpy as np
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.base.lin_op import LinOp


# -- problems ----------------------------------------------------------------------------------

def poisson2d(m: int) -> sp.csr_matrix:
    """The 5-point Laplacian on an m x m grid (SPD)."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    return (sp.kron(sp.eye(m), t) + sp.kron(t, sp.eye(m))).tocsr()


def convection_diffusion(m: int, c: float = 0.3) -> sp.csr_matrix:
    """Upwind convection-diffusion on an m x m grid (nonsymmetric)."""
    t = sp.diags([-1.0 - c, 2.0 + c, -1.0], [-1, 0, 1], shape=(m, m))
    return (sp.kron(sp.eye(m), t) + sp.kron(t, sp.eye(m))).tocsr()


def one_neighbour(n: int) -> sp.csr_matrix:
    """Rows coupled only to the row before (lower bidiagonal): rank r needs only rank r - 1's rows."""
    return sp.diags([-1.0, 2.5], [-1, 0], shape=(n, n)).tocsr()


def criteria(iters: int = 1000, reduction: float = 1e-10) -> list:
    return [gk.stop.Iteration.build().with_max_iters(iters),
            gk.stop.ResidualNorm.build().with_reduction_factor(reduction)]


def jacobi(block: int = 1):
    return gk.preconditioner.Jacobi.build().with_max_block_size(block)


def block_diagonal(A: sp.csr_matrix, partition) -> sp.csr_matrix:
    """A without the entries that couple the ranks' row ranges: what Schwarz's local solvers see."""
    owner = partition.owners(np.arange(A.shape[0]))
    coo = A.tocoo()
    keep = owner[coo.row] == owner[coo.col]
    return sp.csr_matrix((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=A.shape)


# -- a distributed solve beside the serial one ------------------------------------------------------

def ones_system(ex, comm, A):
    """A (given on rank 0) over uniformly shared rows, b = 1 and x = 0: (partition, A, b, x)."""
    partition = gk.distributed.Partition.uniform(A.shape[0], comm)
    Ad = gk.distributed.Matrix.from_global(ex, comm, A if comm.rank == 0 else None, partition)
    return (partition, Ad, gk.distributed.Vector.full(ex, comm, partition, 1.0),
            gk.distributed.Vector.zeros(ex, comm, partition))


def compare(ex, comm, A, b, partition, params, x0=None, serial_preconditioner=None, dtype=np.float64, tol=1e-7):
    """Solve A x = b distributed (``params``: solver parameters) and, on rank 0, serially with the
    same parameters (the preconditioner replaced by ``serial_preconditioner(A)`` where given)."""
    root = comm.rank == 0
    Ad = gk.distributed.Matrix.from_global(ex, comm, A if root else None, partition, dtype=dtype)
    bd = gk.distributed.Vector.from_global(ex, comm, b if root else None, partition, dtype=dtype)
    xd = (gk.distributed.Vector.zeros(ex, comm, partition, bd.shape[1], dtype) if x0 is None else
          gk.distributed.Vector.from_global(ex, comm, x0 if root else None, partition, dtype=dtype))
    logger = gk.log.Convergence()
    solver = params.on(ex).generate(Ad)
    solver.add_logger(logger)
    solver.apply(bd, xd)
    x = xd.gather()
    seen = comm.gather((np.atleast_1d(logger.num_iterations).tolist(), str(logger.stop_reason)))
    if not root:
        return None
    As = gk.matrix.Csr.from_scipy(ex, A, dtype)
    bs = gk.matrix.Dense.from_numpy(ex, b, dtype)
    xs = gk.matrix.Dense.from_numpy(ex, np.zeros(bs.shape) if x0 is None else x0, dtype)
    if serial_preconditioner is not None:
        params = params.with_preconditioner(serial_preconditioner(As))
    serial_logger = gk.log.Convergence()
    serial = params.on(ex).generate(As)
    serial.add_logger(serial_logger)
    serial.apply(bs, xs)
    xs = xs.to_numpy()
    b2 = b.reshape(x.shape)
    exact = np.linalg.solve(A.toarray(), b2)  # the systems are small
    return {"iterations": [s[0] for s in seen], "reasons": [s[1] for s in seen],
            "serial_iterations": np.atleast_1d(serial_logger.num_iterations).tolist(),
            "serial_reason": str(serial_logger.stop_reason),
            "error": float(np.abs(x - xs).max() / np.abs(xs).max()),
            "exact_error": float(np.abs(x - exact).max() / max(np.abs(exact).max(), np.finfo(float).tiny)),
            "dtype": str(x.dtype),
            "residual": float(np.linalg.norm(A @ x - b2) / np.linalg.norm(b2)), "tol": tol,
            "preconditioner": type(solver.preconditioner).__name__}


def compare_schwarz(ex, comm, A, b, partition, local_solver, solver, from_zero=False, dtype=np.float64):
    """``compare`` for ``solver`` (a builder) preconditioned by Schwarz whose local solver is
    ``local_solver()`` (a function that builds its parameters); serially that local solver on A's
    block-diagonal part (``from_zero``: an inner solver started from x = 0, as Schwarz's)."""
    local = block_diagonal(A, partition)
    schwarz = gk.distributed.preconditioner.Schwarz.build().with_local_solver(local_solver())

    def serial_preconditioner(As):
        params = local_solver().with_default_initial_guess("zero") if from_zero else local_solver()
        return params.on(ex).generate(gk.matrix.Csr.from_scipy(ex, local, dtype))
    return compare(ex, comm, A, b, partition, solver.with_preconditioner(schwarz),
                   serial_preconditioner=serial_preconditioner, dtype=dtype)


def uneven(comm, n: int, zero_rank: int | None = None):
    """Rank r owns a share of the rows proportional to r + 1 (none on ``zero_rank``)."""
    weights = np.arange(1, comm.size + 1, dtype=float)
    if zero_rank is not None:
        weights[zero_rank] = 0
    sizes = np.floor(n * weights / weights.sum()).astype(int)
    sizes[-1] += n - sizes.sum()
    return gk.distributed.Partition.from_local_sizes(comm, int(sizes[comm.rank]))


# -- the cases -----------------------------------------------------------------------------------

def case_cg_jacobi(ex, comm):
    A = poisson2d(20)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    return compare(ex, comm, A, b, gk.distributed.Partition.uniform(A.shape[0], comm),
                   gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(jacobi()))


def case_pipecg_jacobi(ex, comm):
    # pipelined CG: one reduction per iteration, overlapped with the product
    A = poisson2d(20)
    b = np.random.default_rng(14).standard_normal((A.shape[0], 2))
    return compare(ex, comm, A, b, uneven(comm, A.shape[0]),
                   gk.solver.PipeCg.build().with_criteria(*criteria()).with_preconditioner(jacobi()))


def amg(gather_rows: int = 100):
    """Multigrid as a preconditioner, distributed down to ``gather_rows`` rows, then gathered."""
    return gk.solver.Multigrid.build().with_gather_rows(gather_rows)


def case_amg_cg(ex, comm):
    # AMG over the ranks: each rank aggregates its rows, the coarse matrices are global; from
    # 100 rows on the levels are gathered onto every rank. The serial AMG aggregates across the
    # rank boundaries: a few iterations apart, the same solution
    A = poisson2d(40)
    b = np.random.default_rng(15).standard_normal(A.shape[0])
    result = compare(ex, comm, A, b, uneven(comm, A.shape[0]),
                     gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(amg()))
    return None if result is None else result | {"iterations_differ": True}


def case_amg_solver_zero_rows(ex, comm):
    # Multigrid as the solver (V-cycles until the tolerance), a rank without rows
    A = poisson2d(30)
    b = np.random.default_rng(16).standard_normal(A.shape[0])
    result = compare(ex, comm, A, b, uneven(comm, A.shape[0], zero_rank=comm.size - 2),
                     amg(50).with_criteria(*criteria(200, 1e-8)), tol=1e-6)
    return None if result is None else result | {"iterations_differ": True}


def case_two_level_schwarz(ex, comm):
    # Schwarz with IC on each rank's block and a coarse correction by aggregation: fewer
    # iterations than the one-level Schwarz of the same blocks (no serial counterpart: the
    # solution is compared with numpy's)
    A = poisson2d(30)
    b = np.random.default_rng(17).standard_normal(A.shape[0])
    partition = uneven(comm, A.shape[0])
    def schwarz(coarse):
        params = gk.distributed.preconditioner.Schwarz.build().with_local_solver(gk.preconditioner.Ic.build())
        return params.with_coarse_level(gk.multigrid.Pgm.build()) if coarse else params
    local = block_diagonal(A, partition)
    one = compare(ex, comm, A, b, partition, gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(
        schwarz(False)), serial_preconditioner=lambda As: gk.preconditioner.Ic.build().on(ex).generate(
            gk.matrix.Csr.from_scipy(ex, local)))
    two = compare(ex, comm, A, b, partition,
                  gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(schwarz(True)),
                  serial_preconditioner=lambda As: gk.preconditioner.Ic.build().on(ex).generate(As))
    if two is None:
        return None
    return two | {"iterations_differ": True, "one_level_iterations": one["iterations"][0], "error": two["exact_error"]}


def case_cg_block_jacobi(ex, comm):
    # Jacobi with blocks on a distributed matrix: block-Jacobi within each rank's block (Schwarz)
    A = poisson2d(16)
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    partition = gk.distributed.Partition.uniform(A.shape[0], comm)
    local = block_diagonal(A, partition)
    return compare(ex, comm, A, b, partition, gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(jacobi(4)),
                   serial_preconditioner=lambda As: jacobi(4).on(ex).generate(gk.matrix.Csr.from_scipy(ex, local)))


def compare_with_jacobi(ex, comm, A, seed: int, solver, zero_rank: int | None = None):
    """:func:`compare` of ``solver`` with the default criteria and scalar Jacobi on A, b random from
    ``seed``, the rows shared unevenly (none on ``zero_rank``)."""
    b = np.random.default_rng(seed).standard_normal(A.shape[0])
    return compare(ex, comm, A, b, uneven(comm, A.shape[0], zero_rank=zero_rank),
                   solver.build().with_criteria(*criteria()).with_preconditioner(jacobi()))


def case_bicgstab_jacobi_uneven(ex, comm):
    return compare_with_jacobi(ex, comm, convection_diffusion(18), 2, gk.solver.Bicgstab)


def case_gmres_schwarz_ilu(ex, comm):
    A = convection_diffusion(16)
    b = np.random.default_rng(3).standard_normal(A.shape[0])
    return compare_schwarz(ex, comm, A, b, uneven(comm, A.shape[0]), gk.preconditioner.Ilu.build,
                           gk.solver.Gmres.build().with_krylov_dim(20).with_criteria(*criteria()))


def case_gmres_schwarz_direct(ex, comm):
    # a sparse direct solver per rank: Schwarz is then exact block-Jacobi over the ranks' blocks
    A = convection_diffusion(16)
    b = np.random.default_rng(5).standard_normal(A.shape[0])
    return compare_schwarz(ex, comm, A, b, uneven(comm, A.shape[0]), gk.solver.Direct.build,
                           gk.solver.Gmres.build().with_krylov_dim(20).with_criteria(*criteria()))


def case_cg_schwarz_ir(ex, comm):
    # an inner solver as the local solver: 3 Jacobi sweeps (Ir), a fixed SPD operator per block
    A = poisson2d(14)
    b = np.random.default_rng(13).standard_normal(A.shape[0])

    def inner():
        return gk.solver.Ir.build().with_solver(jacobi()).with_criteria(gk.stop.Iteration.build().with_max_iters(3))
    # serially: the same inner solver on the block-diagonal matrix, from x = 0 as Schwarz's
    return compare_schwarz(ex, comm, A, b, uneven(comm, A.shape[0]), inner,
                           gk.solver.Cg.build().with_criteria(*criteria()), from_zero=True)


def case_fcg_schwarz_cg(ex, comm):
    # an inner solver as the local solver (a few Cg iterations: a nonlinear M, hence flexible Cg)
    A = poisson2d(14)
    b = np.random.default_rng(4).standard_normal(A.shape[0])

    def inner():
        return gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(4))
    # Cg on each block is not Cg on the block-diagonal matrix (its coefficients are per block):
    # the iteration counts differ, the solutions agree
    result = compare_schwarz(ex, comm, A, b, gk.distributed.Partition.uniform(A.shape[0], comm), inner,
                             gk.solver.Fcg.build().with_criteria(*criteria()), from_zero=True)
    return None if result is None else result | {"iterations_differ": True}


def case_zero_rows(ex, comm):
    # one rank owns no rows
    return compare_with_jacobi(ex, comm, poisson2d(12), 5, gk.solver.Cg, zero_rank=comm.size - 2)


def case_zero_rows_bicgstab(ex, comm):
    return compare_with_jacobi(ex, comm, convection_diffusion(12), 6, gk.solver.Bicgstab, zero_rank=comm.size - 1)


def case_one_neighbour(ex, comm):
    # each rank receives only from the rank before it and sends only to the rank after it
    A = one_neighbour(150)
    b = np.random.default_rng(7).standard_normal(A.shape[0])
    partition = gk.distributed.Partition.uniform(A.shape[0], comm)
    Ad = gk.distributed.Matrix.from_global(ex, comm, A if comm.rank == 0 else None, partition)
    neighbours = comm.gather((Ad.halo.receive_from.ranks, Ad.halo.send_to.ranks, Ad.ghost_columns.tolist()))
    result = compare(ex, comm, A, b, partition, gk.solver.Gmres.build().with_criteria(*criteria()))
    if result is not None:
        result["neighbours"] = neighbours
    return result


def case_bicg(ex, comm):
    # Bicg needs A^T: the entries move to the owners of their columns
    return compare_with_jacobi(ex, comm, convection_diffusion(14), 8, gk.solver.Bicg)


def case_cgs_fcg_ir(ex, comm):
    A = poisson2d(12)
    b = np.random.default_rng(9).standard_normal(A.shape[0])
    partition = gk.distributed.Partition.uniform(A.shape[0], comm)
    out = {}
    for name, params in [("Cgs", gk.solver.Cgs.build().with_criteria(*criteria()).with_preconditioner(jacobi())),
                         ("Fcg", gk.solver.Fcg.build().with_criteria(*criteria()).with_preconditioner(jacobi())),
                         ("Ir", gk.solver.Ir.build().with_criteria(*criteria(3000, 1e-8)).with_solver(jacobi())
                          .with_relaxation_factor(0.9))]:
        out[name] = compare(ex, comm, A, b, partition, params)
    return out if comm.rank == 0 else None


def case_tfqmr_qmr(ex, comm):
    # Tfqmr (its bound from global dots) and Qmr (A^H over the ranks, with M1 and M2)
    A = convection_diffusion(12)
    b = np.random.default_rng(12).standard_normal(A.shape[0])
    partition = uneven(comm, A.shape[0])
    out = {}
    for name, params in [("Tfqmr", gk.solver.Tfqmr.build().with_criteria(*criteria()).with_preconditioner(jacobi())),
                         ("Qmr", gk.solver.Qmr.build().with_criteria(*criteria()).with_preconditioner(jacobi())
                          .with_left_preconditioner(jacobi()))]:
        out[name] = compare(ex, comm, A, b, partition, params)
    return out if comm.rank == 0 else None


def case_several_columns(ex, comm):
    # 3 right-hand sides (one of them zero) from a nonzero initial guess
    A = poisson2d(12)
    rng = np.random.default_rng(10)
    b = rng.standard_normal((A.shape[0], 3))
    b[:, 1] = 0
    x0 = rng.standard_normal((A.shape[0], 3))
    return compare(ex, comm, A, b, uneven(comm, A.shape[0]),
                   gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(jacobi()), x0=x0)


def case_float32(ex, comm):
    A = poisson2d(12)
    b = np.random.default_rng(11).standard_normal(A.shape[0])
    return compare(ex, comm, A, b, gk.distributed.Partition.uniform(A.shape[0], comm),
                   gk.solver.Cg.build().with_criteria(*criteria(500, 1e-5)).with_preconditioner(jacobi()),
                   dtype=np.float32, tol=1e-3)


def case_time_limit(ex, comm):
    # a time limit stops every rank at the same iteration (the ranks agree on it)
    _, Ad, b, x = ones_system(ex, comm, poisson2d(30))
    logger = gk.log.Convergence()
    solver = (gk.solver.Cg.build().with_criteria(gk.stop.Time.build().with_time_limit(0.05 * (1 + comm.rank)),
                                                 gk.stop.ResidualNorm.build().with_reduction_factor(1e-300))
              .on(ex).generate(Ad))
    solver.add_logger(logger)
    solver.apply(b, x)
    seen = comm.gather((int(logger.num_iterations), str(logger.stop_reason)))
    return {"iterations": [s[0] for s in seen], "reasons": [s[1] for s in seen]} if comm.rank == 0 else None


def case_vector_reductions(ex, comm):
    # dots and norms over every rank, the same bits everywhere; robust norms of huge and tiny values
    n = 101
    partition = uneven(comm, n)
    rng = np.random.default_rng(12)
    whole = rng.standard_normal((n, 2))
    out = {}
    for scale in (1.0, 1e200, 1e-200):
        v = gk.distributed.Vector.from_global(ex, comm, whole * scale if comm.rank == 0 else None, partition)
        norms = v.compute_norm2().to_numpy()[0]
        dots = v.compute_dot(v).to_numpy()[0]
        seen = comm.allgather((norms.tobytes(), dots.tobytes()))
        out[str(scale)] = {"same_on_every_rank": len(set(seen)) == 1,
                           "norm_error": float(np.abs(norms / (scale * np.linalg.norm(whole, axis=0)) - 1).max()),
                           "dot": float(dots[0]) if scale == 1.0 else None,
                           "dot_expected": float(whole[:, 0] @ whole[:, 0]) if scale == 1.0 else None}
    v = gk.distributed.Vector.from_global(ex, comm, whole if comm.rank == 0 else None, partition)
    gathered = v.gather()
    out["gather_exact"] = bool(comm.rank != 0 or np.array_equal(gathered, whole))
    out["is_finite"] = v.is_finite()
    values = v.to_numpy()
    if comm.rank == comm.size - 1 and values.size:
        values[0, 0] = np.nan
    w = gk.distributed.Vector.from_numpy(ex, comm, values, partition)
    out["nan_seen_by"] = comm.gather(not w.is_finite())
    return out if comm.rank == 0 else None


def case_loop_counts(ex, comm):
    # what an iteration costs on every rank: launches, blocking reads, allocations, reductions
    # (one non-blocking allgather each) and halo exchanges, from the difference of 34 and 62
    # iterations (well before the solve converges; the same best iterates kept, at 4, 8, 16 and
    # 32, so that the ends cost the same); Cg and PipeCg with scalar Jacobi
    _, Ad, b, x = ones_system(ex, comm, poisson2d(40))
    out = {}
    for name in ("Cg", "PipeCg"):
        counts = []
        for iters in (34, 62):
            solver = (getattr(gk.solver, name).build().with_preconditioner(jacobi())
                      .with_criteria(gk.stop.Iteration.build().with_max_iters(iters)).on(ex).generate(Ad))
            solver.apply(b, x)  # the first apply makes the work vectors and captures
            before = dict(ex.counters) | Ad.counters
            x.fill(0.0)
            solver.apply(b, x)
            counts.append({key: value - before[key] for key, value in (dict(ex.counters) | Ad.counters).items()})
        out[name] = comm.gather({key: (counts[1][key] - counts[0][key]) / 28 for key in counts[0]})
    return out if comm.rank == 0 else None


def _errors(comm, fn) -> list:
    """Run ``fn`` on every rank; what each rank raised (type, message) or None."""
    try:
        fn()
        mine = None
    except Exception as err:  # noqa: BLE001 - the case reports what was raised
        mine = (type(err).__name__, str(err))
    return comm.gather(mine)


def rank_rows(comm, A):
    """A's rows by a uniform partition: n, this rank, the last rank, the partition, this rank's
    row range (first, end) and its rows."""
    n = A.shape[0]
    partition = gk.distributed.Partition.uniform(n, comm)
    first, end = partition.range(comm.rank)
    return n, comm.rank, comm.size - 1, partition, first, end, A[first:end]


def case_bad_input(ex, comm):
    # every rank raises the same error, none hangs
    A = poisson2d(8)
    n, rank, last, partition, first, end, rows = rank_rows(comm, A)
    out = {}

    def not_covering():
        p = gk.distributed.Partition.from_local_sizes(comm, end - first - (rank == last))
        gk.distributed.Matrix.from_scipy(ex, comm, rows, p)
    out["partition_not_covering"] = _errors(comm, not_covering)

    def column_out_of_range():
        m = rows.copy()
        if rank == last:
            m.indices[-1] = n + 3
        gk.distributed.Matrix.from_scipy(ex, comm, m, partition)
    out["column_out_of_range"] = _errors(comm, column_out_of_range)

    def different_global_sizes():
        m = sp.csr_matrix((rows.data, rows.indices, rows.indptr), shape=(end - first, n + (rank == last)))
        gk.distributed.Matrix.from_scipy(ex, comm, m, partition)
    out["different_global_sizes"] = _errors(comm, different_global_sizes)

    def different_partitions():
        p = partition if rank != last else gk.distributed.Partition.uniform(n + 1, comm)
        gk.distributed.Matrix.from_scipy(ex, comm, rows, p)
    out["different_partitions"] = _errors(comm, different_partitions)

    def vector_wrong_rows():
        v = np.ones(end - first + (rank == last))
        gk.distributed.Vector.from_numpy(ex, comm, v, partition)
    out["vector_wrong_rows"] = _errors(comm, vector_wrong_rows)

    Ad = gk.distributed.Matrix.from_scipy(ex, comm, rows, partition)

    def nan_rhs():
        values = np.ones(end - first)
        if rank == last:
            values[-1] = np.nan
        b = gk.distributed.Vector.from_numpy(ex, comm, values, partition)
        x = gk.distributed.Vector.zeros(ex, comm, partition)
        gk.solver.Cg.build().with_criteria(*criteria()).on(ex).generate(Ad).apply(b, x)
    out["nan_rhs"] = _errors(comm, nan_rhs)

    def singular_block():
        # block-Jacobi on a rank whose local block has a singular 2 x 2 block
        m = rows.tolil()
        if rank == last:
            m[0, first], m[0, first + 1], m[1, first], m[1, first + 1] = 1.0, 1.0, 1.0, 1.0
        Ab = gk.distributed.Matrix.from_scipy(ex, comm, m.tocsr(), partition)
        schwarz = gk.distributed.preconditioner.Schwarz.build().with_local_solver(
            gk.preconditioner.Jacobi.build().with_block_pointers(np.arange(0, end - first + 1, 2)
                                                                  if (end - first) % 2 == 0 else
                                                                  np.r_[np.arange(0, end - first, 2), end - first]))
        gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(schwarz).on(ex).generate(Ab)
    out["singular_local_block"] = _errors(comm, singular_block)

    def plain_dense():
        b = gk.matrix.Dense.from_numpy(ex, np.ones(end - first))
        x = gk.matrix.Dense.from_numpy(ex, np.zeros(end - first))
        Ad.apply(b, x)
    out["plain_dense_operands"] = _errors(comm, plain_dense)
    return out if comm.rank == 0 else None


class _FailingSolver(LinOp):
    """A local solver on the host (x = b, read and written: each apply runs itself) that raises
    at its ``at``-th apply where ``fails``."""

    def __init__(self, ex, n: int, fails: bool, at: int) -> None:
        super().__init__(ex, (n, n), np.float64)
        self.calls, self.fails, self.at = 0, fails, at

    def _apply_impl(self, b, x):
        self.calls += 1
        if self.fails and self.calls == self.at:
            raise ValueError("the local solver failed on purpose")
        self.executor.write(x.values, self.executor.to_host(b.values))


def case_error_on_one_rank(ex, comm):
    # the last rank's local solver raises in the middle of a solve: every rank raises (the
    # others naming that rank), none waits forever. The last case of a launch: after it the
    # ranks' exchanges are out of step
    partition, Ad, b, x = ones_system(ex, comm, poisson2d(16))
    local = _FailingSolver(ex, partition.local_size(comm.rank), comm.rank == comm.size - 1, 5)
    schwarz = gk.distributed.preconditioner.Schwarz.build().with_local_solver(local)
    solver = gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(schwarz).on(ex).generate(Ad)
    raised = _errors(comm, lambda: solver.apply(b, x))
    return {"raised": raised} if comm.rank == 0 else None


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main(cases: dict = CASES) -> None:
    """Run ``cases`` (by default this file's) as the command line asks; see the module."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    warnings.simplefilter("ignore")
    kind = sys.argv[1] if len(sys.argv) > 1 else "reference"
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(cases)
    ex = gk.ReferenceExecutor() if kind == "reference" else gk.OpenCLExecutor()
    for name in names:
        try:
            result, error = cases[name](ex, comm), None
        except Exception:  # noqa: BLE001 - reported to the test, which fails on it
            result, error = None, traceback.format_exc()
        errors = comm.gather(error)
        if comm.rank == 0:
            print("RESULT " + json.dumps({"case": name, "size": comm.size, "result": result,
                                          "errors": errors}), flush=True)


if __name__ == "__main__":
    main()
