"""Whole solves to rtol 1e-8: ginkpy AMG-CG (Jacobi or Gauss-Seidel smoothing, W- or V-cycle)
beside ginkpy Jacobi-CG, SciPy Jacobi-CG, PyAMG (smoothed aggregation and Ruge-Stuben, with CG)
and, with CuPy on an NVIDIA GPU, CuPy Jacobi-CG.

A whole solve is what a user waits for: a SciPy CSR matrix and b = A 1 in, x as a NumPy array
out, with the copies to the device, the setup (hierarchy, preconditioner) and the solve. Each
method is warmed up once on a small problem (kernel compilation), then every problem runs once
(it is long at these sizes); setup and solve are timed apart, the iterations counted and the
final relative residual ||b - A x|| / ||b|| checked with SciPy. ``x amg`` is the method's total
time over ginkpy AMG-CG's (above 1: AMG-CG is faster).

    python benchmarks/bench_amg.py [--sizes ROWS ...] [--problems poisson_2d poisson_3d anisotropic_2d
                                   variable_2d] [--methods ...] [--executor opencl|reference]
"""
from __future__ import annotations

import argparse
import inspect
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bench_common as bc
import ginkpy as gk
from ginkpy import problems

RTOL = 1e-8


def anisotropic_2d(n: int, epsilon: float = 0.01) -> sp.csr_matrix:
    """5-point -u_xx - epsilon u_yy on an n x n grid: strong coupling along one axis."""
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    return (sp.kron(t, sp.identity(n)) + epsilon * sp.kron(sp.identity(n), t)).tocsr()


def variable_2d(n: int, sigma: float = 1.5, seed: int = 0) -> sp.csr_matrix:
    """5-point -div(k grad u) on an n x n grid (Dirichlet boundary), k log-normal per cell
    (exp of a normal with deviation ``sigma``: contrasts of 1e4 and more), harmonic means on
    the faces."""
    k = np.exp(np.random.default_rng(seed).normal(0.0, sigma, (n + 2, n + 2)))
    harmonic = lambda a, b: 2 / (1 / a + 1 / b)  # noqa: E731
    east = harmonic(k[1:-1, 1:-1], k[1:-1, 2:]).ravel()   # face to (i, j + 1)
    north = harmonic(k[1:-1, 1:-1], k[2:, 1:-1]).ravel()  # face to (i + 1, j)
    west = harmonic(k[1:-1, 1:-1], k[1:-1, :-2]).ravel()
    south = harmonic(k[1:-1, 1:-1], k[:-2, 1:-1]).ravel()
    idx = np.arange(n * n).reshape(n, n)
    has_east, has_north = (idx % n != n - 1).ravel(), (idx // n != n - 1).ravel()
    rows = np.concatenate([idx.ravel(), idx.ravel()[has_east], idx.ravel()[has_north]])
    cols = np.concatenate([idx.ravel(), idx.ravel()[has_east] + 1, idx.ravel()[has_north] + n])
    vals = np.concatenate([east + north + west + south, -east[has_east], -north[has_north]])
    upper = sp.csr_matrix((vals, (rows, cols)), shape=(n * n, n * n))
    return (upper + sp.triu(upper, 1).T).tocsr()


GENERATORS = {
    "poisson_2d": lambda rows: problems.poisson_2d(max(2, round(rows ** 0.5))),
    "poisson_3d": lambda rows: problems.poisson_3d(max(2, round(rows ** (1 / 3)))),
    "anisotropic_2d": lambda rows: anisotropic_2d(max(2, round(rows ** 0.5))),
    "variable_2d": lambda rows: variable_2d(max(2, round(rows ** 0.5))),
}


def _rtol_keyword(cg) -> str:
    return "rtol" if "rtol" in inspect.signature(cg).parameters else "tol"


# -- the methods: each takes (S, b) and returns (x, setup seconds, solve seconds, iterations) -----

def ginkpy_solve(exec, preconditioner, maxiter):
    def run(S, b):
        start = time.perf_counter()
        A = gk.matrix.Csr.from_scipy(exec, S)
        solver = (gk.solver.Cg.build().with_preconditioner(preconditioner)
                  .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(RTOL),
                                 gk.stop.Iteration.build().with_max_iters(maxiter))
                  .on(exec).generate(A))
        exec.synchronize()
        setup = time.perf_counter()
        B = gk.matrix.Dense.from_numpy(exec, b)
        X = gk.matrix.Dense.zeros(exec, B.shape, B.dtype)
        logger = gk.log.Convergence()
        solver.add_logger(logger)
        solver.apply(B, X)
        x = X.to_numpy()[:, 0]
        end = time.perf_counter()
        run.solver = solver
        return x, setup - start, end - setup, logger.num_iterations
    return run


def scipy_jacobi_cg(maxiter):
    def run(S, b):
        start = time.perf_counter()
        inverse = 1 / S.diagonal()
        M = spla.LinearOperator(S.shape, matvec=lambda v: inverse * v.ravel(), dtype=S.dtype)
        setup = time.perf_counter()
        count = [0]
        x, _ = spla.cg(S, b, M=M, maxiter=maxiter, callback=lambda xk: count.__setitem__(0, count[0] + 1),
                       **{_rtol_keyword(spla.cg): RTOL})
        return x, setup - start, time.perf_counter() - setup, count[0]
    return run


def pyamg_cg(pyamg, kind):
    def run(S, b):
        start = time.perf_counter()
        ml = pyamg.smoothed_aggregation_solver(S) if kind == "sa" else pyamg.ruge_stuben_solver(S)
        setup = time.perf_counter()
        residuals = []
        x = ml.solve(b, tol=RTOL, accel="cg", maxiter=1000, residuals=residuals)
        return x, setup - start, time.perf_counter() - setup, len(residuals) - 1
    return run


def cupy_jacobi_cg(cupy, maxiter):
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cspla

    def run(S, b):
        start = time.perf_counter()
        A = csp.csr_matrix(S)
        inverse = 1 / A.diagonal()
        M = cspla.LinearOperator(S.shape, matvec=lambda v: inverse * v.ravel(), dtype=S.dtype)
        cupy.cuda.Device().synchronize()
        setup = time.perf_counter()
        count = [0]
        x, _ = cspla.cg(A, cupy.asarray(b), M=M, maxiter=maxiter,
                        callback=lambda xk: count.__setitem__(0, count[0] + 1), **{_rtol_keyword(cspla.cg): RTOL})
        x = cupy.asnumpy(x)
        return x, setup - start, time.perf_counter() - setup, count[0]
    return run


def methods(args, exec) -> dict:
    """The methods asked for that can run here, by name."""
    out = {}
    amg = gk.solver.Multigrid.build()
    for name in args.methods:
        if name == "ginkpy-amg":
            out[name] = ginkpy_solve(exec, amg, args.maxiter)
        elif name == "ginkpy-amg-v":
            out[name] = ginkpy_solve(exec, gk.solver.Multigrid.build().with_cycle("v"), args.maxiter)
        elif name in ("ginkpy-amg-gs", "ginkpy-amg-v-gs"):
            # forward Gauss-Seidel before, backward after (level-scheduled triangular solves)
            cycle = "v" if name == "ginkpy-amg-v-gs" else "w"
            out[name] = ginkpy_solve(exec, gk.solver.Multigrid.build().with_cycle(cycle).with_pre_smoother(
                gk.preconditioner.GaussSeidel.build()), args.maxiter)
        elif name == "ginkpy-jacobi":
            out[name] = ginkpy_solve(exec, gk.preconditioner.Jacobi.build().with_max_block_size(1), args.maxiter)
        elif name == "scipy-jacobi":
            out[name] = scipy_jacobi_cg(args.maxiter)
        elif name in ("pyamg-sa", "pyamg-rs"):
            try:
                import pyamg
            except ImportError:
                print(f"{name}: pyamg is not installed (pip install 'ginkpy[bench]'), skipped")
                continue
            out[name] = pyamg_cg(pyamg, name[-2:])
        elif name == "cupy-jacobi":
            cupy = bc.import_cupy(args.no_cupy)
            if cupy is None:
                print("cupy-jacobi: no CuPy with an NVIDIA GPU here, skipped")
                continue
            out[name] = cupy_jacobi_cg(cupy, args.maxiter)
    return out


METHODS = ["ginkpy-amg", "ginkpy-amg-v", "ginkpy-amg-gs", "ginkpy-amg-v-gs", "ginkpy-jacobi", "scipy-jacobi", "pyamg-sa", "pyamg-rs", "cupy-jacobi"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 490_000],
                   help="rows (a grid side is the square or cube root): 1e4 to 8e6")
    p.add_argument("--problems", nargs="+", default=list(GENERATORS), choices=list(GENERATORS))
    p.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    p.add_argument("--executor", default="opencl", help="ginkpy executor: opencl, opencl:<p>:<d>, reference")
    p.add_argument("--maxiter", type=int, default=20_000, help="iteration limit of every CG")
    p.add_argument("--no-cupy", action="store_true", help="skip CuPy even where it is present")
    args = p.parse_args()
    exec = gk.executor(args.executor)
    runs = methods(args, exec)
    print(f"ginkpy executor: {bc.device_name(exec)}; SciPy and PyAMG on the host; float64, b = A 1, "
          f"rtol {RTOL:g}; times in seconds, one run each after a warm-up\n")
    warm = problems.poisson_2d(30)
    for run in runs.values():
        run(warm, warm @ np.ones(warm.shape[0]))
    header = f"{'method':<15}{'setup':>9}{'solve':>9}{'total':>9}{'iters':>7}{'rel. res':>10}{'x amg':>8}"
    print(header)
    print("-" * len(header))
    failures = 0
    for problem in args.problems:
        for rows in args.sizes:
            S = GENERATORS[problem](rows)
            b = S @ np.ones(S.shape[0])
            label = f"{problem}:{S.shape[0]}"
            totals, lines = {}, []
            for name, run in runs.items():
                x, setup, solve, iterations = run(S, b)
                x = np.asarray(x).ravel()
                residual = float(np.linalg.norm(b - S @ x) / np.linalg.norm(b))
                failures += residual > 1.01 * RTOL
                totals[name] = setup + solve
                lines.append((name, setup, solve, iterations, residual))
                if name == "ginkpy-amg":
                    hierarchy = run.solver.preconditioner
                    label += f" ({hierarchy.num_levels} levels, op. cx {hierarchy.operator_complexity:.2f})"
            base = totals.get("ginkpy-amg")
            print(label)
            for name, setup, solve, iterations, residual in lines:
                ratio = "" if base is None else f"{(setup + solve) / base:8.2f}"
                flag = "" if residual <= 1.01 * RTOL else "  NOT CONVERGED"
                print(f"{name:<15}{setup:9.3f}{solve:9.3f}{setup + solve:9.3f}{iterations:7d}{residual:10.1e}"
                      f"{ratio}{flag}", flush=True)
            print()
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
