"""First calls: a fresh process's first `ginkpy.linalg.cg` against its second, with the disk
caches warm (a process run before the measured ones fills them). Each measured run is a new
Python process that imports ginkpy, makes a 2D Poisson problem with SciPy and times
`gk.linalg.cg(A, b, rtol=1e-8, M=...)` twice, as a user writes it (the first includes loading
`ginkpy.linalg`, the executor's context, the programs and the kernels). `first / second` is
the median over the runs of each run's ratio; `import` is `import ginkpy`.

    python benchmarks/bench_first_call.py [--grids 100 300] [--runs 5] [--executor opencl] [--profile]

`--profile` prints, for the first grid, where one first call's time goes (cProfile, cumulative).
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
from ginkpy.problems import poisson_2d
n, executor, profile = int(sys.argv[1]), sys.argv[2], sys.argv[4] == "1"
M = None if sys.argv[3] == "none" else sys.argv[3]
S = poisson_2d(n).tocsr()
b = S @ np.ones(S.shape[0])
times = []
for call in range(2):
    if profile and call == 0:
        import cProfile, pstats
        profiler = cProfile.Profile()
        profiler.enable()
    start = time.perf_counter()
    x, info = gk.linalg.cg(S, b, rtol=1e-8, M=M, executor=executor)
    times.append(time.perf_counter() - start)
    if profile and call == 0:
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
    assert info == 0 and np.linalg.norm(S @ x - b) <= 1e-7 * np.linalg.norm(b), info
print(json.dumps({"import": imported, "first": times[0], "second": times[1]}))
"""


def child(n: int, args, profile: bool = False) -> dict:
    # this checkout's ginkpy, from a neutral folder (python -c puts the working folder first)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", CHILD, str(n), args.executor, args.M, "1" if profile else "0"],
                         capture_output=True, text=True, env=env, timeout=600, cwd=tempfile.gettempdir())
    if run.returncode != 0:
        raise SystemExit(f"the child process failed:\n{run.stderr[-3000:]}")
    if profile:
        print(run.stderr)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grids", type=int, nargs="+", default=[100, 300], help="grid sides n (n^2 rows)")
    p.add_argument("--runs", type=int, default=5, help="fresh processes per grid (interleaved)")
    p.add_argument("--executor", default="opencl")
    p.add_argument("--M", default="jacobi", help="preconditioner of gk.linalg.cg ('none': none)")
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    for n in args.grids:
        child(n, args)  # fills the disk caches
    if args.profile:
        child(args.grids[0], args, profile=True)
    runs: dict[int, list[dict]] = {n: [] for n in args.grids}
    for _ in range(args.runs):
        for n in args.grids:
            runs[n].append(child(n, args))
    print(f"gk.linalg.cg(rtol=1e-8, M={args.M!r}, executor={args.executor!r}), {args.runs} fresh processes, medians")
    print(f"{'rows':>7} {'import ms':>10} {'first ms':>9} {'second ms':>10} {'first / second':>15}")
    for n in args.grids:
        med = {key: float(np.median([r[key] for r in runs[n]])) for key in ("import", "first", "second")}
        ratio = float(np.median([r["first"] / r["second"] for r in runs[n]]))
        print(f"{n * n:7d} {med['import'] * 1e3:10.0f} {med['first'] * 1e3:9.0f} {med['second'] * 1e3:10.0f} "
              f"{ratio:15.2f}")


if __name__ == "__main__":
    main()
