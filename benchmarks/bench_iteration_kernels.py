"""Where a Krylov iteration's time goes on a device: the wall time per iteration and each
kernel's device time per launch, for Jacobi-preconditioned CG (``--solver cg``, on Poisson) or
BiCGStab (``--solver bicgstab``, on convection-diffusion), a fixed number of iterations.

The launch settings that decide the streaming kernels' speed on a GPU can be set per run, each
combination with a solver of its own (a solver keeps the launches it captured at its first
iteration):

- ``--rows-at-once R ...``: ``launch.GPU_ROWS_AT_ONCE``, the rows a work-item of Cg's and
  Bicgstab's steps (and of the classical SpMV with its dots) loads before it stores;
- ``--max-row M ...``: the classical SpMV's loop unrolled to M turns (``select_strategy(...,
  max_row=M)``; 0: the plain loop; ``auto``: the automatic choice, ``CLASSICAL_MAX_ROWS``);
  the SpMV strategy is forced to classical where a value is given.

Kernel times need ``GINKPY_OPENCL_PROFILE=1`` set before the script starts (without it only
the wall times are printed). Each setting: ``--reps`` solves, the fastest reported; the first
setting again at the end, to show the spread between rounds. On a CPU device (PoCL) the settings
of a GPU do not apply (a CPU takes one row at once).

    GINKPY_OPENCL_PROFILE=1 python benchmarks/bench_iteration_kernels.py
        [--solver cg|bicgstab] [--grids 1000] [--dims 2 3] [--iters 500]
        [--rows-at-once 1 4] [--max-row auto 0 8] [--reps 3]
"""
from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np

import ginkpy as gk
import ginkpy.opencl.launch as launch
from ginkpy.opencl.matrix import csr_strategy
from ginkpy.problems import convection_diffusion_2d, poisson_2d, poisson_3d


def problem(solver: str, dim: int, grid: int):
    """(name, SciPy matrix) of the solver's problem."""
    if solver == "bicgstab":
        return f"convection_diffusion_2d {grid}^2", convection_diffusion_2d(grid)
    return (f"poisson_{dim}d {grid}^{dim}", poisson_2d(grid) if dim == 2 else poisson_3d(grid))


def run(exec, S, solver: str, iters: int, reps: int, max_row):
    """(fastest wall seconds per iteration, kernel times of the last solve, relative residual)."""
    n = S.shape[0]
    A = gk.matrix.Csr.from_scipy(exec, S)
    if max_row != "auto":
        csr_strategy.select_strategy(exec, A, "classical", max_row=int(max_row))
    b_host = S @ np.ones(n)
    b = gk.matrix.Dense.from_numpy(exec, b_host.reshape(-1, 1))
    method = gk.solver.Cg if solver == "cg" else gk.solver.Bicgstab
    s = (method.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
         .with_criteria(gk.stop.Iteration.build().with_max_iters(iters)).on(exec).generate(A))
    profiled = os.environ.get("GINKPY_OPENCL_PROFILE") == "1"
    times, kernels = [], {}
    for _ in range(reps):
        x = gk.matrix.Dense.zeros(exec, (n, 1))
        exec.synchronize()
        if profiled:
            exec.kernel_times()
        start = time.perf_counter()
        s.apply(b, x)
        exec.synchronize()
        times.append(time.perf_counter() - start)
        if profiled:
            kernels = exec.kernel_times()
    res = float(np.linalg.norm(b_host - S @ x.to_numpy()[:, 0]) / np.linalg.norm(b_host))
    return min(times) / iters, kernels, res


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--solver", default="cg", choices=["cg", "bicgstab"])
    p.add_argument("--grids", type=int, nargs="+", default=[1000], help="grid sides")
    p.add_argument("--dims", type=int, nargs="+", default=[2], choices=[2, 3],
                   help="Poisson's dimensions (cg; bicgstab's convection-diffusion is 2D)")
    p.add_argument("--iters", type=int, default=500)
    p.add_argument("--rows-at-once", type=int, nargs="+", default=[launch.GPU_ROWS_AT_ONCE])
    p.add_argument("--max-row", nargs="+", default=["auto"], help="auto, 0 (plain loop) or the unrolled turns")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--executor", default="opencl")
    args = p.parse_args()
    exec = gk.executor(args.executor)
    print(f"{exec}; {args.iters} Jacobi-{args.solver} iterations, the fastest of {args.reps}; "
          f"us per iteration (wall) and per launch (kernels)")
    dims = [2] if args.solver == "bicgstab" else args.dims
    settings = list(itertools.product(args.rows_at_once, args.max_row))
    if len(settings) > 1:
        settings.append(settings[0])  # the first again: the spread between rounds
    for dim, grid in itertools.product(dims, args.grids):
        name, S = problem(args.solver, dim, grid)
        for rows, max_row in settings:
            launch.GPU_ROWS_AT_ONCE = rows
            wall, kernels, res = run(exec, S, args.solver, args.iters, args.reps, max_row)
            top = sorted(kernels.items(), key=lambda kv: -kv[1][1])[:5]
            spent = ", ".join(f"{k} {seconds / count * 1e6:.1f}" for k, (count, seconds) in top)
            print(f"{name:<28} rows at once {rows}, max_row {max_row:>4}: {wall * 1e6:7.1f} us/it"
                  + (f"; {spent}" if spent else "") + f"; res {res:.2e}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
