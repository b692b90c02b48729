"""Solve a 3D Poisson problem with preconditioned CG over MPI ranks (gk.distributed).

    mpiexec -n 4 python examples/distributed_solve.py                  # 64^3 grid, Jacobi, OpenCL
    mpiexec -n 4 python examples/distributed_solve.py --solver pipecg  # one reduction per iteration
    mpiexec -n 4 python examples/distributed_solve.py --preconditioner amg --grid 128
    mpiexec -n 2 python examples/distributed_solve.py --executor reference --grid 32 --check

Each rank assembles only its own rows of the matrix (no rank builds the global one), the
solver is the same gk.solver.Cg as on one device. Each rank takes its own device: the node's
GPUs by node-local rank (modulo their count), else the default OpenCL device;
GINKPY_RANK_DEVICES="0:0,0:1" (one <platform>:<device> per node-local rank) overrides.
b = A * ones, so the exact solution is all ones. ``--check`` also solves on rank 0 alone
(building the global matrix there, for the comparison only) and compares.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ginkpy as gk
from ginkpy.problems import poisson_3d_rows

PRECONDITIONERS = {
    "none": lambda: None,
    "jacobi": lambda: gk.preconditioner.Jacobi.build().with_max_block_size(1),
    "block-jacobi": lambda: gk.preconditioner.Jacobi.build(),
    "schwarz-ic": lambda: gk.distributed.preconditioner.Schwarz.build().with_local_solver(gk.preconditioner.Ic.build()),
    # two-level: IC on each rank's block and a coarse correction by aggregation over the ranks
    "schwarz2-ic": lambda: gk.distributed.preconditioner.Schwarz.build().with_local_solver(gk.preconditioner.Ic.build())
    .with_coarse_level(gk.multigrid.Pgm.build()),
    # algebraic multigrid over the ranks (one V-cycle on a GPU), gathered onto every rank once small
    "amg": lambda: gk.solver.Multigrid.build(),
}
SOLVERS = {"cg": lambda: gk.solver.Cg.build(), "pipecg": lambda: gk.solver.PipeCg.build()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=64, help="grid side: grid^3 unknowns")
    parser.add_argument("--executor", default="opencl", choices=["opencl", "reference"])
    parser.add_argument("--preconditioner", default="jacobi", choices=list(PRECONDITIONERS))
    parser.add_argument("--solver", default="cg", choices=list(SOLVERS))
    parser.add_argument("--rtol", type=float, default=1e-8)
    parser.add_argument("--max-iters", type=int, default=10000)
    parser.add_argument("--check", action="store_true", help="compare with the serial solve on rank 0")
    args = parser.parse_args()
    from mpi4py import MPI  # after --help, which needs no MPI (pip install ginkpy[mpi])

    comm = MPI.COMM_WORLD
    exe = gk.distributed.executor_for_rank(comm, args.executor)
    shape = (args.grid,) * 3
    n = args.grid ** 3
    partition = gk.distributed.Partition.uniform(n, comm)
    first, end = partition.range(comm.rank)

    # this rank's rows only, with global column indices
    A = gk.distributed.Matrix.from_scipy(exe, comm, poisson_3d_rows(shape, first, end), partition)
    ones = gk.distributed.Vector.full(exe, comm, partition, 1.0)
    b = A.apply(ones, gk.distributed.Vector.zeros(exe, comm, partition))
    x = gk.distributed.Vector.zeros(exe, comm, partition)

    params = (SOLVERS[args.solver]()
              .with_criteria(gk.stop.Iteration.build().with_max_iters(args.max_iters),
                             gk.stop.ResidualNorm.build().with_reduction_factor(args.rtol)))
    preconditioner = PRECONDITIONERS[args.preconditioner]()
    if preconditioner is not None:
        params = params.with_preconditioner(preconditioner)
    logger = gk.log.Convergence()
    comm.Barrier()
    start = time.perf_counter()
    solver = params.on(exe).generate(A)
    solver.add_logger(logger)
    solver.apply(b, x)
    exe.synchronize()
    elapsed = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)

    # the largest error |x - 1| over every rank
    local = x.to_numpy()
    error = comm.allreduce(float(np.abs(local - 1).max(initial=0)), op=MPI.MAX)
    devices = comm.gather(getattr(getattr(exe, "info", None), "name", type(exe).__name__))
    if comm.rank == 0:
        print(f"3D Poisson {args.grid}^3 = {n} unknowns on {comm.size} rank(s): {', '.join(devices)}")
        print(f"{type(solver).__name__} + {args.preconditioner}: {logger.num_iterations} iterations, {logger.stop_reason}, "
              f"residual norm {float(np.max(logger.residual_norm)):.3e}, {elapsed:.3f} s (generate + solve)")
        print(f"max |x - 1| = {error:.3e}")
    if args.check:
        check(args, comm, exe, x, logger)


def check(args, comm, exe, x, logger) -> None:
    """The serial solve of the same system on rank 0, and how far the distributed one is from it."""
    whole = x.gather()
    if comm.rank != 0:
        return
    n = args.grid ** 3
    S = gk.matrix.Csr.from_scipy(exe, poisson_3d_rows((args.grid,) * 3, 0, n))
    b = S.apply(gk.matrix.Dense.full(exe, (n, 1), 1.0), gk.matrix.Dense.zeros(exe, (n, 1)))
    xs = gk.matrix.Dense.zeros(exe, (n, 1))
    params = (SOLVERS[args.solver]()
              .with_criteria(gk.stop.Iteration.build().with_max_iters(args.max_iters),
                             gk.stop.ResidualNorm.build().with_reduction_factor(args.rtol)))
    # Schwarz's local IC on the whole matrix (one block: fewer iterations than p blocks)
    preconditioner = (gk.preconditioner.Ic.build() if args.preconditioner.startswith("schwarz") else
                      PRECONDITIONERS[args.preconditioner]())
    if preconditioner is not None:
        params = params.with_preconditioner(preconditioner)
    serial_logger = gk.log.Convergence()
    solver = params.on(exe).generate(S)
    solver.add_logger(serial_logger)
    solver.apply(b, xs)
    difference = np.abs(whole - xs.to_numpy()).max()
    print(f"serial on rank 0: {serial_logger.num_iterations} iterations, {serial_logger.stop_reason}; "
          f"max |x_distributed - x_serial| = {difference:.3e}")


if __name__ == "__main__":
    main()
