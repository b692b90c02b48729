"""Halo: the exchange of the rows of a vector that other ranks' rows of a distributed matrix
need (their "ghost" rows), hidden behind the local product.

The ghost rows a rank receives are grouped by their owners, so each owner's rows land in one
contiguous stretch of the ghost vector, in order. An exchange is two host steps
(``Executor.host_step``, replayed in a captured iteration in their place) around the work that
does not need the ghost rows (the local product):

- :meth:`Halo.start`: the rows to send gathered on the device (one launch), then, on the host,
  their read started without waiting and the receives posted;
- :meth:`Halo.finish`: the reductions pending on the communicator sent
  (``Collective.post_pending``), the send rows sent once read, the receives waited for, the
  ghost rows written to the device without waiting; the non-local product follows.

So the device runs the local product while the rows travel: an apply costs about the larger
of the two, plus the small non-local product. Device memory never goes to MPI directly: it is
staged through page-locked host arrays in the value type (mpi4py sends complex64/complex128
as MPI's complex types).
"""
from __future__ import annotations

import functools
from typing import Any

import attrs
import numpy as np

from ginkpy.core.distributed.collective import Collective, wait_for
from ginkpy.core.matrix.csr import INDEX_DTYPE
from ginkpy.core.matrix.dense import Dense

HALO_TAG = 15  # the MPI tag of the halo exchange (messages between two ranks never overtake)


@attrs.define
class Neighbours:
    """The ranks this rank exchanges with, and where each one's rows sit in the buffer."""

    ranks: list
    begins: list
    ends: list

    @classmethod
    def from_counts(cls, counts: np.ndarray) -> "Neighbours":
        offsets = np.concatenate([[0], np.cumsum(counts)])
        ranks = np.flatnonzero(counts).tolist()
        return cls(ranks, [int(offsets[r]) for r in ranks], [int(offsets[r + 1]) for r in ranks])


@attrs.define(eq=False)
class Transfer:
    """The buffers of the exchanges of one column count and value type: the rows to send on
    the device and on the host, two host buffers that receive the ghost rows in turn (the
    write of one may still be on its way while the next exchange receives), the ghost rows on
    the device; the requests and the read in flight."""

    send: Dense | None
    sent: np.ndarray
    receives: list
    ghost: Dense
    turn: int = 0
    requests: list = attrs.field(factory=list)
    event: Any = None


class Halo:
    """The halo exchange of a distributed matrix's rows (see the module).

    Parameters
    ----------
    exec : Executor
        The device of this rank.
    comm : mpi4py communicator
    send_rows : numpy int array
        This rank's rows (local indices) that others need, grouped by the receiving ranks in
        rank order.
    send_counts, receive_counts : numpy int arrays
        Rows sent to and received from each rank.
    """

    def __init__(self, exec, comm: Any, send_rows: np.ndarray, send_counts: np.ndarray,
                 receive_counts: np.ndarray) -> None:
        self.exec, self.comm = exec, comm
        self.collective = Collective.of(comm)
        self.send_rows = send_rows
        self._send_rows = exec.from_host(send_rows.astype(INDEX_DTYPE))
        self.receive_from = Neighbours.from_counts(receive_counts)
        self.send_to = Neighbours.from_counts(send_counts)
        self.ghosts = int(np.sum(receive_counts))
        self.counters = self.collective.counters
        self._transfers: dict[tuple, Transfer] = {}

    @property
    def active(self) -> bool:
        """Whether this rank sends or receives anything."""
        return bool(self.receive_from.ranks or self.send_to.ranks)

    def transfer(self, k: int, dtype: Any) -> Transfer:
        """The buffers of exchanges of ``k`` columns of ``dtype`` (made at the first)."""
        key = (k, np.dtype(dtype))
        transfer = self._transfers.get(key)
        if transfer is None:
            exec, sends = self.exec, self.send_rows.size
            def host(rows):  # page-locked where there is anything to move
                return exec.host_array((rows, k), dtype) if rows else np.empty((0, k), dtype)
            transfer = self._transfers[key] = Transfer(
                Dense.empty(exec, (sends, k), dtype) if sends else None, host(sends),
                [host(self.ghosts) for _ in range(2)], Dense.zeros(exec, (self.ghosts, k), dtype))
        return transfer

    def start(self, b: Dense) -> Transfer:
        """Gather the rows of b that others need, start reading them, post the receives."""
        transfer = self.transfer(b.shape[1], b.dtype)
        if transfer.send is not None:
            self.exec.run("distributed.matrix.row_gather", b, self._send_rows, transfer.send)
        self.exec.host_step(functools.partial(self._begin, transfer))
        return transfer

    def finish(self, transfer: Transfer) -> Dense:
        """Send, receive, and write the ghost rows to the device (see the module); returns them."""
        self.exec.host_step(functools.partial(self._end, transfer))
        return transfer.ghost

    def _begin(self, transfer: Transfer) -> None:
        comm = self.comm
        if transfer.send is not None:
            transfer.event = self.exec.read_async([transfer.send.values], [transfer.sent])
        transfer.turn = 1 - transfer.turn
        receive, to = transfer.receives[transfer.turn], self.receive_from
        transfer.requests = [comm.Irecv(receive[lo:hi], source=r, tag=HALO_TAG)
                             for r, lo, hi in zip(to.ranks, to.begins, to.ends)]

    def _end(self, transfer: Transfer) -> None:
        self.collective.post_pending()
        wait_for(self.exec, transfer.event)
        transfer.event = None
        to, sent = self.send_to, transfer.sent
        requests = transfer.requests + [self.comm.Isend(sent[lo:hi], dest=r, tag=HALO_TAG)
                                        for r, lo, hi in zip(to.ranks, to.begins, to.ends)]
        transfer.requests = []
        self.collective.wait(requests)
        self.counters["exchanges"] += 1
        if self.ghosts:
            self.exec.write_async(transfer.ghost.values, transfer.receives[transfer.turn])

    def exchange_host(self, values: np.ndarray) -> np.ndarray:
        """The ghost rows of a host array of this rank's rows (any type; setup: waits)."""
        values = np.ascontiguousarray(values)
        sent = np.ascontiguousarray(values[self.send_rows])
        received = np.empty((self.ghosts,) + values.shape[1:], values.dtype)
        comm, get, put = self.comm, self.receive_from, self.send_to
        requests = [comm.Irecv(received[lo:hi], source=r, tag=HALO_TAG) for r, lo, hi in zip(get.ranks, get.begins, get.ends)]
        requests += [comm.Isend(sent[lo:hi], dest=r, tag=HALO_TAG) for r, lo, hi in zip(put.ranks, put.begins, put.ends)]
        self.collective.wait(requests)
        return received
