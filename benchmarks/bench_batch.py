"""Batched solves: ginkpy's gk.batch beside a loop of SciPy solves, a loop of ginkpy single
solves and, with CuPy on an NVIDIA GPU, a loop of CuPy solves and CuPy's dense batched solve.

For each problem, batch size N (--counts) and system size n (--sizes), N systems of one sparsity
pattern are generated with random values per system:

    stencil   2D 5-point diffusion on a sqrt(n) x sqrt(n) grid, random coefficient per node (SPD)
    spd       random sparse symmetric pattern, about 5 entries per row, diagonally dominant (SPD)
    nonsym    the same pattern with independent values above and below the diagonal
    convdiff  2D upwind convection-diffusion on a sqrt(n) x sqrt(n) grid, a random convection
              strength (Peclet 0.5 to 3) per system and a random coefficient per node (nonsymmetric)

and solved to --rtol with scalar Jacobi (--preconditioners adds the batched ILU(0) and ISAI: the
ginkpy batched rows again for each, x ginkpy against the first preconditioner's whole call): CG
for the SPD problems, --nonsym-solver (BiCGStab or GMRES) for nonsym and convdiff. Printed per method: time per batch (median of --reps runs), systems per
second, and how many times faster ginkpy's batched solve is (x ginkpy > 1: ginkpy faster), all
in one run.

"ginkpy batched, list" is the whole call ``gk.linalg.batched_cg(matrices, B, M="jacobi")``
from a list of N SciPy CSR matrices, each with index arrays of its own (as when each system is
assembled on its own), to X on the host; the rows under it are its parts, each timed on its
own after the one before: building the batch (pattern check, values gathered and copied),
B and x to the executor, the Jacobi, the solve (one kernel) and X back. "ginkpy batched,
(P, values)" is the whole call from one pattern and a values array (N, nnz). "CuPy dense
batched" is ``cupy.linalg.solve`` on the (N, n, n) dense systems already on the GPU, X back
(the dense copy to the GPU not timed). The loops solve at most --loop-limit systems of a batch
and are scaled to the whole batch (marked *). Every method's solutions are checked: the
largest relative true residual ||b - A x|| / ||b|| is printed, and a method that misses --rtol
by more than 10x is flagged (exit code 1).

    python benchmarks/bench_batch.py --quick
    python benchmarks/bench_batch.py --counts 4000 --sizes 256 --problems stencil     # the PoCL target: >= 20x SciPy
    python benchmarks/bench_batch.py --counts 10000 --sizes 256 --problems stencil    # the GPU target: <= 30 ms
    python benchmarks/bench_batch.py --counts 100000 --sizes 64 --problems stencil
    python benchmarks/bench_batch.py --counts 1000 --sizes 256 --problems convdiff --preconditioners jacobi ilu isai
"""
from __future__ import annotations

import argparse
import inspect
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bench_common as bc
import ginkpy as gk
from ginkpy import problems
from ginkpy.linalg import batched_bicgstab, batched_cg, batched_gmres

DENSE_BYTES = 8 << 30  # CuPy's dense batched solve only where the (N, n, n) batch fits this
PRECONDITIONERS = {"jacobi": lambda: gk.batch.preconditioner.Jacobi.build().with_max_block_size(1),
                   "ilu": gk.batch.preconditioner.Ilu.build, "isai": gk.batch.preconditioner.Isai.build}


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--counts", type=int, nargs="+", default=[100, 1000, 10000], help="batch sizes N")
    p.add_argument("--sizes", type=int, nargs="+", default=[16, 64, 256, 1024], help="system sizes n")
    p.add_argument("--problems", nargs="+", default=["stencil", "spd", "nonsym"],
                   choices=["stencil", "spd", "nonsym", "convdiff"])
    p.add_argument("--preconditioners", nargs="+", default=["jacobi"], choices=list(PRECONDITIONERS),
                   help="the batched preconditioners of ginkpy's batched solves (the loops use scalar Jacobi)")
    p.add_argument("--nonsym-solver", default="bicgstab", choices=["bicgstab", "gmres"])
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--executor", default="opencl", help="ginkpy executor: opencl, opencl:<p>:<d>, reference")
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    p.add_argument("--reps", type=int, default=3, help="timed runs of each method (the median is printed)")
    p.add_argument("--loop-limit", type=int, default=1000, help="systems each loop solves (scaled to the batch)")
    p.add_argument("--no-cupy", action="store_true", help="skip CuPy even where it is present")
    p.add_argument("--quick", action="store_true", help="small run: N 100 and 1000, n 16 64 256, 1 rep")
    args = p.parse_args()
    if args.quick:
        args.counts, args.sizes, args.reps, args.loop_limit = [100, 1000], [16, 64, 256], 1, 200
    return args


# -- problems: (pattern, values (N, nnz)) ---------------------------------------------------------

def stencil(N: int, n: int, rng) -> tuple[sp.csr_matrix, np.ndarray]:
    P = problems.poisson_2d(max(2, round(n ** 0.5))).tocsr()
    P.sort_indices()
    rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
    k = rng.uniform(0.1, 10.0, (N, P.shape[0]))
    # D^1/2 P D^1/2 with D = diag(k): SPD, coefficients varying by two orders of magnitude
    return P, P.data[None, :] * np.sqrt(k[:, rows] * k[:, P.indices])


def random_sparse(N: int, n: int, rng, symmetric: bool) -> tuple[sp.csr_matrix, np.ndarray]:
    upper = sp.triu(sp.random(n, n, density=min(1.0, 2.0 / n), random_state=int(rng.integers(1 << 31))), k=1).tocoo()
    m = upper.nnz
    ids = np.concatenate([np.arange(m), np.arange(m) + (0 if symmetric else m)]) + 1
    # the pattern, each entry holding 1 + the index of its value (0 on the diagonal)
    P = sp.csr_matrix((np.r_[ids, np.zeros(n)], (np.r_[upper.row, upper.col, np.arange(n)],
                                                 np.r_[upper.col, upper.row, np.arange(n)])), shape=(n, n))
    P.sort_indices()
    ids = P.data.astype(np.int64)
    offdiag = np.concatenate([np.zeros((N, 1)), rng.uniform(-1, 1, (N, 2 * m))], axis=1)
    values = offdiag[:, ids]
    # diagonal = sum of |off-diagonal| of the row + 1: diagonally dominant (SPD where symmetric)
    row_sums = np.add.reduceat(np.abs(values), P.indptr[:-1], axis=1)
    diag = np.flatnonzero(ids == 0)
    values[:, diag] = row_sums + 1.0
    return P, values


def convdiff(N: int, n: int, rng) -> tuple[sp.csr_matrix, np.ndarray]:
    side = max(2, round(n ** 0.5))
    P0, P1 = (problems.convection_diffusion_2d(side, peclet=c).tocsr() for c in (0.0, 1.0))
    P0.sort_indices()
    P1.sort_indices()
    rows = np.repeat(np.arange(P0.shape[0]), np.diff(P0.indptr))
    c = rng.uniform(0.5, 3.0, (N, 1))
    k = rng.uniform(0.1, 10.0, (N, P0.shape[0]))
    # D^1/2 (diffusion + c convection) D^1/2 with D = diag(k): the convection linear in c
    return P0, (P0.data[None, :] + c * (P1.data - P0.data)[None, :]) * np.sqrt(k[:, rows] * k[:, P0.indices])


def generate(problem: str, N: int, n: int, rng):
    if problem == "stencil":
        return stencil(N, n, rng)
    if problem == "convdiff":
        return convdiff(N, n, rng)
    return random_sparse(N, n, rng, symmetric=problem == "spd")


def relative_residuals(P: sp.csr_matrix, values: np.ndarray, B: np.ndarray, X: np.ndarray) -> np.ndarray:
    """||b_i - A_i x_i|| / ||b_i|| for every system (vectorized over the batch)."""
    AX = np.add.reduceat(values * X[:, P.indices], P.indptr[:-1], axis=1)
    return np.linalg.norm(B - AX, axis=1) / np.linalg.norm(B, axis=1)


# -- methods: each returns (seconds per batch, X of the systems it solved, iterations) ------------

def timed(run, reps: int, sync=lambda: None) -> tuple[float, object]:
    out = run()  # warm-up: compiles kernels
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        out = run()
        sync()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def ginkpy_batched(exec, P, values, B, args, solver_name, preconditioner="jacobi"):
    """The whole batched call from a list of SciPy matrices and from (P, values), and the
    parts of the first: [(label, seconds, X, iterations)]."""
    function = {"cg": batched_cg, "bicgstab": batched_bicgstab, "gmres": batched_gmres}[solver_name]
    extra = {"maxiter": 10 * P.shape[0] // 20 + 1} if solver_name == "gmres" else {}
    # as each system assembled on its own: index arrays of its own
    matrices = [sp.csr_matrix((v, P.indices.copy(), P.indptr.copy()), shape=P.shape) for v in values]
    whole, (X, _) = timed(lambda: function(matrices, B, rtol=args.rtol, M=preconditioner, executor=exec, **extra),
                          args.reps)
    # the parts, in the call's order, each synchronized
    sync = exec.synchronize
    build, A = timed(lambda: gk.batch.matrix.Csr.from_scipy(exec, matrices), args.reps, sync)
    vectors, (b, x0) = timed(lambda: (gk.batch.MultiVector.from_numpy(exec, B),
                                      gk.batch.MultiVector.zeros(exec, B.shape, B.dtype)), args.reps, sync)
    preconditioner_params = PRECONDITIONERS[preconditioner]()
    generate_seconds, M = timed(lambda: preconditioner_params.on(exec).generate(A), args.reps, sync)
    params = {"cg": gk.batch.solver.Cg, "bicgstab": gk.batch.solver.Bicgstab,
              "gmres": gk.batch.solver.Gmres}[solver_name].build()
    if solver_name == "gmres":
        params = params.with_krylov_dim(20)
    solver = params.with_preconditioner(M).with_max_iterations(10 * P.shape[0]).on(exec).generate(A)
    result = []

    def run_solve():
        x = x0.clone()
        result.append(solver.apply_with_tolerances(b, x, args.rtol, 0.0))
        return x
    solve, x = timed(run_solve, args.reps, sync)
    back, _ = timed(lambda: x.to_numpy(), args.reps)
    pattern, (X_pattern, _) = timed(lambda: function((P, values), B, rtol=args.rtol, M=preconditioner,
                                                     executor=exec, **extra), args.reps)
    iterations = f"{result[-1].iterations.mean():.0f}"
    suffix = "" if args.preconditioners == ["jacobi"] else f" ({preconditioner})"
    return [(f"ginkpy batched, list{suffix}", whole, X, iterations), ("  build the batch", build, None, ""),
            ("  B and x", vectors, None, ""), (f"  {type(M).__name__}", generate_seconds, None, ""),
            ("  solve", solve, None, iterations), ("  X back", back, None, ""),
            (f"ginkpy batched, (P, values){suffix}", pattern, X_pattern, iterations)]


def scipy_loop(P, values, B, args, solver_name, count):
    solve = {"cg": spla.cg, "bicgstab": spla.bicgstab, "gmres": spla.gmres}[solver_name]
    extra = {"restart": 20} if solver_name == "gmres" else {}
    matrices = [sp.csr_matrix((v, P.indices, P.indptr), shape=P.shape) for v in values[:count]]

    def run():
        X = np.empty((count, P.shape[0]), B.dtype)
        for i, A in enumerate(matrices):
            X[i], _ = solve(A, B[i], rtol=args.rtol, M=sp.diags(1.0 / A.diagonal()), **extra)
        return X
    return timed(run, args.reps)


def ginkpy_loop(exec, P, values, B, args, solver_name, count):
    cls = {"cg": gk.solver.Cg, "bicgstab": gk.solver.Bicgstab, "gmres": gk.solver.Gmres}[solver_name]
    matrices = [gk.matrix.Csr.from_scipy(exec, sp.csr_matrix((v, P.indices, P.indptr), shape=P.shape))
                for v in values[:count]]
    rhs = [gk.matrix.Dense.from_numpy(exec, b) for b in B[:count]]

    def run():
        X = []
        for A, b in zip(matrices, rhs):
            params = cls.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1)) \
                .with_criteria(gk.stop.Iteration.build().with_max_iters(10 * P.shape[0]),
                               gk.stop.ResidualNorm.build().with_reduction_factor(args.rtol))
            if solver_name == "gmres":
                params = params.with_krylov_dim(20)
            x = gk.matrix.Dense.zeros(exec, (P.shape[0], 1), B.dtype)
            params.on(exec).generate(A).apply(b, x)
            X.append(x.to_numpy()[:, 0])
        return np.array(X)
    return timed(run, args.reps, exec.synchronize)


def cupy_loop(cupy, P, values, B, args, solver_name, count):
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cspla
    solve = {"cg": cspla.cg, "bicgstab": getattr(cspla, "bicgstab", None), "gmres": cspla.gmres}[solver_name]
    if solve is None:
        return None
    matrices = [csp.csr_matrix(sp.csr_matrix((v, P.indices, P.indptr), shape=P.shape)) for v in values[:count]]
    rhs = [cupy.asarray(b) for b in B[:count]]
    precs = [csp.diags(1.0 / A.diagonal()) for A in matrices]
    key = "rtol" if "rtol" in inspect.signature(solve).parameters else "tol"

    def run():
        return cupy.stack([solve(A, b, M=M, **{key: args.rtol})[0] for A, b, M in zip(matrices, rhs, precs)]).get()
    return timed(run, args.reps, cupy.cuda.Device().synchronize)


def cupy_dense(cupy, P, values, B, args):
    N, n = values.shape[0], P.shape[0]
    if N * n * n * B.itemsize > DENSE_BYTES:
        return None
    dense = np.zeros((N, n * n), B.dtype)
    rows = np.repeat(np.arange(n), np.diff(P.indptr))
    dense[:, rows * n + P.indices] = values
    A = cupy.asarray(dense.reshape(N, n, n))
    b = cupy.asarray(B[:, :, None])
    return timed(lambda: cupy.linalg.solve(A, b)[:, :, 0].get(), args.reps, cupy.cuda.Device().synchronize)


# -- the run -------------------------------------------------------------------------------------

def main() -> int:
    args = parse()
    exec = gk.executor(args.executor)
    dtype = np.dtype(args.dtype)
    cupy = bc.import_cupy(args.no_cupy)
    rng = np.random.default_rng(0)
    print(f"ginkpy executor: {bc.device_name(exec)}; CuPy: {'yes' if cupy is not None else 'no'}; "
          f"{args.dtype}, batched {' / '.join(args.preconditioners)} (loops: scalar Jacobi), rtol {args.rtol}, "
          f"median of {args.reps}")
    print(f"{'problem':>8} {'N':>7} {'n':>5} {'method':<35} {'ms/batch':>10} {'systems/s':>11} {'x ginkpy':>9} "
          f"{'iters':>7} {'max relres':>10}")
    failed = False
    for problem in args.problems:
        solver_name = "cg" if problem not in ("nonsym", "convdiff") else args.nonsym_solver
        for n in args.sizes:
            for N in args.counts:
                P, values = generate(problem, N, n, rng)
                values = values.astype(dtype)
                B = rng.standard_normal((N, P.shape[0])).astype(dtype)
                count = min(N, args.loop_limit)
                rows = [(label, t, False, X, iters) for name in args.preconditioners
                        for label, t, X, iters in ginkpy_batched(exec, P, values, B, args, solver_name, name)]
                seconds = rows[0][1]
                t, X = scipy_loop(P, values, B, args, solver_name, count)
                rows.append((f"SciPy {solver_name} loop", t * N / count, count < N, X, ""))
                t, X = ginkpy_loop(exec, P, values, B, args, solver_name, min(count, max(10, count // 10)))
                rows.append((f"ginkpy {solver_name} loop", t * N / X.shape[0], X.shape[0] < N, X, ""))
                if cupy is not None:
                    out = cupy_loop(cupy, P, values, B, args, solver_name, count)
                    if out is not None:
                        rows.append((f"CuPy {solver_name} loop", out[0] * N / count, count < N, out[1], ""))
                    out = cupy_dense(cupy, P, values, B, args)
                    if out is not None:
                        rows.append(("CuPy dense batched", out[0], False, out[1], ""))
                for method, t, scaled, X, iters in rows:
                    ratio = "-" if method.startswith("  ") or t is seconds else f"{t / seconds:.2f}"
                    relres = ""
                    if X is not None:
                        worst = float(relative_residuals(P, values[:len(X)], B[:len(X)], X).max())
                        bad = not worst <= 10 * args.rtol
                        failed |= bad
                        relres = f"{worst:.1e}" + (" !" if bad else "")
                    print(f"{problem:>8} {N:>7} {P.shape[0]:>5} {method:<35} {t * 1e3:>9.1f}{'*' if scaled else ' '} "
                          f"{N / t:>11.0f} {ratio:>9} {iters:>7} {relres:>10}", flush=True)
    print("* a loop over the first --loop-limit systems (ginkpy loop: a tenth of them), scaled to the batch")
    if failed:
        print("a method missed the tolerance by more than 10x (marked !)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
