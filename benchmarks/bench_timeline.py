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
after the end), the host's time outside waits (``py``: the wall less the time blocked in OpenCL
event waits), then the launches per iteration and the costliest kernels. Times are for the whole
apply of ``--iters`` iterations.

A top-level solve reads its stop state every few iterations and flushes the queue after every
iteration (``AsynchronousReads``), so a host-starved gap is the host's own time: where ``py``
meets the wall, the loop is bound by the host's Python and enqueues, not by the device. The
profiling queue adds to that time itself (an event per launch): on an H100 (2026-12-08) Jacobi-CG
took 120-140 us of host time an iteration here, where an unprofiled loop ran at its kernels'
173 us an iteration at 3D 128^3 (docs/performance.md, the tenth session).

``--modes`` says how each solver's loop runs (each mode a row):

- ``loop``: as the library runs it;
- ``flush4``: only every fourth of the loop's flushes made (an experiment, not a library
  setting): what a flush an iteration costs the host, and whether the device starves without it.
"""
from __future__ import annotations

import os
import time

import numpy as np

import bench_common as bc
import ginkpy as gk

SOLVERS = ("jacobi-cg", "amg-cg", "gmres")


MODES = ("loop", "flush4")


def _factory(name: str, iters: int):
    criteria = [gk.stop.Iteration.build().with_max_iters(iters)]
    scalar_jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)  # (gk.linalg's M="jacobi")
    if name == "jacobi-cg":
        return gk.solver.Cg.build().with_preconditioner(scalar_jacobi).with_criteria(*criteria)
    if name == "amg-cg":
        return gk.solver.Cg.build().with_preconditioner(gk.solver.Multigrid.build()).with_criteria(*criteria)
    return (gk.solver.Gmres.build().with_krylov_dim(30).with_preconditioner(scalar_jacobi)
            .with_criteria(*criteria))


def skipping_flushes(exec, on: bool) -> None:
    """Three of every four of ``exec``'s flushes skipped (``on``), or all made (the library's)."""
    cls = type(exec)
    library = cls.__dict__.get("_library_flush") or cls.flush
    cls._library_flush = library
    calls = [0]

    def every_fourth(self) -> None:
        calls[0] += 1
        if calls[0] % 4 == 0:
            library(self)
    cls.flush = every_fourth if on else library


class HostWaits:
    """The time the host spends blocked in OpenCL event waits while in use (``with``): the
    loop's reads, the executor's ``to_host`` and the final wait."""

    def __init__(self, exec) -> None:
        self.exec, self.seconds = exec, 0.0

    def _timed(self, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return wrapper

    def __enter__(self) -> HostWaits:
        import pyopencl as cl
        self._saved = [(cl.Event, "wait", cl.Event.wait)]
        for owner, name, fn in self._saved:
            setattr(owner, name, self._timed(fn))
        return self

    def __exit__(self, *exc) -> None:
        for owner, name, fn in self._saved:
            setattr(owner, name, fn)


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
    p.add_argument("--modes", nargs="+", default=["loop"], choices=MODES,
                   help="how each loop runs (see the module docstring): a row each")
    args = p.parse_args()
    if os.environ.get("GINKPY_OPENCL_PROFILE") != "1":
        raise SystemExit("bench_timeline.py needs GINKPY_OPENCL_PROFILE=1 (the kernels' events)")
    exec = gk.executor(args.executor)
    print(f"ginkpy on {exec.info.name} [{exec.info.platform}]; {args.iters} iterations an apply")
    print(f"{'problem':<24} {'solver':<16} {'wall ms':>8} {'span':>8} {'busy':>8} {'gaps':>8} {'host':>8} "
          f"{'py':>8} {'launch/it':>9}  costliest kernels (launches, ms)")
    for name, S in bc.matrices(args, exec):
        A = gk.matrix.Csr.from_scipy(exec, S, args.dtype)
        b = gk.matrix.Dense.from_numpy(exec, S @ np.ones(S.shape[0], args.dtype))
        for solver_name, mode in ((s, m) for s in args.solvers for m in args.modes):
            skipping_flushes(exec, mode == "flush4")
            solver = _factory(solver_name, args.iters).on(exec).generate(A)
            for timed in (False, True):
                x = gk.matrix.Dense.zeros(exec, (S.shape[0], 1), args.dtype)
                exec.synchronize()
                exec.kernel_times()  # (clears the events)
                events = exec._device.events
                with HostWaits(exec) as waits:
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
                  f"{t['gaps'] * 1e3:8.2f} {t['starved'] * 1e3:8.2f} "
                  f"{(wall - waits.seconds) * 1e3:8.2f} {t['launches'] / args.iters:9.1f}  {listed}")


if __name__ == "__main__":
    main()
