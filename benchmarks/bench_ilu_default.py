"""M="ilu" against M="jacobi" through ginkpy.linalg (issue 31): single-shot whole solves, the
preconditioner's generate apart, in one run.

For every matrix and solver (bicgstab, gmres with its default restart), b = A * ones, to
||r|| <= rtol ||b||:

- ``M gen``: the preconditioner's generate alone on A already on the executor (the default
  gk.preconditioner.Ilu or scalar Jacobi), median of --reps, with what the default chose;
- ``whole``: ``gk.linalg.clear_cache()`` then ``gk.linalg.<solver>(A, b, M=...)`` on the SciPy
  matrix: upload, setup and solve, as a single-shot user pays them, median of --reps (the
  methods' repetitions interleaved), after an untimed round on the same matrix (its kernels
  built: a first build in a timed round of two would be half the median);
- ``kept``: the second call on the same matrix object (the kept solver: no upload, no setup),
  labelled as such;
- iterations (from gk.linalg.Solver's result) and the ratio jacobi / ilu of each time (> 1:
  M="ilu" is faster), and ``M gen`` in units of Jacobi-preconditioned iterations (the issue's
  target: at most 20), with what the generate waits for (blocking reads, uploads that wait)
  and launches, counted on the executor (the counts carry over to another device where the
  choices are the same).

``--choices gpu`` (or ``cpu``) runs the device as if it were a GPU (a CPU): its per-device
choices (a GPU's default Ilu: ParILU and Jacobi sweeps of the factors) and launch layouts, so
that PoCL measures a GPU's counts; the header says which choices ran.

    python benchmarks/bench_ilu_default.py [--sizes 250000 1000000] [--solvers bicgstab gmres]
                                           [--reps 3] [--executor opencl] [--rtol 1e-8]
                                           [--choices device|cpu|gpu]
"""
from __future__ import annotations

import sys
import time

import numpy as np

import bench_common as bc
import ginkpy as gk
from ginkpy import problems

bc.GENERATORS.setdefault("convection_diffusion_2d",
                         lambda rows: problems.convection_diffusion_2d(max(2, round(rows ** 0.5))))
PRECONDITIONERS = {"jacobi": lambda: gk.preconditioner.Jacobi.build().with_max_block_size(1),
                   "ilu": lambda: gk.preconditioner.Ilu.build()}


def _median_time(run, exec, reps: int) -> float:
    times = []
    for _ in range(reps):
        exec.synchronize()
        start = time.perf_counter()
        run()
        exec.synchronize()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _choice(M) -> str:
    """What the default Ilu chose: factorization, sweeps, triangular solves."""
    fact = M.factorization
    sweeps = f"({fact.sweeps} sweeps)" if getattr(fact, "sweeps", None) else ""
    trs = M.l_solver
    params = getattr(trs, "parameters", None)
    how = type(trs).__name__ if params is None or not hasattr(params, "algorithm") else \
        (f"{params.num_jacobi_sweeps} Jacobi sweeps" if params.algorithm == "jacobi" else "exact substitution")
    return f"{type(fact).__name__}{sweeps} + {how}"


def generate_counts(exec, S) -> dict:
    """Blocking reads, waiting uploads and launches of the default Ilu's generate on a new
    upload of S (nothing kept from an earlier generate), kernels already built."""
    A = gk.matrix.Csr.from_scipy(exec, S)
    waits, write_waiting = [0], exec._write_waiting if hasattr(exec, "_write_waiting") else None
    if write_waiting is not None:
        def counted(*args):
            waits[0] += 1
            write_waiting(*args)
        exec._write_waiting = counted
    exec.synchronize()
    before = dict(exec.counters)
    try:
        PRECONDITIONERS["ilu"]().on(exec).generate(A)
    finally:
        if write_waiting is not None:
            del exec._write_waiting  # (the class's again)
    return {"reads": exec.counters["reads"] - before["reads"], "upload waits": waits[0],
            "launches": exec.counters["launches"] - before["launches"]}


def taken_as(exec, choices: str):
    """``exec``, or a new executor on its device taking itself for a CPU or a GPU."""
    if choices == "device":
        return exec
    if not isinstance(exec, gk.OpenCLExecutor):
        raise SystemExit("--choices cpu|gpu takes an OpenCL executor")
    import attrs
    out = gk.OpenCLExecutor(exec.device)
    out.info = attrs.evolve(exec.info, is_cpu=choices == "cpu", is_gpu=choices == "gpu")
    return out


def generate_times(exec, S, reps: int) -> dict:
    A = gk.matrix.Csr.from_scipy(exec, S)
    out = {}
    for name, build in PRECONDITIONERS.items():
        factory = build().on(exec)
        factory.generate(A)  # (warm: kernels compiled)
        out[name] = _median_time(lambda: factory.generate(A), exec, reps)
    out["choice"] = _choice(PRECONDITIONERS["ilu"]().on(exec).generate(A))
    return out


def solve_times(exec, S, b, method: str, rtol: float, reps: int) -> dict:
    solve = getattr(gk.linalg, method)
    out = {name: {"whole": [], "kept": []} for name in PRECONDITIONERS}
    for _ in range(reps):
        for name in PRECONDITIONERS:  # interleaved: a changing load hits both alike
            gk.linalg.clear_cache()
            exec.synchronize()
            start = time.perf_counter()
            x, info = solve(S, b, rtol=rtol, M=name, executor=exec)
            out[name]["whole"].append(time.perf_counter() - start)
            start = time.perf_counter()
            solve(S, b, rtol=rtol, M=name, executor=exec)
            out[name]["kept"].append(time.perf_counter() - start)
            out[name]["info"] = info
    for name in PRECONDITIONERS:
        solver = gk.linalg.Solver(S, method, M=name, rtol=rtol, executor=exec)
        solver.solve(b)
        out[name] = {"whole": float(np.median(out[name]["whole"])), "kept": float(np.median(out[name]["kept"])),
                     "info": out[name]["info"], "its": solver.result.num_iterations}
    return out


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [250_000, 1_000_000], ["convection_diffusion_2d"])
    p.set_defaults(reps=3)
    p.add_argument("--solvers", nargs="+", default=["bicgstab", "gmres"], choices=["bicgstab", "gmres"])
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--choices", default="device", choices=["device", "cpu", "gpu"],
                   help="per-device choices and launch layouts: the device's own, or a CPU's or a GPU's "
                        "(an OpenCL executor taking itself for one)")
    args = p.parse_args()
    exec = taken_as(gk.executor(args.executor), args.choices)
    print(f"ginkpy executor: {bc.device_name(exec)} ({exec.device_choices().kind} choices); rtol {args.rtol:g}; "
          f"medians of {args.reps}; times in s; ratio = jacobi / ilu (> 1: M='ilu' faster)")
    for name, S in bc.matrices(args, exec, keep=lambda m: m.shape[0] == m.shape[1]):
        S = S.tocsr()
        b = S @ np.ones(S.shape[0], S.dtype)
        gen = generate_times(exec, S, args.reps)
        print(f"\n{name}: M gen jacobi {gen['jacobi']:.4f}  ilu {gen['ilu']:.4f}  (ilu: {gen['choice']})")
        print("  ilu's generate: " + ", ".join(f"{v} {k}" for k, v in generate_counts(exec, S).items()))
        print(f"  {'solver':<10}{'M':<8}{'its':>7}{'info':>6}{'whole':>10}{'kept':>10}")
        for method in args.solvers:
            solve_times(exec, S, b, method, args.rtol, 1)  # (untimed: builds the programs this matrix needs)
            t = solve_times(exec, S, b, method, args.rtol, args.reps)
            for m in PRECONDITIONERS:
                r = t[m]
                print(f"  {method:<10}{m:<8}{r['its']:>7}{r['info']:>6}{r['whole']:>10.4f}{r['kept']:>10.4f}")
            j, i = t["jacobi"], t["ilu"]
            per_iteration = j["kept"] / max(j["its"], 1)
            print(f"  {method:<10}ratio   whole {j['whole'] / i['whole']:.2f}x  kept {j['kept'] / i['kept']:.2f}x  "
                  f"ilu's M gen = {gen['ilu'] / per_iteration:.1f} Jacobi-{method} iterations")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
