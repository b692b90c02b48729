"""The host's share of an AMG-CG setup (issue 31 "3D multigrid", issue 32 item 4): the upload of
A (``Csr.from_scipy``, waited for) and the hierarchy (``Cg`` with a ``Multigrid`` preconditioner:
``generate``, then ``exec.synchronize()``), timed apart, with the launches, blocking reads and
allocations each takes (``exec.counters``) and, with GINKPY_OPENCL_PROFILE=1, the device time of
the hierarchy's kernels (what is left is the host's).

    python benchmarks/bench_amg_host.py [--problems poisson_3d:20 poisson_3d:30 poisson_2d:300]
                                        [--reps 5] [--choices device|cpu|gpu] [--executor opencl]
    python benchmarks/bench_amg_host.py --trees ../old-checkout . [...]   # before / after: each tree's
                                        # ginkpy in its own process (PYTHONPATH), rounds interleaved

``--choices gpu`` runs PoCL with a GPU's per-device choices and launch layouts (its staged upload
of A, its cycle): the counts are a GPU's, the times PoCL's. With ``--trees`` every round runs
each tree once (a fresh process per tree and round, warmed up on a small problem first); the
table gives each tree's medians and the ratios to the first tree (above 1: the later tree
is faster / does fewer).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

PROBLEMS = ["poisson_3d:20", "poisson_3d:30", "poisson_3d:40", "poisson_2d:300"]
FIELDS = ["upload_ms", "hierarchy_ms", "kernels_ms", "launches", "reads", "allocations"]


def _matrix(problem: str):
    from ginkpy.problems import poisson_2d, poisson_3d
    name, side = problem.split(":")
    return {"poisson_2d": poisson_2d, "poisson_3d": poisson_3d}[name](int(side)).astype(np.float64)


def _executor(name: str, choices: str):
    import attrs
    import ginkpy as gk
    exec = gk.executor(name)
    if choices == "device":
        return exec
    out = gk.OpenCLExecutor(exec.device)
    out.info = attrs.evolve(exec.info, is_cpu=choices == "cpu", is_gpu=choices == "gpu")
    return out


def setup_once(exec, S) -> dict:
    """One AMG-CG setup of the SciPy matrix ``S`` on ``exec``: times and counts of its parts."""
    import ginkpy as gk
    profiling = os.environ.get("GINKPY_OPENCL_PROFILE") == "1" and hasattr(exec, "kernel_times")
    exec.synchronize()
    if profiling:
        exec.kernel_times()
    before = dict(exec.counters)
    start = time.perf_counter()
    A = gk.matrix.Csr.from_scipy(exec, S)
    exec.synchronize()
    uploaded = time.perf_counter()
    counts = dict(exec.counters)
    solver = (gk.solver.Cg.build().with_preconditioner(gk.solver.Multigrid.build())
              .with_criteria(gk.stop.Iteration.build().with_max_iters(100)).on(exec).generate(A))
    exec.synchronize()
    end = time.perf_counter()
    kernels = sum(t for _, t in exec.kernel_times().values()) if profiling else float("nan")
    out = {"upload_ms": 1e3 * (uploaded - start), "hierarchy_ms": 1e3 * (end - uploaded), "kernels_ms": 1e3 * kernels,
           "levels": len(solver.preconditioner.levels) if hasattr(solver.preconditioner, "levels") else -1}
    for key in ("launches", "reads", "allocations"):
        out[key] = exec.counters[key] - counts[key]
        out["upload_" + key] = counts[key] - before[key]
    return out


def run_here(args) -> list[dict]:
    """Every problem ``args.reps`` times in this process (after a warm-up on a small one)."""
    exec = _executor(args.executor, args.choices)
    setup_once(exec, _matrix("poisson_3d:8"))
    rows = []
    for problem in args.problems:
        S = _matrix(problem)
        setup_once(exec, S)  # this size's first setup (builds, allocations of the pool)
        for _ in range(args.reps):
            rows.append({"problem": problem, **setup_once(exec, S)})
    return rows


def _median(rows: list[dict], problem: str, field: str) -> float:
    return float(np.median([r[field] for r in rows if r["problem"] == problem]))


def print_table(results: dict[str, list[dict]], problems: list[str]) -> None:
    trees = list(results)
    print(f"{'problem':<16}{'tree':<28}" + "".join(f"{f:>14}" for f in FIELDS))
    for problem in problems:
        for tree in trees:
            values = [_median(results[tree], problem, f) for f in FIELDS]
            print(f"{problem:<16}{tree[-27:]:<28}" + "".join(f"{v:14.1f}" for v in values))
        for tree in trees[1:]:
            ratios = [_median(results[trees[0]], problem, f) / max(_median(results[tree], problem, f), 1e-9)
                      for f in FIELDS]
            print(f"{'':<16}{'first / ' + tree[-19:]:<28}" + "".join(f"{r:13.2f}x" for r in ratios))


def compare_trees(args) -> int:
    """Rounds of one process per tree, interleaved; medians and ratios per problem."""
    results: dict[str, list[dict]] = {tree: [] for tree in args.trees}
    command = [sys.executable, os.path.abspath(__file__), "--json", "--reps", "1", "--choices", args.choices,
               "--executor", args.executor, "--problems", *args.problems]
    for _ in range(args.reps):
        for tree in args.trees:
            # the tree first, the rest of the path kept (an environment may put the dependencies there)
            path = os.pathsep.join(filter(None, [os.path.abspath(tree), os.environ.get("PYTHONPATH")]))
            env = dict(os.environ, PYTHONPATH=path)
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd="/")
            results[tree] += json.loads(out.stdout.strip().splitlines()[-1])
    print_table(results, args.problems)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--problems", nargs="+", default=PROBLEMS, help="poisson_2d:SIDE or poisson_3d:SIDE")
    p.add_argument("--reps", type=int, default=5, help="setups per problem (with --trees: rounds)")
    p.add_argument("--executor", default="opencl")
    p.add_argument("--choices", default="device", choices=["device", "cpu", "gpu"],
                   help="per-device choices and launch layouts: the device's own, a CPU's or a GPU's")
    p.add_argument("--trees", nargs="+", help="source trees to compare, each in its own processes")
    p.add_argument("--json", action="store_true", help="print the rows as JSON (what --trees reads)")
    args = p.parse_args()
    if args.trees:
        return compare_trees(args)
    rows = run_here(args)
    if args.json:
        print(json.dumps(rows))
        return 0
    import ginkpy as gk
    exec = _executor(args.executor, args.choices)
    print(f"ginkpy {os.path.dirname(gk.__file__)} on {exec!r}, choices {exec.device_choices().kind}")
    print_table({"this tree": rows}, args.problems)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
