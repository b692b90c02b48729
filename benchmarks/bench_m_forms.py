"""The forms of SciPy's M at gk.linalg's door, whole solves with the solver cache cleared before
each run (``gk.linalg.clear_cache()``: A's upload and the preconditioner's setup paid every
time, as a first call would), same-run ratios:

- Jacobi-CG on 2D Poisson: ``M=scipy.sparse.diags(1 / A.diagonal())`` (fused scalar Jacobi with
  M's diagonal) against ``M="jacobi"`` and against SciPy's cg with the same M;
- GMRES with ``M=LinearOperator(A.shape, spilu(A).solve)`` (its factors on the executor) against
  ``M="ilut"`` (ginkpy's threshold ILU, factorized in the timed run) and SciPy's gmres with the
  same operator; spilu's own time (the user's, made once before) is printed apart;
- a host LinearOperator M (a Python function; PyAMG's ``aspreconditioner()`` is one): the
  blocking device reads per application (``exec.counters["reads"]``) and its time beside the
  fused Jacobi.

The methods run in turn, ``--reps`` rounds (interleaved), after one warm-up each; medians.
SciPy runs with one BLAS thread (OPENBLAS_NUM_THREADS=1 etc. set here before NumPy loads).

    python benchmarks/bench_m_forms.py [--sizes 100 300] [--executor opencl] [--reps 7]

Measured (2-core PoCL, shared with other work: load average about 4 during the run, so take
the ratios, not the times; 7 rounds, rtol 1e-8): diags M over M="jacobi" 0.96x the time at
100^2 (183 iterations each) and 0.89x at 300^2 (531); SciPy's cg with the same M took 1.07x and
1.39x ginkpy's; the spilu operator over M="ilut" 0.81x and 0.90x (the same 142 and 741 GMRES(30)
iterations: "ilut" is spilu's factorization, made in the timed run); a host LinearOperator M
read the device 1.05 and 1.02 times per iteration (one application each, the rest the solve's
own reads) and took 7.5x and 2.3x the fused diags M's time.
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402

import ginkpy as gk  # noqa: E402
from ginkpy.problems import poisson_2d  # noqa: E402

RTOL = 1e-8


def _timed(run, exec) -> tuple[float, object]:
    gk.linalg.clear_cache()
    exec.synchronize()
    start = time.perf_counter()
    out = run()
    exec.synchronize()
    return time.perf_counter() - start, out


def _count(method, *args, **kwargs) -> tuple[np.ndarray, int, int]:
    """x, info and the iterations (callback calls) of one solve."""
    calls = []
    x, info = method(*args, callback=lambda xk: calls.append(1), **kwargs)
    return x, info, len(calls)


def _rounds(methods: dict, exec, reps: int) -> dict:
    """Each method's median time over ``reps`` interleaved rounds (after a warm-up each)."""
    for run in methods.values():
        _timed(run, exec)
    times = {name: [] for name in methods}
    for _ in range(reps):
        for name, run in methods.items():
            times[name].append(_timed(run, exec)[0])
    return {name: float(np.median(t)) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300], help="grid sides of 2D Poisson")
    parser.add_argument("--executor", default="opencl")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    exec = gk.executor(args.executor)
    print(f"executor {exec!r}; {args.reps} interleaved rounds, medians; rtol {RTOL:g}; solver cache cleared "
          f"before every run; SciPy with one BLAS thread")
    for side in args.sizes:
        A = poisson_2d(side).tocsr()
        b = A @ np.ones(A.shape[0])
        n = A.shape[0]
        M = sp.diags(1.0 / A.diagonal())
        d = 1.0 / A.diagonal()
        host_M = spla.LinearOperator(A.shape, matvec=lambda r: d * r, dtype=float)
        start = time.perf_counter()
        ilu = spla.spilu(A.tocsc())
        spilu_time = time.perf_counter() - start
        ilu_M = spla.LinearOperator(A.shape, matvec=ilu.solve)
        cg = dict(rtol=RTOL, executor=exec)
        gm = dict(rtol=RTOL, executor=exec, restart=30, callback_type="legacy")
        methods = {
            'cg M="jacobi"': lambda: gk.linalg.cg(A, b, M="jacobi", **cg),
            "cg M=diags(1/d)": lambda: gk.linalg.cg(A, b, M=M, **cg),
            "cg M=host LinearOperator": lambda: gk.linalg.cg(A, b, M=host_M, **cg),
            "SciPy cg M=diags(1/d)": lambda: spla.cg(A, b, rtol=RTOL, M=M),
            'gmres M="ilut"': lambda: gk.linalg.gmres(A, b, M="ilut", **gm),
            "gmres M=LinearOperator(spilu.solve)": lambda: gk.linalg.gmres(A, b, M=ilu_M, **gm),
            "SciPy gmres M=LinearOperator(spilu.solve)": lambda: spla.gmres(A, b, rtol=RTOL, M=ilu_M, restart=30),
        }
        iterations = {}
        for name, method, kw, m in (('cg M="jacobi"', gk.linalg.cg, cg, "jacobi"), ("cg M=diags(1/d)", gk.linalg.cg, cg, M),
                                    ("cg M=host LinearOperator", gk.linalg.cg, cg, host_M),
                                    ('gmres M="ilut"', gk.linalg.gmres, gm, "ilut"),
                                    ("gmres M=LinearOperator(spilu.solve)", gk.linalg.gmres, gm, ilu_M)):
            gk.linalg.clear_cache()
            x, info, its = _count(method, A, b, M=m, **kw)
            iterations[name] = (its, info, np.linalg.norm(b - A @ x) / np.linalg.norm(b))
        for name, method, kw in (("SciPy cg M=diags(1/d)", spla.cg, dict(M=M)),
                                 ("SciPy gmres M=LinearOperator(spilu.solve)", spla.gmres,
                                  dict(M=ilu_M, restart=30, callback_type="legacy"))):
            x, info, its = _count(method, A, b, rtol=RTOL, **kw)
            iterations[name] = (its, info, np.linalg.norm(b - A @ x) / np.linalg.norm(b))
        # blocking reads per application of a host M (one application per iteration, and one at the start)
        gk.linalg.clear_cache()
        exec.synchronize()
        before = exec.counters["reads"]
        _, _, host_its = _count(gk.linalg.cg, A, b, M=host_M, **cg)
        host_reads = exec.counters["reads"] - before
        gk.linalg.clear_cache()
        before = exec.counters["reads"]
        _, _, fused_its = _count(gk.linalg.cg, A, b, M=M, **cg)
        fused_reads = exec.counters["reads"] - before
        times = _rounds(methods, exec, args.reps)
        print(f"\n2D Poisson {side}^2 ({n} rows); spilu(A) took {1e3 * spilu_time:.1f} ms (made once, not timed below)")
        print(f"{'method':<44}{'ms':>9}{'iters':>7}{'info':>6}{'rel. res.':>11}")
        for name in methods:
            its, info, res = iterations[name]
            print(f"{name:<44}{1e3 * times[name]:>9.2f}{its:>7d}{info:>6d}{res:>11.2e}")
        t = times
        jac, diag, host = t['cg M="jacobi"'], t["cg M=diags(1/d)"], t["cg M=host LinearOperator"]
        ilut, op, scipy_op = t['gmres M="ilut"'], t["gmres M=LinearOperator(spilu.solve)"], \
            t["SciPy gmres M=LinearOperator(spilu.solve)"]
        print(f"ratios: diags M / M='jacobi' {diag / jac:.2f}x the time; SciPy cg / ginkpy cg with diags M "
              f"{t['SciPy cg M=diags(1/d)'] / diag:.2f}x (above 1: ginkpy faster); spilu operator / M='ilut' "
              f"{op / ilut:.2f}x the time; SciPy gmres / ginkpy gmres with the spilu operator {scipy_op / op:.2f}x; "
              f"host LinearOperator / diags M {host / diag:.2f}x")
        print(f"device reads: host LinearOperator M {host_reads} in {host_its} iterations "
              f"({host_reads / max(host_its, 1):.2f} per iteration, one application of M each); "
              f"diags M {fused_reads} in {fused_its} iterations")


if __name__ == "__main__":
    main()
