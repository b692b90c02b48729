"""How a solve's loop reads its device stop state back: one strategy per solve, chosen when
the :class:`~ginkpy.core.solver.loop.monitor.IterationMonitor` is made (:func:`read_mode`).

Every mode answers three moments of the loop: :meth:`ReadMode.after_iteration` (an iteration
was enqueued), :meth:`ReadMode.poll` (a restart cycle ended) and :meth:`ReadMode.settle` (the
loop ran out: the final read, waited for). What a read brings is taken in by the monitor
(``monitor._absorb``: confirmations, the time limit, the loggers), the same for every mode.

- :class:`Blind`: an inner solver with only an iteration limit and no logger reads nothing
  (so that the solver around it can capture it whole).
- :class:`EveryIteration`: a logger that needs the live x after every iteration (SciPy's
  ``callback(xk)``): a read after every iteration, waited for.
- :class:`IterateReads`: loggers of every iterate that take a copy: x and the stop state read
  after every iteration without waiting, taken in one iteration behind the device.
- :class:`HostReads`: an executor that is not asynchronous (the reference executor): the stop
  state is on the host, read when due, at once.
- :class:`AsynchronousReads`: a device: a read every few iterations (more as the solve goes
  on), taken in once it has arrived or when the next one is due; the host never runs more than
  two read intervals ahead of what it knows.
- :class:`CollectiveReads`: a system over several ranks (gk.distributed): as asynchronous, but
  a read is taken in only when due, never early because it arrived, so that every rank takes
  the same host decisions at the same iterations.

An iteration that itself reads from the device (a host operator, ``monitor.reads_each_iteration``)
makes every read of the asynchronous modes immediate.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason

if TYPE_CHECKING:  # (annotations only: the monitor makes its mode)
    from ginkpy.core.solver.loop.monitor import IterationMonitor

Resume = Callable[[Any], None]


class ReadMode:
    """A way of reading the stop state (the base: read when polled and at the end)."""

    name = "reads"

    def __init__(self, monitor: IterationMonitor) -> None:
        # a proxy: the monitor owns its mode, and a reference back would make a cycle that
        # keeps the solver (its hierarchy, its device arrays) alive until a garbage collection
        self.monitor = weakref.proxy(monitor)

    def start(self, resume: Resume | None = None) -> None:
        """Before the first iteration of the loop."""

    def after_iteration(self, resume: Resume | None = None) -> None:
        """After the host enqueued an iteration."""

    def polls(self) -> bool:
        """Whether :meth:`poll` reads now: where that costs nothing extra (on the host, or where
        each iteration reads from the device anyway)."""
        m = self.monitor
        return m.reads_each_iteration or not m.exec.asynchronous

    def poll(self) -> None:
        """At the end of a restart cycle: read the stop state now where :meth:`polls`."""
        if not self.polls():
            return
        m = self.monitor
        self._take_last(None)
        self._take_pending(None)
        m._absorb(m.reader.issue(m.iteration, final=self.final_polls), None)

    final_polls = False  # (whether a poll's read waits for the whole history)

    def settle(self, resume: Resume | None = None) -> bool:
        """Read the final stop state (waiting for it). True when a column was resumed by a
        failed confirmation and the loop must go on."""
        m = self.monitor
        self._take_last(resume)
        self._take_pending(resume)
        m._absorb(m.reader.issue(m.iteration, final=True), resume)
        return m.running and m.iteration < m.loop_limit

    def _take_last(self, resume: Resume | None) -> None:
        """Take in what a mode keeps on its way besides the pending read (nothing here)."""

    def _take_pending(self, resume: Resume | None) -> None:
        reader = self.monitor.reader
        if reader.pending is not None:
            pending, reader.pending = reader.pending, None
            self.monitor._absorb(pending, resume)


class Blind(ReadMode):
    """Nothing read: every column runs ``max_iters`` iterations."""

    name = "blind"

    def poll(self) -> None:
        pass

    def settle(self, resume: Resume | None = None) -> bool:
        m = self.monitor
        m.reader.host_status = np.full(m.k, StopReason.ITERATION_LIMIT)
        m.reader.checks[:] = m.iteration + 1
        return False


class EveryIteration(ReadMode):
    """A read after every iteration, waited for (a logger reads the live x)."""

    name = "every iteration"
    final_polls = True

    def polls(self) -> bool:
        return True

    def after_iteration(self, resume: Resume | None = None) -> None:
        m = self.monitor
        m._absorb(m.reader.issue(m.iteration, final=True), resume)


class IterateReads(ReadMode):
    """x and the stop state of every iteration read without waiting, those of the iteration
    before taken in (loggers of every iterate, given copies)."""

    name = "iterates"

    def start(self, resume: Resume | None = None) -> None:
        # the stop state after the setup first (one read per solve), so that an iteration is
        # known to have run when a column ran before it
        m = self.monitor
        m._absorb(m.reader.issue(m.iteration, final=True), resume)

    def after_iteration(self, resume: Resume | None = None) -> None:
        m = self.monitor
        if m.solutions is None:
            m.solutions = m.make_solution_reads()
        m._take_solution(m.solutions.issue(m.reader, m.iteration), resume)

    def _take_last(self, resume: Resume | None) -> None:
        m = self.monitor
        m._take_solution(m.solutions and m.solutions.take(), resume)


class AsynchronousReads(ReadMode):
    """A read every few iterations, without waiting, taken in once arrived or when the next one
    is due."""

    name = "asynchronous"

    def after_iteration(self, resume: Resume | None = None) -> None:
        m = self.monitor
        reader, exec = m.reader, m.exec
        if not self._may_have_news():
            return  # no column stopped since the last read: nothing to take in
        exec.flush()
        pending = reader.pending
        due = reader.due(m.iteration) or m.reads_each_iteration or exec.none_running(m.stop.status)
        if pending is not None and (due or self._arrived(pending)):
            self._take_pending(resume)
        if due and reader.pending is None and m.running:
            if m.reads_each_iteration:  # the read is there at once
                self._read_now(resume)
                return
            reader.pending = reader.issue(m.iteration)
            reader.schedule(m.iteration)

    def _may_have_news(self) -> bool:
        """False where the host can tell that every column still runs and nothing else is
        wanted from a read (loggers of every iteration, a time limit)."""
        m = self.monitor
        return not (m.exec.all_running(m.stop.status) and not (m.log_iterations or m.reads_each_iteration)
                    and m.time_limit == np.inf)

    def _arrived(self, pending) -> bool:
        """Whether a pending read may be taken in before it is due: once it has arrived."""
        return self.monitor.exec.read_done(pending.event)

    def _read_now(self, resume: Resume | None) -> None:
        m = self.monitor
        m._absorb(m.reader.issue(m.iteration), resume)
        m.reader.schedule(m.iteration)  # (not every iteration: loggers get theirs in order)


class CollectiveReads(AsynchronousReads):
    """Asynchronous reads taken in only when due, alike on every rank."""

    name = "collective"

    def _arrived(self, pending) -> bool:
        return False


class HostReads(AsynchronousReads):
    """The stop state is on the host: read when due, at once."""

    name = "host"

    def after_iteration(self, resume: Resume | None = None) -> None:
        m = self.monitor
        if not self._may_have_news():
            return
        m.exec.flush()
        due = m.reader.due(m.iteration) or m.reads_each_iteration or m.exec.none_running(m.stop.status)
        if due and m.running:
            self._read_now(resume)


def read_mode(monitor: IterationMonitor) -> ReadMode:
    """The read mode of a solve, from what its monitor found at the start."""
    if monitor.blind:
        return Blind(monitor)
    if monitor.sync:
        return EveryIteration(monitor)
    if monitor.solution_loggers:
        return IterateReads(monitor)
    if not monitor.exec.asynchronous:
        return HostReads(monitor)
    return CollectiveReads(monitor) if monitor.collective else AsynchronousReads(monitor)
