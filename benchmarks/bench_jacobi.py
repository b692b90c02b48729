"""Jacobi generate: scalar (a diagonal-extraction kernel) and block-Jacobi (blocks found and
inverted without a loop over blocks), from a Csr already on the executor, median of --reps.

    python benchmarks/bench_jacobi.py --sizes 1000000 --problems poisson_2d poisson_3d
"""
from __future__ import annotations

import sys

import bench_common as bc
import ginkpy as gk


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [1_000_000], ["poisson_2d", "poisson_3d"])
    p.add_argument("--block-sizes", type=int, nargs="+", default=[1, 8, 32],
                   help="max_block_size of each Jacobi (1: scalar)")
    args = p.parse_args()
    exec = gk.executor(args.executor)
    print(f"ginkpy executor: {bc.device_name(exec)}; value type {args.dtype}; ms per generate "
          f"(median of {args.reps})\n")
    print(f"{'matrix':<24}{'rows':>10}" + "".join(f"{f'block {m}':>12}" for m in args.block_sizes))
    for name, S in bc.matrices(args, exec):
        A = gk.matrix.Csr.from_scipy(exec, S)
        times = []
        for m in args.block_sizes:
            factory = gk.preconditioner.Jacobi.build().with_max_block_size(m).on(exec)
            times.append(bc.measure(lambda: factory.generate(A), exec.synchronize, args.reps, min_batch_time=0))
        print(f"{name:<24}{S.shape[0]:>10}" + "".join(f"{t * 1e3:>12.2f}" for t in times))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
