"""Iteration counts and verdicts of ginkpy's CG, BiCGStab and GMRES(30) beside SciPy's, on every
Matrix Market file of a directory (b = A * ones, ||b - A x|| <= rtol ||b||).

    python benchmarks/iterations_vs_scipy.py ../shared/matrices [--executors reference opencl]
        [--methods bicgstab] [--preconditioners none jacobi] [--olmstead] [--batch]

CG runs on the symmetric matrices only. Each ginkpy column shows iterations, the verdict where
it is not convergence, and the true relative residual. ``--olmstead`` adds olm1000
(``gk.problems.olmstead(500)``, the collection's matrix entry for entry); ``--batch`` adds a
column of the batched solver (BiCGStab, CG, GMRES of ``gk.batch.solver``) on each executor;
``--renumber K`` K random symmetric renumberings of each matrix (the same system in other
rounding orders: a verdict that changes there rests on rounding).
The issue-21 verdict table (BiCGStab on every executor, with and without Jacobi):

    python benchmarks/iterations_vs_scipy.py ../shared/matrices --methods bicgstab \\
        --preconditioners none jacobi --olmstead --batch
    python benchmarks/iterations_vs_scipy.py --methods bicgstab --olmstead --renumber 9
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import scipy.sparse.linalg as spla

import ginkpy as gk
from ginkpy.problems import olmstead

METHODS = {"cg": "Cg", "bicgstab": "Bicgstab", "gmres": "Gmres"}
SCIPY_INFO = {-10: "rho breakdown", -11: "omega breakdown"}


def scipy_iterations(method: str, A, b, rtol: float, jacobi: bool, max_iters: int) -> str:
    d = A.diagonal()
    M = spla.LinearOperator(A.shape, matvec=lambda v: v.ravel() / d) if jacobi else None
    count = [0]

    def callback(*_):
        count[0] += 1

    kwargs = dict(rtol=rtol, atol=0.0, maxiter=max_iters, M=M, callback=callback)
    if method == "gmres":
        kwargs.update(restart=30, callback_type="pr_norm")
    with np.errstate(all="ignore"):
        x, info = getattr(spla, method)(A, b, **kwargs)
        res = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
    if info == 0 and res <= 1.01 * rtol:
        return f"{count[0]}, {res:.1e}"
    verdict = "iteration limit" if info > 0 else SCIPY_INFO.get(info, f"info {info}")
    return f"{count[0]} ({verdict}), {res:.1e}"


def _criteria(params, rtol: float, max_iters: int):
    return params.with_criteria(gk.stop.Iteration.build().with_max_iters(max_iters),
                                gk.stop.ResidualNorm.build().with_reduction_factor(rtol))


def ginkpy_iterations(exec, solver: str, A, b, rtol: float, jacobi: bool, max_iters: int) -> str:
    params = _criteria(getattr(gk.solver, solver).build(), rtol, max_iters)
    if jacobi:
        params.with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
    solver = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = solver.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, (A.shape[0], 1)))
    res = np.linalg.norm(b - A @ x.to_numpy()[:, 0]) / np.linalg.norm(b)
    note = "" if log.has_converged else f" ({log.stop_reason})"
    return f"{log.num_iterations}{note}, {res:.1e}"


def batch_iterations(exec, solver: str, A, b, rtol: float, jacobi: bool, max_iters: int) -> str:
    """The batched solver on a batch of one item (the same system)."""
    params = (getattr(gk.batch.solver, solver).build().with_max_iterations(max_iters).with_tolerance(rtol)
              .with_tolerance_type("relative"))
    if jacobi:
        params.with_preconditioner(gk.batch.preconditioner.Jacobi.build().with_max_block_size(1))
    solver = params.on(exec).generate(gk.batch.matrix.Csr.from_scipy(exec, [A]))
    x = gk.batch.MultiVector.zeros(exec, (1, A.shape[0]))
    result = solver.apply_with_tolerances(gk.batch.MultiVector.from_numpy(exec, b.reshape(1, -1)), x, rtol, 0.0,
                                          max_iters)
    res = np.linalg.norm(b - A @ x.to_numpy()[0]) / np.linalg.norm(b)
    reason = result.stop_reasons[0]
    note = "" if reason == gk.stop.StopReason.CONVERGED else f" ({reason})"
    return f"{int(result.iterations[0])}{note}, {res:.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", help="Matrix Market files (none: only --olmstead's matrix)")
    parser.add_argument("--executors", nargs="+", default=["reference", "opencl"])
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    parser.add_argument("--preconditioners", nargs="+", choices=["none", "jacobi"], default=["jacobi"])
    parser.add_argument("--olmstead", action="store_true", help="add olm1000 (gk.problems.olmstead(500))")
    parser.add_argument("--batch", action="store_true", help="add the batched solver on each executor")
    parser.add_argument("--renumber", type=int, default=0, metavar="K",
                        help="add K random symmetric renumberings of each matrix (other rounding orders)")
    parser.add_argument("--rtol", type=float, default=1e-8)
    parser.add_argument("--max-iters", type=int, default=10000)
    args = parser.parse_args()
    executors = [gk.executor(name) for name in args.executors]
    names = args.executors + ([f"batch {name}" for name in args.executors] if args.batch else [])
    matrices = [(path.name, gk.read(path, gk.ReferenceExecutor()).to_scipy())
                for path in (sorted(Path(args.directory).glob("*.mtx")) if args.directory else [])]
    if args.olmstead:
        matrices.append(("olm1000 (olmstead(500))", olmstead(500)))
    rng = np.random.default_rng(0)
    for name, A in list(matrices):
        for k in range(args.renumber):
            perm = rng.permutation(A.shape[0])
            matrices.append((f"{name} renumbered {k + 1}", A[perm][:, perm].tocsr()))
    print("| matrix | method | SciPy | " + " | ".join(names) + " |")
    print("|---" * (3 + len(names)) + "|")
    for method in args.methods:
        solver = METHODS[method]
        for name, A in matrices:
            if method == "cg" and abs(A - A.T).max() > 1e-12 * abs(A).max():
                continue
            b = A @ np.ones(A.shape[0])
            for jacobi in (p == "jacobi" for p in args.preconditioners):
                run = (args.rtol, jacobi, args.max_iters)
                cells = [ginkpy_iterations(e, solver, A, b, *run) for e in executors]
                if args.batch:
                    cells += [batch_iterations(e, solver, A, b, *run) for e in executors]
                label = f"{'Jacobi-' if jacobi else ''}{solver}"
                print(f"| {name} | {label} | {scipy_iterations(method, A, b, *run)} | " + " | ".join(cells) + " |",
                      flush=True)


if __name__ == "__main__":
    main()
