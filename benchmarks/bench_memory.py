"""Peak host memory of a whole solve (issue 9 item 7): x, info = ginkpy.linalg.cg(A, b, M="jacobi")
from a SciPy matrix, with the matrix already made, against the matrix data and the vectors.

Each size runs in a fresh process: it makes the 3D 7-point Laplacian and b, resets the peak
resident set (Linux: /proc/self/clear_refs), solves a fixed number of iterations and reports
the peak resident set above the one before the solve, in units of the SciPy matrix's bytes
(values, column indices, row pointers). On a CPU device (PoCL) the device's buffers live in
host memory too: the device copy of the matrix alone is 1x; on a GPU they do not count.

    python benchmarks/bench_memory.py --sizes 1000000 8000000 32000000
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys


def _child(rows: int, executor: str, iters: int) -> dict:
    import numpy as np

    import ginkpy as gk
    from ginkpy import problems

    S = problems.poisson_3d(max(2, round(rows ** (1 / 3))))
    b = np.ones(S.shape[0])
    exec = gk.executor(executor)
    matrix = S.data.nbytes + S.indices.nbytes + S.indptr.nbytes
    vector = b.nbytes

    def rss(field: str) -> int:
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) * 1024
        raise RuntimeError(f"no {field} in /proc/self/status")

    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak resident set starts again from the current one
    before = rss("VmRSS:")
    x, info = gk.linalg.cg(S, b, M="jacobi", rtol=1e-30, maxiter=iters, executor=exec)
    peak = rss("VmHWM:")
    return {"rows": S.shape[0], "nnz": S.nnz, "matrix_bytes": matrix, "vector_bytes": vector,
            "before": before, "peak": peak, "device": str(exec), "iterations": iters}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 8_000_000])
    p.add_argument("--executor", default="opencl")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child is not None:
        print(json.dumps(_child(args.child, args.executor, args.iters)))
        return
    print(f"{'rows':>10} {'nnz':>11} {'matrix MB':>10} {'solve peak MB':>14} {'x matrix':>9} "
          f"{'(matrix + 8 vectors)':>21}")
    for rows in args.sizes:
        out = subprocess.run([sys.executable, __file__, "--child", str(rows), "--executor", args.executor,
                              "--iters", str(args.iters)], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{rows:>10} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        growth = r["peak"] - r["before"]
        budget = r["matrix_bytes"] + 8 * r["vector_bytes"]
        print(f"{r['rows']:>10} {r['nnz']:>11} {r['matrix_bytes'] / 1e6:>10.0f} {growth / 1e6:>14.0f} "
              f"{growth / r['matrix_bytes']:>9.2f} {growth / budget:>21.2f}   {r['device']}")


if __name__ == "__main__":
    main()
