"""Host-to-device transfer paths of an OpenCL device beside CuPy's: what bounds a matrix's upload.

Times (the best of ``--reps``) for one host array of ``--mib`` MiB:

- CuPy's copy from pageable and from page-locked memory (where CuPy and a CUDA device are);
- pyopencl's copy from pageable memory, from a mapped ALLOC_HOST_PTR (page-locked) buffer whole
  and in chunks of 1, 8 and 32 MiB;
- the host memcpy into page-locked memory by 1, 2, 4 and 8 threads (``staging.copy_into``, the
  ring's own split; ``numpy.copyto`` releases the GIL);
- ``Csr.from_scipy`` of 3D Poisson (``--grid``, 128: 176 MB) with each ``STAGING_THREADS`` of
  ``--threads``: the page-locked ring of staging.py as a user's upload runs it;
- the same arrays through a copy of that ring's loop with timers (into device arrays made once,
  or anew each time as ``from_scipy``'s are), for 8 MiB chunks and 1 or 8 threads: where the
  time goes (the memcpy, the waits for a slot's last copy, the enqueues, the drain at the end);
  ``--rings SLOTSxMIBxTHREADS ...`` adds rings of other shapes (into new device arrays), and
  ``--perthread T ...`` rings of 2 x 8 MiB per thread, each of T threads taking every T-th chunk
  whole (no chunk's memcpy shared out and gathered again); ``--skip-basic`` leaves out the plain
  copies and memcpys above.

    python benchmarks/bench_transfer.py [--mib 176] [--grid 128] [--threads 1 8] [--reps 5]
                                        [--rings 4x16x8 2x32x8] [--perthread 4 8] [--skip-basic]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import bench_common as bc
import ginkpy as gk
from ginkpy.opencl import device_choices
from ginkpy.opencl.staging import copy_into
from ginkpy.problems import poisson_3d


def best(f, reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def ring_breakdown(exec, hosts: list, outs: list | None, chunk: int, slots: int, threads: int) -> tuple:
    """One upload of ``hosts`` into the device arrays ``outs`` (None: made anew, as
    ``from_scipy``'s are) through ``slots`` page-locked chunks of ``chunk`` bytes, as
    staging.copy_staged runs it: (total, memcpy, waits, enqueues, drain) in seconds."""
    import pyopencl as cl
    device = exec._device
    start = time.perf_counter()
    if outs is None:
        outs = [exec.alloc(h.shape, h.dtype) for h in hosts]
    arrays = [device.host_array((chunk,), np.uint8) for _ in range(slots)]
    events: list = [None] * slots
    memcpy = waits = enqueues = 0.0
    i = 0
    for out, host in zip(outs, hosts):
        source = host.reshape(-1).view(np.uint8)
        for first in range(0, source.nbytes, chunk):
            last = min(first + chunk, source.nbytes)
            t0 = time.perf_counter()
            if events[i] is not None:
                events[i].wait()
            t1 = time.perf_counter()
            slot = arrays[i][:last - first]
            copy_into(slot, source[first:last], threads)
            t2 = time.perf_counter()
            with exec.lock:
                events[i] = cl.enqueue_copy(exec.queue, out.base_data, slot, dst_offset=out.offset + first,
                                            is_blocking=False)
                exec.queue.flush()
            t3 = time.perf_counter()
            waits, memcpy, enqueues = waits + t1 - t0, memcpy + t2 - t1, enqueues + t3 - t2
            i = (i + 1) % slots
    drain = time.perf_counter()
    for event in events:
        if event is not None:
            event.wait()
    end = time.perf_counter()
    del arrays  # (the page-locked chunks go back to the device's free list)
    return end - start, memcpy, waits, enqueues, end - drain


def perthread_rings(exec, hosts: list, outs: list | None, chunk: int, slots: int, threads: int) -> float:
    """One upload as ring_breakdown's, but each of ``threads`` host threads takes every
    ``threads``-th chunk through ``slots`` page-locked chunks of its own (its memcpy and its
    enqueues, no split of a chunk between threads): seconds."""
    import pyopencl as cl
    from concurrent.futures import ThreadPoolExecutor
    device = exec._device
    start = time.perf_counter()
    if outs is None:
        outs = [exec.alloc(h.shape, h.dtype) for h in hosts]
    sources = [h.reshape(-1).view(np.uint8) for h in hosts]
    chunks = [(k, first, min(first + chunk, src.nbytes)) for k, src in enumerate(sources)
              for first in range(0, src.nbytes, chunk)]
    arrays = [[device.host_array((chunk,), np.uint8) for _ in range(slots)] for _ in range(threads)]

    def work(t: int) -> list:
        events: list = [None] * slots
        for n, (k, first, last) in enumerate(chunks[t::threads]):
            i = n % slots
            if events[i] is not None:
                events[i].wait()
            slot = arrays[t][i][:last - first]
            np.copyto(slot, sources[k][first:last])
            with exec.lock:
                events[i] = cl.enqueue_copy(exec.queue, outs[k].base_data, slot, dst_offset=outs[k].offset + first,
                                            is_blocking=False)
                exec.queue.flush()
        return events
    with ThreadPoolExecutor(threads) as pool:
        for events in list(pool.map(work, range(threads))):
            for event in events:
                if event is not None:
                    event.wait()
    end = time.perf_counter()
    del arrays
    return end - start


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mib", type=int, default=176, help="MiB of the array copied")
    p.add_argument("--grid", type=int, default=128, help="3D Poisson grid side of the Csr.from_scipy rows")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 8], help="STAGING_THREADS of a GPU to time")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--executor", default="opencl")
    p.add_argument("--rings", nargs="*", default=[], metavar="SLOTSxMIBxTHREADS",
                   help="more rings to break down, e.g. 4x32x8: 4 slots of 32 MiB, 8 threads")
    p.add_argument("--perthread", type=int, nargs="*", default=[],
                   help="thread counts for rings of 2 x 8 MiB per thread (each thread its own chunks)")
    p.add_argument("--skip-basic", action="store_true", help="only from_scipy and the rings")
    args = p.parse_args()
    import pyopencl as cl
    nbytes = args.mib << 20
    host = np.random.default_rng(0).integers(0, 255, nbytes, dtype=np.uint8)

    def line(what: str, seconds: float, size: int = nbytes) -> None:
        print(f"{what:<40}{size / seconds / 1e9:7.1f} GB/s {seconds * 1e3:8.1f} ms", flush=True)

    cupy = bc.import_cupy(False)
    if cupy is not None and not args.skip_basic:
        import cupyx
        dev = cupy.empty(nbytes, np.uint8)
        sync = cupy.cuda.Device().synchronize
        line("CuPy from pageable", best(lambda: (dev.set(host), sync()), args.reps))
        pinned = cupyx.empty_pinned(nbytes, np.uint8)
        pinned[:] = host
        line("CuPy from page-locked", best(lambda: (dev.set(pinned), sync()), args.reps))
        del dev, pinned
    exec = gk.executor(args.executor)
    print(f"ginkpy executor: {bc.device_name(exec)}")
    ctx, queue = exec.context, exec.queue
    dst = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    if not args.skip_basic:
        basic(args, host, nbytes, dst, ctx, queue, line)
    S = poisson_3d(args.grid)
    size = S.data.nbytes + S.indices.nbytes + S.indptr.nbytes
    for threads in args.threads:
        device_choices.STAGING_THREADS["gpu"] = threads
        gk.matrix.Csr.from_scipy(exec, S)  # (the ring's page-locked chunks made)
        exec.synchronize()
        line(f"Csr.from_scipy 3D {args.grid}^3, {threads} thread(s)",
             best(lambda: (gk.matrix.Csr.from_scipy(exec, S), exec.synchronize()), args.reps), size)
    hosts = [S.indptr.astype(np.int32), S.indices.astype(np.int32), S.data]
    kept = [exec.alloc(h.shape, h.dtype) for h in hosts]
    rings = [(4, 8, 1, False), (4, 8, 8, False), (4, 8, 1, True)]
    rings += [tuple(int(v) for v in r.split("x")) + (True,) for r in args.rings]
    for slots, mib, threads, fresh in rings:
        total, memcpy, waits, enqueues, drain = min(
            ring_breakdown(exec, hosts, None if fresh else kept, mib << 20, slots, threads) for _ in range(args.reps))
        print(f"ring of {slots} x {mib} MiB, {threads} thread(s), {'new' if fresh else 'kept'} device arrays: "
              f"{total * 1e3:.1f} ms ({size / total / 1e9:.1f} GB/s): memcpy {memcpy * 1e3:.1f}, waits "
              f"{waits * 1e3:.1f}, enqueues {enqueues * 1e3:.1f}, drain {drain * 1e3:.1f} ms", flush=True)
    for threads in args.perthread:
        total = min(perthread_rings(exec, hosts, None, 8 << 20, 2, threads) for _ in range(args.reps))
        print(f"rings of 2 x 8 MiB per thread, {threads} threads, new device arrays: {total * 1e3:.1f} ms "
              f"({size / total / 1e9:.1f} GB/s)", flush=True)
    return 0


def basic(args, host, nbytes, dst, ctx, queue, line) -> None:
    """The plain copies and memcpys of the module's docstring."""
    import pyopencl as cl
    line("pyopencl from pageable", best(lambda: cl.enqueue_copy(queue, dst, host, is_blocking=True), args.reps))
    locked = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, nbytes)
    mapped, _ = cl.enqueue_map_buffer(queue, locked, cl.map_flags.READ | cl.map_flags.WRITE, 0, (nbytes,),
                                      np.uint8, is_blocking=True)
    mapped[:] = host
    line("pyopencl from page-locked, whole", best(lambda: cl.enqueue_copy(queue, dst, mapped, is_blocking=True),
                                                   args.reps))
    for chunk in (1 << 20, 8 << 20, 32 << 20):
        def chunked(chunk=chunk):
            for start in range(0, nbytes, chunk):
                cl.enqueue_copy(queue, dst, mapped[start:start + chunk], dst_offset=start, is_blocking=False)
            queue.finish()
        line(f"pyopencl from page-locked, {chunk >> 20} MiB chunks", best(chunked, args.reps))
    line("memcpy into page-locked, 1 thread", best(lambda: np.copyto(mapped, host), args.reps))
    for threads in (2, 4, 8):  # (the staging ring's own split: staging.copy_into)
        line(f"memcpy into page-locked, {threads} threads", best(lambda: copy_into(mapped, host, threads), args.reps))
    del mapped


if __name__ == "__main__":
    raise SystemExit(main())
