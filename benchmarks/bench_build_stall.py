"""Build stalls: how long another thread's solves wait while a new solver's first apply runs,
without and with ginkpy's program record (issue 30: a solver's generate builds what its apply
will use, so that no apply meets a build).

Each run is a fresh Python process. A busy thread applies a warm Jacobi-CG (fixed iterations,
two right-hand sides: the captured loop) again and again, each apply waited for; meanwhile the
main thread applies, once, a solver of another kind (`--new`, generated before the busy thread
starts; 5 iterations, so that its own work, which the busy thread's launches queue behind on
the device's one queue, is small beside its builds). A program build holds the device's lock, so the busy thread's launches wait for it:
`worst` is the longest busy apply that overlapped the new solver's first apply, `typical` the
median of the others. Two conditions, interleaved run by run: `absent` (an empty
GINKPY_CACHE_DIR: the new solver's apply builds its programs) and `present` (the record a
warm-up process wrote: its generate built them). pyopencl's and the driver's program caches are
warm in both. Medians over the runs.

    python benchmarks/bench_build_stall.py [--runs 5] [--grid 100] [--new gmres-ilu] [--executor opencl]

`--new`: gmres-ilu, bicgstab-jacobi or cg-amg (on a 2D convection-diffusion or Poisson problem of
`--grid`^2 rows, two right-hand sides).
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
import json, sys, threading, time
import numpy as np
import ginkpy as gk
from ginkpy.problems import convection_diffusion_2d, poisson_2d
n, executor, new_kind = int(sys.argv[1]), sys.argv[2], sys.argv[3]
exec = gk.executor(executor)
Dense = gk.matrix.Dense

def system(S):
    A = gk.matrix.Csr.from_scipy(exec, S)
    B = S @ np.stack([np.linspace(1.0, 2.0, S.shape[0]), np.linspace(-1.0, 1.0, S.shape[0])], axis=1)
    return A, Dense.from_numpy(exec, B), Dense.zeros(exec, B.shape)
A, b, x = system(poisson_2d(n).tocsr())
busy = (gk.solver.Cg.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
        .with_criteria(gk.stop.Iteration.build().with_max_iters(20)).on(exec).generate(A))
busy.apply(b, x)
exec.synchronize()
method, M = new_kind.split("-")
S2 = (poisson_2d if method == "cg" else convection_diffusion_2d)(n).tocsr()
A2, b2, x2 = system(S2)
preconditioner = {"ilu": gk.preconditioner.Ilu.build(),
                  "jacobi": gk.preconditioner.Jacobi.build().with_max_block_size(1),
                  "amg": gk.solver.Multigrid.build().with_criteria(gk.stop.Iteration.build().with_max_iters(1))}[M]
start = time.perf_counter()
new = (getattr(gk.solver, {"cg": "Cg", "gmres": "Gmres", "bicgstab": "Bicgstab"}[method]).build()
       .with_preconditioner(preconditioner)
       .with_criteria(gk.stop.Iteration.build().with_max_iters(5)).on(exec).generate(A2))
exec.synchronize()
generate = time.perf_counter() - start
applies, stop, warm = [], threading.Event(), threading.Event()

def work():
    while not stop.is_set():
        t = time.perf_counter()
        busy.apply(b, x)
        exec.synchronize()
        applies.append((t, time.perf_counter()))
        if len(applies) >= 5:
            warm.set()
thread = threading.Thread(target=work)
thread.start()
warm.wait()
builds = exec.counters["builds"]
begin = time.perf_counter()
new.apply(b2, x2)
exec.synchronize()
end = time.perf_counter()
builds = exec.counters["builds"] - builds
count = len(applies)
while len(applies) < count + 5:
    time.sleep(0.001)
stop.set()
thread.join()
during = [e - s for s, e in applies if s < end and e > begin]
others = [e - s for s, e in applies if not (s < end and e > begin)]
print(json.dumps({"generate": generate, "apply": end - begin, "apply_builds": builds,
                  "worst": max(during) if during else 0.0, "typical": float(np.median(others))}))
"""


def child(args, cache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               GINKPY_CACHE_DIR=cache)
    env.pop("GINKPY_PROGRAM_RECORD", None)
    run = subprocess.run([sys.executable, "-c", CHILD, str(args.grid), args.executor, args.new],
                         capture_output=True, text=True, env=env, timeout=600, cwd=tempfile.gettempdir())
    if run.returncode != 0:
        raise SystemExit(f"the child process failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5, help="fresh processes per condition (interleaved)")
    p.add_argument("--grid", type=int, default=100, help="grid side n of both problems (n^2 rows)")
    p.add_argument("--new", default="gmres-ilu", choices=["gmres-ilu", "bicgstab-jacobi", "cg-amg"])
    p.add_argument("--executor", default="opencl")
    args = p.parse_args()
    runs: dict[str, list[dict]] = {"absent": [], "present": []}
    with tempfile.TemporaryDirectory(prefix="ginkpy-build-stall-") as folder:
        present = str(Path(folder) / "present")
        child(args, present)  # fills the disk caches and the record
        for run in range(args.runs):
            runs["absent"].append(child(args, str(Path(folder) / f"absent-{run}")))
            runs["present"].append(child(args, present))
    print(f"a busy thread's Jacobi-CG applies (20 iterations, 2 columns, {args.grid}^2 rows) while the main thread "
          f"first applies {args.new} ({args.executor}), {args.runs} fresh processes each, medians")
    print(f"{'record':>7} {'new generate ms':>15} {'new apply ms':>12} {'apply builds':>12} {'busy typical ms':>15} "
          f"{'busy worst ms':>13} {'worst/typical':>13}")
    for condition, rs in runs.items():
        med = {key: float(np.median([r[key] for r in rs])) for key in ("generate", "apply", "apply_builds",
                                                                        "worst", "typical")}
        ratio = float(np.median([r["worst"] / r["typical"] for r in rs]))
        print(f"{condition:>7} {med['generate'] * 1e3:15.0f} {med['apply'] * 1e3:12.0f} {med['apply_builds']:12.0f} "
              f"{med['typical'] * 1e3:15.1f} {med['worst'] * 1e3:13.1f} {ratio:13.2f}")


if __name__ == "__main__":
    main()
