"""GMRES(m)'s orthogonalization methods side by side in one run: ms per inner iteration of
gk.solver.Gmres with ortho_method "mgs" (the default: CGS with the DGKS second pass where the
first left little of w), "cgs" (one pass, one launch fewer) and "cgs2" (two passes always),
their ratio to "cgs" (interleaved repetitions, medians), the launches per inner iteration
(exec.counters, no preconditioner) and the time over the one-pass roofline of bench_cg.py
((v + 4) nnz + 4 n + (m + 7 + 2 / m) v n bytes per inner iteration at the copy bandwidth).

    python benchmarks/bench_gmres_ortho.py [--sizes ROWS ...] [--iters N] [--restart 30]
                                           [--dtype float64|complex128] [--mtx-dir DIR]
"""
from __future__ import annotations

import sys
import time

import numpy as np

import bench_common as bc
import ginkpy as gk
from bench_cg import roofline_bytes

METHODS = ("cgs", "mgs", "cgs2")


def _solver(exec, A, iters, restart, method):
    return (gk.solver.Gmres.build().with_krylov_dim(restart).with_ortho_method(method)
            .with_criteria(gk.stop.Iteration.build().with_max_iters(iters)).on(exec).generate(A))


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [90_000], None, dtypes=bc.REAL_DTYPES + bc.COMPLEX_DTYPES)
    p.add_argument("--iters", type=int, default=60, help="inner iterations per solve (a multiple of --restart)")
    p.add_argument("--restart", type=int, default=30, help="GMRES's restart (Krylov dimension)")
    p.set_defaults(reps=5)
    args = p.parse_args()
    if args.problems is None:
        args.problems = ["helmholtz_2d" if np.dtype(args.dtype).kind == "c" else "poisson_2d"]
    exec = gk.executor(args.executor)
    print(f"ginkpy executor: {bc.device_name(exec)}; value type {args.dtype}; GMRES({args.restart}), "
          f"{args.iters} inner iterations from x = 0, b = A 1; median of {args.reps} interleaved solves")
    bandwidth = bc.copy_bandwidth(exec, args.reps)
    print(f"copy bandwidth: {bandwidth / 1e9:.0f} GB/s\n")
    bc.print_header(f"{'matrix':<22}{'rows':>10}" + "".join(f"{m + ' ms':>10}{'x cgs':>7}{'launch':>7}{'x roof':>7}"
                                                          for m in METHODS))
    for name, S in bc.matrices(args, exec, keep=lambda S: S.shape[0] == S.shape[1]):
        n = S.shape[0]
        A = gk.matrix.Csr.from_scipy(exec, S)
        b = gk.matrix.Dense.from_numpy(exec, S @ np.ones(n, S.dtype))
        x = gk.matrix.Dense.zeros(exec, (n, 1), S.dtype)
        solvers = {m: _solver(exec, A, args.iters, args.restart, m) for m in METHODS}
        launches, times = {}, {m: [] for m in METHODS}
        for m, solver in solvers.items():  # untimed: kernels built, iterations captured, launches counted
            x.fill(0.0)
            solver.apply(b, x)
            exec.synchronize()
            before = exec.counters["launches"]
            x.fill(0.0)
            solver.apply(b, x)
            exec.synchronize()
            launches[m] = (exec.counters["launches"] - before) / args.iters
        for _ in range(args.reps):
            for m, solver in solvers.items():
                x.fill(0.0)
                exec.synchronize()
                t = time.perf_counter()
                solver.apply(b, x)
                exec.synchronize()
                times[m].append((time.perf_counter() - t) / args.iters)
        med = {m: float(np.median(times[m])) for m in METHODS}
        roof = roofline_bytes(S, args.restart) / bandwidth
        print(f"{name:<22}{n:>10}" + "".join(f"{med[m] * 1e3:>10.3f}{med[m] / med['cgs']:>7.2f}{launches[m]:>7.2f}"
                                             f"{med[m] / roof:>7.2f}" for m in METHODS))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
