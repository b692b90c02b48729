"""gk.solver.Direct (Lu / Cholesky with gk.reorder.Amd) beside SciPy's splu in one run: factor
plus one solve, b = A * ones, repetitions interleaved, medians.

For every matrix: SciPy's splu with its default ordering (COLAMD) and with MMD_AT_PLUS_A (the
cholmod-free SciPy alternatives; spsolve is splu with COLAMD), ginkpy's Direct with Lu and, for
a symmetric matrix with a positive diagonal, with Cholesky; each: factor + solve seconds, the
entries of L + U and the relative residual ||b - A x|| / ||b||. The ratio is ginkpy's best time
over splu's default (< 1: ginkpy is faster); ginkpy's time is split into ordering, numeric
factorization (SuperLU on ginkpy's ordering) with the triangular solvers' setup, and solve.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_direct.py [--problems poisson_2d ...]
        [--sizes 99856] [--mtx-dir ../shared/matrices] [--executor reference] [--reps 3]

The default problems are 2D Poisson 316^2, convection-diffusion 316^2 and 3D Poisson 46^3 (1e5
rows each; the last takes SciPy's default splu minutes: leave it out with --problems).
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bench_common as bc
import ginkpy as gk
from ginkpy import problems

bc.GENERATORS.setdefault("convection_diffusion_2d",
                         lambda rows: problems.convection_diffusion_2d(max(2, round(rows ** 0.5))))


def _spd_like(S: sp.csr_matrix) -> bool:
    return abs(S - S.T).max() <= 1e-12 * abs(S).max() and bool(np.all(S.diagonal() > 0))


def _scipy(S: sp.csr_matrix, spec: str):
    A = S.tocsc()
    b = S @ np.ones(S.shape[0])

    def run():
        lu = spla.splu(A, permc_spec=spec)
        return lu.solve(b), lu.L.nnz + lu.U.nnz
    return run, b


def _ginkpy(S: sp.csr_matrix, exec, fact):
    A = gk.matrix.Csr.from_scipy(exec, S)
    b_host = S @ np.ones(S.shape[0])
    b = gk.matrix.Dense.from_numpy(exec, b_host)
    phases = {}

    def run():
        start = time.perf_counter()
        solver = gk.solver.Direct.build().with_factorization(fact.build()).on(exec).generate(A)
        exec.synchronize()
        phases["factor"] = time.perf_counter() - start
        x = b.empty_like()
        start = time.perf_counter()
        solver.apply(b, x)
        exec.synchronize()
        phases["solve"] = time.perf_counter() - start
        return x.to_numpy()[:, 0], sum(f.nnz for f in solver.factorization.factors)
    return run, b_host, phases


def _ordering_time(S: sp.csr_matrix) -> float:
    host = gk.ReferenceExecutor()
    A = gk.matrix.Csr.from_scipy(host, S)
    start = time.perf_counter()
    gk.reorder.Amd.build().on(host).generate(A)
    return time.perf_counter() - start


def main() -> None:
    p = bc.parser(__doc__.splitlines()[0], [99856], ["poisson_2d", "convection_diffusion_2d", "poisson_3d"])
    p.set_defaults(executor="reference", reps=3)
    args = p.parse_args()
    exec = gk.executor(args.executor)
    print(f"ginkpy executor: {args.executor} ({bc.device_name(exec)}); times: median of {args.reps}, "
          f"factor + one solve")
    print(f"{'matrix':24s} {'method':22s} {'seconds':>9s} {'L+U nnz':>11s} {'rel. residual':>13s}")
    for name, S in bc.matrices(args, exec):
        S = sp.csr_matrix(S, dtype=np.float64)
        methods = {"splu COLAMD": _scipy(S, "COLAMD"), "splu MMD_AT_PLUS_A": _scipy(S, "MMD_AT_PLUS_A")}
        facts = [gk.factorization.Lu] + ([gk.factorization.Cholesky] if _spd_like(S) else [])
        phases = {}
        for fact in facts:
            run, b, phase = _ginkpy(S, exec, fact)
            methods[f"ginkpy Direct {fact.__name__}"] = (run, b)
            phases[f"ginkpy Direct {fact.__name__}"] = phase
        times = {m: [] for m in methods}
        results = {}
        for _ in range(args.reps):  # interleaved repetitions
            for method, (run, _) in methods.items():
                start = time.perf_counter()
                results[method] = run()
                times[method].append(time.perf_counter() - start)
        for method, (run, b) in methods.items():
            x, fill = results[method]
            residual = np.linalg.norm(b - S @ x) / np.linalg.norm(b)
            print(f"{name:24s} {method:22s} {np.median(times[method]):9.3f} {fill:11d} {residual:13.1e}")
        best = min(np.median(times[m]) for m in phases)
        order = _ordering_time(S)
        last = phases[min(phases, key=lambda m: np.median(times[m]))]
        print(f"{name:24s} ratio ginkpy / splu COLAMD: {best / np.median(times['splu COLAMD']):.2f} "
              f"(ginkpy: Amd ordering {order:.3f} s, factor incl. ordering {last['factor']:.3f} s, "
              f"solve {last['solve']:.3f} s)")


if __name__ == "__main__":
    main()
