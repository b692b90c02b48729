"""Whole solves as a user times them: a SciPy matrix in, a NumPy x out, setup included.

Each case is solved to rtol 1e-8 (1e-5 in float32 and complex64) from x = 0 with b = A 1 by
- ginkpy through the builder (Csr.from_scipy, Jacobi, the solver, apply, x back to NumPy),
- ginkpy through ``ginkpy.linalg`` (``cg(A, b, rtol=1e-8, M="jacobi")``, as a SciPy user calls it),
- SciPy's solver with a Jacobi LinearOperator,
- CuPy's (cupyx.scipy.sparse.linalg) with a Jacobi LinearOperator, where CuPy and a GPU are
  present (the matrix and b copied to the GPU and x back inside the timed region),
and the time of the run after a warm-up (with --reps N: the median of N interleaved rounds) is
reported, with the iterations, us per iteration, the true relative residual ||b - A x|| / ||b||
each reached, the ginkpy executor's kernel launches and host reads per iteration (its
counters), and the ratios (> 1: ginkpy faster). CuPy's gmres gets maxiter 100000 inner
iterations (its maxiter counts those, not restart cycles): enough to converge to the same
tolerance.

    python benchmarks/bench_solve.py                       # the issue's cases at small sizes
    python benchmarks/bench_solve.py --cases cg_poisson_2d --sizes 1000000
    python benchmarks/bench_solve.py --executor reference  # the reference executor against SciPy
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_solve.py --cases cg_poisson_2d --sizes 10000 90000 --reps 9
    python benchmarks/bench_solve.py --dtype complex128     # the complex cases (complex64 too)

Complex value types run the complex cases by default: CG on the magnetic Laplacian (Hermitian
positive definite) and GMRES(30) and BiCGStab on the damped Helmholtz system (complex
symmetric, indefinite), from ``ginkpy.problems``; the real cases run in a complex type as
complex matrices with zero imaginary parts, the complex ones not in a real type.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse.linalg as spla

import bench_common as bc
import ginkpy as gk
from ginkpy import problems

CASES = {
    # name: (solver, problem from rows)
    "cg_poisson_2d": ("cg", lambda rows: problems.poisson_2d(max(2, round(rows ** 0.5)))),
    "cg_poisson_3d": ("cg", lambda rows: problems.poisson_3d(max(2, round(rows ** (1 / 3))))),
    "bicgstab_convdiff_2d": ("bicgstab", lambda rows: problems.convection_diffusion_2d(max(2, round(rows ** 0.5)))),
    "gmres_convdiff_2d": ("gmres", lambda rows: problems.convection_diffusion_2d(max(2, round(rows ** 0.5)))),
}
COMPLEX_CASES = {
    "cg_magnetic_2d": ("cg", lambda rows: problems.magnetic_laplacian_2d(max(2, round(rows ** 0.5)))),
    "gmres_helmholtz_2d": ("gmres", lambda rows: problems.helmholtz_2d(max(2, round(rows ** 0.5)))),
    "bicgstab_helmholtz_2d": ("bicgstab", lambda rows: problems.helmholtz_2d(max(2, round(rows ** 0.5)))),
}
ALL_CASES = {**CASES, **COMPLEX_CASES}
SOLVERS = {"cg": gk.solver.Cg, "bicgstab": gk.solver.Bicgstab, "gmres": gk.solver.Gmres}


def interleaved(runs: dict, reps: int) -> dict:
    """Per name of ``runs`` (name -> callable), (median seconds, the last result): every run
    once to warm up, then ``reps`` rounds that run each once in turn, so that a change of the
    machine's load falls on all of them alike."""
    for run in runs.values():
        run()
    times: dict = {name: [] for name in runs}
    outs: dict = {}
    for _ in range(reps):
        for name, run in runs.items():
            start = time.perf_counter()
            outs[name] = run()
            times[name].append(time.perf_counter() - start)
    return {name: (float(np.median(times[name])), outs[name]) for name in runs}


def ginkpy_builder(exec, method, S, b, rtol):
    """The builder API: returns x and the iterations."""
    A = gk.matrix.Csr.from_scipy(exec, S)
    params = SOLVERS[method].build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
    if method == "gmres":
        params.with_krylov_dim(30)
    solver = (params.with_criteria(gk.stop.Iteration.build().with_max_iters(100000),
                                   gk.stop.ResidualNorm.build().with_reduction_factor(rtol))
              .on(exec).generate(A))
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    B = gk.matrix.Dense.from_numpy(exec, b)
    X = gk.matrix.Dense.zeros(exec, (S.shape[0], 1), S.dtype)
    solver.apply(B, X)
    return X.to_numpy()[:, 0], logger.num_iterations, logger.has_converged


def ginkpy_linalg(exec, method, S, b, rtol):
    kwargs = {"restart": 30} if method == "gmres" else {}
    x, info = getattr(gk.linalg, method)(S, b, rtol=rtol, M="jacobi", maxiter=100000, executor=exec, **kwargs)
    return x, None, info == 0


def scipy_solve(method, S, b, counter, rtol):
    d = 1 / S.diagonal()
    M = spla.LinearOperator(S.shape, matvec=lambda v: d * v, dtype=S.dtype)
    kwargs = {"restart": 30} if method == "gmres" else {}
    counter.clear()
    cb = (lambda *args: counter.append(1))
    if method == "gmres":
        kwargs["callback_type"] = "pr_norm"
    x, info = getattr(spla, method)(S, b, rtol=rtol, M=M, maxiter=100000, callback=cb, **kwargs)
    return x, len(counter), info == 0


def cupy_solve(cupy, method, S, b, counter, rtol):
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla
    if not hasattr(cla, method):
        return None
    A = csp.csr_matrix(S)
    bg = cupy.asarray(b)
    d = 1 / A.diagonal()
    M = cla.LinearOperator(S.shape, matvec=lambda v: d * v, dtype=S.dtype)
    kwargs = {"restart": 30} if method == "gmres" else {}
    counter.clear()
    # complex csr and b as SciPy's (cupyx's cg and gmres take complex64/complex128)
    tol = {"tol": rtol} if "tol" in cla.cg.__code__.co_varnames else {"rtol": rtol}
    x, info = getattr(cla, method)(A, bg, M=M, maxiter=100000, callback=lambda *a: counter.append(1), **tol,
                                   **kwargs)
    return cupy.asnumpy(x), len(counter), int(info) == 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", nargs="+", choices=list(ALL_CASES),
                   help="default: the real cases, or the complex ones for a complex --dtype")
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 90000])
    p.add_argument("--executor", default="opencl")
    p.add_argument("--dtype", default="float64", choices=["float64", "float32", "complex128", "complex64"])
    p.add_argument("--no-cupy", action="store_true")
    p.add_argument("--no-scipy", action="store_true", help="skip SciPy (slow at the largest sizes)")
    p.add_argument("--reps", type=int, default=1,
                   help="interleaved rounds (each method once per round, the median reported; default 1: the "
                        "run after a warm-up)")
    args = p.parse_args()
    dtype = np.dtype(args.dtype)
    if args.cases is None:
        args.cases = list(COMPLEX_CASES if dtype.kind == "c" else CASES)
    rtol = 1e-8 if dtype in (np.float64, np.complex128) else 1e-5
    exec, cupy = bc.executor_and_cupy(args)
    print(f"ginkpy on {bc.device_name(exec)}; CuPy: {'yes' if cupy else 'no'}; rtol {rtol}, {args.dtype}")
    print(f"{'case':<28}{'who':<16}{'total ms':>10}{'iters':>7}{'us/iter':>9}{'res':>10}{'launch/it':>10}{'reads':>7}"
          f"{'x scipy':>9}{'x cupy':>8}  ok")
    for case in args.cases:
        method, make = ALL_CASES[case]
        if case in COMPLEX_CASES and dtype.kind != "c":
            print(f"({case} is complex: skipped for {dtype}; run it with --dtype complex128 or complex64)")
            continue
        for rows in args.sizes:
            S = make(rows).astype(dtype).tocsr()
            n = S.shape[0]
            b = S @ np.ones(n, dtype=dtype)
            label = f"{case}:{n}"
            counter: list = []
            runs = {}
            if not args.no_scipy:
                runs["scipy"] = lambda: scipy_solve(method, S, b, counter, rtol)
            if cupy is not None:
                def run_cupy():
                    out = cupy_solve(cupy, method, S, b, counter, rtol)
                    cupy.cuda.Device().synchronize()
                    return out
                runs["cupy"] = run_cupy
            for who, fn in (("ginkpy builder", ginkpy_builder), ("ginkpy linalg", ginkpy_linalg)):
                runs[who] = lambda fn=fn: fn(exec, method, S, b, rtol)
            # the launches and reads of one ginkpy solve of each door
            counts = {}
            for who in ("ginkpy builder", "ginkpy linalg"):
                before = dict(exec.counters)
                runs[who]()
                counts[who] = {key: exec.counters[key] - before[key] for key in ("launches", "reads")}
            timings = interleaved(runs, max(1, args.reps))
            t_scipy = timings["scipy"][0] if "scipy" in timings else None
            t_cupy = timings["cupy"][0] if "cupy" in timings and timings["cupy"][1] is not None else None
            results = []
            relres = lambda x: float(np.linalg.norm(b - S @ x) / np.linalg.norm(b))  # noqa: E731
            if t_scipy is not None:
                _, it_scipy, ok = timings["scipy"][1]
                results.append(("scipy", t_scipy, it_scipy, ok, relres(timings["scipy"][1][0]), None, None))
            if t_cupy is not None:
                out = timings["cupy"][1]
                results.append(("cupy", t_cupy, out[1], out[2], relres(out[0]), None, None))
            for who in ("ginkpy builder", "ginkpy linalg"):
                t, (x, its, ok) = timings[who]
                if its is None:
                    its = results[-1][2] if results and results[-1][0].startswith("ginkpy") else None
                true = relres(x)
                ok = ok and true <= rtol * 1.0001
                results.append((who, t, its, ok, true, counts[who]["launches"], counts[who]["reads"]))
            for who, t, its, ok, res, launches, reads in results:
                per = t / its * 1e6 if its else None
                ratio_s = t_scipy / t if t_scipy and who.startswith("ginkpy") else None
                ratio_c = t_cupy / t if t_cupy and who.startswith("ginkpy") else None
                lpi = launches / its if launches is not None and its else None
                print(f"{label:<28}{who:<16}{t * 1e3:>10.1f}{bc.fmt(its, 'd'):>7}{bc.fmt(per, '.1f'):>9}"
                      f"{bc.fmt(res, '.1e'):>10}{bc.fmt(lpi, '.2f'):>10}{bc.fmt(reads, '.0f'):>7}{bc.fmt(ratio_s, '.2f'):>9}"
                      f"{bc.fmt(ratio_c, '.2f'):>8}  {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
