"""Whole solves to rtol 1e-8: ginkpy AMG-CG (the builder and ``ginkpy.linalg.cg(M="amg")``; Jacobi or
Gauss-Seidel smoothing, W- or V-cycle) beside ginkpy Jacobi-CG, SciPy Jacobi-CG, PyAMG (smoothed aggregation and Ruge-Stuben, each with
CG and with its default stationary solve) and, with CuPy on an NVIDIA GPU, CuPy Jacobi-CG.

A whole solve is what a user waits for: a SciPy CSR matrix and b = A 1 in, x as a NumPy array
out, with the copies to the device, the setup (hierarchy, preconditioner) and the solve. Each
method is warmed up once on a small problem (kernel compilation); then the methods run in
turn, ``--reps`` rounds, and each one's median is reported (setup and solve timed apart, the
iterations counted and the final relative residual ||b - A x|| / ||b|| checked with SciPy).
``x amg`` is the method's total time over ginkpy AMG-CG's (above 1: AMG-CG is faster);
"PyAMG's best" is the fastest of the four PyAMG solves.

    python benchmarks/bench_amg.py [--sizes ROWS ...] [--problems poisson_2d poisson_3d anisotropic_2d
                                   variable_2d] [--methods ...] [--executor opencl|reference] [--reps 5]
                                   [--choices device|cpu|gpu]   # gpu: PoCL with a GPU's choices and layouts
    python benchmarks/bench_amg.py --tune [--sizes ...]     # the per-device choice: each cycle, sweep
                                                            # count, merge size, split_restrict_rows and
                                                            # Pgm's passes (--cycles, --sweeps, --merged,
                                                            # --split-restrict, --passes), whole AMG-CG solves
    python benchmarks/bench_amg.py --profile [--sizes ...]  # where the setup's time goes: host phases,
                                                            # kernel times, launches and reads
    python benchmarks/bench_amg.py --mixed [--sizes ...]    # float64 AMG-CG beside its float32 hierarchy
                                                            # (whole, and levels >= 1 as Ginkgo's example)

With ``--mixed`` the methods are float64 AMG-CG and the same CG with its hierarchy in float32
(``gk.solver.Multigrid.build().with_value_type("float32")``: converted at its boundary, two
launches per application) and with levels >= 1 in float32 (Ginkgo's mixed-pgm-multigrid-cg
layout); each problem ends with their iterations and solve times over float64's (issue 27's
target: at most 1.2x the iterations, at least 1.3x faster per solve on a GPU).
"""
from __future__ import annotations

import argparse
import cProfile
import inspect
import itertools
import os
import pstats
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bench_common as bc
from bench_ilu_default import taken_as
from bench_spgemm import HostSmoothedPgm
import ginkpy as gk
from ginkpy import problems

RTOL = 1e-8


def anisotropic_2d(n: int, epsilon: float = 0.01) -> sp.csr_matrix:
    """5-point -u_xx - epsilon u_yy on an n x n grid: strong coupling along one axis."""
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    return (sp.kron(t, sp.identity(n)) + epsilon * sp.kron(sp.identity(n), t)).tocsr()


def variable_2d(n: int, sigma: float = 1.5, seed: int = 0) -> sp.csr_matrix:
    """5-point -div(k grad u) on an n x n grid (Dirichlet boundary), k log-normal per cell
    (exp of a normal with deviation ``sigma``: contrasts of 1e4 and more), harmonic means on
    the faces."""
    k = np.exp(np.random.default_rng(seed).normal(0.0, sigma, (n + 2, n + 2)))
    harmonic = lambda a, b: 2 / (1 / a + 1 / b)  # noqa: E731
    east = harmonic(k[1:-1, 1:-1], k[1:-1, 2:]).ravel()   # face to (i, j + 1)
    north = harmonic(k[1:-1, 1:-1], k[2:, 1:-1]).ravel()  # face to (i + 1, j)
    west = harmonic(k[1:-1, 1:-1], k[1:-1, :-2]).ravel()
    south = harmonic(k[1:-1, 1:-1], k[:-2, 1:-1]).ravel()
    idx = np.arange(n * n).reshape(n, n)
    has_east, has_north = (idx % n != n - 1).ravel(), (idx // n != n - 1).ravel()
    rows = np.concatenate([idx.ravel(), idx.ravel()[has_east], idx.ravel()[has_north]])
    cols = np.concatenate([idx.ravel(), idx.ravel()[has_east] + 1, idx.ravel()[has_north] + n])
    vals = np.concatenate([east + north + west + south, -east[has_east], -north[has_north]])
    upper = sp.csr_matrix((vals, (rows, cols)), shape=(n * n, n * n))
    return (upper + sp.triu(upper, 1).T).tocsr()


GENERATORS = {
    "poisson_2d": lambda rows: problems.poisson_2d(max(2, round(rows ** 0.5))),
    "poisson_3d": lambda rows: problems.poisson_3d(max(2, round(rows ** (1 / 3)))),
    "anisotropic_2d": lambda rows: anisotropic_2d(max(2, round(rows ** 0.5))),
    "variable_2d": lambda rows: variable_2d(max(2, round(rows ** 0.5))),
    "variable_3d": lambda rows: problems.variable_3d(max(2, round(rows ** (1 / 3)))),
}


def _rtol_keyword(cg) -> str:
    return "rtol" if "rtol" in inspect.signature(cg).parameters else "tol"


# -- the methods: each takes (S, b) and returns (x, setup seconds, solve seconds, iterations) -----

def ginkpy_solve(exec, preconditioner, maxiter, outer=None):
    """The builder: A and the solver generated (setup), then b in, the solve, x out; ``outer``
    the Krylov solver's class (default gk.solver.Cg)."""
    outer = outer or gk.solver.Cg

    def run(S, b):
        start = time.perf_counter()
        A = gk.matrix.Csr.from_scipy(exec, S)
        solver = (outer.build().with_preconditioner(preconditioner)
                  .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(RTOL),
                                 gk.stop.Iteration.build().with_max_iters(maxiter))
                  .on(exec).generate(A))
        exec.synchronize()
        setup = time.perf_counter()
        B = gk.matrix.Dense.from_numpy(exec, b)
        X = gk.matrix.Dense.zeros(exec, B.shape, B.dtype)
        logger = gk.log.Convergence()
        solver.add_logger(logger)
        solver.apply(B, X)
        x = X.to_numpy()[:, 0]
        end = time.perf_counter()
        run.solver = solver
        return x, setup - start, end - setup, logger.num_iterations
    return run


def ginkpy_linalg(exec, maxiter):
    """What a SciPy user writes: ginkpy.linalg.cg(A, b, M="amg"), timed whole (setup 0), the
    solver cache cleared first (a kept solver would skip A's upload and the hierarchy)."""
    def run(S, b):
        count = [0]
        gk.linalg.clear_cache()
        exec.synchronize()
        start = time.perf_counter()
        x, _ = gk.linalg.cg(S, b, rtol=RTOL, maxiter=maxiter, M="amg", executor=exec)
        return x, 0.0, time.perf_counter() - start, count[0] or -1
    return run


def scipy_jacobi_cg(maxiter):
    def run(S, b):
        start = time.perf_counter()
        inverse = 1 / S.diagonal()
        M = spla.LinearOperator(S.shape, matvec=lambda v: inverse * v.ravel(), dtype=S.dtype)
        setup = time.perf_counter()
        count = [0]
        x, _ = spla.cg(S, b, M=M, maxiter=maxiter, callback=lambda xk: count.__setitem__(0, count[0] + 1),
                       **{_rtol_keyword(spla.cg): RTOL})
        return x, setup - start, time.perf_counter() - setup, count[0]
    return run


def pyamg_solve(pyamg, kind, accel):
    """PyAMG's solver (sa: smoothed aggregation, rs: Ruge-Stuben) with its own solve: with CG
    (accel "cg") or its default stationary cycles (accel None)."""
    def run(S, b):
        start = time.perf_counter()
        ml = pyamg.smoothed_aggregation_solver(S) if kind == "sa" else pyamg.ruge_stuben_solver(S)
        setup = time.perf_counter()
        residuals = []
        x = ml.solve(b, tol=RTOL, accel=accel, maxiter=1000, residuals=residuals)
        return x, setup - start, time.perf_counter() - setup, len(residuals) - 1
    return run


def cupy_jacobi_cg(cupy, maxiter):
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cspla

    def run(S, b):
        start = time.perf_counter()
        A = csp.csr_matrix(S)
        inverse = 1 / A.diagonal()
        M = cspla.LinearOperator(S.shape, matvec=lambda v: inverse * v.ravel(), dtype=S.dtype)
        cupy.cuda.Device().synchronize()
        setup = time.perf_counter()
        count = [0]
        x, _ = cspla.cg(A, cupy.asarray(b), M=M, maxiter=maxiter,
                        callback=lambda xk: count.__setitem__(0, count[0] + 1), **{_rtol_keyword(cspla.cg): RTOL})
        x = cupy.asnumpy(x)
        return x, setup - start, time.perf_counter() - setup, count[0]
    return run


MIXED = ["ginkpy-amg", "ginkpy-amg-f32", "ginkpy-amg-f32-levels"]
SMOOTHED = ["ginkpy-amg-sa", "ginkpy-amg-sa3", "ginkpy-amg-sa-top", "ginkpy-amg-sa-default", "ginkpy-amg-sa3-default"]
METHODS = ["ginkpy-amg", *SMOOTHED, *(name + "-host" for name in SMOOTHED), "ginkpy-amg-f32", "ginkpy-amg-f32-levels", "ginkpy-linalg", "ginkpy-amg-v", "ginkpy-amg-gs", "ginkpy-amg-v-gs", "ginkpy-jacobi", "scipy-jacobi", "pyamg-sa", "pyamg-rs",
           "pyamg-sa-plain", "pyamg-rs-plain", "cupy-jacobi"]


SMOOTHED_LEVELS = None  # "-sa-default": the finest levels smoothed (None: all), from --smoothed-levels


def smoothed_aggregation(name: str):
    """Smoothed aggregation (Pgm's prolongation_relax 4/3, PyAMG's): "ginkpy-amg-sa" V(1,1) on
    every level with 2 pairwise passes (aggregates of ~4.7 rows, for 2D), "-sa3" with 3 (~10
    rows, for 3D), "-sa-top" the finest level only (2 passes), the device's cycle below,
    "-sa-default" every level with the device's cycle and sweeps and round(log2(mean row length))
    passes (what the default Multigrid is where the device choice ``prolongation_relax`` is on:
    2 in 2D, 3 in 3D; only the --smoothed-levels finest levels smoothed where given, as the
    choice's ``smoothed_levels``), "-sa3-default" every level with 3 passes;
    "-host" the same hierarchy with P, R and R A P made on the host with SciPy (the setup before
    the device SpGEMM)."""
    pgm = HostSmoothedPgm if name.endswith("-host") else gk.multigrid.Pgm
    name = name.removesuffix("-host")
    sa = pgm.build().with_prolongation_relax(4 / 3)
    if name == "ginkpy-amg-sa-top":
        return gk.solver.Multigrid.build().with_mg_level(sa, gk.multigrid.Pgm.build())
    if name == "ginkpy-amg-sa-default":
        # the passes of the device choice's rule (pgm.default_levels): from the finest matrix
        factories = [pgm.build().with_prolongation_relax(4 / 3).with_aggregation_passes(p) for p in (1, 2, 3, 4)]
        factories.append(gk.multigrid.Pgm.build())  # (below the smoothed levels)
        chosen = {}

        def passes_of_the_finest(level, A):
            if level == 0:
                chosen["passes"] = min(4, max(1, round(np.log2(max(A.nnz / A.shape[0], 1.0)))))
            return 4 if SMOOTHED_LEVELS is not None and level >= SMOOTHED_LEVELS else chosen["passes"] - 1
        return gk.solver.Multigrid.build().with_mg_level(*factories).with_level_selector(passes_of_the_finest)
    passes = 3 if name.startswith("ginkpy-amg-sa3") else 2
    if name.endswith("-default"):
        return gk.solver.Multigrid.build().with_mg_level(sa.with_aggregation_passes(passes))
    return gk.solver.Multigrid.build().with_cycle("v").with_smoother_iters(1).with_mg_level(
        sa.with_aggregation_passes(passes))


def smoothed_setup_ratios(results: dict) -> list[str]:
    """Lines of same-run ratios: each smoothed aggregation's setup made on the device against the
    host's ("-host") and against the default PGM's, and its whole solve against the default's."""
    lines = []
    base = results.get("ginkpy-amg")
    for name, row in results.items():
        if not name.startswith("ginkpy-amg-sa") or name.endswith("-host"):
            continue
        parts = []
        host = results.get(name + "-host")
        if host is not None:
            parts.append(f"setup {host[0] / row[0]:.2f}x as fast as on the host ({host[0]:.3f} s)")
        if base is not None:
            parts.append(f"setup {row[0] / base[0]:.2f}x and total {row[2] / base[2]:.2f}x the default PGM's "
                         f"({row[3]} against {base[3]} iterations)")
        if parts:
            lines.append(f"{name}: " + "; ".join(parts))
    return lines


def level_setup_times(exec, S, name: str) -> str:
    """The hierarchy of the method ``name`` made again, each level's coarsening timed (a
    level_selector that synchronizes and reads the clock before each level; the last with the
    smoothers, coarsest solver and merged levels)."""
    params = smoothed_aggregation(name) if name.startswith("ginkpy-amg-sa") else gk.solver.Multigrid.build()
    count = max(1, len(params.mg_level))
    stamps = []

    inner = params.level_selector

    def selector(level, A):
        exec.synchronize()
        stamps.append(time.perf_counter())
        return min(level, count - 1) if inner is None else inner(level, A)
    A = gk.matrix.Csr.from_scipy(exec, S)
    exec.synchronize()
    params.with_level_selector(selector).on(exec).generate(A)
    exec.synchronize()
    stamps.append(time.perf_counter())
    steps = [f"{l}: {1e3 * (b - a):.0f}" for l, (a, b) in enumerate(zip(stamps[:-1], stamps[1:]))]
    # (the last interval: the last coarsening and smoothers, coarsest solver, merged levels)
    return ", ".join(steps[:-1] + [steps[-1].replace(":", " and the rest:", 1)])


def methods(args, exec) -> dict:
    """The methods asked for that can run here, by name."""
    out = {}
    for name in args.methods:
        if name == "ginkpy-amg":
            out[name] = ginkpy_solve(exec, gk.solver.Multigrid.build(), args.maxiter)
        elif name == "ginkpy-amg-f32":
            out[name] = ginkpy_solve(exec, gk.solver.Multigrid.build().with_value_type("float32"), args.maxiter)
        elif name == "ginkpy-amg-f32-levels":
            out[name] = ginkpy_solve(exec, gk.solver.Multigrid.build().with_mg_level(
                gk.multigrid.Pgm.build(), gk.multigrid.Pgm.build().with_value_type("float32")), args.maxiter)
        elif name.startswith("ginkpy-amg-sa"):
            out[name] = ginkpy_solve(exec, smoothed_aggregation(name), args.maxiter)
        elif name == "ginkpy-linalg":
            out[name] = ginkpy_linalg(exec, args.maxiter)
        elif name == "ginkpy-amg-v":
            out[name] = ginkpy_solve(exec, gk.solver.Multigrid.build().with_cycle("v"), args.maxiter)
        elif name in ("ginkpy-amg-gs", "ginkpy-amg-v-gs"):
            # forward Gauss-Seidel before, backward after (level-scheduled triangular solves)
            cycle = "v" if name == "ginkpy-amg-v-gs" else "w"
            out[name] = ginkpy_solve(exec, gk.solver.Multigrid.build().with_cycle(cycle).with_pre_smoother(
                gk.preconditioner.GaussSeidel.build()), args.maxiter)
        elif name == "ginkpy-jacobi":
            out[name] = ginkpy_solve(exec, gk.preconditioner.Jacobi.build().with_max_block_size(1), args.maxiter)
        elif name == "scipy-jacobi":
            out[name] = scipy_jacobi_cg(args.maxiter)
        elif name.startswith("pyamg"):
            try:
                import pyamg
            except ImportError:
                print(f"{name}: pyamg is not installed (pip install 'ginkpy[bench]'), skipped")
                continue
            out[name] = pyamg_solve(pyamg, name.split("-")[1], None if name.endswith("plain") else "cg")
        elif name == "cupy-jacobi":
            cupy = bc.import_cupy(args.no_cupy)
            if cupy is None:
                print("cupy-jacobi: no CuPy with an NVIDIA GPU here, skipped")
                continue
            out[name] = cupy_jacobi_cg(cupy, args.maxiter)
    return out


def _warm(runs: dict) -> None:
    # a problem large enough for every kernel variant (the prefix sums of more than one group)
    warm = problems.poisson_2d(120)
    for run in runs.values():
        run(warm, warm @ np.ones(warm.shape[0]))


def _rounds(runs: dict, S, b, reps: int) -> dict:
    """Per method: medians of (setup, solve, total) over ``reps`` interleaved rounds, the
    iterations and the worst relative residual."""
    samples: dict = {name: [] for name in runs}
    for _ in range(reps):
        for name, run in runs.items():
            x, setup, solve, iterations = run(S, b)
            residual = float(np.linalg.norm(b - S @ np.asarray(x).ravel()) / np.linalg.norm(b))
            samples[name].append((setup, solve, setup + solve, iterations, residual))
    out = {}
    for name, rows in samples.items():
        rows = np.array(rows)
        out[name] = (*np.median(rows[:, :3], axis=0), int(rows[-1, 3]), float(rows[:, 4].max()))
    return out


def compare(args, exec) -> int:
    runs = methods(args, exec)
    print(f"ginkpy executor: {bc.device_name(exec)}; SciPy and PyAMG on the host; float64, b = A 1, "
          f"rtol {RTOL:g}; times in seconds, medians of {args.reps} interleaved rounds after a warm-up\n")
    _warm(runs)
    header = f"{'method':<16}{'setup':>9}{'solve':>9}{'total':>9}{'iters':>7}{'rel. res':>10}{'x amg':>8}"
    bc.print_header(header)
    failures = 0
    for problem in args.problems:
        for rows in args.sizes:
            S = GENERATORS[problem](rows)
            b = S @ np.ones(S.shape[0])
            results = _rounds(runs, S, b, args.reps)
            label = f"{problem}:{S.shape[0]}"
            if "ginkpy-amg" in runs:
                hierarchy = runs["ginkpy-amg"].solver.preconditioner
                label += (f" ({hierarchy.num_levels} levels, op. cx {hierarchy.operator_complexity:.2f}, "
                          f"{hierarchy.cycle.upper()}-cycle, {hierarchy.launches_per_cycle} launches a cycle)")
            base = results.get("ginkpy-amg", (None,) * 3)[2]
            print(label)
            for name, (setup, solve, total, iterations, residual) in results.items():
                failures += residual > 1.01 * RTOL
                ratio = "" if base is None else f"{total / base:8.2f}"
                flag = "" if residual <= 1.01 * RTOL else "  NOT CONVERGED"
                its = f"{iterations:7d}" if iterations >= 0 else f"{'-':>7}"
                print(f"{name:<16}{setup:9.3f}{solve:9.3f}{total:9.3f}{its}{residual:10.1e}{ratio}{flag}", flush=True)
            for name in ("ginkpy-amg-f32", "ginkpy-amg-f32-levels"):
                if name in results and "ginkpy-amg" in results:
                    f64, mixed = results["ginkpy-amg"], results[name]
                    iterations = mixed[3] / max(f64[3], 1)
                    print(f"{name}: {iterations:.2f}x the iterations (target <= 1.2), solve {f64[1] / mixed[1]:.2f}x "
                          f"and total {f64[2] / mixed[2]:.2f}x as fast as float64 (target >= 1.3 on a GPU)")
            for line in smoothed_setup_ratios(results):
                print(line)
            if args.hierarchy:
                for name, run in runs.items():
                    if name.startswith("ginkpy-amg"):
                        print(f"{name}: {run.solver.preconditioner!r}")
                        print(f"  setup per level (ms): {level_setup_times(exec, S, name)}")
            pyamg = {n: r[2] for n, r in results.items() if n.startswith("pyamg")}
            if pyamg and base is not None:
                best = min(pyamg, key=pyamg.get)
                print(f"PyAMG's best: {best} {pyamg[best]:.3f} s = {pyamg[best] / base:.2f}x ginkpy AMG-CG's "
                      f"{base:.3f} s")
            print()
    return 1 if failures else 0


# -- --tune: the per-device choice ------------------------------------------------------------------

def tune(args, exec) -> int:
    """Whole AMG-CG solves for each cycle, sweep count, merge size, split_restrict_rows and Pgm's
    aggregation passes: the measurements behind the backends' multigrid choices
    (ginkpy/opencl/device_choices.py, ginkpy/reference/device_choices.py). The F-cycle (not
    symmetric) preconditions Fcg, the others Cg."""
    configs = list(itertools.product(args.cycles, args.sweeps, args.merged, args.split_restrict, args.passes))

    def params(config):
        mg = gk.solver.Multigrid.build().with_cycle(config[0]).with_smoother_iters(config[1]) \
            .with_merged_rows(config[2]).with_split_restrict_rows(config[3])
        return mg if config[4] is None else mg.with_mg_level(gk.multigrid.Pgm.build().with_aggregation_passes(config[4]))
    runs = {c: ginkpy_solve(exec, params(c), args.maxiter, gk.solver.Fcg if c[0] == "f" else None)
            for c in configs}
    choices = exec.device_choices()
    print(f"ginkpy executor: {bc.device_name(exec)} (kind '{choices.kind}', chosen now: {choices.multigrid}); "
          f"whole AMG-CG solves, medians of {args.reps} rounds\n")
    _warm(runs)
    for problem in args.problems:
        for rows in args.sizes:
            S = GENERATORS[problem](rows)
            b = S @ np.ones(S.shape[0])
            results = _rounds(runs, S, b, args.reps)
            print(f"{problem}:{S.shape[0]}")
            print(f"{'cycle':>6}{'sweeps':>7}{'passes':>7}{'merged':>8}{'split':>8}{'levels':>8}{'launches':>9}"
                  f"{'setup':>9}{'solve':>9}{'total':>9}{'iters':>7}")
            for config, (setup, solve, total, iterations, _) in sorted(results.items(), key=lambda kv: kv[1][2]):
                mg = params(config).on(exec).generate(gk.matrix.Csr.from_scipy(exec, S))
                merged = "-" if mg.merged_from is None else f"{mg.merged_from}-{mg.num_levels - 1}"
                passes = "-" if config[4] is None else config[4]
                print(f"{config[0]:>6}{config[1]:>7}{passes:>7}{config[2]:>8}{mg.split_restrict_rows:>8}{merged:>8}"
                      f"{mg.launches_per_cycle:>9}{setup:9.3f}{solve:9.3f}{total:9.3f}{iterations:7d}", flush=True)
            print()
    return 0


# -- --profile: where the setup's time goes -------------------------------------------------------

def _print_kernel_times(times: dict, what: str) -> None:
    """The 15 kernels of most device time: launches and milliseconds."""
    total = sum(t for _, t in times.values())
    print(f"{what}: {1e3 * total:.1f} ms on the device:")
    for name, (count, seconds) in sorted(times.items(), key=lambda kv: -kv[1][1])[:15]:
        print(f"  {name:<28}{count:6d}{1e3 * seconds:9.2f} ms")


def profile(args, exec) -> int:
    """Setup of ginkpy AMG-CG: host phases (cProfile), device kernel times (with
    GINKPY_OPENCL_PROFILE=1), launches and blocking reads; then the solve's launches per
    iteration."""
    run = ginkpy_solve(exec, gk.solver.Multigrid.build(), args.maxiter)
    _warm({"amg": run})
    profiling = getattr(exec, "kernel_times", None) is not None and os.environ.get("GINKPY_OPENCL_PROFILE") == "1"
    for problem in args.problems:
        for rows in args.sizes:
            S = GENERATORS[problem](rows)
            b = S @ np.ones(S.shape[0])
            run(S, b)  # the sizes' first run (allocations)
            if profiling:
                exec.kernel_times()
            counters = dict(exec.counters)
            start = time.perf_counter()
            profiler = cProfile.Profile()
            profiler.enable()
            A = gk.matrix.Csr.from_scipy(exec, S)
            transfer = time.perf_counter()
            mg = gk.solver.Multigrid.build().on(exec).generate(A)
            exec.synchronize()
            profiler.disable()
            end = time.perf_counter()
            used = {k: exec.counters[k] - counters[k] for k in counters}
            print(f"{problem}:{S.shape[0]} on {bc.device_name(exec)}")
            print(mg)
            print(f"\nsetup: {1e3 * (end - start):.1f} ms (matrix to the device {1e3 * (transfer - start):.1f} ms, "
                  f"hierarchy {1e3 * (end - transfer):.1f} ms); {used['launches']} launches, {used['reads']} "
                  f"blocking reads, {used['allocations']} allocations")
            if profiling:
                _print_kernel_times(exec.kernel_times(), "kernels")
            print("host (cumulative, ms):")
            stats = pstats.Stats(profiler)
            rows_ = [(key, value[3]) for key, value in stats.stats.items()
                     if "ginkpy" in key[0] and not key[2].startswith("<")]
            for (file, line, fn), cumulative in sorted(rows_, key=lambda kv: -kv[1])[:15]:
                print(f"  {1e3 * cumulative:8.1f}  {fn} ({file.split('ginkpy/')[-1]}:{line})")
            counters = dict(exec.counters)
            if profiling:
                exec.kernel_times()
            _, _, _, iterations = run(S, b)
            used = {k: exec.counters[k] - counters[k] for k in counters}
            print(f"whole solve again: {iterations} iterations, {used['launches']} launches, {used['reads']} reads "
                  f"(a cycle {mg.launches_per_cycle} launches)")
            if profiling:
                _print_kernel_times(exec.kernel_times(), "its kernels (setup and iterations)")
            print()
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[160_000, 490_000],
                   help="rows (a grid side is the square or cube root): 1e4 to 8e6")
    p.add_argument("--problems", nargs="+", default=["poisson_2d"], choices=list(GENERATORS))
    p.add_argument("--methods", nargs="+", default=[m for m in METHODS if "-v" not in m and "-gs" not in m and "-f32" not in m
                            and not m.startswith("ginkpy-amg-sa")],
                   choices=METHODS)
    p.add_argument("--executor", default="opencl", help="ginkpy executor: opencl, opencl:<p>:<d>, reference")
    p.add_argument("--choices", default="device", choices=["device", "cpu", "gpu"],
                   help="per-device choices and launch layouts: the device's own, a CPU's or a GPU's")
    p.add_argument("--maxiter", type=int, default=20_000, help="iteration limit of every CG")
    p.add_argument("--reps", type=int, default=3, help="interleaved rounds (the median is reported)")
    p.add_argument("--no-cupy", action="store_true", help="skip CuPy even where it is present")
    p.add_argument("--hierarchy", action="store_true", help="print each AMG method's hierarchy (rows, nonzeros "
                   "and transfers per level)")
    p.add_argument("--tune", action="store_true", help="measure the cycle, sweep and merge choices instead")
    p.add_argument("--cycles", nargs="+", default=["v", "w"], choices=["v", "w", "f"],
                   help="with --tune (f: preconditioning Fcg, the others Cg)")
    p.add_argument("--sweeps", type=int, nargs="+", default=[1, 2], help="with --tune")
    p.add_argument("--merged", type=int, nargs="+", default=[0, 2048, 8192, 32768, 131072], help="with --tune")
    p.add_argument("--split-restrict", type=int, nargs="+", default=[None],
                   help="with --tune: Multigrid's split_restrict_rows (default: the device's choice)")
    p.add_argument("--passes", type=int, nargs="+", default=[None],
                   help="with --tune: Pgm's aggregation_passes on every level (default: Multigrid's default levels)")
    p.add_argument("--mixed", action="store_true",
                   help=f"float64 AMG-CG beside its float32 hierarchies (the methods {', '.join(MIXED)})")
    p.add_argument("--smoothed-levels", type=int, default=None,
                   help="ginkpy-amg-sa-default: smooth only this many finest levels (default: all)")
    p.add_argument("--profile", action="store_true",
                   help="profile the setup instead (kernel times need GINKPY_OPENCL_PROFILE=1)")
    args = p.parse_args()
    global SMOOTHED_LEVELS
    SMOOTHED_LEVELS = args.smoothed_levels
    exec = taken_as(gk.executor(args.executor), args.choices)
    if args.mixed:
        args.methods = MIXED
    if args.tune:
        return tune(args, exec)
    if args.profile:
        return profile(args, exec)
    return compare(args, exec)


if __name__ == "__main__":
    raise SystemExit(main())
