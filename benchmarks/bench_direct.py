"""gk.solver.Direct (Lu / Cholesky) beside SciPy's splu in one run: factor plus one solve,
b = A * ones, repetitions interleaved, medians.

For every matrix: SciPy's splu with its default ordering (COLAMD) and with MMD_AT_PLUS_A (the
cholmod-free SciPy alternatives; spsolve is splu with COLAMD), ginkpy's Direct with Lu (its
default ordering: SuperLU's own, chosen from the pattern) and, for a symmetric matrix with a
positive diagonal, with Cholesky; with ``--amd`` also Lu in ginkpy's gk.reorder.Amd ordering.
Each: factor + solve seconds, the entries of L + U and the relative residual
||b - A x|| / ||b||. The ratio is ginkpy's best default time over splu's default (< 1: ginkpy is
faster), ginkpy's time split into generate (ordering, factorization, triangular solvers' setup)
and solve.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_direct.py [--problems poisson_2d ...]
        [--sizes 99856] [--mtx-dir ../shared/matrices] [--executor reference] [--reps 3] [--amd]

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
        solver = gk.solver.Direct.build().with_factorization(fact).on(exec).generate(A)
        exec.synchronize()
        phases["generate"] = time.perf_counter() - start
        x = b.empty_like()
        start = time.perf_counter()
        solver.apply(b, x)
        exec.synchronize()
        phases["solve"] = time.perf_counter() - start
        return x.to_numpy()[:, 0], sum(f.nnz for f in solver.factorization.factors)
    return run, b_host, phases


def main() -> None:
    p = bc.parser(__doc__.splitlines()[0], [99856], ["poisson_2d", "convection_diffusion_2d", "poisson_3d"])
    p.set_defaults(executor="reference", reps=3)
    p.add_argument("--amd", action="store_true", help="also time Lu in gk.reorder.Amd's ordering")
    args = p.parse_args()
    exec = gk.executor(args.executor)
    print(f"ginkpy executor: {args.executor} ({bc.device_name(exec)}); times: median of {args.reps}, "
          f"factor + one solve")
    print(f"{'matrix':24s} {'method':26s} {'seconds':>9s} {'L+U nnz':>11s} {'rel. residual':>13s}")
    for name, S in bc.matrices(args, exec):
        S = sp.csr_matrix(S, dtype=np.float64)
        methods = {"splu COLAMD": _scipy(S, "COLAMD"), "splu MMD_AT_PLUS_A": _scipy(S, "MMD_AT_PLUS_A")}
        facts = {"ginkpy Direct Lu": gk.factorization.Lu.build()}
        if _spd_like(S):
            facts["ginkpy Direct Cholesky"] = gk.factorization.Cholesky.build()
        defaults = list(facts)
        if args.amd:
            facts["ginkpy Direct Lu (Amd)"] = gk.factorization.Lu.build().with_ordering(gk.reorder.Amd.build())
        phases = {}
        for method, fact in facts.items():
            run, b, phases[method] = _ginkpy(S, exec, fact)
            methods[method] = (run, b)
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
            print(f"{name:24s} {method:26s} {np.median(times[method]):9.4f} {fill:11d} {residual:13.1e}")
        best = min(defaults, key=lambda m: np.median(times[m]))
        print(f"{name:24s} ratio ginkpy / splu COLAMD: {np.median(times[best]) / np.median(times['splu COLAMD']):.2f} "
              f"({best}: generate {phases[best]['generate']:.4f} s, solve {phases[best]['solve']:.4f} s)")


if __name__ == "__main__":
    main()
