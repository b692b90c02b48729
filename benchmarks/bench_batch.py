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
own after the one before: the items' formats, shapes and array lengths, the values gathered
into the executor's memory (a GPU copies each chunk as soon as it is gathered) and checked to
be finite (on the host during the gather where the executor's memory is the host's, else
there), every item's index arrays compared with item 0's (in the whole call beside the solve,
after it is enqueued), B and x to the executor, the Jacobi, the solve (one kernel) and X back,
and the whole call's time less the parts' (negative where the comparison hid behind the
solve; --profile: the whole call under cProfile). "ginkpy batched, (P, values)" is the
whole call from one pattern and a values array (N, nnz). "CuPy dense batched" is
``cupy.linalg.solve`` on the (N, n, n) dense systems already on the GPU, X back (the dense
copy to the GPU not timed; only where the dense batch fits --dense-gb). The loops solve systems
one at a time, at most --loop-limit of them and for at most --loop-seconds, scaled to the whole
batch (marked *). Every method's solutions are checked: the largest relative true residual
||b - A x|| / ||b|| is printed, and a method that misses --rtol by more than 10x is flagged
(exit code 1). Each row is printed (and flushed) as soon as it is measured; a method that does
not run says why in its row (no CuPy and why, no CuPy BiCGStab, a dense batch too large);
--methods chooses what runs.

    python benchmarks/bench_batch.py --quick
    python benchmarks/bench_batch.py --counts 4000 --sizes 256 --problems stencil     # the PoCL target: >= 20x SciPy
    python benchmarks/bench_batch.py --counts 10000 --sizes 256 --problems stencil    # the GPU target: <= 30 ms
    python benchmarks/bench_batch.py --counts 10000 --sizes 256 --problems stencil --methods batched parts
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
from ginkpy.core.batch.matrix import batch_pattern
from ginkpy.linalg import batched_bicgstab, batched_cg, batched_gmres

METHODS = ["batched", "parts", "scipy", "ginkpy-loop", "cupy-loop", "cupy-dense"]
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
    p.add_argument("--loop-limit", type=int, default=1000, help="at most this many systems per loop (scaled to the batch)")
    p.add_argument("--loop-seconds", type=float, default=3.0,
                   help="each loop stops after this many seconds over its --reps runs (scaled to the batch)")
    p.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS,
                   help="what to run: the batched calls (batched; parts: the list call's parts), the loops of "
                        "SciPy, ginkpy and CuPy solves, CuPy's dense batched solve")
    p.add_argument("--dense-gb", type=float, default=8.0, help="CuPy's dense batched solve where (N, n, n) fits this")
    p.add_argument("--no-cupy", action="store_true", help="skip CuPy even where it is present")
    p.add_argument("--profile", action="store_true",
                   help="after the timed runs, the whole call from a list again under cProfile (--reps runs): its "
                        "25 costliest functions by cumulative time, to find where the host's time goes")
    p.add_argument("--quick", action="store_true", help="small run: N 100 and 1000, n 16 64 256, 1 rep")
    args = p.parse_args()
    if args.quick:
        args.counts, args.sizes, args.reps, args.loop_seconds = [100, 1000], [16, 64, 256], 1, 0.5
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


# -- methods: each yields rows (label, seconds per batch, scaled, X of the systems it solved, iterations) --

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


def timed_loop(solve_one, N: int, args) -> tuple[float, np.ndarray]:
    """Seconds per batch of N of a loop solving one system at a time (``solve_one(i)`` -> x_i on
    the host): each of --reps runs solves systems 0, 1, ... until --loop-limit systems or
    --loop-seconds / reps have passed; the median seconds per system times N, and the X of
    the last run's systems (for the residual check)."""
    solve_one(0)  # warm-up: compiles kernels
    per_system, X = [], None
    for _ in range(args.reps):
        xs, start = [], time.perf_counter()
        while len(xs) < min(N, args.loop_limit) and (not xs or time.perf_counter() - start < args.loop_seconds / args.reps):
            xs.append(solve_one(len(xs)))
        per_system.append((time.perf_counter() - start) / len(xs))
        X = np.array(xs)
    return float(np.median(per_system)) * N, X


def ginkpy_batched(exec, P, values, B, args, solver_name, preconditioner="jacobi"):
    """The whole batched call from a list of SciPy matrices, its parts (each timed on its own
    after the one before) and the call from (P, values): rows, each yielded when measured."""
    function = {"cg": batched_cg, "bicgstab": batched_bicgstab, "gmres": batched_gmres}[solver_name]
    extra = {"maxiter": 10 * P.shape[0] // 20 + 1} if solver_name == "gmres" else {}
    suffix = "" if args.preconditioners == ["jacobi"] else f" ({preconditioner})"
    # as each system assembled on its own: index arrays of its own
    matrices = [sp.csr_matrix((v, P.indices.copy(), P.indptr.copy()), shape=P.shape) for v in values]
    whole, (X, info) = timed(lambda: function(matrices, B, rtol=args.rtol, M=preconditioner, executor=exec, **extra),
                             args.reps)
    yield f"ginkpy batched, list{suffix}", whole, False, X, ""
    if args.profile:
        profile(lambda: function(matrices, B, rtol=args.rtol, M=preconditioner, executor=exec, **extra), args.reps)
    if "parts" in args.methods:
        parts = 0.0
        for row in ginkpy_parts(exec, P, matrices, B, args, solver_name, preconditioner):
            parts += row[1]
            yield row
        # what the whole call does beyond its parts, or what the parts' repetitions gain from warm caches
        yield "  whole - parts", whole - parts, False, None, ""
    pattern, (X_pattern, _) = timed(lambda: function((P, values), B, rtol=args.rtol, M=preconditioner,
                                                     executor=exec, **extra), args.reps)
    yield f"ginkpy batched, (P, values){suffix}", pattern, False, X_pattern, ""


def profile(run, reps: int) -> None:
    """``run()`` ``reps`` times under cProfile: the 25 costliest functions by cumulative time (a
    blocking read's wait shows in the function that reads)."""
    import cProfile
    import pstats
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(reps):
        run()
    profiler.disable()
    print(f"-- the whole call from a list under cProfile, {reps} runs (seconds in all):")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(25)


def ginkpy_parts(exec, P, matrices, B, args, solver_name, preconditioner):
    """The parts of the call from a list, in its order, each synchronized."""
    sync = exec.synchronize
    check, host_batch = timed(lambda: batch_pattern.from_list(matrices), args.reps)
    yield "  items' formats, shapes, lengths", check, False, None, ""
    values, A = timed(lambda: gk.batch.matrix.Csr.from_host_batch(exec, host_batch, verify=False), args.reps, sync)
    yield "  values up, checked finite", values, False, None, ""
    compared, _ = timed(lambda: batch_pattern.from_list(matrices).verify(), args.reps)
    yield "  index arrays compared", compared - check, False, None, ""
    vectors, (b, x0) = timed(lambda: (gk.batch.MultiVector.from_numpy(exec, B),
                                      gk.batch.MultiVector.zeros(exec, B.shape, B.dtype)), args.reps, sync)
    yield "  B and x", vectors, False, None, ""
    preconditioner_params = PRECONDITIONERS[preconditioner]()
    generate_seconds, M = timed(lambda: preconditioner_params.on(exec).generate(A), args.reps, sync)
    yield f"  {type(M).__name__}", generate_seconds, False, None, ""
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
    yield "  solve", solve, False, None, f"{result[-1].iterations.mean():.0f}"
    back, _ = timed(lambda: x.to_numpy(), args.reps)
    yield "  X back", back, False, None, ""


def scipy_loop(P, values, B, args, solver_name):
    solve = {"cg": spla.cg, "bicgstab": spla.bicgstab, "gmres": spla.gmres}[solver_name]
    extra = {"restart": 20} if solver_name == "gmres" else {}
    count = min(len(values), args.loop_limit)
    matrices = [sp.csr_matrix((v, P.indices, P.indptr), shape=P.shape) for v in values[:count]]
    precs = [sp.diags(1.0 / A.diagonal()) for A in matrices]
    return timed_loop(lambda i: solve(matrices[i], B[i], rtol=args.rtol, M=precs[i], **extra)[0], len(values), args)


def ginkpy_loop(exec, P, values, B, args, solver_name):
    cls = {"cg": gk.solver.Cg, "bicgstab": gk.solver.Bicgstab, "gmres": gk.solver.Gmres}[solver_name]

    def solve_one(i):
        A = gk.matrix.Csr.from_scipy(exec, sp.csr_matrix((values[i], P.indices, P.indptr), shape=P.shape))
        params = cls.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1)) \
            .with_criteria(gk.stop.Iteration.build().with_max_iters(10 * P.shape[0]),
                           gk.stop.ResidualNorm.build().with_reduction_factor(args.rtol))
        if solver_name == "gmres":
            params = params.with_krylov_dim(20)
        x = gk.matrix.Dense.zeros(exec, (P.shape[0], 1), B.dtype)
        params.on(exec).generate(A).apply(gk.matrix.Dense.from_numpy(exec, B[i]), x)
        return x.to_numpy()[:, 0]
    return timed_loop(solve_one, len(values), args)


def cupy_loop(cupy, P, values, B, args, solver_name):
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cspla
    solve = {"cg": cspla.cg, "bicgstab": getattr(cspla, "bicgstab", None), "gmres": cspla.gmres}[solver_name]
    if solve is None:
        raise Skipped(f"this CuPy has no cupyx.scipy.sparse.linalg.{solver_name}")
    count = min(len(values), args.loop_limit)
    matrices = [csp.csr_matrix(sp.csr_matrix((v, P.indices, P.indptr), shape=P.shape)) for v in values[:count]]
    rhs = [cupy.asarray(b) for b in B[:count]]
    precs = [csp.diags(1.0 / A.diagonal()) for A in matrices]
    key = "rtol" if "rtol" in inspect.signature(solve).parameters else "tol"
    return timed_loop(lambda i: solve(matrices[i], rhs[i], M=precs[i], **{key: args.rtol})[0].get(), len(values), args)


def cupy_dense(cupy, P, values, B, args):
    N, n = values.shape[0], P.shape[0]
    nbytes = N * n * n * B.itemsize
    if nbytes > args.dense_gb * 2 ** 30:
        raise Skipped(f"the dense batch would take {nbytes / 2 ** 30:.1f} GiB > --dense-gb {args.dense_gb:g}")
    dense = np.zeros((N, n * n), B.dtype)
    rows = np.repeat(np.arange(n), np.diff(P.indptr))
    dense[:, rows * n + P.indices] = values
    A = cupy.asarray(dense.reshape(N, n, n))
    del dense
    b = cupy.asarray(B[:, :, None])
    return timed(lambda: cupy.linalg.solve(A, b)[:, :, 0].get(), args.reps, cupy.cuda.Device().synchronize)


class Skipped(Exception):
    """A method that does not run here, and why (printed in its row)."""


# -- the run -------------------------------------------------------------------------------------

class Table:
    """Prints each row as soon as it is measured (line-buffered stdout: also through a pipe or
    a file, so a run cut short keeps its rows); "x ginkpy" is a row's time over the first
    row's (ginkpy's whole batched call) of the same problem."""

    def __init__(self, args) -> None:
        self.args, self.failed = args, False
        print(f"{'problem':>8} {'N':>7} {'n':>5} {'method':<37} {'ms/batch':>10} {'systems/s':>11} "
              f"{'x ginkpy':>9} {'iters':>7} {'max relres':>10}")

    def start(self, problem: str, P, values, B) -> None:
        self.key, self.P, self.values, self.B, self.first = (problem, len(values), P.shape[0]), P, values, B, None

    def row(self, method: str, t: float, scaled: bool, X, iters: str) -> None:
        if self.first is None:
            self.first = t
        ratio = "-" if method.startswith("  ") or t is self.first else f"{t / self.first:.2f}"
        relres = ""
        if X is not None:
            worst = float(relative_residuals(self.P, self.values[:len(X)], self.B[:len(X)], X).max())
            bad = not worst <= 10 * self.args.rtol
            self.failed |= bad
            relres = f"{worst:.1e}" + (" !" if bad else "")
            scaled = len(X) < len(self.values)
            method += f" ({len(X)} systems)" if scaled else ""
        problem, N, n = self.key
        print(f"{problem:>8} {N:>7} {n:>5} {method:<37} {t * 1e3:>9.1f}{'*' if scaled else ' '} "
              f"{N / t if t > 0 else float('nan'):>11.0f} {ratio:>9} {iters:>7} {relres:>10}")

    def skipped(self, method: str, why: str) -> None:
        problem, N, n = self.key
        print(f"{problem:>8} {N:>7} {n:>5} {method:<37} skipped: {why}")


def run_methods(table: Table, exec, cupy, P, values, B, args, solver_name) -> None:
    """Every method of --methods on one batch, each row printed as it is measured."""
    if "batched" in args.methods:
        for name in args.preconditioners:
            for row in ginkpy_batched(exec, P, values, B, args, solver_name, name):
                table.row(*row)
    loops = [("scipy", f"SciPy {solver_name} loop", lambda: scipy_loop(P, values, B, args, solver_name)),
             ("ginkpy-loop", f"ginkpy {solver_name} loop", lambda: ginkpy_loop(exec, P, values, B, args, solver_name)),
             ("cupy-loop", f"CuPy {solver_name} loop", lambda: cupy_loop(cupy, P, values, B, args, solver_name)),
             ("cupy-dense", "CuPy dense batched", lambda: cupy_dense(cupy, P, values, B, args))]
    for key, label, method in loops:
        if key not in args.methods:
            continue
        if key.startswith("cupy") and cupy is None:
            table.skipped(label, f"no CuPy ({args.cupy_why})")
            continue
        try:
            t, X = method()
        except Skipped as why:
            table.skipped(label, str(why))
            continue
        table.row(label, t, False, X, "")


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # each line out at once, even into a pipe or a file
    args = parse()
    exec = gk.executor(args.executor)
    dtype = np.dtype(args.dtype)
    cupy, args.cupy_why = bc.import_cupy_why(args.no_cupy or not {"cupy-loop", "cupy-dense"} & set(args.methods))
    rng = np.random.default_rng(0)
    print(f"ginkpy executor: {bc.device_name(exec)}; CuPy: {'yes' if cupy is not None else 'no, ' + args.cupy_why}; "
          f"{args.dtype}, batched {' / '.join(args.preconditioners)} (loops: scalar Jacobi), rtol {args.rtol}, "
          f"median of {args.reps}; methods: {' '.join(args.methods)}")
    table = Table(args)
    for problem in args.problems:
        solver_name = "cg" if problem not in ("nonsym", "convdiff") else args.nonsym_solver
        for n in args.sizes:
            for N in args.counts:
                P, values = generate(problem, N, n, rng)
                values = values.astype(dtype)
                B = rng.standard_normal((N, P.shape[0])).astype(dtype)
                table.start(problem, P, values, B)
                run_methods(table, exec, cupy, P, values, B, args, solver_name)
    print("* a loop over the first systems (at most --loop-limit, for at most --loop-seconds), scaled to the batch")
    if table.failed:
        print("a method missed the tolerance by more than 10x (marked !)")
    return 1 if table.failed else 0


if __name__ == "__main__":
    sys.exit(main())
