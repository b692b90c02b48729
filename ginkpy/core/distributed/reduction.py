"""Reduction: the partial sums of a solver's reductions made global over the ranks without
stopping the device more than the method needs.

A kernel leaves partial sums (G x count, one row per work-group; one row on the host). Making
them global takes three host steps (``Executor.host_step``: recorded in a captured iteration
and replayed in their place):

- ``start``: the partial sums read without waiting, into page-locked host arrays;
- ``post``: once they arrived, this rank's sums (added over the rows in float64, complex128
  for complex ones) sent to every rank with a non-blocking allgather (``Iallgather``);
- ``finish``: the ranks' sums added in rank order (the same bits on every rank) and written
  back without waiting: row 0 the sums, the other rows zero, so that the kernels that add up
  the partial sums get the global ones.

Between ``start`` and ``finish`` the device runs whatever the solver enqueues that does not
need the sums (pipelined CG: the preconditioner and the product), and a halo exchange on the
same communicator posts pending reductions (``Collective.post_pending``) before it waits, so
both travel at once. Solvers call ``A.reduce_sums`` (all three at once) or
``A.start_sums`` ... ``A.finish_sums``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.distributed.collective import Collective, add_in_rank_order, wait_for


def reduction_of(exec, collective: Collective, partials: tuple, extras: dict | None = None) -> "Reduction":
    """The Reduction of ``partials`` (Dense each; with ``extras`` added, see :class:`Reduction`)
    on ``collective``'s communicator, made at its first use and kept there (by the partial
    sums' identities and shapes: a solver's are kept in its workspace)."""
    key = tuple(id(p) for p in partials) + tuple(p.values.shape for p in partials)
    reduction = collective.reductions.get(key)
    if reduction is None:
        reduction = collective.reductions[key] = Reduction(exec, collective, list(partials), extras or {})
    return reduction


def reduce_now(exec, collective: Collective, *partials) -> None:
    """Make ``partials`` global at once (start, then finish; no overlap)."""
    reduction = reduction_of(exec, collective, partials)
    exec.host_step(reduction.start)
    exec.host_step(reduction.finish)


class Reduction:
    """The global sums of the partial sums ``partials`` (Dense each), with the partial sums
    ``extras[i]`` added to those of ``partials[i]`` (a distributed product's non-local part)."""

    def __init__(self, exec, collective: Collective, partials: list, extras: dict) -> None:
        self.exec, self.collective = exec, collective
        self.partials = partials
        self.sources = [[p] + list(extras.get(i, ())) for i, p in enumerate(partials)]
        complex_ = any(p.dtype.kind == "c" for p in partials)
        self.sum_dtype = np.dtype(np.complex128 if complex_ else np.float64)
        self._arrays: list = []  # the device arrays of the current step (see _views)
        self._hosts: dict = {}
        self._event = self._request = None
        self._send = self._gathered = None
        self.recorded = self._views()

    def _views(self) -> list:
        """The device arrays of the sources, as their kernels shaped them: in a replay on a
        device the kernels' Python does not run (their partial sums keep the shape recorded),
        on the host the replayed kernels set them again."""
        return [[s.values for s in sources] for sources in self.sources]

    def _host(self, key: tuple, shape: tuple, dtype: Any) -> np.ndarray:
        array = self._hosts.get(key)
        if array is None or array.shape != shape:
            array = self._hosts[key] = self.exec.host_array(shape, dtype)
        return array

    # -- the three steps -------------------------------------------------------------------------
    def start(self) -> None:
        """Read the partial sums without waiting; the reduction waits in the collective's list."""
        arrays = self.recorded if self.exec.asynchronous else self._views()
        self._arrays = arrays
        flat = [a for group in arrays for a in group]
        into = [self._host(("read", i, j), a.shape, a.dtype) for i, group in enumerate(arrays)
                for j, a in enumerate(group)]
        self._event = self.exec.read_async(flat, into)
        self._read = into
        self.collective.pending.append(self)

    def post(self) -> None:
        """Once read: this rank's sums to every rank (non-blocking)."""
        wait_for(self.exec, self._event)
        self._event = None
        sums, at = [], 0
        for group in self._arrays:
            total = None
            for a in group:
                part = self._read[at].sum(axis=0, dtype=self.sum_dtype)
                total = part if total is None else total + part
                at += 1
            sums.append(total)
        send = np.concatenate(sums)
        comm = self.collective.comm
        if self._send is None or self._send.shape != send.shape:
            self._send = np.empty_like(send)
            self._gathered = np.empty((comm.size,) + send.shape, send.dtype)
        self._send[...] = send
        self._request = comm.Iallgather(self._send, self._gathered)
        self.collective.counters["reductions"] += 1

    def finish(self) -> None:
        """Wait for the other ranks' sums, add them in rank order, write them back (row 0)."""
        if self in self.collective.pending:
            self.collective.post_pending()
        self.collective.wait([self._request])
        total = add_in_rank_order(self._gathered)
        begin = 0
        for i, group in enumerate(self._arrays):
            target = group[0]
            count = target.shape[1]
            out = self._host(("write", i), target.shape, target.dtype)
            out[...] = 0
            part = total[begin:begin + count]
            out[0] = part if target.dtype.kind == "c" else part.real
            begin += count
            self.exec.write_async(target, out)
