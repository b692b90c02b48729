"""Gauss-Seidel and (S)SOR as preconditioners of GMRES and BiCGStab beside scalar Jacobi, in one run.

For each matrix (the nonsymmetric ones of ../shared/matrices by default, --mtx-dir, or generated
--problems), b = A 1, each preconditioner with each solver to rtol 1e-8 (at most --maxiter
iterations): iterations, setup and solve seconds (median of --reps runs after a warm-up) and the
final relative residual; ``x jac`` is the solve time over Jacobi's with the same solver (below
1: faster than Jacobi).

    python benchmarks/bench_sor.py                                   # the shared nonsymmetric matrices
    python benchmarks/bench_sor.py --problems convection_diffusion_2d --sizes 250000 --no-mtx
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import bench_common as bc
import ginkpy as gk
from ginkpy import problems

RTOL = 1e-8
SHARED = Path(__file__).resolve().parents[2] / "shared" / "matrices"
NONSYMMETRIC = ["pde900", "cage8", "orsirr_1", "watt_2", "add32"]
GENERATORS = {"convection_diffusion_2d": lambda rows: problems.convection_diffusion_2d(max(2, round(rows ** 0.5)))}
PRECONDITIONERS = {
    "jacobi": lambda: gk.preconditioner.Jacobi.build().with_max_block_size(1),
    "gauss_seidel": lambda: gk.preconditioner.GaussSeidel.build(),
    "sor": lambda: gk.preconditioner.Sor.build(),  # omega 1.2, Ginkgo's default
    "sym_gauss_seidel": lambda: gk.preconditioner.GaussSeidel.build().with_symmetric(True),
    "ssor": lambda: gk.preconditioner.Sor.build().with_symmetric(True),
}


def run(exec, S, solver_name, preconditioner, maxiter):
    """(setup seconds, solve seconds, iterations, relative residual) of one whole solve."""
    start = time.perf_counter()
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = (getattr(gk.solver, solver_name).build().with_preconditioner(preconditioner)
              .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(RTOL),
                             gk.stop.Iteration.build().with_max_iters(maxiter)).on(exec).generate(A))
    exec.synchronize()
    setup = time.perf_counter()
    b = S @ np.ones(S.shape[0])
    X = gk.matrix.Dense.zeros(exec, (S.shape[0], 1))
    log = gk.log.Convergence()
    solver.add_logger(log)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), X)
    x = X.to_numpy()[:, 0]
    end = time.perf_counter()
    return setup - start, end - setup, log.num_iterations, float(np.linalg.norm(b - S @ x) / np.linalg.norm(b))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mtx-dir", type=Path, default=SHARED, help="directory of the named matrices")
    p.add_argument("--matrices", nargs="*", default=NONSYMMETRIC, help="file stems in --mtx-dir")
    p.add_argument("--no-mtx", action="store_true", help="only the generated --problems")
    p.add_argument("--problems", nargs="*", default=[], choices=list(GENERATORS))
    p.add_argument("--sizes", type=int, nargs="+", default=[250_000])
    p.add_argument("--solvers", nargs="+", default=["Gmres", "Bicgstab"])
    p.add_argument("--preconditioners", nargs="+", default=list(PRECONDITIONERS), choices=list(PRECONDITIONERS))
    p.add_argument("--executor", default="opencl")
    p.add_argument("--maxiter", type=int, default=5000)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    exec = gk.executor(args.executor)
    cases = [] if args.no_mtx else [(name, gk.read(args.mtx_dir / f"{name}.mtx", gk.ReferenceExecutor()).to_scipy())
                                    for name in args.matrices]
    cases += [(f"{name}:{rows}", GENERATORS[name](rows)) for name in args.problems for rows in args.sizes]
    print(f"ginkpy executor: {bc.device_name(exec)}; float64, b = A 1, rtol {RTOL:g}; median of {args.reps} runs\n")
    header = f"{'matrix':<24}{'solver':<10}{'preconditioner':<18}{'iters':>7}{'setup':>9}{'solve':>9}{'rel. res':>10}{'x jac':>7}"
    print(header + "\n" + "-" * len(header))
    for label, S in cases:
        for solver_name in args.solvers:
            jacobi_solve = None
            for name in args.preconditioners:
                try:
                    run(exec, S, solver_name, PRECONDITIONERS[name](), args.maxiter)  # warm-up: compiles kernels
                    results = [run(exec, S, solver_name, PRECONDITIONERS[name](), args.maxiter) for _ in range(args.reps)]
                except ValueError as err:
                    print(f"{label:<24}{solver_name:<10}{name:<18}  refused: {err}")
                    continue
                setup, solve = (float(np.median([r[i] for r in results])) for i in (0, 1))
                iterations, residual = results[-1][2], results[-1][3]
                jacobi_solve = solve if name == "jacobi" else jacobi_solve
                ratio = f"{solve / jacobi_solve:7.2f}" if jacobi_solve else ""
                flag = "" if residual <= 1.01 * RTOL else "  not converged"
                print(f"{label:<24}{solver_name:<10}{name:<18}{iterations:7d}{setup:9.3f}{solve:9.3f}{residual:10.1e}"
                      f"{ratio}{flag}", flush=True)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
