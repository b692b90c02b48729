"""Where smoothed aggregation's setup goes, per level and phase: the aggregation passes, the
smoother S = I - (w / rho) D^-1 A with its bound rho, P = S P_t (from S's rows and the
aggregates), R = P^H, A P, R (A P), then the
smoothers, the coarsest solver and the merged levels; each phase's time (the executor
synchronized before and after), launches, blocking reads, allocations and program builds.

    python benchmarks/bench_sa_setup.py [--problems poisson_2d poisson_3d] [--sizes ROWS ...]
                                        [--choices device|cpu|gpu] [--executor opencl|reference]
                                        [--smoothed-levels N] [--reps 2] [--hash-limits 1024 0]
                                        [--one-pass on off]

``--hash-limits``: the setup once per SpGEMM hash limit (``spgemm_kernels.HASH_LIMIT``; 0: a GPU
merges every row, as before the hash), in one run. ``--one-pass on off``: the setup with the
SpGEMM's rows written once at bounds and compacted, then counted first
(``spgemm_kernels.ONE_PASS``), alternated round by round in one run. With ``GINKPY_OPENCL_PROFILE=1`` the last
round's kernel times follow the table (the 12 longest).

``--choices gpu`` runs an OpenCL CPU device (PoCL) with a GPU's choices and launch layouts
(``bench_ilu_default.taken_as``). The first round builds the programs (builds counted there);
the table is the last round's (warm), each phase summed over the levels in the last lines.
"""
from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict

import numpy as np

import bench_common as bc
from bench_amg import GENERATORS
from bench_ilu_default import taken_as
import ginkpy as gk
from ginkpy.core.multigrid import smoothed_aggregation as sa
from ginkpy.core.multigrid.pgm import Pgm
from ginkpy.core.solver.multigrid import Multigrid
from ginkpy.opencl.matrix import spgemm_kernels

COUNTERS = ("launches", "reads", "allocations", "builds")
PROFILING = os.environ.get("GINKPY_OPENCL_PROFILE") == "1"


class Phases:
    """Timed phases: (level rows, phase) -> [seconds, launches, reads, allocations, builds]."""

    def __init__(self, exec) -> None:
        self.exec, self.rows = exec, 0
        self.table: dict = defaultdict(lambda: np.zeros(1 + len(COUNTERS)))

    def timed(self, phase: str, fn, *args, **kwargs):
        exec = self.exec
        exec.synchronize()
        before, start = dict(exec.counters), time.perf_counter()
        out = fn(*args, **kwargs)
        exec.synchronize()
        row = self.table[(self.rows, phase)]
        row[0] += time.perf_counter() - start
        row[1:] += [exec.counters.get(k, 0) - before.get(k, 0) for k in COUNTERS]
        return out


def instrumented(phases: Phases):
    """Patches that time the setup's phases (undone by calling the result)."""
    saved = {}

    def patch(owner, name, wrapper):
        saved[(owner, name)] = getattr(owner, name)
        setattr(owner, name, wrapper(getattr(owner, name)))

    def level(init):
        def run(self, factory, A, checked=False):
            phases.rows = A.shape[0]
            return init(self, factory, A, checked)
        return run
    patch(Pgm, "__init__", level)
    patch(Pgm, "_pass", lambda f: lambda *a, **k: phases.timed("aggregation pass", f, *a, **k))
    patch(Pgm, "_smooth", lambda f: lambda self: phases.timed("SA total", f, self))
    for name, label in (("_make_smoothers", "smoothers"), ("_make_coarsest_solver", "coarsest solver"),
                        ("_merge", "merged levels")):
        patch(Multigrid, name, lambda f, label=label: lambda *a, **k: phases.timed(label, f, *a, **k))
    # the products of SmoothedProducts, named in the order it makes them
    names = iter(())

    def products(init):
        def run(self, *a, **k):
            nonlocal names
            names = iter(["A P", "R (A P)"])
            return init(self, *a, **k)
        return run
    patch(sa.SmoothedProducts, "__init__", products)
    patch(sa, "multiply", lambda f: lambda *a, **k: phases.timed(next(names, "product"), f, *a, **k))
    patch(sa, "smoothed_prolongation", lambda f: lambda *a, **k: phases.timed("P = S P_t", f, *a, **k))
    patch(sa, "transpose_with_source", lambda f: lambda *a, **k: phases.timed("R = P^H", f, *a, **k))
    run_kernel = phases.exec.run

    def smoother_run(name, *a, **k):
        if name == "multigrid.smoothed_aggregation.smoother_values":
            return phases.timed("S and rho", run_kernel, name, *a, **k)
        return run_kernel(name, *a, **k)
    phases.exec.run = smoother_run

    def undo():
        for (owner, name), value in saved.items():
            setattr(owner, name, value)
        del phases.exec.run
    return undo


def hierarchy(smoothed_levels):
    """The default Multigrid, its levels smoothed as bench_amg's ginkpy-amg-sa-default."""
    import bench_amg
    bench_amg.SMOOTHED_LEVELS = smoothed_levels
    return bench_amg.smoothed_aggregation("ginkpy-amg-sa-default")


def report(phases: Phases, total: float, mg) -> None:
    print(mg)
    print(f"{'level rows':>11}  {'phase':<18}{'ms':>9}" + "".join(f"{k:>12}" for k in COUNTERS))
    sums = defaultdict(lambda: np.zeros(1 + len(COUNTERS)))
    for (rows, phase), row in phases.table.items():
        print(f"{rows:>11}  {phase:<18}{1e3 * row[0]:9.1f}" + "".join(f"{int(v):12d}" for v in row[1:]))
        sums[phase] += row
    print(f"{'all levels':>11}")
    for phase, row in sums.items():
        print(f"{'':>11}  {phase:<18}{1e3 * row[0]:9.1f}" + "".join(f"{int(v):12d}" for v in row[1:]))
    print(f"whole setup {1e3 * total:.1f} ms\n")


def rounds(exec, A, args) -> None:
    """The setup ``args.reps`` times, the last one's table printed (and its kernel times)."""
    for rep in range(args.reps):
        phases = Phases(exec)
        undo = instrumented(phases)
        if PROFILING:
            exec.kernel_times()  # (reset)
        try:
            exec.synchronize()
            start = time.perf_counter()
            mg = hierarchy(args.smoothed_levels).on(exec).generate(A)
            exec.synchronize()
            total = time.perf_counter() - start
        finally:
            undo()
        if rep == 0:
            builds = sum(int(row[4]) for row in phases.table.values())
            print(f"first round: {1e3 * total:.1f} ms, {builds} builds")
    report(phases, total, mg)
    times = exec.kernel_times() if PROFILING else {}
    for name, (count, seconds) in sorted(times.items(), key=lambda kv: -kv[1][1])[:12]:
        print(f"  {name:<28}{count:6d}{1e3 * seconds:9.2f} ms")


def alternated(exec, A, args, title: str) -> None:
    """Rounds of the setup with each ``--one-pass`` way in turn (the first of each builds), the
    last round's table of each printed, and the whole setup's median per way."""
    tables, totals = {}, {way: [] for way in args.one_pass}
    for rep in range(args.reps):
        for way in (args.one_pass if rep % 2 == 0 else args.one_pass[::-1]):
            spgemm_kernels.ONE_PASS = way == "on"
            phases = Phases(exec)
            undo = instrumented(phases)
            try:
                exec.synchronize()
                start = time.perf_counter()
                mg = hierarchy(args.smoothed_levels).on(exec).generate(A)
                exec.synchronize()
                totals[way].append(time.perf_counter() - start)
            finally:
                undo()
            tables[way] = (phases, totals[way][-1], mg)
    for way in args.one_pass:
        print(f"{title}, SpGEMM one pass {way}")
        report(*tables[way])
    print("whole setup, median of the rounds after the first: " + ", ".join(
        f"one pass {way} {1e3 * np.median(totals[way][1:] or totals[way]):.1f} ms" for way in args.one_pass))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[490_000])
    p.add_argument("--problems", nargs="+", default=["poisson_2d"], choices=list(GENERATORS))
    p.add_argument("--executor", default="opencl")
    p.add_argument("--choices", default="device", choices=["device", "cpu", "gpu"])
    p.add_argument("--smoothed-levels", type=int, default=None)
    p.add_argument("--reps", type=int, default=2, help="rounds; the first builds the programs")
    p.add_argument("--hash-limits", type=int, nargs="+", default=[None],
                   help="SpGEMM hash limits to run (default: the module's)")
    p.add_argument("--one-pass", nargs="+", default=[None], choices=["on", "off"],
                   help="SpGEMM written once (on) or counted first (off), alternated per round (default: the module's)")
    args = p.parse_args()
    exec = gk.executor(args.executor)
    exec = taken_as(exec, args.choices) if args.choices != "device" else exec
    print(f"executor: {bc.device_name(exec)} ({exec.device_choices().kind} choices)\n")
    for problem in args.problems:
        for size in args.sizes:
            S = GENERATORS[problem](size)
            A = gk.matrix.Csr.from_scipy(exec, S)
            for limit in args.hash_limits:
                if limit is not None:
                    spgemm_kernels.HASH_LIMIT = limit
                if args.one_pass == [None]:
                    print(f"{problem}:{S.shape[0]}, SpGEMM hash limit {spgemm_kernels.HASH_LIMIT}")
                    rounds(exec, A, args)
                else:
                    alternated(exec, A, args, f"{problem}:{S.shape[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
