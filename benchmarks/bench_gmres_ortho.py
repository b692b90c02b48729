"""GMRES(m)'s orthogonalization methods side by side in one run: ms per inner iteration of
gk.solver.Gmres with ortho_method "mgs" (the default: CGS with the DGKS second pass where the
first left little of w), "cgs" (one pass, one launch fewer) and "cgs2" (two passes always),
their ratio to "cgs" (interleaved repetitions, medians), the launches per inner iteration
(exec.counters, no preconditioner) and the time over the one-pass roofline of bench_cg.py
((v + 4) nnz + 4 n + (m + 7 + 2 / m) v n bytes per inner iteration at the copy bandwidth).

    python benchmarks/bench_gmres_ortho.py [--sizes ROWS ...] [--iters N] [--restart 30]
                                           [--dtype float64|complex128] [--mtx-dir DIR]
                                           [--preconditioner none|jacobi|gauss_seidel|ilu] [--sides right left]

With ``--sides right left`` each method runs with M from either side (``Gmres``'s
``preconditioner_side``; left is SciPy's gmres), columns "<method> R" and "<method> L", every
ratio against "cgs" of the first side: the cost of left preconditioning per inner iteration
(issue 32), e.g. ``--preconditioner gauss_seidel --sides right left --methods mgs``.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import bench_common as bc
import ginkpy as gk
from bench_cg import roofline_bytes

METHODS = ("cgs", "mgs", "cgs2")


PRECONDITIONERS = {"none": lambda: None, "jacobi": lambda: gk.preconditioner.Jacobi.build().with_max_block_size(1),
                   "gauss_seidel": lambda: gk.preconditioner.GaussSeidel.build(),
                   "ilu": lambda: gk.preconditioner.Ilu.build()}


def _solver(exec, A, iters, restart, method, preconditioner="none", side="right"):
    params = (gk.solver.Gmres.build().with_krylov_dim(restart).with_ortho_method(method)
              .with_preconditioner_side(side).with_criteria(gk.stop.Iteration.build().with_max_iters(iters)))
    if preconditioner != "none":
        params.with_preconditioner(PRECONDITIONERS[preconditioner]())
    return params.on(exec).generate(A)


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [90_000], None, dtypes=bc.REAL_DTYPES + bc.COMPLEX_DTYPES)
    p.add_argument("--iters", type=int, default=60, help="inner iterations per solve (a multiple of --restart)")
    p.add_argument("--restart", type=int, default=30, help="GMRES's restart (Krylov dimension)")
    p.add_argument("--preconditioner", choices=list(PRECONDITIONERS), default="none")
    p.add_argument("--sides", nargs="+", choices=["right", "left"], default=["right"],
                   help="M from the right (Ginkgo's) and/or the left (SciPy's gmres)")
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    p.set_defaults(reps=5)
    args = p.parse_args()
    keys = [(m, side) for side in args.sides for m in args.methods]
    label = {key: key[0] + (f" {key[1][0].upper()}" if len(args.sides) > 1 else "") for key in keys}
    if args.problems is None:
        args.problems = ["helmholtz_2d" if np.dtype(args.dtype).kind == "c" else "poisson_2d"]
    exec = gk.executor(args.executor)
    print(f"ginkpy executor: {bc.device_name(exec)}; value type {args.dtype}; GMRES({args.restart}), "
          f"{args.iters} inner iterations from x = 0, b = A 1; median of {args.reps} interleaved solves; "
          f"preconditioner {args.preconditioner}")
    bandwidth = bc.copy_bandwidth(exec, args.reps)
    print(f"copy bandwidth: {bandwidth / 1e9:.0f} GB/s\n")
    bc.print_header(f"{'matrix':<22}{'rows':>10}" + "".join(
        f"{label[key] + ' ms':>10}{'x ' + label[keys[0]]:>8}{'launch':>7}{'x roof':>7}" for key in keys))
    for name, S in bc.matrices(args, exec, keep=lambda S: S.shape[0] == S.shape[1]):
        n = S.shape[0]
        A = gk.matrix.Csr.from_scipy(exec, S)
        b = gk.matrix.Dense.from_numpy(exec, S @ np.ones(n, S.dtype))
        x = gk.matrix.Dense.zeros(exec, (n, 1), S.dtype)
        solvers = {key: _solver(exec, A, args.iters, args.restart, key[0], args.preconditioner, key[1])
                   for key in keys}
        launches, times = {}, {key: [] for key in keys}
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
        med = {key: float(np.median(times[key])) for key in keys}
        roof = roofline_bytes(S, args.restart) / bandwidth
        print(f"{name:<22}{n:>10}" + "".join(f"{med[k] * 1e3:>10.3f}{med[k] / med[keys[0]]:>8.2f}{launches[k]:>7.2f}"
                                             f"{med[k] / roof:>7.2f}" for k in keys))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
