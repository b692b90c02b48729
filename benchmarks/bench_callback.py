"""What SciPy's ``callback(xk)`` costs a solve: ``ginkpy.linalg.cg(A, b, M="jacobi")`` on 2D
Poisson with and without a callback, and with the callback as it ran before the solution reads
were pipelined (a read of the stop state and of x after every iteration, waited for), in the
same run, on the default OpenCL device (or --executor). Repetitions interleaved, medians.

    python benchmarks/bench_callback.py [--grid 300] [--reps 5] [--executor opencl]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import ginkpy as gk
from ginkpy.core.log.logger import Logger
from ginkpy.problems import poisson_2d


class _WaitingCallback(Logger):
    """The callback as a logger that waits for the device after every iteration (the former way)."""

    needs_solution = True

    def __init__(self, callback, x) -> None:
        self.callback, self.x = callback, x

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if iteration > 0:
            self.callback(self.x.to_numpy()[:, 0])


def _waiting_solve(exec, S, b, rtol, callback):
    """cg(A, b, M="jacobi") through the builder with the waiting callback (x0 = 0)."""
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = gk.solver.Cg.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1)) \
        .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(rtol),
                       gk.stop.Iteration.build().with_max_iters(10 * S.shape[0])).on(exec).generate(A)
    B = gk.matrix.Dense.from_numpy(exec, b)
    X = gk.matrix.Dense.zeros(exec, B.shape)
    solver.add_logger(_WaitingCallback(callback, X))
    solver.apply(B, X)
    return X.to_numpy()[:, 0]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grid", type=int, default=300, help="grid side (grid^2 rows)")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--executor", default="opencl")
    p.add_argument("--rtol", type=float, default=1e-8)
    args = p.parse_args()
    exec = gk.executor(args.executor)
    S = poisson_2d(args.grid)
    b = np.random.default_rng(0).standard_normal(S.shape[0])
    seen = []

    def callback(xk):
        seen.append(float(xk[0]))

    runs = {"no callback": lambda: gk.linalg.cg(S, b, rtol=args.rtol, M="jacobi", executor=exec),
            "callback": lambda: gk.linalg.cg(S, b, rtol=args.rtol, M="jacobi", executor=exec, callback=callback),
            "callback, waiting": lambda: _waiting_solve(exec, S, b, args.rtol, callback)}
    times = {name: [] for name in runs}
    calls = {}
    for rep in range(args.reps + 1):  # the first compiles
        for name, run in runs.items():
            seen.clear()
            exec.synchronize()
            start = time.perf_counter()
            run()
            exec.synchronize()
            if rep:
                times[name].append(time.perf_counter() - start)
            calls[name] = len(seen)
    base = statistics.median(times["no callback"])
    print(f"{exec!r}, 2D Poisson {args.grid}^2, Jacobi-CG to rtol {args.rtol:g}, medians of {args.reps}")
    for name, values in times.items():
        t = statistics.median(values)
        print(f"  {name:20s} {t * 1e3:9.1f} ms  {100 * (t / base - 1):+6.1f}%  ({calls[name]} callbacks)")


if __name__ == "__main__":
    main()
