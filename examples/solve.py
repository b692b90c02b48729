"""Solve a sparse system with Jacobi-preconditioned CG on the default executor.

    python examples/solve.py                 # generated 2D Poisson problem, 300 x 300 grid
    python examples/solve.py A.mtx           # a Matrix Market system, b = A * ones
    python examples/solve.py --executor reference --grid 100

The default executor is the OpenCL device ginkpy picks (a GPU if there is one, else a CPU
through PoCL); GINKPY_OPENCL_DEVICE or --executor opencl:<platform>:<device> chooses another.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ginkpy as gk
from ginkpy.problems import poisson_2d


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("matrix", nargs="?", help="Matrix Market file (default: generated 2D Poisson)")
    parser.add_argument("--executor", default="default", help="reference | opencl | opencl:<p>:<d> | default")
    parser.add_argument("--grid", type=int, default=300, help="grid size of the generated problem")
    parser.add_argument("--rtol", type=float, default=1e-8)
    parser.add_argument("--max-iters", type=int, default=10000)
    args = parser.parse_args()

    exe = gk.executor(args.executor)
    if args.matrix:
        A = gk.read(args.matrix, exe)
        name = args.matrix
    else:
        A = gk.matrix.Csr.from_scipy(exe, poisson_2d(args.grid))
        name = f"2D Poisson {args.grid} x {args.grid}"
    n = A.shape[0]
    # b = A * ones, so the exact solution is all ones
    b = A.apply(gk.matrix.Dense.full(exe, (n, 1), 1.0), gk.matrix.Dense.zeros(exe, (n, 1)))
    x = gk.matrix.Dense.zeros(exe, (n, 1))

    def jacobi_cg(max_iters: int) -> gk.solver.Cg:
        return (gk.solver.Cg.build()
                .with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
                .with_criteria(gk.stop.Iteration.build().with_max_iters(max_iters),
                               gk.stop.ResidualNorm.build().with_reduction_factor(args.rtol))
                .on(exe)
                .generate(A))

    # Warm-up: a device compiles each kernel at its first use (PoCL and GPU drivers keep the
    # binaries in a disk cache, so a later run only loads them). Two iterations on the same
    # system run every kernel of the solve, so that the times below are the work alone.
    start = time.perf_counter()
    jacobi_cg(2).apply(b, gk.matrix.Dense.zeros(exe, (n, 1)))
    exe.synchronize()
    warm_up = time.perf_counter() - start

    start = time.perf_counter()
    solver = jacobi_cg(args.max_iters)
    exe.synchronize()
    setup = time.perf_counter() - start
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    start = time.perf_counter()
    solver.apply(b, x)
    exe.synchronize()
    elapsed = time.perf_counter() - start

    A_host, x_host = A.to_scipy(), x.to_numpy()
    b_host = b.to_numpy()
    true_res = np.linalg.norm(b_host - A_host @ x_host) / np.linalg.norm(b_host)
    print(f"executor:   {exe}")
    print(f"system:     {name}: {n} rows, {A.nnz} nonzeros, {A.dtype}")
    print(f"solver:     Jacobi-CG, rtol {args.rtol:g}")
    print(f"iterations: {logger.num_iterations} ({logger.stop_reason})")
    print(f"residual:   ||b - Ax|| / ||b|| = {true_res:.3e}")
    print(f"error:      max |x - 1| = {np.abs(x_host - 1).max():.3e}")
    print(f"time:       setup {setup:.3f} s, solve {elapsed:.3f} s "
          f"({logger.num_iterations / elapsed:.0f} iterations/s)")
    print(f"warm-up:    {warm_up:.3f} s (compiling the kernels, or loading them from the disk cache)")


if __name__ == "__main__":
    main()
