"""Concurrent solves: whole `gk.linalg` solves (SciPy matrix in, x out) of 2D Poisson, by T
threads (`--threads`, default 2) sharing one OpenCL executor against one thread doing the same
solves one after the other, in the same run. Each thread solves its own system (a copy of the
matrix: `gk.linalg` keeps a solver per matrix, as a service with distinct systems would), the one
thread all of them in turn. `T threads / 1` is the one thread's time over the T threads' time for
the same solves (1: no gain, T: T times the throughput; below 1: concurrency costs). Every answer
is checked (residual and info).

    python benchmarks/bench_threads.py [--grids 40 200] [--solves 20] [--methods cg bicgstab:ilu] [--reps 3]
    python benchmarks/bench_threads.py --grids 40 --methods bicgstab gmres:ilu --mixed --solves 200
    python benchmarks/bench_threads.py --threads 8 --grids 100 --methods cg --solves 64   # 8 x 1e4 rows

A method is `name[:M]` (a `gk.linalg` solver and its preconditioner, Jacobi by default, `none`
for none). `--mixed`: the two threads run different methods at once (thread t the t-th, the one
thread alternates them), as in a service that serves several kinds of solves. The first (cold)
solves, made by both threads at once, are the warm-up; the repetitions of the two ways
alternate, and the median is reported. With `PYOPENCL_NO_CACHE=1` (and `CUDA_CACHE_DISABLE=1`
on NVIDIA) every program of the warm-up is built by the two threads at once.
"""
from __future__ import annotations

import argparse
import itertools
import threading
import time
from typing import Callable

import numpy as np

import ginkpy as gk
from ginkpy.problems import poisson_2d


def run(work: list[list[Callable[[], None]]]) -> float:
    """Seconds for each thread t to call the solves ``work[t]`` in order, the threads started together."""
    start = threading.Barrier(len(work) + 1)
    errors: list = []

    def body(solves: list[Callable[[], None]]) -> None:
        start.wait()
        try:
            for solve in solves:
                solve()
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    workers = [threading.Thread(target=body, args=(solves,)) for solves in work]
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


def solver(exec, S, spec: str) -> Callable[[], None]:
    """One whole solve of ``S`` x = S 1 with ``spec`` (``name[:M]``), its answer checked."""
    name, _, M = spec.partition(":")
    M = None if M == "none" else (M or "jacobi")
    function = getattr(gk.linalg, name)
    b = S @ np.ones(S.shape[0])

    def solve() -> None:
        x, info = function(S, b, rtol=1e-8, M=M, executor=exec)
        residual = np.linalg.norm(S @ x - b) / np.linalg.norm(b)
        if info != 0 or not residual < 1e-7:
            raise AssertionError(f"{spec} on {S.shape[0]} rows: info {info}, residual {residual:.1e}")
    return solve


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grids", type=int, nargs="+", default=[40, 200], help="grid sides n (n^2 rows)")
    p.add_argument("--solves", type=int, default=20, help="solves per measurement (split over the threads)")
    p.add_argument("--methods", nargs="+", default=["cg", "bicgstab"], help="gk.linalg solvers, name[:M]")
    p.add_argument("--mixed", action="store_true", help="the threads run different methods at once")
    p.add_argument("--threads", type=int, default=2, help="threads solving at once")
    p.add_argument("--executor", default="opencl")
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    exec = gk.executor(args.executor)
    T = args.threads
    print(f"{exec!r}: {args.solves} whole solves (rtol 1e-8), median of {args.reps}")
    print(f"{'rows':>7} {'methods':24} {'1 thread ms/solve':>18} {f'{T} threads ms/solve':>19} "
          f"{f'{T} threads / 1':>14}")
    for n in args.grids:
        S = poisson_2d(n).tocsr()
        groups = [args.methods] if args.mixed else [[m] for m in args.methods]
        for methods in groups:
            # thread t: method t (mod the count) on its own copy of the matrix
            solves = [solver(exec, S.copy(), methods[t % len(methods)]) for t in range(T)]
            many = [[solves[t]] * (args.solves // T + (t < args.solves % T)) for t in range(T)]
            one = [[s for turn in itertools.zip_longest(*many) for s in turn if s is not None]]
            run([[s] for s in solves])  # warm-up: all threads at once, cold
            times_one, times_many = [], []
            for _ in range(args.reps):
                times_one.append(run(one))
                times_many.append(run(many))
            t1, tm = float(np.median(times_one)), float(np.median(times_many))
            print(f"{n * n:7d} {' + '.join(methods):24} {t1 / args.solves * 1e3:18.2f} "
                  f"{tm / args.solves * 1e3:19.2f} {t1 / tm:14.2f}", flush=True)


if __name__ == "__main__":
    main()
