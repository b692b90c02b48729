"""Gather: a distributed vector's rows gathered onto every rank, for the small coarse levels of
a distributed multigrid (or two-level Schwarz) that every rank then solves alike, redundantly:
cheaper than splitting a few thousand rows over the ranks, whose products would be all
latency.

Two host steps (``Executor.host_step``, replayed in a captured iteration in their place):
:meth:`Gather.start` reads this rank's rows without waiting; :meth:`Gather.finish` sends them
to every rank (a non-blocking allgather of each rank's rows, in rank order), waits, and writes
the whole vector to the device without waiting. :meth:`Gather.take` copies this rank's rows of
a whole vector back into a local one (one launch, no communication).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ginkpy.core.distributed.collective import Collective, wait_for
from ginkpy.core.distributed.partition import Partition
from ginkpy.core.matrix.csr import INDEX_DTYPE
from ginkpy.core.matrix.dense import Dense


class Gather:
    """The rows of vectors partitioned by ``partition`` gathered onto every rank of ``comm``."""

    def __init__(self, exec, comm: Any, partition: Partition) -> None:
        self.exec, self.comm, self.partition = exec, comm, partition
        self.collective = Collective.of(comm)
        first, end = partition.range(comm.rank)
        self._mine = exec.from_host(np.arange(first, end, dtype=INDEX_DTYPE))
        self._buffers: dict = {}

    def _host(self, k: int, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
        key = (k, np.dtype(dtype))
        buffers = self._buffers.get(key)
        if buffers is None:
            n_local, n = self.partition.local_size(self.comm.rank), self.partition.global_size
            host = [self.exec.host_array((rows, k), dtype) if rows else np.empty((0, k), dtype) for rows in (n_local, n)]
            buffers = self._buffers[key] = (host[0], host[1], [None, None])
        return buffers

    def start(self, local: Dense) -> None:
        """Start reading this rank's rows ``local`` (n_local x k)."""
        self.exec.host_step(functools.partial(self._begin, local))

    def finish(self, local: Dense, whole: Dense) -> None:
        """``whole`` (N x k, on every rank) = every rank's rows, in rank order."""
        self.exec.host_step(functools.partial(self._end, local, whole))

    def take(self, whole: Dense, local: Dense) -> None:
        """local = this rank's rows of ``whole``."""
        if local.shape[0]:
            self.exec.run("distributed.matrix.row_gather", whole, self._mine, local)

    def _begin(self, local: Dense) -> None:
        mine, _, event = self._host(local.shape[1], local.dtype)
        event[0] = self.exec.read_async([local.values], [mine]) if local.shape[0] else None

    def _end(self, local: Dense, whole: Dense) -> None:
        k = local.shape[1]
        mine, everyone, event = self._host(k, local.dtype)
        self.collective.post_pending()
        for e in event:  # this rank's rows read; the last write from ``everyone`` done
            wait_for(self.exec, e)
        counts = np.diff(self.partition.offsets) * k
        self.collective.wait([self.comm.Iallgatherv(mine, [everyone, counts])])
        event[:] = [None, self.exec.write_async(whole.values, everyone)]
