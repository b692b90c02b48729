"""SolutionReads: x after every iteration for the loggers that want it (SciPy's ``callback(xk)``),
without stalling the device.

After iteration t the host enqueues a non-blocking read of the stop state and of x into one of
two page-locked slots (the device's queue runs in order: the copy is x_t, before iteration t + 1
changes it), enqueues iteration t + 1, and only then waits for the read of iteration t and hands
x_t to the loggers: their callbacks run while the device computes the next iteration. The
callbacks see the same iterates, in the same order, as if the solve waited after each one.

x_t is handed out as its slot itself, not a copy (a copy of x per iteration was about 40% of
a callback's time at 10^6 rows on a GPU). It holds x_t until the loggers return: the next read
into that slot is the one after iteration t + 2, which the host enqueues only once ``emit`` of
x_t has returned (the read after iteration t + 1 goes to the other slot). As in SciPy, whose
``callback(xk)`` gets the solver's live x, updated in place afterwards, a callback that keeps x
copies it; unlike SciPy's, a callback that writes into it changes nothing in the solve (the
slot is a copy of the device's x). A scaled solve (see scaling.py) divides the slot by the
scale into a buffer kept for that, so that the loggers see the unscaled x.
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
        with x_t an n x k host array for every iteration t >= 1 of the solve, holding x_t until
        it returns (reused later: a logger that keeps x_t copies it).

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
        self.unscaled: np.ndarray | None = None  # x_t / scale for the loggers of a scaled solve, at first need
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
        x = self.slots[slot]
        if (scale != 1).any():
            if self.unscaled is None:
                self.unscaled = np.empty_like(x)
            x = np.divide(x, scale, out=self.unscaled, casting="same_kind")
        for logger in self.loggers:
            logger.on_iteration_solution(solver, t, x)
