"""Repeated solves (issue 24): what a time-stepping loop pays per step with ginkpy beside SciPy and
CuPy, in one run.

The problem is a backward-Euler step of the heat equation on an n x n grid: 2D Poisson (5-point,
unscaled) plus the mass term (h^2 / dt) I, h = 1 / (n + 1). Every step solves with a new random b
to rtol 1e-8; the "new values" methods also change the matrix every step on the same pattern
(a coefficient field: A_k = D_k^1/2 K D_k^1/2 + (h^2 / dt) I, D_k = 1 + 0.2 u_k, u_k uniform in
[0, 1) per row). Each method runs --steps steps per round, rounds interleaved; a step is timed
from b on the host (or on the device for the -device methods) to x there. Printed per method:
the first step (setup included where the method builds at its first call) and the median of the
later steps, medians over the rounds; then the issue's ratios with their targets, and the load.

Methods (Jacobi-CG unless named):
  scipy          scipy.sparse.linalg.cg with M = D^-1 (a LinearOperator), on the host
  cupy           cupyx.scipy.sparse.linalg.cg, A on the device, M = D^-1; b in, x out per step
  cupy-device    the same with b made on the device and x left there
  linalg         ginkpy.linalg.cg(A_scipy, b, M="jacobi") each step (what a SciPy user writes)
  builder        Csr and Cg generated once; per step Dense.from_numpy(b), apply, x.to_numpy()
  solver         ginkpy.linalg.Solver(A, "cg", M="jacobi"), solve(b) per step
  solver-device  the same with b a pyopencl array on the executor (x comes back as one)
  rebuild        new values: per step the matrix and solver built anew (Csr.from_scipy, generate)
  update         new values: per step solver.update(A_k), then solve(b)
  linalg-inplace new values: per step A.data[:] = A_k.data, then linalg.cg(A, b) (its cache takes them)
  amg-oneshot    ginkpy.linalg.cg(A, b, M="amg") with nothing kept (clear_cache() first): setup every step
  amg-whole      the builder's whole AMG-CG solve per step: Csr.from_scipy, generate, apply, x out
  amg-linalg     ginkpy.linalg.cg(A, b, M="amg") each step (the hierarchy kept by the cache)
  amg-solver     Solver(A, "cg", M="amg"), solve(b) per step
  amg-update     new values: update(A_k) (aggregates kept), then solve(b)
  ic-solver      Solver(A, "cg", M="ic"), solve(b) per step
  ic-update      new values: update(A_k), then solve(b)

    python benchmarks/bench_repeat.py                                  # 300^2 and 1000^2, every method
    python benchmarks/bench_repeat.py --grids 300 --executor opencl --profile-capture
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_repeat.py --grids 300 --no-cupy   # on a shared CPU
"""
from __future__ import annotations

import argparse
import inspect
import os
import statistics
import time
from typing import Callable

import numpy as np
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.problems import poisson_2d

import bench_common as bc

RTOL = 1e-8
METHODS = ["scipy", "cupy", "cupy-device", "linalg", "builder", "solver", "solver-device", "rebuild", "update",
           "linalg-inplace", "amg-oneshot", "amg-whole", "amg-linalg", "amg-solver", "amg-update", "ic-solver",
           "ic-update"]
# (ratio, numerator, denominator, target, what the target asks)
RATIOS = [("cupy / solver", "cupy", "solver", ">= 2 (GPU, 1000^2)", lambda r: r >= 2),
          ("cupy-device / solver-device", "cupy-device", "solver-device", ">= 2 (GPU, 1000^2)", lambda r: r >= 2),
          ("linalg / solver", "linalg", "solver", "<= 1.5", lambda r: r <= 1.5),
          ("amg-solver / solver (Jacobi)", "amg-solver", "solver", "<= 1.5 at 300^2, < 1 at 1000^2",
           lambda r: r <= 1.5),
          ("amg-oneshot / amg-whole", "amg-oneshot", "amg-whole", "<= 2", lambda r: r <= 2),
          ("update / solver (Jacobi)", "update", "solver", "<= 1.3", lambda r: r <= 1.3),
          ("amg-update / amg-solver", "amg-update", "amg-solver", "<= 2", lambda r: r <= 2),
          ("ic-update / ic-solver", "ic-update", "ic-solver", "<= 2", lambda r: r <= 2),
          ("scipy / solver", "scipy", "solver", "(SciPy's step over ginkpy's)", lambda r: True)]


def heat_step_matrix(n: int, dt: float) -> sp.csr_matrix:
    """2D Poisson (unscaled 5-point) plus (h^2 / dt) I, h = 1 / (n + 1)."""
    A = (poisson_2d(n) + (1.0 / (n + 1)) ** 2 / dt * sp.eye(n * n)).tocsr()
    A.sort_indices()
    return A


def new_values(A: sp.csr_matrix, steps: int, dt: float, n: int) -> list[sp.csr_matrix]:
    """A_k = D_k^1/2 K D_k^1/2 + (h^2 / dt) I on A's pattern, D_k = 1 + 0.2 u_k (SPD, one per step)."""
    rng = np.random.default_rng(1)
    K = poisson_2d(n).tocsr()
    mass = (1.0 / (n + 1)) ** 2 / dt * sp.eye(n * n)
    out = []
    for _ in range(steps):
        d = sp.diags(np.sqrt(1 + 0.2 * rng.random(n * n)))
        B = (d @ K @ d + mass).tocsr()
        B.sort_indices()
        assert np.array_equal(B.indices, A.indices) and np.array_equal(B.indptr, A.indptr)
        out.append(B)
    return out


def _rtol(cg) -> str:
    return "rtol" if "rtol" in inspect.signature(cg).parameters else "tol"


class Method:
    """A method of the table: ``setup()`` (untimed) and ``step(k, b)`` (timed, synchronous)."""

    def __init__(self, step: Callable, setup: Callable = lambda: None, device: bool = False) -> None:
        self.step, self.setup, self.device = step, setup, device


def methods(args, exec, A, values, n, quiet: bool = False) -> dict[str, Method]:
    """The methods asked for that can run here (those that cannot said, unless ``quiet``)."""
    out: dict[str, Method] = {}
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)
    criteria = (gk.stop.ResidualNorm.build().with_reduction_factor(RTOL),
                gk.stop.Iteration.build().with_max_iters(10 * A.shape[0]))
    state: dict = {}
    cupy = bc.import_cupy(args.no_cupy) if {"cupy", "cupy-device"} & set(args.methods) else None
    cla = None
    if exec.backend == "opencl":
        import pyopencl.array as cla

    def solver_method(M, key, new=False):
        def setup():
            state[key] = gk.linalg.Solver(A, "cg", M=M, rtol=RTOL, executor=exec)

        def step(k, b):
            solver = state[key]
            if new:
                solver.update(values[k % len(values)])
            return solver.solve(b)
        return Method(step, setup)

    for name in args.methods:
        if name == "scipy":
            import scipy.sparse.linalg as spla
            inverse = 1 / A.diagonal()
            M = spla.LinearOperator(A.shape, matvec=lambda v: inverse * v.ravel(), dtype=A.dtype)
            out[name] = Method(lambda k, b: spla.cg(A, b, M=M, **{_rtol(spla.cg): RTOL}))
        elif name in ("cupy", "cupy-device"):
            if cupy is None:
                if not quiet:
                    print(f"{name}: no CuPy with an NVIDIA GPU here, skipped")
                continue
            import cupyx.scipy.sparse as csp
            import cupyx.scipy.sparse.linalg as cspla
            A_dev = csp.csr_matrix(A)
            inverse_dev = 1 / A_dev.diagonal()
            M_dev = cspla.LinearOperator(A.shape, matvec=lambda v: inverse_dev * v.ravel(), dtype=A.dtype)
            if name == "cupy":
                out[name] = Method(lambda k, b: cupy.asnumpy(cspla.cg(A_dev, cupy.asarray(b), M=M_dev,
                                                                     **{_rtol(cspla.cg): RTOL})[0]))
            else:
                def cupy_step(k, b_dev):
                    x, info = cspla.cg(A_dev, b_dev, M=M_dev, **{_rtol(cspla.cg): RTOL})
                    cupy.cuda.Device().synchronize()
                    return x, info
                out[name] = Method(cupy_step, device="cupy")
        elif name == "linalg":
            out[name] = Method(lambda k, b: gk.linalg.cg(A, b, rtol=RTOL, M="jacobi", executor=exec),
                               gk.linalg.clear_cache)
        elif name == "builder":
            def builder_setup():
                state["builder"] = gk.solver.Cg.build().with_preconditioner(jacobi).with_criteria(*criteria) \
                    .on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))

            def builder_step(k, b):
                B = gk.matrix.Dense.from_numpy(exec, b)
                return state["builder"].apply(B, gk.matrix.Dense.zeros(exec, B.shape)).to_numpy()
            out[name] = Method(builder_step, builder_setup)
        elif name == "solver":
            out[name] = solver_method("jacobi", "solver")
        elif name == "solver-device":
            if cla is None:
                if not quiet:
                    print(f"{name}: needs the OpenCL executor, skipped")
                continue

            def device_step(k, b_dev):
                x, info = state["solver-device"].solve(b_dev)
                exec.synchronize()
                return x, info
            out[name] = Method(device_step, solver_method("jacobi", "solver-device").setup, device="opencl")
        elif name == "rebuild":
            def rebuild_step(k, b):
                solver = gk.solver.Cg.build().with_preconditioner(jacobi).with_criteria(*criteria).on(exec) \
                    .generate(gk.matrix.Csr.from_scipy(exec, values[k % len(values)]))
                B = gk.matrix.Dense.from_numpy(exec, b)
                return solver.apply(B, gk.matrix.Dense.zeros(exec, B.shape)).to_numpy()
            out[name] = Method(rebuild_step)
        elif name == "update":
            out[name] = solver_method("jacobi", "update", new=True)
        elif name == "linalg-inplace":
            matrix = A.copy()

            def inplace_step(k, b):
                matrix.data[:] = values[k % len(values)].data
                return gk.linalg.cg(matrix, b, rtol=RTOL, M="jacobi", executor=exec)
            out[name] = Method(inplace_step, gk.linalg.clear_cache)
        elif name == "amg-oneshot":
            def oneshot_step(k, b):
                gk.linalg.clear_cache()
                return gk.linalg.cg(A, b, rtol=RTOL, M="amg", executor=exec)
            out[name] = Method(oneshot_step)
        elif name == "amg-whole":
            def whole_step(k, b):
                solver = gk.solver.Cg.build().with_preconditioner(gk.solver.Multigrid.build()) \
                    .with_criteria(*criteria).on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
                B = gk.matrix.Dense.from_numpy(exec, b)
                return solver.apply(B, gk.matrix.Dense.zeros(exec, B.shape)).to_numpy()
            out[name] = Method(whole_step)
        elif name == "amg-linalg":
            out[name] = Method(lambda k, b: gk.linalg.cg(A, b, rtol=RTOL, M="amg", executor=exec),
                               gk.linalg.clear_cache)
        elif name == "amg-solver":
            out[name] = solver_method("amg", "amg-solver")
        elif name == "amg-update":
            out[name] = solver_method("amg", "amg-update", new=True)
        elif name == "ic-solver":
            out[name] = solver_method("ic", "ic-solver")
        elif name == "ic-update":
            out[name] = solver_method("ic", "ic-update", new=True)
    return out


def run_round(method: Method, bs: list, exec, cupy_module) -> tuple[float, float]:
    """One round of a method: setup, then its steps timed one by one; (first step, median of the later)."""
    method.setup()
    times = []
    for k, b in enumerate(bs):
        if method.device == "opencl":
            import pyopencl.array as cla
            b = cla.to_device(exec.queue, b)
            exec.synchronize()
        elif method.device == "cupy":
            b = cupy_module.asarray(b)
            cupy_module.cuda.Device().synchronize()
        start = time.perf_counter()
        method.step(k, b)
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[1:]) if len(times) > 1 else times[0]


def capture_share(exec, A, reps: int) -> None:
    """The share of Executor.capture in a one-shot linalg.cg(A, b, M="amg") (nothing kept)."""
    capture = exec.capture
    spent = [0.0]

    def timed(fn):
        start = time.perf_counter()
        try:
            return capture(fn)
        finally:
            spent[0] += time.perf_counter() - start
    exec.capture = timed
    try:
        shares, totals = [], []
        rng = np.random.default_rng(3)
        for _ in range(reps):
            gk.linalg.clear_cache()
            spent[0] = 0.0
            start = time.perf_counter()
            gk.linalg.cg(A, rng.standard_normal(A.shape[0]), rtol=RTOL, M="amg", executor=exec)
            total = time.perf_counter() - start
            shares.append(spent[0] / total)
            totals.append(total)
    finally:
        del exec.capture
    print(f"  capture's share of a one-shot linalg.cg(M='amg'): {100 * statistics.median(shares):.1f}% "
          f"(of {1e3 * statistics.median(totals):.1f} ms; target < 10%)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grids", type=int, nargs="+", default=[300, 1000], help="grid sides n (n^2 rows)")
    p.add_argument("--steps", type=int, default=20, help="steps per round")
    p.add_argument("--scipy-steps", type=int, default=5, help="steps per round of the host methods (scipy)")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds (methods interleaved; medians)")
    p.add_argument("--dt", type=float, default=1e-3, help="time step: the mass term is (h^2 / dt) I")
    p.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    p.add_argument("--executor", default="opencl")
    p.add_argument("--no-cupy", action="store_true")
    p.add_argument("--profile-capture", action="store_true", help="also: capture's share of a one-shot AMG call")
    args = p.parse_args()
    exec, cupy = bc.executor_and_cupy(args)
    print(f"{bc.device_name(exec)}; CuPy {'on ' + bc.cupy_device(cupy) if cupy else 'not run'}; "
          f"load {os.getloadavg()[0]:.2f} (1 min), OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    rng = np.random.default_rng(0)
    for n in args.grids:
        A = heat_step_matrix(n, args.dt)
        values = new_values(A, args.steps, args.dt, n)
        bs = [rng.standard_normal(A.shape[0]) for _ in range(args.steps)]
        runs = methods(args, exec, A, values, n)
        # warm-up on a small problem (compiles every kernel, CuPy's JIT)
        small = heat_step_matrix(60, args.dt)
        warm_runs = methods(args, exec, small, new_values(small, 3, args.dt, 60), 60, quiet=True)
        for method in warm_runs.values():
            run_round(method, [rng.standard_normal(small.shape[0]) for _ in range(3)], exec, cupy)
        first: dict[str, list] = {name: [] for name in runs}
        later: dict[str, list] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, method in runs.items():
                steps = bs[:args.scipy_steps] if name == "scipy" else bs
                t0, t = run_round(method, steps, exec, cupy)
                first[name].append(t0)
                later[name].append(t)
        step = {name: statistics.median(v) for name, v in later.items()}
        print(f"\n2D heat step {n}^2 ({A.shape[0]} rows, mass h^2/dt = {(1.0 / (n + 1)) ** 2 / args.dt:.3g}), "
              f"rtol {RTOL:g}, {args.steps} steps x {args.rounds} rounds, load {os.getloadavg()[0]:.2f}")
        iterations = _iterations(exec, A)
        print("  iterations: " + ", ".join(f"{k} {v}" for k, v in iterations.items()))
        print(f"  {'method':16s} {'first step ms':>14s} {'step ms':>10s}")
        for name in runs:
            print(f"  {name:16s} {1e3 * statistics.median(first[name]):14.1f} {1e3 * step[name]:10.2f}")
        print("  ratios (same run):")
        for label, num, den, target, ok in RATIOS:
            if num in step and den in step:
                r = step[num] / step[den]
                print(f"    {label:30s} {r:6.2f}   target {target}{'' if ok(r) else '   (not met)'}")
        if args.profile_capture:
            capture_share(exec, A, args.rounds)
    print(f"\nload at the end {os.getloadavg()[0]:.2f}")


def _iterations(exec, A) -> dict:
    out = {}
    b = np.random.default_rng(5).standard_normal(A.shape[0])
    for M in ("jacobi", "amg", "ic"):
        solver = gk.linalg.Solver(A, "cg", M=M, rtol=RTOL, executor=exec)
        solver.solve(b)
        out[M] = int(solver.result.num_iterations)
    return out


if __name__ == "__main__":
    main()
