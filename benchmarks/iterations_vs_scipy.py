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
``--preconditioners`` takes none, jacobi, gauss_seidel (SciPy's: a triangular solve with tril(A))
and ilu (SciPy's: the factors of ginkpy's exact ILU(0), two triangular solves); ``--sides right
left`` runs GMRES with M from either side (``Gmres.with_preconditioner_side``; SciPy's gmres is
left-preconditioned); ``--time`` adds each solve's time (median of ``--repeat`` interleaved runs;
ginkpy's apply alone, its setup done before) and its ratio to SciPy's in the same run.
The issue-32 table (GMRES(30) right and left against SciPy's, iterations and times):

    OPENBLAS_NUM_THREADS=1 python benchmarks/iterations_vs_scipy.py ../shared/matrices --methods gmres \
        --preconditioners jacobi gauss_seidel ilu --sides right left --time --repeat 3

The issue-21 verdict table (BiCGStab on every executor, with and without Jacobi):

    python benchmarks/iterations_vs_scipy.py ../shared/matrices --methods bicgstab \\
        --preconditioners none jacobi --olmstead --batch
    python benchmarks/iterations_vs_scipy.py --methods bicgstab --olmstead --renumber 9
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from bench_common import print_header
from ginkpy.problems import olmstead

METHODS = {"cg": "Cg", "bicgstab": "Bicgstab", "gmres": "Gmres"}
SCIPY_INFO = {-10: "rho breakdown", -11: "omega breakdown"}


def scipy_preconditioner(A, prec: str):
    """SciPy's M equal to ginkpy's preconditioner ``prec`` (None for "none")."""
    if prec == "jacobi":
        d = A.diagonal()
        return spla.LinearOperator(A.shape, matvec=lambda v: v.ravel() / d)
    if prec == "gauss_seidel":
        L = sp.tril(A, format="csr")
        return spla.LinearOperator(A.shape, matvec=lambda v: spla.spsolve_triangular(L, v.ravel()))
    if prec == "ilu":
        ref = gk.ReferenceExecutor()
        factors = gk.factorization.Ilu.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, A))
        L, U = factors.l_factor.to_scipy().tocsr(), factors.u_factor.to_scipy().tocsr()
        return spla.LinearOperator(A.shape, matvec=lambda v: spla.spsolve_triangular(
            U, spla.spsolve_triangular(L, v.ravel()), lower=False))
    return None


def ginkpy_preconditioner(prec: str):
    """The parameters of ginkpy's preconditioner ``prec`` (None for "none")."""
    return {"none": None, "jacobi": gk.preconditioner.Jacobi.build().with_max_block_size(1),
            "gauss_seidel": gk.preconditioner.GaussSeidel.build(), "ilu": gk.preconditioner.Ilu.build()}[prec]


def scipy_iterations(method: str, A, b, rtol: float, prec: str, max_iters: int, repeat: int = 0):
    """SciPy's cell, and a function that times one more solve (seconds) where ``repeat``."""
    M = scipy_preconditioner(A, prec)
    count = [0]

    def callback(*_):
        count[0] += 1

    kwargs = dict(rtol=rtol, atol=0.0, maxiter=max_iters, M=M, callback=callback)
    if method == "gmres":  # (SciPy's maxiter counts restart cycles: the same limit of inner iterations)
        kwargs.update(restart=30, callback_type="pr_norm", maxiter=-(-max_iters // 30))

    def run():
        count[0] = 0
        start = time.perf_counter()
        with np.errstate(all="ignore"):
            x, info = getattr(spla, method)(A, b, **kwargs)
        return x, info, time.perf_counter() - start

    x, info, _ = run()
    res = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
    if info == 0 and res <= 1.01 * rtol:
        cell = f"{count[0]}, {res:.1e}"
    else:
        verdict = "iteration limit" if info > 0 else SCIPY_INFO.get(info, f"info {info}")
        cell = f"{count[0]} ({verdict}), {res:.1e}"
    return cell, (lambda: run()[2]) if repeat else None


def _criteria(params, rtol: float, max_iters: int):
    return params.with_criteria(gk.stop.Iteration.build().with_max_iters(max_iters),
                                gk.stop.ResidualNorm.build().with_reduction_factor(rtol))


def ginkpy_iterations(exec, solver: str, A, b, rtol: float, prec: str, max_iters: int, repeat: int = 0,
                      side: str | None = None):
    """ginkpy's cell, and a function that times one more apply (seconds) where ``repeat``."""
    params = _criteria(getattr(gk.solver, solver).build(), rtol, max_iters)
    if prec != "none":
        params.with_preconditioner(ginkpy_preconditioner(prec))
    if side is not None:
        params.with_preconditioner_side(side)
    solver = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
    log = gk.log.Convergence()
    solver.add_logger(log)
    B = gk.matrix.Dense.from_numpy(exec, b)
    X = gk.matrix.Dense.zeros(exec, (A.shape[0], 1))

    def run():
        X.fill(0.0)
        exec.synchronize()
        start = time.perf_counter()
        solver.apply(B, X)
        exec.synchronize()
        return time.perf_counter() - start

    run()
    res = np.linalg.norm(b - A @ X.to_numpy()[:, 0]) / np.linalg.norm(b)
    note = "" if log.has_converged else f" ({log.stop_reason})"
    return f"{log.num_iterations}{note}, {res:.1e}", run if repeat else None


def batch_iterations(exec, solver: str, A, b, rtol: float, prec: str, max_iters: int) -> str:
    """The batched solver on a batch of one item (the same system)."""
    params = (getattr(gk.batch.solver, solver).build().with_max_iterations(max_iters).with_tolerance(rtol)
              .with_tolerance_type("relative"))
    if prec == "jacobi":
        params.with_preconditioner(gk.batch.preconditioner.Jacobi.build().with_max_block_size(1))
    elif prec != "none":
        return "(no batched " + prec + ")"
    solver = params.on(exec).generate(gk.batch.matrix.Csr.from_scipy(exec, [A]))
    x = gk.batch.MultiVector.zeros(exec, (1, A.shape[0]))
    result = solver.apply_with_tolerances(gk.batch.MultiVector.from_numpy(exec, b.reshape(1, -1)), x, rtol, 0.0,
                                          max_iters)
    res = np.linalg.norm(b - A @ x.to_numpy()[0]) / np.linalg.norm(b)
    reason = result.stop_reasons[0]
    note = "" if reason == gk.stop.StopReason.CONVERGED else f" ({reason})"
    return f"{int(result.iterations[0])}{note}, {res:.1e}"


def _timed(cells: list[str], runs: list, repeat: int) -> list[str]:
    """The cells with the median time of ``repeat`` interleaved runs of each (runs[0]: SciPy's)
    and its ratio to SciPy's."""
    times = [[] for _ in runs]
    for _ in range(repeat):
        for i, run in enumerate(runs):
            if run is not None:
                times[i].append(run())
    medians = [float(np.median(t)) if t else None for t in times]
    out = [f"{cells[0]}, {medians[0] * 1e3:.1f} ms"]
    for cell, t in zip(cells[1:], medians[1:]):
        out.append(cell if t is None else f"{cell}, {t * 1e3:.1f} ms ({t / medians[0]:.2f}x)")
    return out + cells[len(runs):]


def _row(args, executors, method: str, name: str, A, prec: str) -> str:
    """One table row: SciPy's cell, then ginkpy's per executor (and side, for GMRES), the batch's."""
    solver, b = METHODS[method], A @ np.ones(A.shape[0])
    run = (args.rtol, prec, args.max_iters)
    repeat = args.repeat if args.time else 0
    scipy_cell, scipy_run = scipy_iterations(method, A, b, *run, repeat=repeat)
    cells, runs = [scipy_cell], [scipy_run]
    for e in executors:
        for side in args.sides:
            if method == "gmres" or side == args.sides[0]:
                cell, timer = ginkpy_iterations(e, solver, A, b, *run, repeat=repeat,
                                                side=side if method == "gmres" else None)
            else:
                cell, timer = "(one side)", None
            cells.append(cell)
            runs.append(timer)
    if args.batch:
        cells += [batch_iterations(e, solver, A, b, *run) for e in executors]
    if args.time:
        cells = _timed(cells, runs, args.repeat)
    label = ("" if prec == "none" else f"{prec}-") + solver
    return f"| {name} | {label} | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", help="Matrix Market files (none: only --olmstead's matrix)")
    parser.add_argument("--executors", nargs="+", default=["reference", "opencl"])
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    parser.add_argument("--preconditioners", nargs="+", choices=["none", "jacobi", "gauss_seidel", "ilu"],
                        default=["jacobi"])
    parser.add_argument("--sides", nargs="+", choices=["right", "left"], default=["right"],
                        help="GMRES: M from the right (Ginkgo's) and/or the left (SciPy's)")
    parser.add_argument("--olmstead", action="store_true", help="add olm1000 (gk.problems.olmstead(500))")
    parser.add_argument("--batch", action="store_true", help="add the batched solver on each executor")
    parser.add_argument("--renumber", type=int, default=0, metavar="K",
                        help="add K random symmetric renumberings of each matrix (other rounding orders)")
    parser.add_argument("--rtol", type=float, default=1e-8)
    parser.add_argument("--max-iters", type=int, default=10000)
    parser.add_argument("--time", action="store_true", help="add solve times and their ratio to SciPy's")
    parser.add_argument("--repeat", type=int, default=3, help="--time: interleaved runs per solve (median)")
    args = parser.parse_args()
    executors = [gk.executor(name) for name in args.executors]
    names = [f"{e} {side}" if len(args.sides) > 1 else e for e in args.executors for side in args.sides]
    names += [f"batch {name}" for name in args.executors] if args.batch else []
    matrices = [(path.name, gk.read(path, gk.ReferenceExecutor()).to_scipy())
                for path in (sorted(Path(args.directory).glob("*.mtx")) if args.directory else [])]
    if args.olmstead:
        matrices.append(("olm1000 (olmstead(500))", olmstead(500)))
    rng = np.random.default_rng(0)
    for name, A in list(matrices):
        for k in range(args.renumber):
            perm = rng.permutation(A.shape[0])
            matrices.append((f"{name} renumbered {k + 1}", A[perm][:, perm].tocsr()))
    print_header("Iterations (and times) against SciPy on " + ", ".join(
        getattr(getattr(e, "info", None), "name", e.backend) for e in executors) + f", {time.strftime('%Y-%m-%d')}")
    print("| matrix | method | SciPy | " + " | ".join(names) + " |")
    print("|---" * (3 + len(names)) + "|")
    for method in args.methods:
        for name, A in matrices:
            if method == "cg" and abs(A - A.T).max() > 1e-12 * abs(A).max():
                continue
            for prec in args.preconditioners:
                print(_row(args, executors, method, name, A, prec), flush=True)


if __name__ == "__main__":
    main()
