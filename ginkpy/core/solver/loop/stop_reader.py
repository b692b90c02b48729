"""StopReader: the host's view of a solve's device stop state (core/stop/stop_state.py).

The device writes, per column, the status, the number of checks and a ring of the last
residual norms; the host reads them back asynchronously into page-locked arrays of the
workspace and takes them in here: the status as far as the host knows (``host_status``), the
iterations each column completed, the norms of every iteration for the loggers, in order.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import attrs
import numpy as np

from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason

# the codes as plain ints: NumPy compares an array with an IntEnum member through the enum's
# attribute look-ups, several times slower than with an int (a few us a read on the loop's path)
RUNNING, PENDING = int(StopReason.RUNNING), int(StopReason.PENDING)


@attrs.define
class Read:
    """A read of the device's stop state on its way to the host: status, checks and history
    (the last two None when not read), the event to wait for, the iteration it was issued at."""

    arrays: list
    event: Any
    iteration: int


class StopReader:
    """What the host knows of the device stop state of one solve, and when it reads it.

    Reads start every ``interval`` iterations, which doubles from 1 up to ``max_interval`` or
    to what the iterations take in ``read_period`` seconds (:meth:`schedule`).

    Parameters
    ----------
    exec : Executor
        The solver's executor.
    stop : StopState
        The device stop state of the solve.
    into : callable
        ``into(slot)`` gives the host arrays (page-locked on a device) for status, checks and
        history, kept in the solver's workspace; called at the first read into that slot (reads
        in flight at once go to different slots).
    log_iterations : bool
        Whether every read takes the residual norm history (for loggers of every iteration).
    agree : callable, optional
        For a solve whose ranks must read at the same iterations (gk.distributed): gives the
        largest of the ranks' times per iteration (collective), from which the schedule is made.
    """

    def __init__(self, exec, stop, into: Callable[[int], list], log_iterations: bool, max_interval: int,
                 read_period: float, agree: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        self.exec, self.stop, self._make_into, self._into = exec, stop, into, {}
        self.k = stop.k
        self.log_iterations = log_iterations
        self.max_interval, self.read_period = max_interval, read_period
        self.agree = agree
        self.pending: Read | None = None
        self.interval, self.next_read = 1, 1
        self._last_issue = (time.perf_counter(), 0)

    def into(self, slot: int = 0) -> list:
        """The host arrays the reads of ``slot`` go to (made at its first read)."""
        arrays = self._into.get(slot)
        if arrays is None:
            arrays = self._into[slot] = self._make_into(slot)
        return arrays

    def reset(self, status: np.ndarray, norms: np.ndarray) -> None:
        """The state at the start of a solve: ``status`` per column and the initial norms."""
        k = self.k
        self.host_status = status
        self.confirmed = np.zeros(k, bool)
        self.checks = np.zeros(k, np.int64)    # checks per column (a breakdown counts as one)
        self.recorded = np.zeros(k, np.int64)  # checks in the device's history
        self.emitted = 0                       # iterations whose events the loggers got
        self.norms = norms                     # the last residual norm known per column
        # (iteration, column) -> the true residual norm that replaces the recorded one
        self.replaced: dict[tuple[int, int], float] = {}

    # -- the status as far as the host knows ---------------------------------------------------
    @property
    def host_status(self) -> np.ndarray:
        """The stop status per column as far as the host knows (read-only: set it whole)."""
        return self._host_status

    @host_status.setter
    def host_status(self, status: np.ndarray) -> None:
        self._host_status = np.asarray(status, dtype=STATUS_DTYPE)
        self._host_status.flags.writeable = False
        self._codes = frozenset(int(c) for c in np.unique(self._host_status))

    @property
    def running(self) -> bool:
        """Whether a column still runs (or waits for its confirmation), as far as the host knows."""
        return RUNNING in self._codes or PENDING in self._codes

    def has_status(self, reason: StopReason) -> bool:
        """Whether a column has the status ``reason``, as far as the host knows."""
        return int(reason) in self._codes

    def merge(self, status: np.ndarray) -> None:
        """Take the device's ``status`` for the columns the host still counts as running."""
        host = self.host_status
        self.host_status = np.where((host == RUNNING) | (host == PENDING), status, host)

    # -- reads -------------------------------------------------------------------------------
    def issue(self, iteration: int, final: bool = False, slot: int = 0, also: tuple = ()) -> Read:
        """Start reading the status (with the check counts and the history when loggers want
        every iteration's norms, or at the end) into the host arrays of ``slot``, and ``also``
        (device array, host array) pairs after them; the host does not wait."""
        stop = self.stop
        count = 3 if final or self.log_iterations else 1
        into = self.into(slot)
        event = self.exec.read_async([stop.status, stop.checks, stop.history.values][:count] + [a for a, _ in also],
                                     into[:count] + [host for _, host in also])
        return Read(into[:count] + [None] * (3 - count), event, iteration)

    def due(self, iteration: int) -> bool:
        """Whether the schedule has a read due at ``iteration``."""
        return iteration >= self.next_read

    def schedule(self, iteration: int) -> None:
        """After a read started at ``iteration``: when the next one is due (the interval
        doubles, capped by MAX_INTERVAL and by what the iterations take in READ_PERIOD)."""
        now = time.perf_counter()
        per_iteration = (now - self._last_issue[0]) / max(iteration - self._last_issue[1], 1)
        self._last_issue = (now, iteration)
        if self.agree is not None:  # the ranks of a distributed solve: the slowest one's time
            per_iteration = float(self.agree(np.array([per_iteration]))[0])
        cap = max(1, min(self.max_interval, int(self.read_period / max(per_iteration, 1e-9))))
        self.interval = min(2 * self.interval, cap)
        self.next_read = iteration + self.interval

    def receive(self, read: Read, need_checks: Callable[[np.ndarray], bool]) -> tuple:
        """Wait for ``read`` and take in its check counts; ``need_checks(status)`` says whether
        a read without them must fetch them now (a confirmation needs them). Returns (status,
        checks, history), checks and history None where not read."""
        if read.event is not None:
            read.event.wait()
        status, checks, history = read.arrays
        status = status.copy()
        if checks is None and need_checks(status):
            checks = self.exec.to_host(self.stop.checks)
        if checks is not None:
            # a breakdown stops its column in the middle of an iteration: that iteration counts,
            # with the residual norm of the last check (the column's r did not change)
            self.recorded = np.maximum(self.recorded, checks)
            self.checks = np.maximum(self.checks, checks + (status == StopReason.BREAKDOWN))
        return status, checks, history

    # -- logger events -------------------------------------------------------------------------
    def emit(self, history: np.ndarray, on_iteration: Callable[[int, np.ndarray, np.ndarray], None] | None) -> None:
        """Events ``on_iteration(t, norms, status)`` for the iterations every running column
        has completed, in order (without ``on_iteration``: only the last norms, for the result)."""
        host = self.host_status
        running = (host == RUNNING) | (host == PENDING)
        # a column converged on an estimate has its last check replaced by the true residual later
        settled = self.checks - (host == PENDING)
        done = int(settled[running].min()) if running.any() else int(self.checks.max(initial=0))
        done = max(done, 1)  # iteration 0 (the initial residual) even when every column stopped before
        rows = history.shape[0]
        if on_iteration is None:
            last = self.recorded - 1
            has = last >= 0
            norms = np.where(has, history[np.maximum(last, 0) % rows, np.arange(self.k)].astype(np.float64),
                             self.norms)
            for (it, c), value in list(self.replaced.items()):
                if it == last[c]:
                    norms[c] = value
                if it <= last[c]:
                    del self.replaced[(it, c)]
            self.norms = norms
            self.emitted = max(self.emitted, done)
            return
        for t in range(self.emitted, done):
            has = t < self.recorded
            norms = np.where(has, history[t % rows].astype(np.float64), self.norms)
            for (it, c), value in list(self.replaced.items()):
                if it == t:
                    norms[c] = value
                    del self.replaced[(it, c)]
            self.norms = norms
            on_iteration(t, norms, np.where(t < self.checks - 1, RUNNING, host).astype(STATUS_DTYPE))
        self.emitted = max(self.emitted, done)
