"""Where a single small system should run as a batch of one (one launch for the whole solve)
rather than in the normal loop (a few launches per iteration): microseconds per iteration of
Cg, Bicgstab and Gmres(30) on 2D Laplacians (poisson_2d in float64, the magnetic Laplacian in
complex128), both ways, on the default OpenCL device. The crossovers set SMALL_SYSTEM_ROWS in
ginkpy/opencl/small_systems.py.

    python benchmarks/bench_small.py [--grids 32 64 100 128] [--iters 200]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ginkpy as gk
import ginkpy.opencl.small_systems as small_systems
from ginkpy.problems import magnetic_laplacian_2d, poisson_2d


def per_iteration(exec, method: str, S, dtype, iters: int, one: bool) -> float:
    """Microseconds per iteration of ``iters`` iterations, as a batch of one or in the loop."""
    saved = dict(small_systems.SMALL_SYSTEM_ROWS)
    small_systems.SMALL_SYSTEM_ROWS.update({key: (1 << 30) if one else 0 for key in saved})
    try:
        A = gk.matrix.Csr.from_scipy(exec, S, dtype)
        b = gk.matrix.Dense.from_numpy(exec, np.ones((S.shape[0], 1)), dtype)
        # a residual criterion that never stops it: the loop's launches as in a real solve
        criteria = [gk.stop.Iteration.build().with_max_iters(iters),
                    gk.stop.ResidualNorm.build().with_reduction_factor(1e-300)]
        solver = getattr(gk.solver, method).build().with_criteria(*criteria).on(exec).generate(A)
        times = []
        for _ in range(4):  # the first compiles
            x = gk.matrix.Dense.zeros(exec, (S.shape[0], 1), dtype)
            exec.synchronize()
            start = time.perf_counter()
            solver.apply(b, x)
            exec.synchronize()
            times.append(time.perf_counter() - start)
        return min(times[1:]) / iters * 1e6
    finally:
        small_systems.SMALL_SYSTEM_ROWS.update(saved)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grids", type=int, nargs="+", default=[32, 64, 100, 128], help="grid sides n (n^2 rows)")
    p.add_argument("--iters", type=int, default=200)
    args = p.parse_args()
    exec = gk.OpenCLExecutor()
    print(f"{exec.info.name}: microseconds per iteration, batch of one / loop")
    print(f"{'rows':>7} {'type':10} " + " ".join(f"{m:>17}" for m in ("Cg", "Bicgstab", "Gmres")))
    for n in args.grids:
        for S, dtype in ((poisson_2d(n), np.float64), (magnetic_laplacian_2d(n, shift=0.1), np.complex128)):
            if dtype == np.complex128 and not exec.info.fp64:
                continue
            cells = [f"{per_iteration(exec, m, S, dtype, args.iters, True):7.1f} /{per_iteration(exec, m, S, dtype, args.iters, False):7.1f}"
                     for m in ("Cg", "Bicgstab", "Gmres")]
            print(f"{n * n:7d} {np.dtype(dtype).name:10} " + " ".join(f"{c:>17}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
