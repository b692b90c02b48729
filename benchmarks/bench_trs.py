"""Sparse triangular solves and the ILU/IC preconditioners: ginkpy beside SciPy (host) and, with
CuPy on an NVIDIA GPU, cuSPARSE.

Part 1, for the lower and upper triangle of each matrix: the level count (rows of one level are
solved in parallel; levels in order), the launches ginkpy's OpenCL schedule makes (runs of thin
levels chained in one work-group, wide levels alone), ginkpy's analysis time at generate() and
solve time, against scipy.sparse.linalg.spsolve_triangular (and cupyx's).
Part 2: iterations and time of BiCGStab with the default Ilu preconditioner against Jacobi (and,
for symmetric matrices, CG with Ic against Jacobi), including the preconditioner's generation;
benchmarks/bench_ilu.py compares every combination of factorization and triangular solver.

    python benchmarks/bench_trs.py [--sizes ROWS ...] [--problems ...] [--mtx-dir DIR]
                                   [--executor opencl|reference] [--no-precond]
"""
from __future__ import annotations

import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve_triangular

import bench_common as bc
import ginkpy as gk
from ginkpy.reference.solver.triangle import split_triangle


def launches(solver) -> str:
    """Launches of the OpenCL level schedule: chains + wide levels ('-' on the reference executor)."""
    plan = getattr(solver, "plan", None)
    if plan is None or not hasattr(plan, "launches"):
        return "-"
    chains = sum(kind == "chain" for kind, _, _ in plan.launches)
    return f"{chains}+{len(plan.launches) - chains}"


def bench_triangles(args, exec, cupy) -> int:
    header = (f"{'matrix':<22}{'tri':>4}{'rows':>10}{'nnz':>10}{'levels':>8}{'launches':>10}"
              f"{'analyse':>10}{'ginkpy':>10}{'scipy':>10}{'cupy':>10}{'x scipy':>9}{'x cupy':>8}")
    print("Triangular solves (ms; launches = chained thin-level runs + wide levels)")
    bc.print_header(header)
    failures = 0
    for name, S in bc.matrices(args, exec, keep=lambda S: S.shape[0] == S.shape[1]):
        n = S.shape[0]
        A = gk.matrix.Csr.from_scipy(exec, S)
        b_host = np.random.default_rng(0).standard_normal(n).astype(S.dtype)
        b = gk.matrix.Dense.from_numpy(exec, b_host)
        for lower in (True, False):
            triangle = (sp.tril(S) if lower else sp.triu(S)).tocsr()
            strict, _, zero_row = split_triangle(triangle, lower, unit_diagonal=False)
            if zero_row >= 0:
                print(f"{name:<22}{'L' if lower else 'U':>4}  skipped: zero diagonal in row {zero_row}")
                continue
            num_levels = int(gk.ReferenceExecutor().run("components.level_set.compute_levels", strict.indptr,
                                                        strict.indices).max(initial=-1)) + 1
            solver_type = gk.solver.LowerTrs if lower else gk.solver.UpperTrs
            start = time.perf_counter()
            solver = solver_type.build().on(exec).generate(A)
            exec.synchronize()
            t_gen = time.perf_counter() - start
            x = gk.matrix.Dense.zeros(exec, (n, 1), S.dtype)
            t_gk = bc.measure(lambda: solver.apply(b, x), exec.synchronize, args.reps, warmup=1)
            # SciPy, which is also the check of ginkpy's result
            x_ref = spsolve_triangular(triangle, b_host, lower=lower)
            t_sp = bc.measure(lambda: spsolve_triangular(triangle, b_host, lower=lower), lambda: None,
                              args.reps, warmup=1)
            err = np.linalg.norm(x.to_numpy()[:, 0] - x_ref) / np.linalg.norm(x_ref)
            wrong = not err <= (1e-10 if S.dtype == np.float64 else 1e-4)
            failures += wrong
            t_cp = None
            if cupy is not None:
                import cupyx.scipy.sparse as cusp
                import cupyx.scipy.sparse.linalg as cusla
                T_cp, b_cp = cusp.csr_matrix(triangle), cupy.asarray(b_host)
                t_cp = bc.measure(lambda: cusla.spsolve_triangular(T_cp, b_cp, lower=lower),
                                  cupy.cuda.Device().synchronize, args.reps, warmup=1)
            print(f"{name:<22}{'L' if lower else 'U':>4}{n:>10}{triangle.nnz:>10}{num_levels:>8}"
                  f"{launches(solver):>10}{t_gen * 1e3:>10.2f}{t_gk * 1e3:>10.3f}{t_sp * 1e3:>10.3f}"
                  f"{bc.fmt(t_cp and t_cp * 1e3, '.3f'):>10}{t_sp / t_gk:>8.2f}x"
                  f"{bc.fmt(t_cp and t_cp / t_gk, '.2f'):>7}{'x' if t_cp else ' '}"
                  f"{f'  WRONG RESULT (rel. error {err:.1e})' if wrong else ''}")
            sys.stdout.flush()
    return failures


def solve(exec, solver_type, precond, A, b, reduction):
    """(iterations, converged, generate seconds, solve seconds) of one preconditioned solve."""
    start = time.perf_counter()
    solver = (solver_type.build().with_preconditioner(precond)
              .with_criteria(gk.stop.Iteration.build().with_max_iters(10_000),
                             gk.stop.ResidualNorm.build().with_reduction_factor(reduction))
              .on(exec).generate(A))
    exec.synchronize()
    t_gen = time.perf_counter() - start
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    x = gk.matrix.Dense.zeros(exec, b.shape, b.dtype)
    start = time.perf_counter()
    solver.apply(b, x)
    exec.synchronize()
    return int(np.max(logger.num_iterations)), bool(np.all(logger.has_converged)), t_gen, time.perf_counter() - start


def bench_preconditioners(args, exec) -> None:
    reduction = 1e-8 if args.dtype == "float64" else 1e-5
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)
    header = (f"{'matrix':<22}{'rows':>10}{'solver':>10}{'precond':>9}{'iters':>7}{'conv':>6}"
              f"{'generate':>10}{'solve':>10}{'total':>10}")
    print(f"\nPreconditioned solves (s; b = A * ones, ||r|| <= {reduction:g} ||b||, generate includes the "
          f"factorization)")
    bc.print_header(header)
    for name, S in bc.matrices(args, exec, keep=lambda S: S.shape[0] == S.shape[1]):
        A = gk.matrix.Csr.from_scipy(exec, S)
        b = gk.matrix.Dense.from_numpy(exec, S @ np.ones(S.shape[0], S.dtype))
        runs = [("bicgstab", gk.solver.Bicgstab, "jacobi", jacobi),
                ("bicgstab", gk.solver.Bicgstab, "ilu", gk.preconditioner.Ilu.build())]
        if abs(S - S.T).max() <= 1e-12 * abs(S).max():
            runs += [("cg", gk.solver.Cg, "jacobi", jacobi), ("cg", gk.solver.Cg, "ic", gk.preconditioner.Ic.build())]
        for solver_name, solver_type, precond_name, precond in runs:
            try:
                its, converged, t_gen, t_solve = solve(exec, solver_type, precond, A, b, reduction)
            except ValueError as err:  # a zero pivot or a matrix that is not SPD
                print(f"{name:<22}{S.shape[0]:>10}{solver_name:>10}{precond_name:>9}  failed: {err}")
                continue
            print(f"{name:<22}{S.shape[0]:>10}{solver_name:>10}{precond_name:>9}{its:>7}"
                  f"{'yes' if converged else 'no':>6}{t_gen:>10.3f}{t_solve:>10.3f}{t_gen + t_solve:>10.3f}")
            sys.stdout.flush()


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [10_000, 250_000], ["poisson_2d", "poisson_3d"])
    p.add_argument("--no-precond", action="store_true", help="only the triangular solves")
    args = p.parse_args()
    exec, cupy = bc.executor_and_cupy(args)
    print(f"ginkpy executor: {bc.device_name(exec)}; value type {args.dtype}; "
          f"times are the median of {args.reps} repetitions\n")
    failures = bench_triangles(args, exec, cupy)
    if not args.no_precond:
        bench_preconditioners(args, exec)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
