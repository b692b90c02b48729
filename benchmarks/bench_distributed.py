"""Weak and strong scaling of Jacobi-CG, PipeCg and AMG-CG on 3D Poisson over MPI ranks (gk.distributed).

One command measures 1, 2 and 4 ranks (each launched with mpiexec in turn, one GPU per rank):

    python benchmarks/bench_distributed.py --ranks 1 2 4 --weak-rows 8000000 --strong-rows 27000000

or one rank count under your own mpiexec (``mpiexec -n 2 python benchmarks/bench_distributed.py``).
Problems, each assembled rank by rank (7-point Laplacian, b = A 1):
- weak: ``--weak-rows`` rows per rank, an n x n x (p m) grid of which each rank owns m planes;
- strong: ``--strong-rows`` rows in all, an n x n x m grid split evenly over the ranks.
Per problem and method (``--methods``: jacobi-cg, pipecg, amg-cg):
- time to solution: the solver generated (the AMG hierarchy built) and the solve to ``--rtol``
  from x = 0, the second of two (the first compiles and captures), and its iterations;
- ms per iteration: ``--iters`` iterations (an Iteration criterion), median of ``--reps``;
- the parts, each alone on the slowest rank: the local SpMV (the product with the local block),
  the halo exchange (the gather of the rows to send, read, MPI, the write of the ghost rows),
  the whole distributed apply (which overlaps the two: about the larger, not their sum) and one
  reduction (a non-blocking allgather of partial sums, the device waiting for it);
- on one rank, the same solve without gk.distributed (a Csr of the same rows): ``plain``;
- ``--check``: the distributed solution against the serial solve on rank 0 (small problems).
Efficiencies (the driver, from the 1-rank records of the same run): per-iteration weak
efficiency t_1 / t_p and strong speedup t_1 / t_p of ms per iteration, and the same of time to
solution. Each rank takes its own device (``gk.distributed.executor_for_rank``: the node's GPUs
by node-local rank; GINKPY_RANK_DEVICES overrides); the first line of each launch names every
rank's device (its index on the platform, the PCI bus where the driver tells it). ``--out FILE``
appends the records as JSON lines as they come; ``--launch-timeout`` ends a launch that runs
longer (the table then shows what came). mpiexec: ``--mpiexec``, else the one on the PATH, else
the one beside this Python (the mpich wheel's); a launch whose ranks do not see each other (an
mpiexec of another MPI than mpi4py's) fails at once.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

RECORD = "RECORD "  # the prefix of a worker's result lines


def weak_grid(rows_per_rank: int, ranks: int) -> tuple[int, int, int]:
    n = max(2, round(rows_per_rank ** (1 / 3)))
    return n, n, ranks * max(1, round(rows_per_rank / n ** 2))


def strong_grid(rows: int) -> tuple[int, int, int]:
    n = max(2, round(rows ** (1 / 3)))
    return n, n, max(1, round(rows / n ** 2))


# -- the worker: one rank count, under mpiexec ---------------------------------------------------

def solver_params(gk, method: str, criteria: list, gather_rows: int | None = None):
    """The solver parameters of a method (AMG: levels of at most ``gather_rows`` rows gathered
    onto every rank; None: Multigrid's default)."""
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)
    if method == "jacobi-cg":
        return gk.solver.Cg.build().with_preconditioner(jacobi).with_criteria(*criteria)
    if method == "pipecg":
        return gk.solver.PipeCg.build().with_preconditioner(jacobi).with_criteria(*criteria)
    if method == "amg-cg":
        amg = gk.solver.Multigrid.build()
        if gather_rows is not None:
            amg = amg.with_gather_rows(gather_rows)
        return gk.solver.Cg.build().with_preconditioner(amg).with_criteria(*criteria)
    raise ValueError(f"unknown method {method!r}")


def device_label(exe) -> str:
    """The executor's device: its name, its index on its platform and, where the driver tells
    it (NVIDIA's cl_nv_device_attribute_query), its PCI bus."""
    device = getattr(exe, "device", None)
    if device is None:
        return "host (reference executor)"
    label = f"{exe.info.name} #{device.platform.get_devices().index(device)}"
    try:
        label += f" (PCI bus {device.pci_bus_id_nv})"
    except Exception:  # noqa: BLE001 - not an NVIDIA device
        pass
    return label


def worker(args) -> None:
    from mpi4py import MPI

    import ginkpy as gk
    from ginkpy.problems import poisson_3d_rows

    comm = MPI.COMM_WORLD
    if args.expect_ranks is not None and comm.size != args.expect_ranks:
        raise SystemExit(f"this rank sees {comm.size} rank(s), not {args.expect_ranks}: the mpiexec is not of "
                         f"mpi4py's MPI ({MPI.Get_library_version().splitlines()[0]}); pass --mpiexec")
    exe = gk.distributed.executor_for_rank(comm, args.executor)
    devices = comm.allgather(device_label(exe))
    if comm.rank == 0:
        print(f"# {comm.size} rank(s) on {', '.join(devices)}", flush=True)

    def slowest(seconds: float) -> float:
        return comm.allreduce(seconds, op=MPI.MAX)

    def per_call(fn, calls: int) -> float:
        """Seconds per call of ``fn`` on the slowest rank (the same calls on every rank)."""
        fn()
        exe.synchronize()
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        exe.synchronize()
        return slowest((time.perf_counter() - start) / calls)

    def timed_solve(make, b, x, repeat: int = 2):
        """(seconds of generate + apply on the slowest rank, the solver, its logger) of the last of
        ``repeat`` runs from x = 0."""
        for _ in range(repeat):
            x.fill(0.0)
            exe.synchronize()
            comm.Barrier()
            start = time.perf_counter()
            solver = make()
            logger = gk.log.Convergence()
            solver.add_logger(logger)
            solver.apply(b, x)
            exe.synchronize()
            seconds = slowest(time.perf_counter() - start)
        return seconds, solver, logger

    def ms_per_iteration(params, A, b, x) -> float:
        solver = params.with_criteria(gk.stop.Iteration.build().with_max_iters(args.iters)).on(exe).generate(A)
        times = []
        for rep in range(args.reps + 1):
            x.fill(0.0)
            exe.synchronize()
            comm.Barrier()
            start = time.perf_counter()
            solver.apply(b, x)
            exe.synchronize()
            if rep:  # the first compiles and captures
                times.append(slowest(time.perf_counter() - start) / args.iters)
        return 1e3 * float(np.median(times))

    problems = {"weak": weak_grid(args.weak_rows, comm.size), "strong": strong_grid(args.strong_rows)}
    for kind in args.problems:
        shape = problems[kind]
        n = int(np.prod(shape))
        partition = gk.distributed.Partition.uniform(n, comm)
        first, end = partition.range(comm.rank)
        start = time.perf_counter()
        rows = poisson_3d_rows(shape, first, end)
        A = gk.distributed.Matrix.from_scipy(exe, comm, rows, partition)
        ones = gk.distributed.Vector.full(exe, comm, partition, 1.0)
        b = A.apply(ones, gk.distributed.Vector.zeros(exe, comm, partition))
        x = gk.distributed.Vector.zeros(exe, comm, partition)
        assembly = slowest(time.perf_counter() - start)
        # the parts, each alone
        y = gk.distributed.Vector.zeros(exe, comm, partition)
        partials = gk.matrix.Dense.zeros(exe, (1024, 3))
        parts = {"local_spmv_ms": per_call(lambda: exe.run("matrix.csr.spmv", A.local_matrix, b, y), args.part_calls),
                 "exchange_ms": per_call(lambda: A.halo.finish(A.halo.start(b)) if A.halo.active else None,
                                         args.part_calls),
                 "apply_ms": per_call(lambda: A.apply(b, y), args.part_calls),
                 "reduction_ms": per_call(lambda: A.reduce_sums(partials), args.part_calls)}
        parts = {key: 1e3 * value for key, value in parts.items()}
        to_rtol = [gk.stop.Iteration.build().with_max_iters(args.max_iters),
                   gk.stop.ResidualNorm.build().with_reduction_factor(args.rtol)]
        for method in args.methods:
            params = solver_params(gk, method, to_rtol, args.gather_rows)
            seconds, solver, logger = timed_solve(lambda: params.on(exe).generate(A), b, x)
            record = {"problem": kind, "method": method, "ranks": comm.size, "grid": list(shape), "rows": n,
                      "rows_per_rank": n // comm.size, "executor": args.executor, "device": devices[0],
                      "assembly_s": assembly, "iterations": int(np.max(logger.num_iterations)),
                      "reason": str(logger.stop_reason), "time_to_solution_s": seconds,
                      "ms_per_iteration": ms_per_iteration(solver_params(gk, method, [], args.gather_rows), A, b, x),
                      **parts}
            counts_before = dict(A.counters)
            x.fill(0.0)
            solver.apply(b, x)
            record.update({f"{key}_per_iteration": (A.counters[key] - counts_before[key]) / max(record["iterations"], 1)
                           for key in ("reductions", "exchanges")})
            if comm.size == 1:
                # the same solve without gk.distributed, on the same rows
                plain_A = A.local_matrix
                plain_b, plain_x = gk.matrix.Dense(exe, b.values), gk.matrix.Dense.zeros(exe, b.shape)
                plain, _, plain_logger = timed_solve(lambda: params.on(exe).generate(plain_A), plain_b, plain_x)
                record.update(plain_time_to_solution_s=plain, plain_iterations=int(np.max(plain_logger.num_iterations)),
                              plain_ms_per_iteration=ms_per_iteration(solver_params(gk, method, [], args.gather_rows),
                                                                      plain_A, plain_b, plain_x))
            if args.check:
                whole = x.gather()
                if comm.rank == 0:
                    S = gk.matrix.Csr.from_scipy(exe, poisson_3d_rows(shape, 0, n))
                    xs = gk.matrix.Dense.zeros(exe, (n, 1))
                    S_logger = gk.log.Convergence()
                    serial = params.on(exe).generate(S)
                    serial.add_logger(S_logger)
                    serial.apply(S.apply(gk.matrix.Dense.full(exe, (n, 1), 1.0), gk.matrix.Dense.zeros(exe, (n, 1))), xs)
                    record.update(serial_iterations=int(np.max(S_logger.num_iterations)),
                                  max_difference=float(np.abs(whole - xs.to_numpy()).max()))
            if comm.rank == 0:
                print(RECORD + json.dumps(record), flush=True)
        del A, b, x, y, ones


# -- the driver: 1, 2, 4 ranks in turn, and the tables --------------------------------------------

def mpiexec(given: str | None) -> str:
    """``given``, else the mpiexec on the PATH (on the GPU machine the carried mpich wheel's, which
    .device/setup.sh puts first), else the one beside this Python (a virtual environment's)."""
    beside = Path(sys.executable).parent / "mpiexec"
    found = given or shutil.which("mpiexec") or (str(beside) if beside.exists() else None)
    if found is None:
        raise SystemExit("mpiexec not found: pip install \"ginkpy[mpi]\" (MPICH's mpiexec lands beside python)")
    return found


def efficiencies(records: list[dict]) -> None:
    """Per record: t_1 / t_p of ms per iteration and of time to solution, against the 1-rank
    record of the same problem, method and device (weak: efficiency, strong: speedup)."""
    for r in records:
        base = next((b for b in records if b["ranks"] == 1 and b["problem"] == r["problem"]
                     and b["method"] == r["method"] and b["device"] == r["device"]), None)
        if base is not None:
            r["per_iteration_scaling"] = base["ms_per_iteration"] / r["ms_per_iteration"]
            r["time_to_solution_scaling"] = base["time_to_solution_s"] / r["time_to_solution_s"]
            r["iteration_growth"] = r["iterations"] / max(base["iterations"], 1)


def table(records: list[dict]) -> str:
    lines = ["weak: scaling = efficiency t_1 / t_p; strong: scaling = speedup t_1 / t_p (ms per iteration; time to "
             "solution), iteration growth = iterations / those on 1 rank",
             f"{'problem':>7} {'method':>9} {'ranks':>5} {'rows':>10} {'iters':>6} {'growth':>6} {'ms/iter':>8} "
             f"{'scaling':>7} {'solve s':>8} {'scaling':>7} {'spmv':>7} {'exchange':>8} {'apply':>7} {'reduce':>7} "
             f"{'red/it':>6} {'plain':>11}"]
    for r in sorted(records, key=lambda r: (r["problem"], r["method"], r["ranks"])):
        plain = (f"{r['ms_per_iteration'] / r['plain_ms_per_iteration']:.2f}x/"
                 f"{r['time_to_solution_s'] / r['plain_time_to_solution_s']:.2f}x" if "plain_ms_per_iteration" in r
                 else "")
        fmt = lambda key, spec: format(r[key], spec) if key in r else "-"  # noqa: E731
        lines.append(f"{r['problem']:>7} {r['method']:>9} {r['ranks']:>5} {r['rows']:>10} {r['iterations']:>6} "
                     f"{fmt('iteration_growth', '6.2f'):>6} {r['ms_per_iteration']:>8.3f} "
                     f"{fmt('per_iteration_scaling', '7.2f'):>7} {r['time_to_solution_s']:>8.3f} "
                     f"{fmt('time_to_solution_scaling', '7.2f'):>7} {r['local_spmv_ms']:>7.3f} {r['exchange_ms']:>8.3f} "
                     f"{r['apply_ms']:>7.3f} {r['reduction_ms']:>7.3f} {r['reductions_per_iteration']:>6.2f} {plain:>11}")
    lines.append("plain: 1 rank of gk.distributed over the same solve on a Csr without it (ms per iteration / time "
                 "to solution)")
    return "\n".join(lines)


def launch(command: list[str], timeout: float | None, records: list[dict], out: Path | None) -> str | None:
    """Run one launch, its lines printed and its records kept (and appended to ``out``) as they
    come; None, or why it failed (its exit status, or the timeout that ended it)."""
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                           env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1"), start_new_session=True)
    timer = threading.Timer(timeout, os.killpg, (run.pid, signal.SIGKILL)) if timeout else None
    if timer is not None:
        timer.start()
    try:
        for line in run.stdout:
            if line.startswith(RECORD):
                record = json.loads(line[len(RECORD):])
                records.append(record)
                print(f"  {record['problem']} {record['method']} on {record['ranks']}: {record['iterations']} iterations, "
                      f"{record['ms_per_iteration']:.3f} ms per iteration, {record['time_to_solution_s']:.3f} s",
                      flush=True)
                if out is not None:
                    with out.open("a") as f:
                        f.write(json.dumps(record) + "\n")
            else:
                print(line, end="", flush=True)
        code = run.wait()
    finally:
        if timer is not None:
            timer.cancel()
    if code == -signal.SIGKILL and timeout:
        return f"ended after --launch-timeout {timeout:g} s"
    return None if code == 0 else f"exit status {code}"


def driver(args, worker_args: list[str]) -> None:
    records, failed = [], []
    for ranks in args.ranks:
        command = [mpiexec(args.mpiexec), "-n", str(ranks), sys.executable, __file__, "--worker",
                   "--expect-ranks", str(ranks), *worker_args]
        print(f"$ {' '.join(command[:3])} ... {' '.join(worker_args)}", flush=True)
        why = launch(command, args.launch_timeout, records, args.out)
        if why is not None:
            failed.append(f"{ranks} rank(s): {why}")
            print(f"# {failed[-1]}", flush=True)
    efficiencies(records)
    print(table(records))
    if failed:
        raise SystemExit("failed: " + "; ".join(failed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", help="launch these rank counts in turn (the driver)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--weak-rows", type=int, default=100_000, help="rows per rank of the weak-scaling problem")
    parser.add_argument("--strong-rows", type=int, default=200_000, help="rows of the strong-scaling problem")
    parser.add_argument("--problems", nargs="+", default=["weak", "strong"], choices=["weak", "strong"])
    parser.add_argument("--methods", nargs="+", default=["jacobi-cg", "pipecg", "amg-cg"],
                        choices=["jacobi-cg", "pipecg", "amg-cg"])
    parser.add_argument("--executor", default="opencl", choices=["opencl", "reference"])
    parser.add_argument("--iters", type=int, default=100, help="iterations of a timed solve")
    parser.add_argument("--reps", type=int, default=3, help="timed solves (the median is reported)")
    parser.add_argument("--part-calls", type=int, default=50, help="calls of each part timed alone")
    parser.add_argument("--rtol", type=float, default=1e-8, help="tolerance of the solves to solution")
    parser.add_argument("--max-iters", type=int, default=5000)
    parser.add_argument("--gather-rows", type=int, help="AMG: levels of at most this many rows (all ranks) "
                                                           "gathered onto every rank (default: Multigrid's, 50000)")
    parser.add_argument("--check", action="store_true", help="compare with the serial solve on rank 0 (small problems)")
    parser.add_argument("--out", type=Path, help="append the records to this JSON-lines file")
    parser.add_argument("--mpiexec", help="the mpiexec of the driver's launches (default: on the PATH, else beside "
                                          "this Python)")
    parser.add_argument("--launch-timeout", type=float, help="seconds after which a launch is ended (the driver)")
    parser.add_argument("--expect-ranks", type=int, help=argparse.SUPPRESS)
    argv = sys.argv[1:]
    args = parser.parse_args(argv)
    if args.ranks and not args.worker:
        driver(args, _without_ranks(argv))
        return
    worker(args)


def _without_ranks(argv: list[str]) -> list[str]:
    """The arguments without ``--ranks N ...`` (what each launch of the worker gets)."""
    out, skipping = [], False
    for a in argv:
        if a == "--ranks":
            skipping = True
            continue
        if skipping and a.lstrip("-").isdigit() and not a.startswith("--"):
            continue
        skipping = False
        out.append(a)
    return out


if __name__ == "__main__":
    main()
