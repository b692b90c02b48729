"""Solve a sparse system with a Krylov method that fits it, on the default executor.

    python examples/solve.py                 # generated 2D Poisson problem, 300 x 300 grid
    python examples/solve.py A.mtx           # a Matrix Market system, b = A * ones
    python examples/solve.py --executor reference --grid 100

A symmetric matrix with a positive diagonal (what every symmetric positive definite one has)
is solved by CG with scalar Jacobi, any other by GMRES with ILU(0). The exit status is 0 when
the solve converged, 1 when not. The default executor is the OpenCL device ginkpy picks (a GPU
if there is one, else a CPU through PoCL); GINKPY_OPENCL_DEVICE or --executor
opencl:<platform>:<device> chooses another.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import ginkpy as gk
from ginkpy.problems import system


def method(A) -> tuple[str, object]:
    """(name, solver parameters without criteria): Jacobi-CG for a symmetric matrix with a
    positive diagonal, ILU-GMRES for any other."""
    S = A.to_scipy()
    symmetric = abs(S - S.conj().T).max() <= 1e-12 * abs(S).max() if S.nnz else True
    if symmetric and np.all(S.diagonal().real > 0):
        return "Jacobi-CG", gk.solver.Cg.build().with_preconditioner(
            gk.preconditioner.Jacobi.build().with_max_block_size(1))
    return "ILU-GMRES", gk.solver.Gmres.build().with_preconditioner(gk.preconditioner.Ilu.build())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Exit status: 0 when the solve converged, 1 when not.")
    parser.add_argument("matrix", nargs="?", help="Matrix Market file (default: generated 2D Poisson)")
    parser.add_argument("--executor", default="default", help="reference | opencl | opencl:<p>:<d> | default")
    parser.add_argument("--grid", type=int, default=300, help="grid size of the generated problem (default 300)")
    parser.add_argument("--rtol", type=float, default=1e-8, help="relative tolerance (default 1e-8)")
    parser.add_argument("--max-iters", type=int, default=10000, help="iteration limit (default 10000)")
    args = parser.parse_args()

    exe = gk.executor(args.executor)
    A, b, name = system(exe, args.matrix, args.grid)
    n = A.shape[0]
    x = gk.matrix.Dense.zeros(exe, (n, 1), A.dtype)
    label, params = method(A)

    def make_solver(max_iters: int):
        return (params.with_criteria(gk.stop.Iteration.build().with_max_iters(max_iters),
                                     gk.stop.ResidualNorm.build().with_reduction_factor(args.rtol))
                .on(exe)
                .generate(A))

    # Warm-up: a device compiles each kernel at its first use (PoCL and GPU drivers keep the
    # binaries in a disk cache, so a later run only loads them). Two iterations on the same
    # system run every kernel of the solve, so that the times below are the work alone.
    start = time.perf_counter()
    make_solver(2).apply(b, gk.matrix.Dense.zeros(exe, (n, 1), A.dtype))
    exe.synchronize()
    warm_up = time.perf_counter() - start

    start = time.perf_counter()
    solver = make_solver(args.max_iters)
    exe.synchronize()
    setup = time.perf_counter() - start
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    start = time.perf_counter()
    solver.apply(b, x)
    exe.synchronize()
    elapsed = time.perf_counter() - start

    A_host, x_host, b_host = A.to_scipy(), x.to_numpy(), b.to_numpy()
    true_res = np.linalg.norm(b_host - A_host @ x_host) / np.linalg.norm(b_host)
    print(f"executor:   {exe}")
    print(f"system:     {name}: {n} rows, {A.nnz} nonzeros, {A.dtype}")
    print(f"solver:     {label}, rtol {args.rtol:g}")
    print(f"iterations: {logger.num_iterations} ({logger.stop_reason})")
    print(f"residual:   ||b - Ax|| / ||b|| = {true_res:.3e}")
    print(f"error:      max |x - 1| = {np.abs(x_host - 1).max():.3e}")
    print(f"time:       setup {setup:.3f} s, solve {elapsed:.3f} s "
          f"({logger.num_iterations / elapsed:.0f} iterations/s)")
    print(f"warm-up:    {warm_up:.3f} s (compiling the kernels, or loading them from the disk cache)")
    return 0 if logger.has_converged else 1


if __name__ == "__main__":
    sys.exit(main())
