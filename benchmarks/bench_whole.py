"""Single-shot whole Jacobi-CG through ``gk.linalg.cg(A, b, M="jacobi")`` (issue 32, "whole solves"):
what a user pays from a SciPy matrix to a NumPy x, A uploaded every time, beside CuPy.

Per problem (b = A 1, x0 = 0, rtol 1e-8), ``--reps`` interleaved rounds, medians:

- ``whole``: ``gk.linalg.clear_cache()``, then the call: A's upload (and snapshot on a host), Jacobi, the
  solve, x back (as CuPy's cg pays A's upload);
- ``kept``: the same call again on the same matrix object (the kept solver: no upload, no
  setup; A compared with its snapshot, which on a GPU this first call after a ``whole`` one
  reads back from the device: ``snapshots_from_device``), labelled as such;
- ``third``: the call once more (A compared with the snapshot the second call holds);
- ``cupy``: cupyx.scipy.sparse.linalg.cg with a Jacobi LinearOperator, A and b copied to the GPU
  and x back inside the timed region (with CuPy and a GPU);
- ``whole-kept``: what the single shot adds; ``target``: the issue's bound, the iterations at
  the fused roofline (12 nnz + 100 n bytes an iteration in float64: bench_cg's CG plus D^-1
  read, at the device's copy bandwidth) plus one transfer of A (12 nnz + 4 n bytes at the
  measured host-to-device bandwidth from pageable memory), and ``whole / target``.

The header gives the device's copy bandwidth, the upload's from pageable memory, and a read
back's into pageable memory and through the page-locked ring (what the device choice
``staged_download_bytes`` uses: on a GPU from 1 MiB since this measured 3.4 against 5.5 GB/s on an
H100's host, off on a CPU device).

``--phases`` prints, for one more whole call, where the host waited: every blocking read,
write or finish (when it started, how long it waited, the caller), the time until the loop
started and after it ended, and the executor's counters (reads before the loop); beside the
waits, in the order of their start, the steps of the call before the loop (A's upload enqueued,
its SpMV strategy, the Solver and its generate, the preconditioner's generate, the solver's
apply) with when each began and how long it took, so that a wait and the step it belongs to can
be told apart.

    python benchmarks/bench_whole.py [--sizes 1000000] [--problems poisson_2d poisson_3d]
                                     [--reps 3] [--phases] [--no-cupy] [--executor opencl]
                                     [--maxiter 1]   # the setup alone (whole and kept, no CuPy)
"""
from __future__ import annotations

import time
import traceback

import numpy as np

import bench_common as bc
import ginkpy as gk
from ginkpy.core.base.factory import Factory
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver
from ginkpy.linalg._solver import Solver
from ginkpy.linalg._solver_cache import _CachedMatrix

RTOL = 1e-8


def ginkpy_call(exec, S, b, clear: bool, maxiter: int = 100000):
    if clear:
        gk.linalg.clear_cache()
    x, info = gk.linalg.cg(S, b, rtol=RTOL, M="jacobi", maxiter=maxiter, executor=exec)
    return x, info


def cupy_call(cupy, S, b):
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla
    A, bg = csp.csr_matrix(S), cupy.asarray(b)
    d = 1 / A.diagonal()
    M = cla.LinearOperator(S.shape, matvec=lambda v: d * v, dtype=S.dtype)
    tol = {"tol": RTOL} if "tol" in cla.cg.__code__.co_varnames else {"rtol": RTOL}
    x, info = cla.cg(A, bg, M=M, maxiter=100000, **tol)
    out = cupy.asnumpy(x)
    cupy.cuda.Device().synchronize()
    return out, int(info)


def upload_bandwidth(exec) -> float | None:
    """Host-to-device bytes per second from pageable memory (a 64 MiB copy, median of 5)."""
    if isinstance(exec, gk.ReferenceExecutor):
        return None
    host = np.ones(8 << 20)
    device = exec.alloc(host.shape, host.dtype)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        exec.write(device, host)
        exec.synchronize()
        times.append(time.perf_counter() - start)
    return host.nbytes / float(np.median(times))


def read_bandwidths(exec) -> tuple[float, float] | None:
    """Device-to-host bytes per second of a 64 MiB read (fresh host memory each time, as
    ``exec.to_host`` gives; median of 5): into pageable memory straight, and through the
    page-locked ring (``staging.read_staged``, what the ``staged_download_bytes`` choice turns
    on)."""
    if not isinstance(exec, gk.OpenCLExecutor):
        return None
    from ginkpy.opencl import staging
    device = exec.from_host(np.ones(8 << 20))
    out = []
    for read in (lambda: _straight(exec, device), lambda: staging.read_staged(exec, [device])):
        times = []
        for _ in range(5):
            exec.synchronize()
            start = time.perf_counter()
            read()
            times.append(time.perf_counter() - start)
        out.append(device.nbytes / float(np.median(times)))
    return out[0], out[1]


def _straight(exec, device) -> np.ndarray:
    """A read into new pageable memory, waited for (exec.to_host's own)."""
    import pyopencl as cl
    host = np.empty(device.shape, device.dtype)
    cl.enqueue_copy(exec.queue, host, device.base_data, src_offset=device.offset, is_blocking=True)
    return host


def phases(exec, S, b) -> None:
    """One whole call with its waits traced (see the module docstring)."""
    cls, marks, waits = type(exec), {}, []
    originals = {name: getattr(cls, name) for name in ("to_host", "synchronize", "_write_waiting") if hasattr(cls, name)}

    def traced(name, fn):
        def wrapper(self, *args, **kwargs):
            start = time.perf_counter()
            out = fn(self, *args, **kwargs)
            frames = [f for f in traceback.extract_stack()[:-1] if "/ginkpy/" in f.filename][-3:]
            waits.append((name, start, time.perf_counter() - start,
                          " < ".join(f"{f.filename.split('/ginkpy/')[-1]}:{f.lineno}" for f in reversed(frames))))
            return out
        return wrapper

    # the steps before the loop, timed as they run: (owner, attribute, label)
    steps = [(Csr, "from_scipy_async", "A's upload enqueued"), (Csr, "spmv_strategy", "SpMV strategy"),
             (_CachedMatrix, "settle", "A's upload waited for"), (Solver, "__init__", "Solver built"),
             (Factory, "generate", "generate"), (IterativeSolver, "apply_with_initial_guess", "apply")]
    step_originals = [(owner, attr, owner.__dict__[attr]) for owner, attr, _ in steps]

    def timed_step(label, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                what = label if label != "generate" else f"{args[0].parameters.product.__name__} generate"
                waits.append(("step " + what, start, time.perf_counter() - start, ""))
        return wrapper

    run = IterationMonitor.run

    def run_marked(self, *args, **kwargs):
        marks.setdefault("loop", (time.perf_counter(), dict(exec.counters)))
        try:
            return run(self, *args, **kwargs)
        finally:
            marks["loop end"] = (time.perf_counter(), dict(exec.counters))
    gk.linalg.clear_cache()
    exec.synchronize()
    for name, fn in originals.items():
        setattr(cls, name, traced(name, fn))
    for (owner, attr, fn), (_, _, label) in zip(step_originals, steps):
        if isinstance(fn, classmethod):
            setattr(owner, attr, classmethod(timed_step(label, fn.__func__)))
        else:
            setattr(owner, attr, timed_step(label, fn))
    IterationMonitor.run = run_marked
    before = dict(exec.counters)
    start = time.perf_counter()
    try:
        gk.linalg.cg(S, b, rtol=RTOL, M="jacobi", maxiter=100000, executor=exec)
    finally:
        end = time.perf_counter()
        for name, fn in originals.items():
            setattr(cls, name, fn)
        for owner, attr, fn in step_originals:
            setattr(owner, attr, fn)
        IterationMonitor.run = run
    loop, counts = marks.get("loop", (end, exec.counters))
    loop_end = marks.get("loop end", (end, None))[0]
    print(f"  phases: until the loop {1e3 * (loop - start):.1f} ms (reads {counts['reads'] - before['reads']}, "
          f"launches {counts['launches'] - before['launches']}), loop {1e3 * (loop_end - loop):.1f} ms, "
          f"after it {1e3 * (end - loop_end):.1f} ms; total {1e3 * (end - start):.1f} ms")
    for name, at, took, where in sorted(waits, key=lambda w: w[1]):
        verb = "took" if name.startswith("step ") else "waited"
        print(f"    {name:<28} at {1e3 * (at - start):8.1f} ms {verb} {1e3 * took:7.2f} ms  {where}")


def main() -> None:
    p = bc.parser(__doc__.splitlines()[0], [1000000], ["poisson_2d", "poisson_3d"], dtypes=("float64",))
    p.set_defaults(reps=3)
    p.add_argument("--phases", action="store_true", help="trace one more whole call's waits")
    p.add_argument("--maxiter", type=int, default=100000,
                   help="iterations at most (1: the setup alone, whole against kept; then not converged)")
    args = p.parse_args()
    exec, cupy = bc.executor_and_cupy(args)
    bandwidth, upload, reads = bc.copy_bandwidth(exec, 5), upload_bandwidth(exec), read_bandwidths(exec)
    print(f"ginkpy on {bc.device_name(exec)}; CuPy: {bc.cupy_device(cupy) if cupy else 'no'}; copy "
          f"{bandwidth / 1e9:.0f} GB/s, upload {bc.fmt(upload and upload / 1e9, '.1f')} GB/s, read back "
          + (f"{reads[0] / 1e9:.1f} GB/s (pageable) / {reads[1] / 1e9:.1f} GB/s (page-locked ring)" if reads else "-")
          + f"; medians of {args.reps}")
    bc.print_header(f"{'problem':<22}{'its':>6}{'whole ms':>10}{'kept ms':>9}{'third ms':>9}{'cupy ms':>9}"
                    f"{'whole-kept':>11}{'target':>8}{'w/target':>9}{'x cupy':>8}  ok")
    for label, S in bc.matrices(args, exec):
        S = S.tocsr()
        n, nnz = S.shape[0], S.nnz
        b = S @ np.ones(n)
        runs = {name: (lambda clear=clear: ginkpy_call(exec, S, b, clear, args.maxiter))
                for name, clear in (("whole", True), ("kept", False), ("third", False))}
        if cupy is not None and args.maxiter == 100000:
            runs["cupy"] = lambda: cupy_call(cupy, S, b)
        calls: list = []
        gk.linalg.Solver(S, "cg", M="jacobi", rtol=RTOL, executor=exec).solve(b)  # warm-up (programs)
        solver = gk.linalg.Solver(S, "cg", M="jacobi", rtol=RTOL, maxiter=100000, executor=exec)
        solver.solve(b)
        converged_its = int(solver.result.iterations[0])
        its = min(converged_its, args.maxiter)
        for run in runs.values():
            run()
        times: dict = {name: [] for name in runs}
        for _ in range(args.reps):
            for name, run in runs.items():
                start = time.perf_counter()
                calls.append((name, run()))
                times[name].append(time.perf_counter() - start)
        t = {name: float(np.median(v)) for name, v in times.items()}
        ok = args.maxiter < converged_its or all(np.linalg.norm(b - S @ x) <= 1.0001 * RTOL * np.linalg.norm(b)
                                       for _, (x, _) in calls)
        target = its * (12 * nnz + 100 * n) / bandwidth + ((12 * nnz + 4 * n) / upload if upload else 0.0)
        print(f"{label:<22}{its:>6}{1e3 * t['whole']:>10.1f}{1e3 * t['kept']:>9.1f}{1e3 * t['third']:>9.1f}"
              f"{bc.fmt(t.get('cupy') and 1e3 * t['cupy'], '.1f'):>9}{1e3 * (t['whole'] - t['kept']):>11.1f}"
              f"{1e3 * target:>8.1f}{t['whole'] / target:>9.2f}"
              f"{bc.fmt(t.get('cupy') and t['cupy'] / t['whole'], '.2f'):>8}  {'yes' if ok else 'NO'}")
        if args.phases:
            phases(exec, S, b)


if __name__ == "__main__":
    main()
