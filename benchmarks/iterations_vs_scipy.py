"""Iteration counts of ginkpy's Jacobi-preconditioned CG, BiCGStab and GMRES(30) beside SciPy's,
on every Matrix Market file of a directory (b = A * ones, ||b - A x|| <= rtol ||b||).

    python benchmarks/iterations_vs_scipy.py ../shared/matrices [--executors reference opencl]

CG runs on the symmetric matrices only. Each ginkpy column shows iterations and the true
relative residual; a stop other than convergence is named.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import scipy.sparse.linalg as spla

import ginkpy as gk

METHODS = [("cg", "Cg"), ("bicgstab", "Bicgstab"), ("gmres", "Gmres")]


def scipy_iterations(method: str, A, b, rtol: float) -> str:
    d = A.diagonal()
    M = spla.LinearOperator(A.shape, matvec=lambda v: v.ravel() / d)
    count = [0]

    def callback(*_):
        count[0] += 1

    kwargs = dict(rtol=rtol, atol=0.0, maxiter=10000, M=M, callback=callback)
    if method == "gmres":
        kwargs.update(restart=30, callback_type="pr_norm")
    x, info = getattr(spla, method)(A, b, **kwargs)
    ok = info == 0 and np.linalg.norm(b - A @ x) <= 1.01 * rtol * np.linalg.norm(b)
    return f"{count[0]}" + ("" if ok else " (failed)")


def ginkpy_iterations(exec, solver: str, A, b, rtol: float) -> str:
    solver = (getattr(gk.solver, solver).build()
              .with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
              .with_criteria(gk.stop.Iteration.build().with_max_iters(10000),
                             gk.stop.ResidualNorm.build().with_reduction_factor(rtol))
              .on(exec).generate(gk.matrix.Csr.from_scipy(exec, A)))
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = solver.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, (A.shape[0], 1)))
    res = np.linalg.norm(b - A @ x.to_numpy()[:, 0]) / np.linalg.norm(b)
    note = "" if log.has_converged else f" ({log.stop_reason})"
    return f"{log.num_iterations}{note}, {res:.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--executors", nargs="+", default=["reference", "opencl"])
    parser.add_argument("--rtol", type=float, default=1e-8)
    args = parser.parse_args()
    executors = [gk.executor(name) for name in args.executors]
    print(f"| matrix | method | SciPy | " + " | ".join(args.executors) + " |")
    print("|---" * (3 + len(executors)) + "|")
    for method, solver in METHODS:
        for path in sorted(Path(args.directory).glob("*.mtx")):
            A = gk.read(path, gk.ReferenceExecutor()).to_scipy()
            if method == "cg" and abs(A - A.T).max() > 1e-12 * abs(A).max():
                continue
            b = A @ np.ones(A.shape[0])
            cells = [ginkpy_iterations(e, solver, A, b, args.rtol) for e in executors]
            print(f"| {path.name} | Jacobi-{solver} | {scipy_iterations(method, A, b, args.rtol)} | "
                  + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
