"""The host side of a batch built from a list of SciPy matrices, alone: gathering N items'
values into one array and comparing their index arrays with item 0's, on one host thread (as
``batch_pattern.from_list`` does) and on several, to decide whether threads pay on a host.

No device is used: the destination is a NumPy array of the batch's size, written again in each
run (as the kept staging buffer of a GPU's upload is). Each item has arrays of its own (as when
each system is assembled on its own). Printed per method: milliseconds per batch (median of
--reps, the methods' runs interleaved) and the ratio to the one-thread method of the same row.

    gather, 1 thread          np.concatenate of the N value arrays straight into the destination
    gather, T threads         T threads each concatenating a range of items into its slice (NumPy
                              lets the GIL go while it copies an item's array)
    compare, 1 thread         bytes.startswith of item 0's index bytes with each item's (a memcmp
                              each, the loop in C through map; holds the GIL)
    compare, T threads        T threads each concatenating a cache-sized chunk of items' indices
                              into a scratch array and comparing it with item 0's tiled (NumPy
                              lets the GIL go in both)
    both, 1 thread / T        the gather and the compare of the build, one after the other / on
                              T threads, each taking ranges of items

    python benchmarks/bench_gather.py                            # 10^4 items of a 16 x 16 grid (nnz 1216)
    python benchmarks/bench_gather.py --items 4000 --threads 2 4 8 16
"""
from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from ginkpy import problems

CHUNK_BYTES = 1 << 18  # a thread's chunk of index arrays compared at once (cache-sized)


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=10000, help="N, matrices in the list")
    p.add_argument("--side", type=int, default=16, help="grid side of each 5-point matrix (n = side^2)")
    p.add_argument("--threads", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--reps", type=int, default=9)
    return p.parse_args()


def make_items(N: int, side: int, rng) -> list[sp.csr_matrix]:
    P = problems.poisson_2d(side).tocsr()
    P.sort_indices()
    values = P.data[None, :] * rng.uniform(0.5, 2.0, (N, P.nnz))
    return [sp.csr_matrix((v.copy(), P.indices.copy(), P.indptr.copy()), shape=P.shape) for v in values]


def ranges(N: int, parts: int) -> list[tuple[int, int]]:
    step = -(-N // parts)
    return [(a, min(a + step, N)) for a in range(0, N, step)]


def gather(data: list, out: np.ndarray, start: int, stop: int) -> None:
    np.concatenate(data[start:stop], out=out[start:stop].reshape(-1))


def compare_memcmp(indices: list, first: np.ndarray, start: int, stop: int) -> bool:
    return all(map(first.tobytes().startswith, indices[start:stop]))


def compare_chunks(indices: list, first: np.ndarray, start: int, stop: int) -> bool:
    step = max(1, CHUNK_BYTES // first.nbytes)
    scratch = np.empty((step, first.size), first.dtype)
    same = True
    for a in range(start, stop, step):
        b = min(a + step, stop)
        block = scratch[:b - a]
        np.concatenate(indices[a:b], out=block.reshape(-1))
        same &= bool(np.array_equal(block, np.broadcast_to(first, block.shape)))
    return same


def on_threads(pool, task, N: int, threads: int) -> list:
    return list(pool.map(lambda r: task(*r), ranges(N, threads)))


def main() -> int:
    args = parse()
    rng = np.random.default_rng(0)
    items = make_items(args.items, args.side, rng)
    N, data, indices = len(items), [m.data for m in items], [m.indices for m in items]
    out = np.empty((N, data[0].size))
    first = indices[0]
    pool = ThreadPoolExecutor(max(args.threads))
    # the build now: gather, then memcmp, on one thread; the others on 1, 2, ... threads
    methods = {("gather", 1): lambda: gather(data, out, 0, N),
               ("memcmp", 1): lambda: compare_memcmp(indices, first, 0, N),
               ("gather+memcmp", 1): lambda: (gather(data, out, 0, N), compare_memcmp(indices, first, 0, N))}
    for t in sorted({1, *args.threads}):
        if t > 1:
            methods[("gather", t)] = lambda t=t: on_threads(pool, lambda a, b: gather(data, out, a, b), N, t)
        methods[("compare", t)] = lambda t=t: on_threads(pool, lambda a, b: compare_chunks(indices, first, a, b), N, t)
        methods[("both", t)] = lambda t=t: on_threads(
            pool, lambda a, b: (gather(data, out, a, b), compare_chunks(indices, first, a, b)), N, t)
    assert compare_chunks(indices, first, 0, N) and compare_memcmp(indices, first, 0, N)
    times: dict = {key: [] for key in methods}
    for run in methods.values():
        run()  # warm-up: pages touched, threads started
    for _ in range(args.reps):  # interleaved
        for key, run in methods.items():
            start = time.perf_counter()
            run()
            times[key].append(time.perf_counter() - start)
    gathered = np.stack(data)
    assert np.array_equal(out, gathered)
    print(f"{N} items of {data[0].size} values ({gathered.nbytes / 1e6:.0f} MB) and {first.size} indices "
          f"({N * first.nbytes / 1e6:.0f} MB), median of {args.reps}")
    print(f"{'what':<14} {'threads':>7} {'ms':>8} {'x now':>7}")
    now = {"gather": "gather", "memcmp": "memcmp", "compare": "memcmp", "gather+memcmp": "gather+memcmp",
           "both": "gather+memcmp"}
    for (what, t), ts in times.items():
        ms = np.median(ts) * 1e3
        base = np.median(times[(now[what], 1)]) * 1e3
        print(f"{what:<14} {t:>7} {ms:>8.2f} {base / ms:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
