"""Jacobi generate: scalar (a diagonal-extraction kernel) and block-Jacobi (blocks found by
supervariable agglomeration and inverted, both in kernels on the executor), from a Csr already
on the executor, median of --reps. Per block size: milliseconds per generate, the host CPU
milliseconds it took (all threads: PoCL's and the reference's work; on a shared machine the
less load-dependent figure) and the number of blocks.

    python benchmarks/bench_jacobi.py --sizes 1000000 --problems poisson_2d poisson_3d     # GPU target: <= 100 ms
    python benchmarks/bench_jacobi.py --sizes 490000 --problems poisson_2d poisson_3d      # PoCL target: <= 500 ms
"""
from __future__ import annotations

import resource
import sys

import bench_common as bc
import ginkpy as gk


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [1_000_000], ["poisson_2d", "poisson_3d"])
    p.add_argument("--block-sizes", type=int, nargs="+", default=[1, 8, 32],
                   help="max_block_size of each Jacobi (1: scalar)")
    args = p.parse_args()
    exec = gk.executor(args.executor)
    print(f"ginkpy executor: {bc.device_name(exec)}; value type {args.dtype}; ms per generate "
          f"(median of {args.reps}), host CPU ms, blocks\n")
    print(f"{'matrix':<24}{'rows':>10}" + "".join(f"{f'block {m}: ms':>16}{'cpu ms':>9}{'blocks':>9}"
                                                 for m in args.block_sizes))
    for name, S in bc.matrices(args, exec):
        A = gk.matrix.Csr.from_scipy(exec, S)
        line = f"{name:<24}{S.shape[0]:>10}"
        for m in args.block_sizes:
            factory = gk.preconditioner.Jacobi.build().with_max_block_size(m).on(exec)
            made = []
            start = cpu_seconds()
            seconds = bc.measure(lambda: made.append(factory.generate(A)), exec.synchronize, args.reps,
                                 min_batch_time=0)
            cpu = (cpu_seconds() - start) / len(made)
            line += f"{seconds * 1e3:>16.2f}{cpu * 1e3:>9.1f}{made[-1].num_blocks:>9}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
