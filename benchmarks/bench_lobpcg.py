"""The k smallest eigenpairs of 2D Poisson by LOBPCG, whole runs from a SciPy matrix to NumPy
eigenpairs, same run, same tolerance and starting block:

- ginkpy ``gk.linalg.lobpcg(A, X, M="amg")`` (block vectors and the AMG cycle on the executor;
  ``gk.linalg.clear_cache()`` before each run, so A's upload and the hierarchy are paid every time;
  M="amg" is smoothed aggregation there; ``--pgm`` adds the default multigrid's levels),
- CuPy ``cupyx.scipy.sparse.linalg.lobpcg`` with a Jacobi M (A, X uploaded in the timed run),
- SciPy ``scipy.sparse.linalg.lobpcg`` with PyAMG's smoothed aggregation as M (hierarchy built in
  the timed run), as PyAMG's users write it.

Each line gives the time (median of ``--reps``), the iterations (SciPy's count: the length of the
residual history, which SciPy's API cuts after the best iterate, 2 more than its index), the largest relative residual
||A x - lambda x|| / ||x|| of the k pairs (what ``tol`` bounds) and the eigenvalues' largest relative error
against the exact values of the 5-point Laplacian. A method that does not reach ``--tol`` within
``--maxiter`` is marked "no"; its time is then the cost of ``--maxiter`` iterations.

    python benchmarks/bench_lobpcg.py [--grids 1000] [--k 10] [--tol 1e-5] [--maxiter 200]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

import ginkpy as gk
from bench_common import executor_and_cupy
from ginkpy import problems


def exact_smallest(n: int, k: int) -> np.ndarray:
    """The k smallest eigenvalues of the 5-point Laplacian on an n x n grid (Dirichlet)."""
    lam = 2 - 2 * np.cos(np.pi * np.arange(1, n + 1) / (n + 1))
    return np.sort(np.add.outer(lam, lam).ravel())[:k]


def quality(A: sp.csr_matrix, values: np.ndarray, vectors: np.ndarray, exact: np.ndarray) -> tuple[float, float]:
    """(largest residual norm ||A x - lambda x|| / ||x||, as LOBPCG's tol measures it, and the
    largest relative eigenvalue error)."""
    values = np.asarray(values)
    R = A @ vectors - vectors * values[None, :]
    res = np.max(np.linalg.norm(R, axis=0) / np.linalg.norm(vectors, axis=0))
    return float(res), float(np.max(np.abs(np.sort(values) - exact) / exact))


def run_ginkpy(A, X, args, exec, M="amg"):
    gk.linalg.clear_cache()
    values, vectors, history = gk.linalg.lobpcg(A, X, M=M, tol=args.tol, maxiter=args.maxiter, largest=False,
                                                retResidualNormsHistory=True, executor=exec)
    return values, vectors, len(history)


def run_scipy_pyamg(A, X, args):
    import pyamg
    import scipy.sparse.linalg as spla
    M = pyamg.smoothed_aggregation_solver(A).aspreconditioner()
    values, vectors, history = spla.lobpcg(A, X, M=M, tol=args.tol, maxiter=args.maxiter, largest=False,
                                           retResidualNormsHistory=True)
    return values, vectors, len(history)


def run_cupy(A, X, args, cupy):
    from cupyx.scipy import sparse as csp
    from cupyx.scipy.sparse import linalg as cspla
    Ad = csp.csr_matrix(A)
    Xd = cupy.asarray(X)
    M = csp.diags(1 / Ad.diagonal())
    values, vectors, history = cspla.lobpcg(Ad, Xd, M=M, tol=args.tol, maxiter=args.maxiter, largest=False,
                                            retResidualNormsHistory=True)
    out = cupy.asnumpy(values), cupy.asnumpy(vectors)
    return out[0], out[1], len(history)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--grids", type=int, nargs="+", default=[1000], help="grid sides n (n^2 rows)")
    p.add_argument("--k", type=int, default=10, help="eigenpairs")
    p.add_argument("--tol", type=float, default=1e-5, help="residual tolerance of every method")
    p.add_argument("--maxiter", type=int, default=200)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--executor", default="opencl")
    p.add_argument("--no-cupy", action="store_true")
    p.add_argument("--no-scipy", action="store_true", help="skip SciPy + PyAMG (slow on large grids)")
    p.add_argument("--pgm", action="store_true", help="also ginkpy with the default multigrid's levels "
                   "(gk.solver.Multigrid.build(): piecewise-constant Pgm on a CPU) for M, not M=\"amg\"'s smoothed ones")
    args = p.parse_args()
    exec, cupy = executor_and_cupy(args)
    print(f"# LOBPCG, {args.k} smallest eigenpairs of 2D Poisson, tol {args.tol:g}, maxiter {args.maxiter}; "
          f"ginkpy on {exec}")
    print(f"{'grid':>6} {'method':<22} {'ms':>10} {'iters':>6} {'conv':>5} {'max res':>9} {'eig err':>9} {'x ginkpy':>9}")
    for n in args.grids:
        A = problems.poisson_2d(n).tocsr()
        X = np.random.default_rng(0).standard_normal((A.shape[0], args.k))
        exact = exact_smallest(n, args.k)
        methods = {"ginkpy M=amg": lambda: run_ginkpy(A, X, args, exec)}
        if args.pgm:
            methods["ginkpy M=Multigrid()"] = lambda: run_ginkpy(A, X, args, exec, gk.solver.Multigrid.build())
        if cupy is not None:
            def cupy_run():
                out = run_cupy(A, X, args, cupy)
                cupy.cuda.Device().synchronize()
                return out
            methods["CuPy M=jacobi"] = cupy_run
        if not args.no_scipy:
            methods["SciPy M=PyAMG SA"] = lambda: run_scipy_pyamg(A, X, args)
        rows = {}
        for name, fn in methods.items():
            fn()  # warm-up (program builds, CuPy's kernels)
            times = []
            for _ in range(args.reps):
                t = time.perf_counter()
                values, vectors, iters = fn()
                times.append(time.perf_counter() - t)
            res, err = quality(A, values, vectors, exact)
            rows[name] = (np.median(times) * 1e3, iters, res <= args.tol, res, err)
        base = rows["ginkpy M=amg"][0]
        for name, (ms, iters, conv, res, err) in rows.items():
            print(f"{n:>5}^2 {name:<22} {ms:>10.1f} {iters:>6} {'yes' if conv else 'no':>5} {res:>9.1e} "
                  f"{err:>9.1e} {ms / base:>8.2f}x")


if __name__ == "__main__":
    main()
