"""Concurrent solves: whole `gk.linalg` solves (SciPy matrix in, x out) of 2D Poisson, by two
threads sharing one OpenCL executor against one thread doing the same solves one after the
other, in the same run. `2 threads / 1` is the one thread's time over the two threads' time for
the same solves (1: no gain, 2: twice the throughput; below 1: concurrency costs). Each answer
is checked against SciPy's residual.

    python benchmarks/bench_threads.py [--grids 40 200] [--solves 20] [--methods cg bicgstab gmres] [--reps 3]

The first (cold) solves are warm-up; the repetitions of the two ways alternate, and the
median is reported.
"""
from __future__ import annotations

import argparse
import threading
import time

import numpy as np

import ginkpy as gk
from ginkpy.problems import poisson_2d


def run(solve, solves: int, threads: int) -> float:
    """Seconds for ``solves`` calls of ``solve`` spread over ``threads`` threads started together."""
    start = threading.Barrier(threads + 1)
    errors: list = []

    def work(count: int) -> None:
        start.wait()
        try:
            for _ in range(count):
                solve()
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    workers = [threading.Thread(target=work, args=(solves // threads + (t < solves % threads),))
               for t in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    seconds = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grids", type=int, nargs="+", default=[40, 200], help="grid sides n (n^2 rows)")
    p.add_argument("--solves", type=int, default=20, help="solves per measurement (split over the threads)")
    p.add_argument("--methods", nargs="+", default=["cg", "bicgstab"], help="gk.linalg solvers (Jacobi-preconditioned)")
    p.add_argument("--executor", default="opencl")
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    exec = gk.executor(args.executor)
    print(f"{exec!r}: {args.solves} whole solves (rtol 1e-8, Jacobi), median of {args.reps}")
    print(f"{'rows':>7} {'method':9} {'1 thread ms/solve':>18} {'2 threads ms/solve':>19} {'2 threads / 1':>14}")
    for n in args.grids:
        S = poisson_2d(n).tocsr()
        b = S @ np.ones(S.shape[0])
        for method in args.methods:
            function = getattr(gk.linalg, method)

            def solve() -> None:
                x, info = function(S, b, rtol=1e-8, M="jacobi", executor=exec)
                residual = np.linalg.norm(S @ x - b) / np.linalg.norm(b)
                if info != 0 or not residual < 1e-7:
                    raise AssertionError(f"{method} on {n}^2: info {info}, residual {residual:.1e}")

            run(solve, 2, 2)  # warm-up: builds, both paths
            one, two = [], []
            for _ in range(args.reps):
                one.append(run(solve, args.solves, 1))
                two.append(run(solve, args.solves, 2))
            one_s, two_s = float(np.median(one)), float(np.median(two))
            print(f"{n * n:7d} {method:9} {one_s / args.solves * 1e3:18.2f} {two_s / args.solves * 1e3:19.2f} "
                  f"{one_s / two_s:14.2f}", flush=True)


if __name__ == "__main__":
    main()
