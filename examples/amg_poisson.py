"""Algebraic multigrid: CG preconditioned by one Multigrid cycle on a 2D Poisson problem,
beside Jacobi-CG, on the default executor.

    python examples/amg_poisson.py                # 500 x 500 grid
    python examples/amg_poisson.py --grid 1000 --executor opencl:0:0
    python examples/amg_poisson.py A.mtx          # a Matrix Market system, b = A * ones

The hierarchy (levels, rows, nonzeros, operator and grid complexity) is printed as PyAMG
prints it. The first setup in a process includes compiling the kernels (PoCL caches them). From SciPy the same solve is ``ginkpy.linalg.cg(A, b, rtol=1e-8, M="amg")``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ginkpy as gk
from ginkpy.problems import system


def solve(exe, A, b, preconditioner, rtol):
    """(solution, Convergence logger, solver, setup seconds, solve seconds) of a CG solve."""
    start = time.perf_counter()
    solver = (gk.solver.Cg.build()
              .with_preconditioner(preconditioner)
              .with_criteria(gk.stop.Iteration.build().with_max_iters(20000),
                             gk.stop.ResidualNorm.build().with_reduction_factor(rtol))
              .on(exe)
              .generate(A))
    exe.synchronize()
    setup = time.perf_counter() - start
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    x = gk.matrix.Dense.zeros(exe, b.shape)
    start = time.perf_counter()
    solver.apply(b, x)
    exe.synchronize()
    return x, logger, solver, setup, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("matrix", nargs="?", help="Matrix Market file (default: generated 2D Poisson)")
    parser.add_argument("--executor", default="default", help="reference | opencl | opencl:<p>:<d> | default")
    parser.add_argument("--grid", type=int, default=500, help="grid size of the generated problem")
    parser.add_argument("--rtol", type=float, default=1e-8)
    args = parser.parse_args()

    exe = gk.executor(args.executor)
    A, b, name = system(exe, args.matrix, args.grid)
    n = A.shape[0]
    print(f"{name}: {n} rows, {A.nnz} nonzeros, on {exe!r}\n")

    # one W-cycle of aggregation AMG per CG iteration (the defaults: Pgm aggregation, weighted
    # Jacobi smoothing, a dense direct solve of the coarsest level)
    amg = gk.solver.Multigrid.build()
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)
    for label, preconditioner in (("AMG-CG", amg), ("Jacobi-CG", jacobi)):
        x, logger, solver, setup, elapsed = solve(exe, A, b, preconditioner, args.rtol)
        error = float(np.abs(x.to_numpy() - 1).max())
        print(f"{label:<10} {logger.num_iterations:6d} iterations, setup {setup:.3f} s, solve {elapsed:.3f} s, "
              f"max error {error:.1e}, {logger.stop_reason}")
        if label == "AMG-CG":
            print(f"\n{solver.preconditioner!r}\n")


if __name__ == "__main__":
    main()
