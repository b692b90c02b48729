"""Capture: a loop body's device work recorded once and replayed without Python in between
(:meth:`Executor.capture`), the part of :class:`~ginkpy.core.base.executor.Executor` that
records. Solvers capture one iteration of their loop, so that an iteration costs its launches
and nothing else on the host."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator


class Recording:
    """What :meth:`Executor.capture` records while a function runs: the device work (each
    step a callable that enqueues one launch or copy again) and whether the function read the
    executor's memory (then its work may depend on data, and it cannot be replayed)."""

    def __init__(self) -> None:
        self.steps: list[Callable[[], None]] = []
        self.read = False
        self.host_steps = 0  # steps that are host work (Executor.host_step), not launches


class Capturing:
    """The capture methods of :class:`~ginkpy.core.base.executor.Executor`, which sets
    ``counters``, ``_capture`` (a thread-local) and ``_profiled``, and defines
    ``_check_process``."""

    counters: dict
    _capture: Any
    _profiled: int

    def capture(self, fn: Callable[[], Any]) -> Callable[[], None] | None:
        """Run ``fn()`` once and record the device work it enqueues. Returns a callable that
        enqueues the same work again (the same kernels with the same arguments, set once),
        or None when ``fn`` read from the executor's memory while it ran: then what it enqueues
        may depend on the data, and it must be called itself each time.

        Solvers capture one iteration of their loop this way, so that an iteration costs
        its launches and nothing else on the host.
        """
        if self._profiled:  # profiled: every launch runs through run(), uncaptured
            fn()
            return None
        self.counters["captures"] += 1
        recording = Recording()
        outer = getattr(self._capture, "recording", None)
        self._capture.recording = recording
        try:
            fn()
        finally:
            self._capture.recording = outer
        if outer is not None:  # nested capture: the outer recording gets the same work
            outer.steps.extend(recording.steps)
            outer.read |= recording.read
            outer.host_steps += recording.host_steps
        if recording.read:
            return None
        steps = tuple(recording.steps)
        host_steps = recording.host_steps
        counters, check = self.counters, self._check_process

        def replay() -> None:
            check()  # the steps only enqueue work set up once (each under the device's lock)
            for step in steps:
                step()
            counters["launches"] += len(steps) - host_steps
            outer = self._recording()
            if outer is not None:  # replayed inside another capture: that one records it too
                outer.steps.extend(steps)
                outer.host_steps += host_steps
        return replay

    def host_step(self, step: Callable[[], None]) -> None:
        """Run ``step()``, host work between launches that takes no decision on the data (an
        exchange over MPI of values it reads without blocking and writes back itself, see
        ``gk.distributed``), and record it in a running capture, so that a replay runs it again
        in its place among the launches. What ``step`` enqueues itself is not recorded: it
        enqueues it again when replayed."""
        recording = self._recording()
        if recording is None:
            step()
            return
        self._capture.recording = None
        try:
            step()
        finally:
            self._capture.recording = recording
        recording.steps.append(step)
        recording.host_steps += 1

    @contextlib.contextmanager
    def cached_setup(self) -> Iterator[None]:
        """Around setup whose result an operator caches at its first use (an SpMV strategy
        chosen from the row lengths): a read inside does not spoil a running capture, since its
        replays need none (the choice is made by then)."""
        recording = self._recording()
        read = recording is not None and recording.read
        try:
            yield
        finally:
            if recording is not None:
                recording.read = read

    def _recording(self) -> Recording | None:
        """The recording of a capture running in this thread, if any."""
        return getattr(self._capture, "recording", None)

    def _record_write(self, step: Callable[[], None]) -> None:
        """A write of host data into the executor's memory, made inside a running capture: the
        replay writes the same data again (the solve it belongs to resets its state so)."""
        recording = self._recording()
        if recording is not None:
            recording.steps.append(step)
