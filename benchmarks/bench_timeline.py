"""Where a solve's wall time goes on the device: its kernels' busy time, the gaps between them,
and how much of the gaps the host caused (the device done with one kernel before the host had
enqueued the next). Needs ``GINKPY_OPENCL_PROFILE=1`` (events with the device's queued, start
and end times).

A solve on the GPU can run below its kernels' time for two reasons that kernel times alone do
not tell apart: the device waits for the host (too many launches, or host work between them),
or each kernel's start waits on the one before (small kernels, latency). This prints both, per
solver, for A already on the device (the loop alone: upload and setup are bench_whole.py's):

    GINKPY_OPENCL_PROFILE=1 python bench_timeline.py --solvers jacobi-cg amg-cg --problems poisson_3d \\
        --sizes 2097152

Columns: wall of one apply (after a warm one), the device's span from the first kernel's start to
the last one's end, the kernels' busy time, the gaps between consecutive kernels, and of those the
host-starved part (from the end of a kernel to the start of the next where that one was queued
after the end), then the launches per iteration and the costliest kernels.

``--modes`` says how each solver's loop runs (each mode a row):

- ``blind``: an iteration limit alone, so the loop reads nothing and never flushes the queue
  (as an inner solver runs);
- ``flush``: the same with the queue flushed after every iteration the loop replays (an
  experiment, not a library setting): whether host-starved gaps are commands the driver holds
  back until a flush;
- ``reads``: the iteration limit and a residual criterion that is never met, so the loop runs as
  a solve from ``gk.linalg`` does: asynchronous reads of the stop state every few iterations and
  a flush after every iteration.
"""
from __future__ import annotations

import os
import time

import numpy as np

import bench_common as bc
import ginkpy as gk
from ginkpy.core.solver.loop.replays import Replays

SOLVERS = ("jacobi-cg", "amg-cg", "gmres")


MODES = ("blind", "flush", "reads")


def _factory(name: str, iters: int, mode: str):
    criteria = [gk.stop.Iteration.build().with_max_iters(iters)]
    if mode == "reads":  # (never met: the loop reads its stop state as a real solve's does)
        criteria.append(gk.stop.ResidualNorm.build().with_reduction_factor(1e-300))
    scalar_jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)  # (gk.linalg's M="jacobi")
    if name == "jacobi-cg":
        return gk.solver.Cg.build().with_preconditioner(scalar_jacobi).with_criteria(*criteria)
    if name == "amg-cg":
        return gk.solver.Cg.build().with_preconditioner(gk.solver.Multigrid.build()).with_criteria(*criteria)
    return (gk.solver.Gmres.build().with_krylov_dim(30).with_preconditioner(scalar_jacobi)
            .with_criteria(*criteria))


_ENQUEUE = Replays.enqueue  # (the library's own)


def _flushed(self, key, part):
    _ENQUEUE(self, key, part)
    self.exec.flush()


def flushing(on: bool) -> None:
    """The loop's replayed iterations followed by a flush of the queue (``on``), or as they are."""
    Replays.enqueue = _flushed if on else _ENQUEUE


def timeline(events: list) -> dict:
    """Busy time, gaps and host-starved gaps (seconds) of ``events``, (name, event) pairs of
    kernels in one in-order queue, in the order they were enqueued."""
    rows = [(name, e.profile.queued, e.profile.start, e.profile.end) for name, e in events]
    busy = sum(end - start for _, _, start, end in rows)
    gaps = starved = 0
    for (_, _, _, prev_end), (_, queued, start, _) in zip(rows, rows[1:]):
        gap = max(0, start - prev_end)
        gaps += gap
        if queued >= prev_end:  # the device had nothing to do until the host enqueued this one
            starved += gap
    per_kernel: dict[str, list] = {}
    for name, _, start, end in rows:
        per_kernel.setdefault(name, []).append(end - start)
    span = rows[-1][3] - rows[0][2] if rows else 0
    return {"span": span * 1e-9, "busy": busy * 1e-9, "gaps": gaps * 1e-9, "starved": starved * 1e-9,
            "launches": len(rows), "kernels": {k: (len(v), sum(v) * 1e-9) for k, v in per_kernel.items()}}


def main() -> None:
    p = bc.parser(__doc__.split("\n\n")[0], [2097152], ["poisson_3d"])
    p.add_argument("--solvers", nargs="+", default=["jacobi-cg", "amg-cg"], choices=SOLVERS)
    p.add_argument("--iters", type=int, default=100, help="iterations of each apply (fixed)")
    p.add_argument("--top", type=int, default=6, help="kernels listed, by their time")
    p.add_argument("--modes", nargs="+", default=["blind", "reads"], choices=MODES,
                   help="how each loop runs (see the module docstring): a row each")
    args = p.parse_args()
    if os.environ.get("GINKPY_OPENCL_PROFILE") != "1":
        raise SystemExit("bench_timeline.py needs GINKPY_OPENCL_PROFILE=1 (the kernels' events)")
    exec = gk.executor(args.executor)
    print(f"ginkpy on {exec.info.name} [{exec.info.platform}]; {args.iters} iterations an apply")
    print(f"{'problem':<24} {'solver':<16} {'wall ms':>8} {'span':>8} {'busy':>8} {'gaps':>8} {'host':>8} "
          f"{'launch/it':>9}  costliest kernels (launches, ms)")
    for name, S in bc.matrices(args, exec):
        A = gk.matrix.Csr.from_scipy(exec, S, args.dtype)
        b = gk.matrix.Dense.from_numpy(exec, S @ np.ones(S.shape[0], args.dtype))
        for solver_name, mode in ((s, m) for s in args.solvers for m in args.modes):
            flushing(mode == "flush")
            solver = _factory(solver_name, args.iters, mode).on(exec).generate(A)
            for timed in (False, True):
                x = gk.matrix.Dense.zeros(exec, (S.shape[0], 1), args.dtype)
                exec.synchronize()
                exec.kernel_times()  # (clears the events)
                events = exec._device.events
                start = time.perf_counter()
                solver.apply(b, x)
                x.to_numpy()
                wall = time.perf_counter() - start
                if timed:
                    t = timeline(list(events))
                exec.kernel_times()
            top = sorted(t["kernels"].items(), key=lambda kv: -kv[1][1])[:args.top]
            listed = ", ".join(f"{k} ({n}, {s * 1e3:.2f})" for k, (n, s) in top)
            label = f"{solver_name} {mode}"
            print(f"{name:<24} {label:<16} {wall * 1e3:8.2f} {t['span'] * 1e3:8.2f} {t['busy'] * 1e3:8.2f} "
                  f"{t['gaps'] * 1e3:8.2f} {t['starved'] * 1e3:8.2f} {t['launches'] / args.iters:9.1f}  {listed}")


if __name__ == "__main__":
    main()
