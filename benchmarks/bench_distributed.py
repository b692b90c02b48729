"""Weak and strong scaling of preconditioned CG on 3D Poisson over MPI ranks (gk.distributed).

    for n in 1 2; do
        mpiexec -n $n python benchmarks/bench_distributed.py --weak-rows 100000 --strong-rows 200000 --out dist.jsonl
    done

One launch measures one rank count on two problems, each assembled rank by rank (7-point
Laplacian, b = A 1):
- weak: ``--weak-rows`` rows per rank, an n x n x (p m) grid of which each rank owns m planes;
- strong: ``--strong-rows`` rows in all, an n x n x m grid split evenly over the ranks.
Per problem and preconditioner (``--preconditioner``: jacobi, schwarz-ic):
- correctness: CG to ``--rtol`` from x = 0, distributed and serially on rank 0 (the global
  matrix is built there for this check only): iteration counts, stop reasons and the largest
  difference of the solutions;
- ms per iteration: ``--iters`` iterations (only an Iteration criterion), median of ``--reps``;
- its split, each part timed alone on the same matrix and vectors (the slowest rank): the local
  SpMV (the product with the local block), the halo exchange (gather on the device, read,
  MPI send and receive, write of the ghost values), the reductions (the reduce_sums calls the
  solve makes per iteration, counted, times one reduce_sums), and the rest (vector kernels,
  the non-local product, the read of the stop state; the local SpMV and the exchange overlap
  in the solve, so the parts may add to more than the whole).
With ``--out FILE`` the results are appended there as JSON lines; the 1-rank lines already in
the file are the baseline of the weak scaling efficiency (t_1 / t_p) and the strong speedup.
Each rank takes its own device (``gk.distributed.executor_for_rank``: the node's GPUs by
node-local rank; GINKPY_RANK_DEVICES overrides).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from mpi4py import MPI

import ginkpy as gk
from ginkpy.problems import poisson_3d_rows

PRECONDITIONERS = {
    "jacobi": lambda: gk.preconditioner.Jacobi.build().with_max_block_size(1),
    "schwarz-ic": lambda: gk.distributed.preconditioner.Schwarz.build().with_local_solver(gk.preconditioner.Ic.build()),
}
# the serial solve's preconditioner: Schwarz with one rank is IC of the whole matrix
SERIAL = {"jacobi": PRECONDITIONERS["jacobi"], "schwarz-ic": lambda: gk.preconditioner.Ic.build()}


def weak_grid(rows_per_rank: int, ranks: int) -> tuple[int, int, int]:
    n = max(2, round(rows_per_rank ** (1 / 3)))
    return n, n, ranks * max(1, round(rows_per_rank / n ** 2))


def strong_grid(rows: int) -> tuple[int, int, int]:
    n = max(2, round(rows ** (1 / 3)))
    return n, n, max(1, round(rows / n ** 2))


def slowest(comm, seconds: float) -> float:
    return comm.allreduce(seconds, op=MPI.MAX)


def per_call(comm, exe, fn, calls: int) -> float:
    """Seconds per call of ``fn`` on the slowest rank: ``calls`` calls (the same number on every
    rank: some are collective) after one warm-up, then one synchronisation."""
    fn()
    exe.synchronize()
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    exe.synchronize()
    return slowest(comm, (time.perf_counter() - start) / calls)


def cg(params_of, criteria, exe, A):
    params = gk.solver.Cg.build().with_criteria(*criteria).with_preconditioner(params_of())
    return params.on(exe).generate(A)


def run_problem(args, comm, exe, kind: str, shape: tuple[int, int, int], preconditioner: str) -> dict:
    n = int(np.prod(shape))
    partition = gk.distributed.Partition.uniform(n, comm)
    first, end = partition.range(comm.rank)
    A = gk.distributed.Matrix.from_scipy(exe, comm, poisson_3d_rows(shape, first, end), partition)
    ones = gk.distributed.Vector.full(exe, comm, partition, 1.0)
    b = A.apply(ones, gk.distributed.Vector.zeros(exe, comm, partition))
    x = gk.distributed.Vector.zeros(exe, comm, partition)
    record = {"problem": kind, "ranks": comm.size, "grid": list(shape), "rows": n,
              "rows_per_rank": n // comm.size, "preconditioner": preconditioner, "executor": args.executor}

    # correctness: the distributed solve to rtol, and the serial one on rank 0
    to_rtol = [gk.stop.Iteration.build().with_max_iters(args.max_iters),
               gk.stop.ResidualNorm.build().with_reduction_factor(args.rtol)]
    logger = gk.log.Convergence()
    solver = cg(PRECONDITIONERS[preconditioner], to_rtol, exe, A)
    solver.add_logger(logger)
    solver.apply(b, x)
    record.update(iterations=int(logger.num_iterations), reason=str(logger.stop_reason))
    if not args.no_check:
        whole = x.gather()
        if comm.rank == 0:
            S = gk.matrix.Csr.from_scipy(exe, poisson_3d_rows(shape, 0, n))
            bs = S.apply(gk.matrix.Dense.full(exe, (n, 1), 1.0), gk.matrix.Dense.zeros(exe, (n, 1)))
            xs = gk.matrix.Dense.zeros(exe, (n, 1))
            serial_logger = gk.log.Convergence()
            serial = cg(SERIAL[preconditioner], to_rtol, exe, S)
            serial.add_logger(serial_logger)
            serial.apply(bs, xs)
            record.update(serial_iterations=int(serial_logger.num_iterations),
                          serial_reason=str(serial_logger.stop_reason),
                          max_difference=float(np.abs(whole - xs.to_numpy()).max()))
            del S, bs, xs, serial
        comm.Barrier()

    # ms per iteration: --iters iterations, the reduce_sums calls (each one exchange) counted in the first solve
    timed = cg(PRECONDITIONERS[preconditioner], [gk.stop.Iteration.build().with_max_iters(args.iters)], exe, A)
    calls = [0]
    reduce_sums = A.reduce_sums

    def counting(*partials):
        calls[0] += 1
        reduce_sums(*partials)
    A.reduce_sums = counting
    times = []
    for rep in range(args.reps + 1):
        x.fill(0.0)
        exe.synchronize()
        comm.Barrier()
        start = time.perf_counter()
        timed.apply(b, x)
        exe.synchronize()
        if rep == 0:
            A.reduce_sums = reduce_sums
            reductions_per_iteration = calls[0] / args.iters
        else:
            times.append(slowest(comm, time.perf_counter() - start) / args.iters)
    record["ms_per_iteration"] = 1e3 * float(np.median(times))

    # the parts, each alone
    y = gk.distributed.Vector.zeros(exe, comm, partition)
    local_spmv = per_call(comm, exe, lambda: exe.run("matrix.csr.spmv", A.local_matrix, b, y), args.part_calls)
    halo = per_call(comm, exe, lambda: A._finish_exchange(A._start_exchange(b)), args.part_calls)
    apply = per_call(comm, exe, lambda: A.apply(b, y), args.part_calls)
    partials = gk.matrix.Dense.zeros(exe, (1, 1))
    one_reduction = per_call(comm, exe, lambda: A.reduce_sums(partials), args.part_calls)
    record.update(local_spmv_ms=1e3 * local_spmv, halo_ms=1e3 * halo, apply_ms=1e3 * apply,
                  reductions_per_iteration=reductions_per_iteration,
                  reductions_ms=1e3 * one_reduction * reductions_per_iteration,
                  ghost_rows=int(comm.allreduce(A.ghost_columns.size, op=MPI.MAX)))
    record["rest_ms"] = record["ms_per_iteration"] - record["apply_ms"] - record["reductions_ms"]
    return record


def baseline(records: list[dict], record: dict) -> dict | None:
    """The 1-rank record of the same problem, size, preconditioner and executor."""
    key = "rows_per_rank" if record["problem"] == "weak" else "rows"
    for r in records:
        if (r["ranks"] == 1 and r["problem"] == record["problem"] and r[key] == record[key]
                and r["preconditioner"] == record["preconditioner"] and r["executor"] == record["executor"]
                and r.get("device") == record.get("device")):
            return r
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weak-rows", type=int, default=100_000, help="rows per rank of the weak-scaling problem")
    parser.add_argument("--strong-rows", type=int, default=200_000, help="rows of the strong-scaling problem")
    parser.add_argument("--preconditioner", nargs="+", default=["jacobi"], choices=list(PRECONDITIONERS))
    parser.add_argument("--executor", default="opencl", choices=["opencl", "reference"])
    parser.add_argument("--iters", type=int, default=100, help="iterations of a timed solve")
    parser.add_argument("--reps", type=int, default=3, help="timed solves (the median is reported)")
    parser.add_argument("--part-calls", type=int, default=50, help="calls of each part timed alone")
    parser.add_argument("--rtol", type=float, default=1e-8, help="tolerance of the correctness solves")
    parser.add_argument("--max-iters", type=int, default=5000)
    parser.add_argument("--no-check", action="store_true", help="skip the serial solve on rank 0")
    parser.add_argument("--out", type=Path, help="append the results to this JSON-lines file")
    args = parser.parse_args()

    comm = MPI.COMM_WORLD
    exe = gk.distributed.executor_for_rank(comm, args.executor)
    devices = comm.gather(getattr(getattr(exe, "info", None), "name", "host (reference executor)"))
    device = devices[0] if comm.rank == 0 else None
    if comm.rank == 0:
        print(f"{comm.size} rank(s) on {', '.join(devices)}", flush=True)
    previous = []
    if args.out is not None and args.out.exists() and comm.rank == 0:
        previous = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()]
    header = (f"{'problem':>7} {'precond':>10} {'rows':>10} {'rows/rank':>10} {'iters':>6} {'serial':>6} "
              f"{'max diff':>9} {'ms/iter':>8} {'spmv':>7} {'halo':>7} {'apply':>7} {'reduce':>7} {'rest':>7} "
              f"{'eff/speedup':>11}")
    if comm.rank == 0:
        print(header)
    for preconditioner in args.preconditioner:
        for kind, shape in (("weak", weak_grid(args.weak_rows, comm.size)), ("strong", strong_grid(args.strong_rows))):
            record = run_problem(args, comm, exe, kind, shape, preconditioner)
            if comm.rank != 0:
                continue
            record["device"] = device
            base = baseline(previous, record)
            scaling = None if base is None else base["ms_per_iteration"] / record["ms_per_iteration"]
            record["efficiency" if kind == "weak" else "speedup"] = scaling
            print(f"{kind:>7} {preconditioner:>10} {record['rows']:>10} {record['rows_per_rank']:>10} "
                  f"{record['iterations']:>6} {record.get('serial_iterations', '-'):>6} "
                  f"{record.get('max_difference', float('nan')):>9.1e} {record['ms_per_iteration']:>8.3f} "
                  f"{record['local_spmv_ms']:>7.3f} {record['halo_ms']:>7.3f} {record['apply_ms']:>7.3f} "
                  f"{record['reductions_ms']:>7.3f} {record['rest_ms']:>7.3f} "
                  f"{'-' if scaling is None else format(scaling, '.2f'):>11}", flush=True)
            if args.out is not None:
                with args.out.open("a") as f:
                    f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
