"""SolutionReads: x after every iteration for the loggers that want it (SciPy's ``callback(xk)``),
without stalling the device.

After iteration t the host enqueues a non-blocking read of the stop state and of x into one of
two page-locked slots (the device's queue runs in order: the copy is x_t, before iteration t + 1
changes it), enqueues iteration t + 1, and only then waits for the read of iteration t and hands
x_t to the loggers: their callbacks run while the device computes the next iteration. The
callbacks see the same iterates, in the same order, as if the solve waited after each one.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.solver.loop.stop_reader import Read, StopReader


class SolutionReads:
    """The solution reads of one solve.

    Parameters
    ----------
    exec : Executor
        The solver's executor.
    ws : Workspace
        The solver's workspace (the two page-locked slots are kept there).
    x : Dense
        The iterate of the loop.
    loggers : list
        The loggers with ``wants_solution``; each gets ``on_iteration_solution(solver, t, x_t)``
        with x_t an n x k host array (its own copy) for every iteration t >= 1 of the solve.

    Examples
    --------
    >>> reads = SolutionReads(exec, ws, x, loggers)
    >>> previous = reads.issue(reader, t)          # after enqueueing iteration t
    >>> reads.emit(solver, previous, scale)        # after taking in the stop state it read
    """

    SLOTS = 2

    def __init__(self, exec, ws, x, loggers: list) -> None:
        self.x, self.loggers = x, loggers
        self.slots = ws.get("solutions", lambda: [exec.host_array(x.values.shape, x.dtype) for _ in range(self.SLOTS)])
        self.pending: tuple[Read, int] | None = None

    def issue(self, reader: StopReader, iteration: int) -> tuple[Read, int] | None:
        """Start reading the stop state and x after ``iteration``; returns the read started
        after the iteration before (to be taken in now), if any."""
        slot = iteration % self.SLOTS
        read = reader.issue(iteration, slot=slot, also=((self.x.values, self.slots[slot]),))
        previous, self.pending = self.pending, (read, slot)
        return previous

    def take(self) -> tuple[Read, int] | None:
        """The read in flight, if any (at the end of a loop or before a read out of turn)."""
        pending, self.pending = self.pending, None
        return pending

    def emit(self, solver, read: tuple[Read, int], scale: np.ndarray) -> None:
        """Hand x of the iteration of ``read`` to the loggers (the caller knows the solve ran that
        iteration: one enqueued after every column stopped is none); ``scale`` undoes the
        solve's scaling."""
        slot, t = read[1], read[0].iteration
        x = self.slots[slot] / scale if (scale != 1).any() else self.slots[slot].copy()
        for logger in self.loggers:
            logger.on_iteration_solution(solver, t, x)
