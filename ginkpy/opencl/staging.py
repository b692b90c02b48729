"""A GPU's upload of data built on the host (``OpenCLExecutor.upload_rows``): filled a chunk of
rows at a time into a page-locked staging buffer and each chunk copied as soon as it is filled,
so that the copy of one chunk overlaps the filling of the next (a copy from pageable memory goes
through the driver's own staging at a fraction of the speed). The staging buffer is kept per
device, grown to the largest upload, and reused once its previous copies have finished."""
from __future__ import annotations

import collections
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import attrs
import numpy as np

from ginkpy.core.base.row_chunks import row_chunks
from ginkpy.opencl.device_choices import staging_threads

# a GPU's chunk where the caller leaves it open: about 6 copies of 100 MB. On an H100's host
# (2026-12-07, `python benchmarks/bench_transfer.py --rings ...`, Csr.from_scipy's 175 MiB of 3D
# Poisson 128^3, 8 threads) a ring of 4 x 16 MiB took 10.6 ms against 4 x 8 MiB's 15.0: each
# chunk's memcpy is shared out to the threads and gathered again, and 1 MiB a thread paid for it
PIPELINE_BYTES = 16 << 20


def upload_staged(exec, out: Any, fill_rows: Callable[[np.ndarray, int], None], chunk_bytes: int | None) -> None:
    """Fill ``out`` (a new device array) through the staging buffer of ``exec``'s device:
    ``fill_rows(rows, start)`` per chunk of about ``chunk_bytes`` (None: one), each chunk's copy
    enqueued at once (not waited for); the next upload waits for the last (the queue runs in
    order)."""
    import pyopencl as cl
    device = exec._device
    shape, dtype, nbytes = out.shape, out.dtype, out.nbytes
    row_bytes = nbytes // shape[0] if shape else nbytes
    with device.staging_lock:  # one upload at a time writes the staging buffer
        array, pending = device.staging if device.staging is not None else (None, [])
        for event in pending:
            event.wait()  # the last upload's copies have left the staging buffer
        if array is None or array.nbytes < nbytes:
            array = device.host_array((nbytes,), np.uint8)
        host = array[:nbytes].view(dtype).reshape(shape)
        # every chunk's event kept until the next upload has waited for it: pyopencl's event of
        # a copy from host memory waits for the copy when it is dropped (under exec.lock here)
        events: list = []
        try:
            for start, stop in row_chunks(shape, dtype, chunk_bytes):
                fill_rows(host[start:stop], start)
                with exec.lock:
                    events.append(cl.enqueue_copy(exec.queue, out.data, host[start:stop],
                                                  dst_offset=start * row_bytes, is_blocking=False))
        finally:
            device.staging = (array, events)


# -- copies of host arrays through a ring of page-locked chunks (exec.from_host_async) -----------

RING_SLOTS = 4  # chunks in flight: the host fills one while the device copies the others
PARALLEL_COPY_BYTES = 1 << 20  # a chunk's memcpy is split over the staging threads from this size
_PIECE_ALIGN = 4096  # the threads' pieces start at page multiples


class _CopyThreads:
    """The process's host threads that share the memcpy of a chunk into a staging slot
    (``numpy.copyto`` releases the GIL): made at first use, grown to the most asked for, made
    anew in a forked child (threads do not survive a fork). Idle threads cost nothing and
    leave at once when the interpreter exits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._size = 0
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._pool, self._size = None, 0

    def pool(self, size: int) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None or self._size < size:
                if self._pool is not None:
                    self._pool.shutdown(wait=False)
                self._pool, self._size = ThreadPoolExecutor(size, thread_name_prefix="ginkpy-staging"), size
            return self._pool


_copy_threads = _CopyThreads()


def copy_into(dst: np.ndarray, src: np.ndarray, threads: int) -> None:
    """dst[...] = src (1-D byte arrays of one size), by ``threads`` host threads at once where
    the copy is at least PARALLEL_COPY_BYTES: this thread copies the first piece, the process's
    staging threads the others."""
    n = dst.nbytes
    if threads <= 1 or n < PARALLEL_COPY_BYTES:
        np.copyto(dst, src)
        return
    step = -(-n // threads // _PIECE_ALIGN) * _PIECE_ALIGN
    try:
        pool = _copy_threads.pool(threads - 1)
        pieces = [pool.submit(np.copyto, dst[start:start + step], src[start:start + step])
                  for start in range(step, n, step)]
    except RuntimeError:  # a pool shut down (the interpreter exiting, or grown by another device): one copy
        np.copyto(dst, src)
        return
    np.copyto(dst[:step], src[:step])
    for piece in pieces:
        piece.result()


@attrs.define(eq=False)
class StagingRing:
    """A GPU's page-locked chunks for copies of arrays the caller already has (``Csr.from_scipy``'s
    arrays): each slot's array and the event of its last copy (None: free). A slot is refilled
    only after its last copy is complete; the ring holds that event until then, so no copy's
    event is dropped in flight. One upload at a time uses the ring (``SharedDevice.ring_lock``)."""

    chunk_bytes: int
    arrays: list
    events: list
    next: int = 0

    def drain(self) -> None:
        """Wait for every slot's last copy (outside the device lock)."""
        for event in self.events:
            if event is not None:
                event.wait()


def _ring(exec, chunk_bytes: int) -> StagingRing:
    """The device's ring of ``chunk_bytes`` slots (a ring of another size drained and let go:
    its page-locked arrays go back to ``SharedDevice.host_array``'s free list)."""
    device = exec._device
    ring = device.ring
    if ring is None or ring.chunk_bytes != chunk_bytes:
        if ring is not None:
            ring.drain()
        ring = device.ring = StagingRing(chunk_bytes, [device.host_array((chunk_bytes,), np.uint8)
                                                       for _ in range(RING_SLOTS)], [None] * RING_SLOTS)
    return ring


def copy_staged(exec, outs: list, hosts: list, chunk_bytes: int | None = None) -> list:
    """Copy each contiguous host array of ``hosts`` into the device array of ``outs`` beside it
    through the device's ring of page-locked chunks (None: chunks of ``PIPELINE_BYTES``): the host
    copies a chunk into a free slot (a memcpy by the device's ``staging_threads`` host threads)
    and enqueues its device copy at once, so that the memcpy of the next chunk overlaps the
    transfer (a copy straight from pageable memory goes through the driver's own staging at a
    fraction of the bandwidth). Returns the event of the
    last copy (a list of at most one): ``hosts`` are free when this returns; the ring keeps the
    events of its copies until they are complete."""
    import pyopencl as cl
    device = exec._device
    last, threads = None, staging_threads(exec.info)
    sources = [host.reshape(-1).view(np.uint8) for host in hosts]
    with device.ring_lock:
        ring = _ring(exec, chunk_bytes or PIPELINE_BYTES)
        for k, start, stop, i in _chunks(ring, [src.nbytes for src in sources]):
            if ring.events[i] is not None:
                ring.events[i].wait()  # the slot's last copy has left it (outside the device lock)
            slot = ring.arrays[i][:stop - start]
            copy_into(slot, sources[k][start:stop], threads)
            with exec.lock:
                last = cl.enqueue_copy(exec.queue, outs[k].base_data, slot, dst_offset=outs[k].offset + start,
                                       is_blocking=False)
                exec.queue.flush()  # the transfer starts while the host fills the next slot
            ring.events[i] = last
    return [] if last is None else [last]


def _chunks(ring: StagingRing, sizes: list) -> Any:
    """(array number, start, stop, slot) of each chunk of arrays of ``sizes`` bytes, the slots in
    the ring's order from ``ring.next``, which moves past them once all are taken (the caller
    holds the ring's lock)."""
    i = ring.next
    for k, size in enumerate(sizes):
        for start in range(0, size, ring.chunk_bytes):
            yield k, start, min(start + ring.chunk_bytes, size), i
            i = (i + 1) % RING_SLOTS
    ring.next = i


def reads_staged(exec, arrays: Any) -> bool:
    """Whether ``exec.to_host(*arrays)`` goes through the ring (:func:`read_staged`): one of the
    arrays has at least the device's ``staged_download_bytes`` (0: never)."""
    least = exec.device_choices().staged_download_bytes
    return least > 0 and any(a.nbytes >= least for a in arrays)


def read_staged(exec, arrays: Any, chunk_bytes: int | None = None,
                on_chunk: Callable[[int, int, int, np.ndarray], None] | None = None) -> Any:
    """``exec.to_host(*arrays)`` through the device's ring of page-locked chunks (None: chunks of
    ``PIPELINE_BYTES``): up to RING_SLOTS chunks' reads in flight, each chunk copied out of its
    slot once its read is complete, while the next ones travel (a read into pageable memory goes
    through the driver's own staging at a fraction of the bandwidth). Everything enqueued on
    ``exec`` before is done when this returns (the queue runs in order). ``on_chunk(k, start,
    stop, copied)`` is called with each chunk once copied: bytes [start, stop) of array k, and
    ``copied`` those bytes of its copy (a uint8 view), while the next chunks travel."""
    import pyopencl as cl
    device = exec._device
    outs = [np.empty(a.shape, a.dtype) for a in arrays]
    threads = staging_threads(exec.info)
    # (event, slot, destination, k, start, stop) of the reads in flight
    pending: collections.deque = collections.deque()

    def take_oldest() -> None:
        event, slot, dst, k, start, stop = pending.popleft()
        event.wait()
        copy_into(dst, slot, threads)
        if on_chunk is not None:
            on_chunk(k, start, stop, dst)
    targets = [out.reshape(-1).view(np.uint8) for out in outs]
    with device.ring_lock:
        ring = _ring(exec, chunk_bytes or PIPELINE_BYTES)
        for k, start, stop, i in _chunks(ring, [dst.nbytes for dst in targets]):
            if len(pending) == RING_SLOTS:
                take_oldest()  # (slot i's read: the oldest in flight)
            if ring.events[i] is not None:
                ring.events[i].wait()  # an upload's copy out of the slot, before this read overwrites it
            slot = ring.arrays[i][:stop - start]
            with exec.lock:
                event = cl.enqueue_copy(exec.queue, slot, arrays[k].base_data, src_offset=arrays[k].offset + start,
                                        is_blocking=False)
                exec.queue.flush()
            ring.events[i] = event
            pending.append((event, slot, targets[k][start:stop], k, start, stop))
        while pending:
            take_oldest()
    return outs[0] if len(outs) == 1 else tuple(outs)
