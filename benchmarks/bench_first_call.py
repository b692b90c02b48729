"""First calls: a fresh process's first `ginkpy.linalg` solve against its second, with the disk
caches warm (a process run before the measured ones fills them), without and with ginkpy's
program record (issue 30: the first apply's programs built at generate).

Each measured run is a new Python process that imports ginkpy, makes a 2D Poisson problem with
SciPy and times `gk.linalg.<method>(A, b, rtol=1e-8, M=...)` twice, as a user writes it (the
first includes loading `ginkpy.linalg`, the executor's context, the programs and the kernels).
The first call's time is split into its setup (`gk.linalg.Solver`: A's upload, the
preconditioner, and with the record every program the solve will use) and the rest (the solve,
which without the record builds its programs itself), with the programs built or loaded in
each (`exec.counters["builds"]`). Two conditions, interleaved run by run: `absent` (each run
gets an empty GINKPY_CACHE_DIR: no record, as in a process on a machine that never ran this
solver) and `present` (the record the warm-up process wrote). pyopencl's and the driver's own
program caches are warm in both. `first / second` is the median over the runs of each run's
ratio, `present / absent` the median of the first calls' ratio run by run; `import` is
`import ginkpy`.

    python benchmarks/bench_first_call.py [--grids 100 300] [--runs 5] [--executor opencl]
                                          [--method cg] [--M jacobi] [--profile]

`--profile` prints, for the first grid, where one first call's time goes (cProfile, cumulative,
record present).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
start = time.perf_counter()
import ginkpy as gk
imported = time.perf_counter() - start
import numpy as np
import ginkpy.linalg._solver as linalg_solver
from ginkpy.problems import poisson_2d
n, executor, profile, method = int(sys.argv[1]), sys.argv[2], sys.argv[4] == "1", sys.argv[5]
M = None if sys.argv[3] == "none" else sys.argv[3]
S = poisson_2d(n).tocsr()
b = S @ np.ones(S.shape[0])
setup = {"time": 0.0, "builds": 0}
make = linalg_solver.Solver.__init__

def timed_setup(self, *args, **kwargs):  # the setup of a linalg call: A's upload and the generate
    begin, builds = time.perf_counter(), counters()["builds"]
    make(self, *args, **kwargs)
    setup["time"] += time.perf_counter() - begin
    setup["builds"] += counters()["builds"] - builds
linalg_solver.Solver.__init__ = timed_setup

def counters():
    return gk.executor(executor).counters if executor != "default" else gk.default_executor().counters
times = []
for call in range(2):
    if profile and call == 0:
        import cProfile, pstats
        profiler = cProfile.Profile()
        profiler.enable()
    start = time.perf_counter()
    builds = counters()["builds"] if call else 0
    x, info = getattr(gk.linalg, method)(S, b, rtol=1e-8, M=M, executor=executor)
    times.append(time.perf_counter() - start)
    if call == 0:
        first_setup, first_builds = dict(setup), counters()["builds"]
    if profile and call == 0:
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
    assert info == 0 and np.linalg.norm(S @ x - b) <= 1e-7 * np.linalg.norm(b), info
print(json.dumps({"import": imported, "first": times[0], "second": times[1], "setup": first_setup["time"],
                  "setup_builds": first_setup["builds"], "solve_builds": first_builds - first_setup["builds"]}))
"""


def child(n: int, args, cache: str, profile: bool = False) -> dict:
    # this checkout's ginkpy, from a neutral folder (python -c puts the working folder first)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               GINKPY_CACHE_DIR=cache)
    env.pop("GINKPY_PROGRAM_RECORD", None)
    run = subprocess.run([sys.executable, "-c", CHILD, str(n), args.executor, args.M, "1" if profile else "0",
                          args.method], capture_output=True, text=True, env=env, timeout=600, cwd=tempfile.gettempdir())
    if run.returncode != 0:
        raise SystemExit(f"the child process failed:\n{run.stderr[-3000:]}")
    if profile:
        print(run.stderr)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grids", type=int, nargs="+", default=[100, 300], help="grid sides n (n^2 rows)")
    p.add_argument("--runs", type=int, default=5, help="fresh processes per grid and condition (interleaved)")
    p.add_argument("--executor", default="opencl")
    p.add_argument("--method", default="cg", help="the gk.linalg function (cg, gmres, bicgstab, ...)")
    p.add_argument("--M", default="jacobi", help="preconditioner of the call ('none': none)")
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="ginkpy-first-call-") as folder:
        present = str(Path(folder) / "present")
        for n in args.grids:
            child(n, args, present)  # fills the disk caches and the record
        if args.profile:
            child(args.grids[0], args, present, profile=True)
        runs: dict[tuple[int, str], list[dict]] = {(n, c): [] for n in args.grids for c in ("absent", "present")}
        for run in range(args.runs):
            for n in args.grids:
                runs[n, "absent"].append(child(n, args, str(Path(folder) / f"absent-{n}-{run}")))
                runs[n, "present"].append(child(n, args, present))
    report(args, runs)


def report(args, runs: dict) -> None:
    print(f"gk.linalg.{args.method}(rtol=1e-8, M={args.M!r}, executor={args.executor!r}), {args.runs} fresh "
          f"processes per row, medians; setup: gk.linalg.Solver (A's upload, generate), builds: programs built or "
          f"loaded (setup+solve)")
    print(f"{'rows':>7} {'record':>7} {'import ms':>9} {'first ms':>8} {'setup ms':>8} {'solve ms':>8} "
          f"{'builds':>7} {'second ms':>9} {'first/second':>12}")
    for n in args.grids:
        for condition in ("absent", "present"):
            rs = runs[n, condition]
            med = {key: float(np.median([r[key] for r in rs])) for key in ("import", "first", "second", "setup")}
            solve = float(np.median([r["first"] - r["setup"] for r in rs]))
            builds = f"{np.median([r['setup_builds'] for r in rs]):.0f}+{np.median([r['solve_builds'] for r in rs]):.0f}"
            ratio = float(np.median([r["first"] / r["second"] for r in rs]))
            print(f"{n * n:7d} {condition:>7} {med['import'] * 1e3:9.0f} {med['first'] * 1e3:8.0f} "
                  f"{med['setup'] * 1e3:8.0f} {solve * 1e3:8.0f} {builds:>7} {med['second'] * 1e3:9.0f} {ratio:12.2f}")
        pairs = [p["first"] / a["first"] for a, p in zip(runs[n, "absent"], runs[n, "present"])]
        print(f"{n * n:7d} first call present / absent (median of run-by-run ratios): {np.median(pairs):.2f}")


if __name__ == "__main__":
    main()
