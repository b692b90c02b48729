"""Gmres against CbGmres per inner iteration: GMRES(--restart) with the Krylov basis in the value
type (Gmres) and stored one precision down (CbGmres "reduce1": float64 -> float32) or in float16
("reduce2"), each running exactly --iters inner iterations from x = 0 on b = A 1 (only an
Iteration criterion, ortho_method "mgs": the default's DGKS second pass where its test asks).

Per method: ms per inner iteration (median of --reps solves, the methods' repetitions
interleaved), its speed against Gmres's in the same run ("x gmres" > 1: faster), launches per
inner iteration (``exec.counters``: the launches of --iters inner iterations less those of one
cycle, over the iterations between: the end of a cycle included, the start of a solve not), the
relative residual ||b - A x|| / ||b|| after the --iters iterations (the same work done: within
rounding of each other where the storage does not slow convergence), and the bytes model of an
inner iteration for its storage (bench_cg.roofline_bytes: the matrix once, v_j and w, the
j + 1 basis vectors read twice, in s bytes per entry, averaged over a cycle with the update of
x: (v + 4) nnz + 4 n + (5 + 2 / m) v n + (m + 2) s n) at the measured copy bandwidth ("roof
ms", and "x roof": the time over it).

``--choices gpu`` runs PoCL (any OpenCL device) with a GPU's launch layouts and per-device
choices (``ginkpy/opencl/device_choices.py``), ``cpu`` with a CPU's. ``--profile`` prints each
method's device time per kernel and inner iteration (GINKPY_OPENCL_PROFILE=1, set here before
the executor exists). Before/after figures: the same script with PYTHONPATH at each tree.

    python benchmarks/bench_cb_gmres.py [--sizes 1000000] [--iters 300] [--restart 30] [--reps 5]
                                        [--methods gmres reduce1 reduce2] [--choices device|cpu|gpu]
                                        [--profile] [--problems poisson_2d] [--mtx-dir DIR]
"""
from __future__ import annotations

import os
import sys

import attrs
import numpy as np

import bench_common as bc
import ginkpy as gk
from bench_cg import roofline_bytes
from ginkpy.core.solver.cb_gmres import storage_dtype

METHODS = ("gmres", "keep", "reduce1", "reduce2")  # Gmres, then CbGmres's storage precisions


def taken_as(exec, choices: str):
    """``exec``, or a new executor on its device taking itself for a CPU or a GPU (its launch
    layouts and per-device choices those of that kind)."""
    if choices == "device":
        return exec
    out = gk.OpenCLExecutor(exec.device)
    out.info = attrs.evolve(exec.info, is_cpu=choices == "cpu", is_gpu=choices == "gpu")
    return out


def basis_item(dtype, method: str) -> int:
    """Bytes per stored basis entry of ``method`` for values of ``dtype``."""
    if method == "gmres":
        return np.dtype(dtype).itemsize
    stored = storage_dtype(dtype, method)
    return stored.itemsize * (2 if stored == np.float16 and np.dtype(dtype).kind == "c" else 1)


class Run:
    """One method's solver on A, b and x, with its launches per inner iteration."""

    def __init__(self, exec, A, b, x, method: str, iters: int, restart: int) -> None:
        self.exec, self.b, self.x, self.method, self.iters = exec, b, x, method, iters

        def solver(count):
            params = (gk.solver.Gmres.build() if method == "gmres" else
                      gk.solver.CbGmres.build().with_storage_precision(method))
            return (params.with_krylov_dim(restart).with_ortho_method("mgs")
                    .with_criteria(gk.stop.Iteration.build().with_max_iters(count)).on(exec).generate(A))
        self.solver = solver(iters)
        logger = gk.log.Convergence()
        self.solver.add_logger(logger)
        launches = self.counted(self.solver)  # (also the untimed first run: builds and captures)
        launches = self.counted(self.solver)
        self.done = logger.num_iterations
        self.solver.remove_logger(logger)
        self.launches = (launches - self.counted(solver(restart), twice=True)) / (iters - restart)

    def counted(self, solver, twice: bool = False) -> int:
        """Launches of one apply from x = 0 (after a first one where ``twice``)."""
        if twice:
            self.x.fill(0.0)
            solver.apply(self.b, self.x)
        self.x.fill(0.0)
        self.exec.synchronize()
        before = self.exec.counters["launches"]
        solver.apply(self.b, self.x)
        self.exec.synchronize()
        return self.exec.counters["launches"] - before

    def __call__(self) -> None:
        self.x.fill(0.0)
        self.solver.apply(self.b, self.x)


def interleaved(runs: list[Run], exec, reps: int) -> list[float]:
    """Seconds per inner iteration of each run: the median of ``reps`` rounds, each timing every
    run once in turn (after one warm-up round)."""
    times = [[] for _ in runs]
    for rep in range(reps + 1):
        for i, run in enumerate(runs):
            seconds = bc.measure(run, exec.synchronize, 1, min_batch_time=0.0, warmup=0)
            if rep:
                times[i].append(seconds / run.iters)
    return [float(np.median(t)) for t in times]


def profiled(exec, run: Run) -> str:
    """Device ms per inner iteration of each kernel of one solve of ``run`` (largest first)."""
    exec.kernel_times()
    run()
    per = {name: seconds / run.iters * 1e3 for name, (count, seconds) in exec.kernel_times().items()}
    return ", ".join(f"{name} {ms:.3f}" for name, ms in sorted(per.items(), key=lambda item: -item[1]))


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [1_000_000], ["poisson_2d"])
    p.add_argument("--iters", type=int, default=300, help="inner iterations every method runs")
    p.add_argument("--restart", type=int, default=30, help="GMRES's restart (Krylov dimension)")
    p.add_argument("--methods", nargs="+", default=["gmres", "reduce1", "reduce2"], choices=list(METHODS),
                   help="gmres: Gmres; keep, reduce1, reduce2: CbGmres's storage_precision")
    p.add_argument("--choices", default="device", choices=["device", "cpu", "gpu"],
                   help="launch layouts and per-device choices: the device's own, a CPU's or a GPU's")
    p.add_argument("--profile", action="store_true", help="each kernel's device time per inner iteration")
    p.set_defaults(reps=5)
    args = p.parse_args()
    if args.iters % args.restart or args.iters <= args.restart:
        raise SystemExit(f"--iters {args.iters} must be a multiple of --restart {args.restart} above it")
    if args.profile:
        os.environ["GINKPY_OPENCL_PROFILE"] = "1"  # (before the first executor)
    exec = taken_as(gk.executor(args.executor), args.choices)
    print(f"ginkpy {os.path.dirname(gk.__file__)}; executor: {bc.device_name(exec)}"
          + (f" (taken for a {args.choices})" if args.choices != "device" else ""))
    print(f"value type {args.dtype}, {args.iters} inner GMRES({args.restart}) iterations from x = 0, b = A 1, "
          f"ortho_method mgs; medians of {args.reps} interleaved rounds; load average {os.getloadavg()[0]:.1f}")
    bandwidth = bc.copy_bandwidth(exec, 3)
    print(f"copy bandwidth: {bandwidth / 1e9:.1f} GB/s\n")
    header = (f"{'matrix':<20}{'method':>9}{'ms/it':>10}{'x gmres':>9}{'launch/it':>10}{'res':>10}"
              f"{'roof ms':>9}{'x roof':>8}")
    bc.print_header(header)
    failures = 0
    for name, S in bc.matrices(args, exec, keep=lambda S: S.shape[0] == S.shape[1]):
        n = S.shape[0]
        b_host = S @ np.ones(n, S.dtype)
        A = gk.matrix.Csr.from_scipy(exec, S)
        b = gk.matrix.Dense.from_numpy(exec, b_host)
        x = gk.matrix.Dense.zeros(exec, (n, 1), S.dtype)
        runs = [Run(exec, A, b, x, method, args.iters, args.restart) for method in args.methods]
        times = interleaved(runs, exec, args.reps)
        base = times[args.methods.index("gmres")] if "gmres" in args.methods else None
        for run, t in zip(runs, times):
            run()
            res = float(np.linalg.norm(b_host - S @ x.to_numpy()[:, 0]) / np.linalg.norm(b_host))
            roof = roofline_bytes(S, args.restart, basis_item(S.dtype, run.method)) / bandwidth
            note = "" if run.done == args.iters else f"  (ran {run.done} iterations)"
            failures += bool(note)
            print(f"{name:<20}{run.method:>9}{t * 1e3:>10.3f}{bc.fmt(base and base / t, '.2f'):>8}x"
                  f"{run.launches:>10.2f}{res:>10.2e}{roof * 1e3:>9.3f}{t / roof:>8.2f}{note}")
            sys.stdout.flush()
        if args.profile:
            for run in runs:
                print(f"  {run.method} kernels, ms per inner iteration: {profiled(exec, run)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
